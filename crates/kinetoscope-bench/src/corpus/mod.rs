//! `--corpus`: issue 15's benchmark corpus. Each entry (a real seed trace, a layout,
//! plain or gzip; `sources.rs`) is grown with `kinetoscope-synth` to `--size` and to
//! `--small-size` in `--work-dir`, measured (`measure.rs`), printed as one table, and
//! deleted; the targets are judged on the worst entry (`results.rs`) and everything is
//! written to `--json-out`.

mod measure;
mod results;
#[cfg(test)]
mod seeds_test;
pub mod sources;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

pub use measure::serde_child;
use measure::{inflate_floor, serde_in_child, Series, Timing};
use results::{judge, print_entry, print_targets, EntryResult, SizeResult, TargetResult};
use sources::{Entry, Layout};

/// What `--corpus` runs on and how.
pub struct Options {
    /// The kinetoscope binary under test.
    pub kinetoscope: PathBuf,
    /// The kinetoscope-synth binary.
    pub synth: PathBuf,
    /// This binary (for the serde_json child).
    pub bench: PathBuf,
    /// The folder the seeds' paths are relative to.
    pub seeds: PathBuf,
    /// Where the grown traces go.
    pub work_dir: PathBuf,
    /// The large size (`--size`).
    pub size: String,
    /// The small size (`--small-size`).
    pub small_size: String,
    /// Timed runs per measurement.
    pub runs: usize,
    /// Keep the grown traces.
    pub keep: bool,
    /// The entries to run (all when empty).
    pub only: Vec<String>,
    /// Where to write the results as JSON.
    pub json_out: Option<PathBuf>,
}

/// The JSON written to `--json-out`.
#[derive(Serialize)]
struct CorpusDoc<'a> {
    kinetoscope: String,
    cores: usize,
    size: &'a str,
    small_size: &'a str,
    runs: usize,
    load_before: String,
    load_after: String,
    entries: &'a [EntryResult],
    targets: &'a [TargetResult],
}

/// Runs the corpus.
pub fn run(opts: &Options) -> anyhow::Result<()> {
    let entries = sources::select(&opts.only)?;
    check_inputs(opts, &entries)?;
    fs::create_dir_all(&opts.work_dir)
        .with_context(|| format!("cannot create {}", opts.work_dir.display()))?;
    let load_before = crate::load_average();
    let mut results = Vec::new();
    for entry in entries {
        let result = run_entry(opts, entry)?;
        let mut out = io::stdout().lock();
        print_entry(&mut out, &result)?;
        out.flush()?;
        results.push(result);
    }
    let targets = judge(&results);
    print_targets(&mut io::stdout().lock(), &targets)?;
    let doc = CorpusDoc {
        kinetoscope: opts.kinetoscope.display().to_string(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        size: &opts.size,
        small_size: &opts.small_size,
        runs: opts.runs,
        load_before,
        load_after: crate::load_average(),
        entries: &results,
        targets: &targets,
    };
    if let Some(path) = &opts.json_out {
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(io::stderr().lock(), "results written to {}", path.display())?;
    }
    Ok(())
}

/// The binaries and every seed exist (before hours of work start).
fn check_inputs(opts: &Options, entries: &[Entry]) -> anyhow::Result<()> {
    for (what, p) in [("kinetoscope", &opts.kinetoscope), ("synth", &opts.synth)] {
        if !p.is_file() {
            bail!("{what} binary not found at {} (pass --{what})", p.display());
        }
    }
    for e in entries {
        let seed = opts.seeds.join(e.seed);
        if !seed.is_file() {
            bail!(
                "seed of {} not found at {} (pass --seeds)",
                e.name,
                seed.display()
            );
        }
    }
    Ok(())
}

/// One entry at both sizes; its files are deleted afterwards unless `--keep`.
fn run_entry(opts: &Options, entry: Entry) -> anyhow::Result<EntryResult> {
    let mut files = Vec::new();
    let small = measure_size(opts, entry, &opts.small_size, &mut files);
    let large = small.and_then(|(small, _)| {
        measure_size(opts, entry, &opts.size, &mut files).map(|(l, ev)| (small, l, ev))
    });
    if !opts.keep {
        for f in &files {
            let _ = fs::remove_file(f);
        }
    }
    let (small, large, events) = large?;
    Ok(EntryResult::new(entry, events, large, small))
}

/// Grows `entry` to `size` and measures it; the files made are pushed to `files`.
fn measure_size(
    opts: &Options,
    entry: Entry,
    size: &str,
    files: &mut Vec<PathBuf>,
) -> anyhow::Result<(SizeResult, Option<u64>)> {
    let ext = if entry.gzip { "json.gz" } else { "json" };
    let path = opts
        .work_dir
        .join(format!("{}-{}.{ext}", entry.name, crate::size_label(size)));
    files.push(path.clone());
    let checked = |command| crate::check_output(&path, command);
    files.extend([checked("summary"), checked("report")]);
    let minify: &[&str] = match entry.layout {
        Layout::Pretty => &[],
        Layout::Minified => &["--minify"],
    };
    crate::synth(
        &opts.synth,
        &opts.seeds.join(entry.seed),
        size,
        &path,
        minify,
    )?;
    let file_bytes = fs::metadata(&path)?.len();
    let bin = &opts.kinetoscope;
    let mut summary_j1 = Series::new(bin, "summary", 1);
    let mut summary_j2 = Series::new(bin, "summary", 2);
    let mut report = Series::new(bin, "report", 2);
    summary_j1.check(&path)?;
    summary_j2.check(&path)?;
    let events = summary_events(&checked("summary"));
    report.check(&path)?;
    // Round by round, each measurement once, so that the VM's drift while the entry runs
    // falls on all of them alike and the ratios between them stay fair.
    let mut inflate = Vec::new();
    let mut serde = Vec::new();
    let mut json_bytes = file_bytes;
    for _ in 0..opts.runs.max(1) {
        if entry.gzip {
            let (t, n) = inflate_floor(&path, 1)?;
            inflate.extend(t.runs);
            json_bytes = n;
        }
        summary_j1.run(&path)?;
        summary_j2.run(&path)?;
        report.run(&path)?;
        if !entry.gzip {
            serde.extend(serde_in_child(&opts.bench, &path, 1)?.runs);
        }
    }
    let (summary_j1, _) = summary_j1.done();
    let (summary_j2, summary_rss_kib) = summary_j2.done();
    let result = SizeResult {
        size: size.to_string(),
        json_bytes,
        file_bytes,
        summary_j1,
        summary_j2,
        report: report.done().0,
        serde: (!entry.gzip).then(|| Timing::new(serde)),
        inflate: entry.gzip.then(|| Timing::new(inflate)),
        summary_rss_kib,
    };
    Ok((result, events))
}

/// The events `summary` counted, from the output of its check run.
fn summary_events(path: &Path) -> Option<u64> {
    let text = fs::read_to_string(path).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    doc["traces"].as_array()?.first()?["total_events"].as_u64()
}
