//! `kinetoscope-synth`: makes a large Kineto trace from a real one (see the library docs).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use kinetoscope_synth::decimal::Factor;
use kinetoscope_synth::shapes::{write_shape, Shape, ShapeOptions};
use kinetoscope_synth::{
    load_source, parse_size, write_file, write_ranks, FileStats, LoadOptions, RankOptions, Target,
    WriteOptions,
};

/// Makes a large Kineto (PyTorch profiler) trace from a real one by repeating its
/// events with shifted timestamps, ids and step numbers, or an adversarial trace of a
/// given shape (--shape) for complexity benchmarks.
///
/// Examples:
///   kinetoscope-synth --from rank0.json.gz --size 1GiB --out big.json
///   kinetoscope-synth --from rank0.json.gz --size 256MiB --ranks 8 --out-dir run/ --gzip \
///       --slow-rank 3 --slowdown 1.3
///   kinetoscope-synth --shape deep-nesting --units 1000000 --steps 1 --out deep.json.gz
#[derive(Debug, Parser)]
#[command(name = "kinetoscope-synth", version, verbatim_doc_comment)]
struct Cli {
    /// The source trace (.json or .json.gz; gzip is detected by content).
    #[arg(long, value_name = "SRC", required_unless_present = "shape")]
    from: Option<PathBuf>,
    /// Write an adversarial trace of this shape instead of copies of a source:
    /// same-timestamp, deep-nesting, one-track, track-per-event, distinct-names, overlap,
    /// step-per-unit (see `kinetoscope_synth::shapes`). Needs --units and --out.
    #[arg(long, conflicts_with_all = ["from", "size", "copies", "ranks"], requires_all = ["units", "out"])]
    shape: Option<Shape>,
    /// Shape mode: the number of units (a host span with its runtime call, GPU activity
    /// and memory records: 3 to 5 events each); deep-nesting nests each step's units.
    #[arg(long, requires = "shape")]
    units: Option<u64>,
    /// Shape mode: the number of ProfilerStep#N spans the units are split into.
    #[arg(long, requires = "shape", default_value_t = 3)]
    steps: u64,
    /// Size of each output in bytes of uncompressed JSON: whole copies are written until
    /// it is reached. K/M/G are powers of 1000, KiB/MiB/GiB powers of 1024.
    #[arg(long, required_unless_present_any = ["copies", "shape"], conflicts_with = "copies")]
    size: Option<String>,
    /// Write exactly this many copies instead of a size.
    #[arg(long)]
    copies: Option<u64>,
    /// The output file (gzip when it ends in .gz).
    #[arg(long, required_unless_present = "out_dir", conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// Rank mode: write this many files `rank-<r>.pt.trace.json[.gz]` into --out-dir.
    #[arg(long, requires = "out_dir")]
    ranks: Option<u64>,
    /// Rank mode: the folder for the rank files.
    #[arg(long, requires = "ranks")]
    out_dir: Option<PathBuf>,
    /// Rank mode: write .json.gz files.
    #[arg(long, requires = "ranks")]
    gzip: bool,
    /// Rank mode: the rank to make a straggler: its time outside NCCL kernels is
    /// stretched and the other ranks wait for it in their collectives, which end at the
    /// same time on every rank (without NCCL kernels in the source, its whole timeline is
    /// stretched).
    #[arg(long, requires = "ranks")]
    slow_rank: Option<u64>,
    /// The straggler's stretch factor of its compute (default 1.3).
    #[arg(long, requires = "slow_rank")]
    slowdown: Option<String>,
    /// Drop the source's pretty-printing: one compact event per line.
    #[arg(long)]
    compact: bool,
    /// Minify: the whole trace on one line, no whitespace outside strings (implies
    /// --compact).
    #[arg(long)]
    minify: bool,
    /// Gap between two copies, in µs.
    #[arg(long, default_value_t = 1000)]
    gap_us: u64,
    /// Rank mode: files written at the same time (default: all cores).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {err}");
            for cause in err.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if let (Some(shape), Some(units), Some(out)) = (cli.shape, cli.units, &cli.out) {
        let opts = ShapeOptions {
            shape,
            units,
            steps: cli.steps,
        };
        let stats = write_shape(&opts, out)?;
        writeln!(
            std::io::stdout().lock(),
            "{}",
            line(&[stats], &format!("{} ({shape})", out.display()))
        )?;
        return Ok(());
    }
    let Some(from) = &cli.from else {
        bail!("give --from, or --shape");
    };
    let target = match (&cli.size, cli.copies) {
        (Some(s), _) => Target::Bytes(parse_size(s)?),
        (None, Some(n)) => Target::Copies(n.max(1)),
        (None, None) => bail!("give --size or --copies"),
    };
    let load = LoadOptions {
        compact: cli.compact,
        one_line: cli.minify,
        gap_ns: i64::try_from(cli.gap_us)
            .ok()
            .and_then(|g| g.checked_mul(1000))
            .context("--gap-us is too large")?,
    };
    let src = load_source(from, &load)?;
    let mut stdout = std::io::stdout().lock();
    if let Some(out) = &cli.out {
        let stats = write_file(
            &src,
            Some(from.as_path()),
            out,
            &WriteOptions {
                target,
                ..WriteOptions::default()
            },
        )?;
        writeln!(
            stdout,
            "{}",
            line(std::slice::from_ref(&stats), &out.display().to_string())
        )?;
        return Ok(());
    }
    let (Some(ranks), Some(dir)) = (cli.ranks, &cli.out_dir) else {
        bail!("give --out, or --ranks with --out-dir");
    };
    let slow = match cli.slow_rank {
        Some(r) => {
            let text = cli.slowdown.as_deref().unwrap_or("1.3");
            let f = Factor::parse(text).with_context(|| format!("bad --slowdown {text:?}"))?;
            Some((r, f))
        }
        None => None,
    };
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = RankOptions {
        ranks,
        gzip: cli.gzip,
        slow,
        target,
        jobs,
    };
    let files = write_ranks(&src, Some(from.as_path()), dir, &opts)?;
    writeln!(
        stdout,
        "{}",
        line(
            &files,
            &format!("{} rank files in {}", files.len(), dir.display())
        )
    )?;
    Ok(())
}

fn line(files: &[FileStats], what: &str) -> String {
    let events: u64 = files.iter().map(|f| f.stats.events).sum();
    let copies: u64 = files.iter().map(|f| f.stats.copies).sum();
    let json: u64 = files.iter().map(|f| f.stats.json_bytes).sum();
    let disk: u64 = files.iter().map(|f| f.file_bytes).sum();
    format!(
        "wrote {events} events ({copies} copies) to {what}: {json} bytes of JSON, {disk} bytes on disk"
    )
}
