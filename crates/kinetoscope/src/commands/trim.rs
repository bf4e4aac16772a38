//! `kinetoscope trim`: a smaller trace (or a folder of them) through the export crate's
//! trimmer, each file written through [`super::output_file`] (never over an input,
//! through a temporary file), gzip when its name ends in `.gz`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use flate2::write::GzEncoder;
use kinetoscope_engine::input::{open_path, Input};
use kinetoscope_engine::Engine;
use kinetoscope_export::trim::{TrimInput, TrimOptions, TrimReport};
use kinetoscope_trace::read::{size_text, ReadOptions};

use super::output::{message, note_skipped, write_stdout};
use super::{engine, output_file};
use crate::args::{Format, TrimArgs};

/// Trim a trace file, or each kept rank of a rank folder into the folder `-o` names.
pub fn run(args: TrimArgs) -> anyhow::Result<ExitCode> {
    let engine = engine(&args.read);
    let opts = TrimOptions {
        steps: args.steps,
        time: args.time,
        kernels_only: args.kernels_only,
        drop_stacks: args.drop_stacks,
    };
    let opened = open_path(&args.path)?;
    // Trim reads the trace files only (not the files beside them other views pair).
    let mut reads = opened.trace_files();
    reads.push(args.path.clone());
    let mut reports = Vec::new();
    let mut failed = false;
    match opened {
        Input::File(path) => {
            output_file::check("-o", &args.output, &reads)?;
            let input = TrimInput::open(&engine, &path)?;
            if !args.ranks.is_empty() && !input.rank().is_some_and(|r| args.ranks.contains(&r)) {
                anyhow::bail!(
                    "{}: its rank ({}) is not one of --ranks",
                    path.display(),
                    input.rank().map_or("none".into(), |r| r.to_string())
                );
            }
            reports.push(trim_one(&input, &args.output, &opts, &reads)?);
        }
        Input::RankFolder {
            dir,
            traces,
            skipped,
        } => {
            note_skipped(&skipped);
            let (out_dir, created) = output_folder(&dir, &args.output)?;
            for path in traces {
                match trim_rank(&engine, &path, &out_dir, &args.ranks, &opts, &reads) {
                    Ok(Some(r)) => reports.push(r),
                    Ok(None) => {}
                    Err(e) => {
                        message(&format!("error: {e:#}"));
                        failed = true;
                    }
                }
            }
            if reports.is_empty() && created {
                // Nothing written: leave no empty folder behind.
                let _ = std::fs::remove_dir(&out_dir);
            }
            if reports.is_empty() && !failed {
                anyhow::bail!("{}: no trace of a rank in --ranks", dir.display());
            }
        }
        Input::RunFolder { dir, .. } => anyhow::bail!(
            "{}: a run folder; give one of its trace files (or a rank folder)",
            dir.display()
        ),
    }
    match args.format {
        Format::Json => write_stdout(&(kinetoscope_engine::to_json(&reports)? + "\n"))?,
        Format::Table => reports.iter().for_each(|r| message(&summary(r))),
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Trim one trace of a rank folder into `out_dir` under its own name, unless its rank
/// is not among `ranks` (when given).
fn trim_rank(
    engine: &Engine,
    path: &Path,
    out_dir: &Path,
    ranks: &[i64],
    opts: &TrimOptions,
    reads: &[PathBuf],
) -> anyhow::Result<Option<TrimReport>> {
    let input = TrimInput::open(engine, path)?;
    if !ranks.is_empty() && !input.rank().is_some_and(|r| ranks.contains(&r)) {
        return Ok(None);
    }
    let name = path.file_name().context("a trace without a file name")?;
    trim_one(&input, &out_dir.join(name), opts, reads).map(Some)
}

/// The folder a rank folder's trims go to, and whether it was made here: created when
/// missing, never the input folder itself, never a name that reads as one trace file
/// (`.json`, `.gz`, `.pftrace`: one file of all ranks is `kinetoscope merge`).
fn output_folder(input: &Path, out: &Path) -> anyhow::Result<(PathBuf, bool)> {
    if out.exists() {
        anyhow::ensure!(
            out.is_dir(),
            "-o {}: the input is a rank folder; give a folder",
            out.display()
        );
        anyhow::ensure!(
            out.canonicalize()? != input.canonicalize()?,
            "-o {}: refusing to write into the input folder",
            out.display()
        );
        return Ok((out.to_owned(), false));
    }
    let file_like = out.extension().is_some_and(|e| {
        ["json", "gz", "pftrace"]
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    });
    anyhow::ensure!(
        !file_like,
        "-o {}: the input is a rank folder, so -o names the folder each rank's trim is \
         written into; for one file of all ranks, use kinetoscope merge",
        out.display()
    );
    std::fs::create_dir_all(out)
        .with_context(|| format!("-o {}: cannot create the folder", out.display()))?;
    Ok((out.to_owned(), true))
}

/// Trim `input` into `out` (gzip when it ends in `.gz`).
fn trim_one(
    input: &TrimInput,
    out: &Path,
    opts: &TrimOptions,
    reads: &[PathBuf],
) -> anyhow::Result<TrimReport> {
    input.window(opts)?;
    if out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pftrace"))
    {
        let read = ReadOptions::default();
        return output_file::write_with("-o", out, reads, |w: &mut dyn Write| {
            Ok(input.write_pftrace(opts, &read, w)?)
        });
    }
    let gzip = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    output_file::write_with("-o", out, reads, |w: &mut dyn Write| {
        if gzip {
            let mut z = GzEncoder::new(w, flate2::Compression::default());
            let report = input.write(opts, &mut z)?;
            z.finish()?;
            Ok(report)
        } else {
            Ok(input.write(opts, w)?)
        }
    })
}

/// One trim's summary line(s) for stderr.
fn summary(r: &TrimReport) -> String {
    let mut s = format!(
        "{}: kept {} of {} events ({} → {})",
        r.input.display(),
        r.elements_written - r.repairs.overlap_threads_added,
        r.elements_read,
        size_text(r.bytes_read),
        size_text(r.bytes_written),
    );
    if !r.steps.is_empty() {
        s += &format!(
            "; steps {}",
            match (r.steps.first(), r.steps.last()) {
                (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
                (Some(a), _) => a.clone(),
                _ => String::new(),
            }
        );
    }
    if r.flows_dropped > 0 {
        s += &format!("; {} flow ends dropped (other end cut)", r.flows_dropped);
    }
    if r.malformed_dropped > 0 {
        s += &format!("; {} unreadable elements dropped", r.malformed_dropped);
    }
    if r.invalid_dropped > 0 {
        s += &format!(
            "; {} elements dropped that stayed invalid JSON after the repairs",
            r.invalid_dropped
        );
    }
    if r.truncated {
        s += "; the input was truncated (array closed)";
    }
    let p = &r.repairs;
    if !p.is_empty() {
        let j = &p.json;
        let json = j.unescaped_quotes
            + j.invalid_escapes
            + j.control_chars
            + j.invalid_utf8
            + j.bare_values
            + j.trailing_commas;
        s += &format!(
            "\n  repaired {} events: {json} JSON fixes, {} slices moved to {} overlap threads, {} GPU durations clipped",
            r.elements_rewritten,
            p.moved_to_overlap_threads,
            p.overlap_threads_added,
            p.clipped_durations
        );
        if p.members_dropped > 0 {
            s += &format!(
                "; {} top-level members around the event array dropped (invalid or cut short)",
                p.members_dropped
            );
        }
    }
    s
}
