//! `kinetoscope-bench --adversarial`: the complexity benchmark. For every adversarial
//! shape of `kinetoscope_synth::shapes` at N, 2N and 4N units it times `summary`,
//! `report` and every other view (JSON output, the engine's documents) and reports
//! `report`'s time and peak RSS against `summary`'s, and how `report` grows from N to
//! 4N — linear analyses give ≈ 4×, quadratic ones 16×. With `--baseline BIN` it also
//! times another binary (the pre-change one) on `summary` and `report`, killed at the
//! time limit.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use kinetoscope_synth::shapes::{write_shape, Shape, ShapeOptions};

use crate::child::run_child;

/// Every view the benchmark times besides `summary` and `report`.
pub const VIEWS: [&str; 11] = [
    "memory",
    "overview",
    "ops",
    "perf",
    "kernels",
    "temporal",
    "idle",
    "launches",
    "comm",
    "sequences",
    "critical-path",
];

/// What to run.
pub struct Options {
    /// N: units at scale 1.
    pub units: u64,
    /// Multiples of N to run (1, 2, 4).
    pub scales: Vec<u64>,
    /// Shapes to run.
    pub shapes: Vec<Shape>,
    /// Views timed at the largest scale.
    pub views: Vec<String>,
    /// Another binary to time on `summary` and `report` (before/after).
    pub baseline: Option<PathBuf>,
    /// Time limit per run; a run past it is killed and shown as `>limit`.
    pub limit: Duration,
    /// Timed runs per measure (best time, highest RSS).
    pub runs: usize,
    /// Largest `report` / `summary` time ratio that passes.
    pub max_ratio: f64,
    /// Keep the generated files under `bench/data/adversarial/`.
    pub keep: bool,
}

/// One measure: best time (`None`: killed at the limit) and peak RSS.
#[derive(Clone, Copy)]
struct Measure {
    secs: Option<f64>,
    rss_mib: f64,
}

impl Measure {
    fn time(&self, limit: Duration) -> String {
        self.secs.map_or_else(
            || format!(">{:.0}", limit.as_secs_f64()),
            |s| format!("{s:.3}"),
        )
    }
}

/// The results of one shape at one size.
struct SizeRun {
    shape: Shape,
    units: u64,
    events: u64,
    bytes: u64,
    summary: Measure,
    report: Measure,
    views: Vec<(String, Measure)>,
    before: Option<(Measure, Measure)>,
}

/// Run `bin VIEW FILE --format json` `runs` times.
fn measure(
    bin: &Path,
    view: &str,
    file: &Path,
    runs: usize,
    limit: Duration,
) -> anyhow::Result<Measure> {
    let mut m = Measure {
        secs: None,
        rss_mib: 0.0,
    };
    for _ in 0..runs.max(1) {
        let mut cmd = Command::new(bin);
        cmd.env("KINETOSCOPE_NO_CACHE", "1");
        cmd.arg(view).arg(file).args(["--format", "json"]);
        let run = run_child(&mut cmd, Stdio::null(), Some(limit))?;
        m.rss_mib = m.rss_mib.max(run.max_rss_kib as f64 / 1024.0);
        if run.timed_out {
            return Ok(m);
        }
        if !matches!(run.code, Some(0..=1)) {
            bail!(
                "{} {view} {} failed (exit {:?}): {}",
                bin.display(),
                file.display(),
                run.code,
                run.stderr.trim()
            );
        }
        let t = run.wall.as_secs_f64();
        m.secs = Some(m.secs.map_or(t, |b: f64| b.min(t)));
    }
    Ok(m)
}

/// Generate, time and (unless kept) remove one shape at one size.
fn size_run(
    kinetoscope: &Path,
    data: &Path,
    opts: &Options,
    (shape, units, views): (Shape, u64, bool),
) -> anyhow::Result<SizeRun> {
    let file = data.join(format!("{shape}-{units}.json"));
    // Deep nesting nests all of it in one step: 4N units are 4N levels deep.
    let steps = if shape == Shape::DeepNesting { 1 } else { 3 };
    let written = write_shape(
        &ShapeOptions {
            shape,
            units,
            steps,
        },
        &file,
    )?;
    let mut err = io::stderr().lock();
    writeln!(
        err,
        "{shape} × {units}: {} events, {:.0} MB",
        written.stats.events,
        written.file_bytes as f64 / 1e6
    )?;
    let m = |bin: &Path, view: &str| measure(bin, view, &file, opts.runs, opts.limit);
    let summary = m(kinetoscope, "summary")?;
    let report = m(kinetoscope, "report")?;
    writeln!(
        err,
        "  summary {} s {:.0} MiB, report {} s {:.0} MiB",
        summary.time(opts.limit),
        summary.rss_mib,
        report.time(opts.limit),
        report.rss_mib
    )?;
    let mut view_runs = Vec::new();
    if views {
        for v in &opts.views {
            let r = m(kinetoscope, v)?;
            writeln!(err, "  {v} {} s {:.0} MiB", r.time(opts.limit), r.rss_mib)?;
            view_runs.push((v.clone(), r));
        }
    }
    let before = match &opts.baseline {
        Some(b) => {
            let pair = (m(b, "summary")?, m(b, "report")?);
            writeln!(
                err,
                "  baseline: summary {} s {:.0} MiB, report {} s {:.0} MiB",
                pair.0.time(opts.limit),
                pair.0.rss_mib,
                pair.1.time(opts.limit),
                pair.1.rss_mib
            )?;
            Some(pair)
        }
        None => None,
    };
    if !opts.keep {
        fs::remove_file(&file).with_context(|| format!("cannot remove {}", file.display()))?;
    }
    Ok(SizeRun {
        shape,
        units,
        events: written.stats.events,
        bytes: written.file_bytes,
        summary,
        report,
        views: view_runs,
        before,
    })
}

/// Run the benchmark and print its tables.
pub fn run(root: &Path, kinetoscope: &Path, opts: &Options) -> anyhow::Result<()> {
    let data = root.join("bench/data/adversarial");
    fs::create_dir_all(&data).with_context(|| format!("cannot create {}", data.display()))?;
    let load_before = crate::load_average();
    let largest = opts.scales.iter().copied().max().unwrap_or(1);
    let mut runs = Vec::new();
    for &shape in &opts.shapes {
        for &scale in &opts.scales {
            let units = opts.units.saturating_mul(scale);
            runs.push(size_run(
                kinetoscope,
                &data,
                opts,
                (shape, units, scale == largest),
            )?);
        }
    }
    let mut out = io::stdout().lock();
    print_sizes(&mut out, &runs, opts)?;
    print_growth(&mut out, &runs, opts)?;
    print_views(&mut out, &runs, opts)?;
    writeln!(
        out,
        "\nload average (1 min) before {load_before}, after {}",
        crate::load_average()
    )?;
    Ok(())
}

/// `report` against `summary` at every size (and the baseline's, when given).
fn print_sizes(out: &mut impl Write, runs: &[SizeRun], opts: &Options) -> io::Result<()> {
    writeln!(
        out,
        "{:<16} {:>8} {:>9} {:>8} {:>9} {:>9} {:>7} {:>8} {:>8} {:>6}{}",
        "shape",
        "units",
        "events",
        "JSON MB",
        "summary s",
        "report s",
        "ratio",
        "sum MiB",
        "rep MiB",
        "check",
        if opts.baseline.is_some() {
            "  before: summary s  report s  rep MiB"
        } else {
            ""
        }
    )?;
    for r in runs {
        let ratio = match (r.report.secs, r.summary.secs) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let ok = ratio.is_some_and(|x| x <= opts.max_ratio);
        let before = r.before.map_or_else(String::new, |(s, p)| {
            format!(
                "  {:>17} {:>9} {:>8.0}",
                s.time(opts.limit),
                p.time(opts.limit),
                p.rss_mib
            )
        });
        writeln!(
            out,
            "{:<16} {:>8} {:>9} {:>8.1} {:>9} {:>9} {:>7} {:>8.0} {:>8.0} {:>6}{before}",
            r.shape.name(),
            r.units,
            r.events,
            r.bytes as f64 / 1e6,
            r.summary.time(opts.limit),
            r.report.time(opts.limit),
            ratio.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}")),
            r.summary.rss_mib,
            r.report.rss_mib,
            if ok { "ok" } else { "MISS" }
        )?;
    }
    Ok(())
}

/// How `report` grows from the smallest size to the largest, per shape (a linear
/// analysis grows with the size; the check allows 1.5× that for timing noise).
fn print_growth(out: &mut impl Write, runs: &[SizeRun], opts: &Options) -> io::Result<()> {
    writeln!(
        out,
        "\nreport time by size (growth = largest / smallest time, size ×{})",
        {
            let lo = opts.scales.iter().min().copied().unwrap_or(1);
            let hi = opts.scales.iter().max().copied().unwrap_or(1);
            hi / lo.max(1)
        }
    )?;
    for shape in &opts.shapes {
        let of: Vec<&SizeRun> = runs.iter().filter(|r| r.shape == *shape).collect();
        let (Some(first), Some(last)) = (of.first(), of.last()) else {
            continue;
        };
        let times: Vec<String> = of.iter().map(|r| r.report.time(opts.limit)).collect();
        let size = last.units as f64 / first.units.max(1) as f64;
        let growth = match (first.report.secs, last.report.secs) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        };
        writeln!(
            out,
            "{:<16} {:<28} growth {:>6} {}",
            shape.name(),
            times.join(" → "),
            growth.map_or_else(|| "-".to_owned(), |g| format!("{g:.2}")),
            if growth.is_some_and(|g| g <= 1.5 * size) {
                "ok"
            } else {
                "MISS"
            }
        )?;
    }
    Ok(())
}

/// Every view at the largest size, as a multiple of `summary`'s time and with its RSS.
fn print_views(out: &mut impl Write, runs: &[SizeRun], opts: &Options) -> io::Result<()> {
    let largest: Vec<&SizeRun> = runs.iter().filter(|r| !r.views.is_empty()).collect();
    let Some(first) = largest.first() else {
        return Ok(());
    };
    writeln!(
        out,
        "\nviews at the largest size: time / summary time (peak RSS MiB)"
    )?;
    write!(out, "{:<16}", "shape")?;
    for (v, _) in &first.views {
        write!(out, " {v:>15}")?;
    }
    writeln!(out)?;
    for r in &largest {
        write!(out, "{:<16}", r.shape.name())?;
        for (_, m) in &r.views {
            let cell = match (m.secs, r.summary.secs) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2} ({:.0})", a / b, m.rss_mib),
                _ => format!("{} ({:.0})", m.time(opts.limit), m.rss_mib),
            };
            write!(out, " {cell:>15}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
