//! `kinetoscope-bench`: throughput and peak RSS of `kinetoscope summary` on a large
//! generated Kineto trace, plain and gzip, and (`--adversarial`) the complexity
//! benchmark on adversarial shapes, and (`--corpus`) issue 15's corpus of real traces
//! grown to 1 GiB (see `bench/README.md`).

mod adversarial;
mod child;
mod corpus;
mod serve;
mod table;

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use kinetoscope_synth::shapes::Shape;

use child::run_child;
use serde::de::IgnoredAny;
use serde::Deserialize;

/// Measures `kinetoscope summary` (wall time, MB/s of uncompressed JSON, peak RSS) on a
/// large trace generated from a real GPU trace, plain and gzip.
///
/// Build first:  cargo build --release --workspace
/// Then run:     target/release/kinetoscope-bench [--compare-serde]
#[derive(Debug, Parser)]
#[command(name = "kinetoscope-bench", version, verbatim_doc_comment)]
struct Cli {
    /// The kinetoscope binary (default: <repo>/target/release/kinetoscope).
    #[arg(long)]
    kinetoscope: Option<PathBuf>,
    /// The kinetoscope-synth binary (default: <repo>/target/release/kinetoscope-synth).
    #[arg(long)]
    synth: Option<PathBuf>,
    /// The real trace to grow (default:
    /// <repo>/../shared/external/hta/negative_queue_length_values_check/rank0.json.gz).
    #[arg(long)]
    from: Option<PathBuf>,
    /// Size of the generated trace, in bytes of uncompressed JSON (K/M/G = 10^3…,
    /// KiB/MiB/GiB = 2^10…).
    #[arg(long, default_value = "1GiB")]
    size: String,
    /// Timed runs per file.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// The kinetoscope subcommand (and options) to time; inserted before the file path.
    #[arg(long, default_value = "summary")]
    command: String,
    /// Passed to kinetoscope as `-j N`.
    #[arg(long)]
    threads: Option<usize>,
    /// Also time an in-process serde_json parse of the plain file (borrowed struct per
    /// event, one thread) and `kinetoscope … -j 1` on it.
    #[arg(long)]
    compare_serde: bool,
    /// Also time these subcommands (comma-separated, e.g. `overview,ops,kernels`) on the
    /// plain file and print each one's time relative to the timed command's.
    #[arg(long, value_delimiter = ',')]
    compare_views: Vec<String>,
    /// The largest view/command time ratio that passes (`--compare-views`).
    #[arg(long, default_value_t = 1.5)]
    max_view_ratio: f64,
    /// Generate the data files again even if they look right.
    #[arg(long)]
    regenerate: bool,
    /// Only the plain JSON file (skip gzip).
    #[arg(long)]
    plain_only: bool,
    /// Run the complexity benchmark instead: every view on each adversarial shape at
    /// N, 2N and 4N units (`kinetoscope-synth --shape`), report against summary.
    #[arg(long)]
    adversarial: bool,
    /// Adversarial mode: N, the units at scale 1.
    #[arg(long, default_value_t = 100_000, requires = "adversarial")]
    units: u64,
    /// Adversarial mode: the multiples of N to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4",
        requires = "adversarial"
    )]
    scales: Vec<u64>,
    /// Adversarial mode: the shapes (default: all).
    #[arg(long, value_delimiter = ',', requires = "adversarial")]
    shapes: Vec<Shape>,
    /// Adversarial mode: the views timed at the largest size (default: every view).
    #[arg(long, value_delimiter = ',', requires = "adversarial")]
    views: Vec<String>,
    /// Adversarial mode: another kinetoscope binary to time on summary and report (the
    /// pre-change one, for before/after).
    #[arg(long, requires = "adversarial")]
    baseline: Option<PathBuf>,
    /// Adversarial mode: seconds after which a run is killed (shown as `>limit`).
    #[arg(long, default_value_t = 120, requires = "adversarial")]
    limit: u64,
    /// Adversarial mode: the largest report / summary time ratio that passes.
    #[arg(long, default_value_t = 3.0, requires = "adversarial")]
    max_ratio: f64,
    /// Adversarial and corpus modes: keep the generated files (in
    /// bench/data/adversarial/, or --work-dir).
    #[arg(long)]
    keep: bool,
    /// Benchmark the web UI's timeline instead (`kinetoscope serve` over loopback HTTP):
    /// load, first paint and 20 zoom/pan queries on this trace, or on the generated
    /// plain trace when given without a value.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    serve: Option<PathBuf>,
    /// Run the benchmark corpus instead (issue 15): real traces grown to --size and to
    /// --small-size, each measured and deleted; one table per entry, then the targets.
    #[arg(long)]
    corpus: bool,
    /// Corpus mode: the folder the seed paths (--list-seeds) are relative to (default:
    /// the project's reference data beside the repository).
    #[arg(long, requires = "corpus")]
    seeds: Option<PathBuf>,
    /// Corpus mode: where the grown traces are written.
    #[arg(long, default_value = "/tmp/kinetoscope-corpus", requires = "corpus")]
    work_dir: PathBuf,
    /// Corpus mode: the small size, for the linearity of `report` (whole copies of at
    /// least this: 51.5-54 MB, the profile_memory seed itself at 53.7 MB).
    #[arg(long, default_value = "51MB", requires = "corpus")]
    small_size: String,
    /// Corpus mode: write the results as JSON to this file.
    #[arg(long, requires = "corpus")]
    json_out: Option<PathBuf>,
    /// Corpus mode: only these entries (comma-separated names).
    #[arg(long, value_delimiter = ',', requires = "corpus")]
    only: Vec<String>,
    /// Corpus mode: print the seed paths (relative to --seeds), one a line, and exit.
    #[arg(long, requires = "corpus")]
    list_seeds: bool,
    /// Internal: time the serde_json baseline on FILE and print the times as JSON.
    #[arg(long, hide = true, value_name = "FILE")]
    serde_child: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            let mut stderr = io::stderr().lock();
            let _ = writeln!(stderr, "error: {err}");
            for cause in err.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
            std::process::ExitCode::from(2)
        }
    }
}

/// The folder holding the workspace `Cargo.toml`, from the current directory up.
fn repo_root() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    for dir in cwd.ancestors() {
        let manifest = dir.join("Cargo.toml");
        if let Ok(text) = fs::read_to_string(&manifest) {
            if text.contains("[workspace]") && dir.join("crates").is_dir() {
                return Ok(dir.to_path_buf());
            }
        }
    }
    bail!(
        "cannot find the kinetoscope workspace root above {}",
        cwd.display()
    )
}

/// `1GiB` → `1g`, `512MiB` → `512m`: the name part of a data file.
fn size_label(size: &str) -> String {
    let s = size.trim().to_ascii_lowercase();
    let s = s
        .strip_suffix("ib")
        .or_else(|| s.strip_suffix('b'))
        .unwrap_or(&s);
    s.replace('.', "_")
}

/// Uncompressed size of a (possibly gzip) file.
fn json_len(path: &Path) -> anyhow::Result<u64> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic)?;
    f.seek(SeekFrom::Start(0))?;
    if n == 2 && magic == [0x1f, 0x8b] {
        let mut dec = flate2::read::MultiGzDecoder::new(io::BufReader::new(f));
        Ok(io::copy(&mut dec, &mut io::sink())?)
    } else {
        Ok(f.metadata()?.len())
    }
}

/// The gzip trailer's ISIZE (uncompressed length mod 2^32).
fn gzip_isize(path: &Path) -> Option<u32> {
    let mut f = File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    if len < 18 {
        return None;
    }
    f.seek(SeekFrom::End(-4)).ok()?;
    let mut b = [0u8; 4];
    f.read_exact(&mut b).ok()?;
    Some(u32::from_le_bytes(b))
}

fn synth(synth: &Path, from: &Path, size: &str, out: &Path, extra: &[&str]) -> anyhow::Result<()> {
    let mut err = io::stderr().lock();
    writeln!(
        err,
        "generating {} ({size}) from {}…",
        out.display(),
        from.display()
    )?;
    let t = Instant::now();
    let output = Command::new(synth)
        .arg("--from")
        .arg(from)
        .arg("--size")
        .arg(size)
        .arg("--out")
        .arg(out)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", synth.display()))?;
    err.write_all(&output.stdout)?;
    err.write_all(&output.stderr)?;
    if !output.status.success() {
        bail!("{} failed ({})", synth.display(), output.status);
    }
    writeln!(err, "  took {:.1} s", t.elapsed().as_secs_f64())?;
    Ok(())
}

/// One row of the result table.
struct Row {
    label: String,
    json_bytes: u64,
    times: Vec<f64>,
    max_rss_kib: Option<u64>,
}

impl Row {
    fn best(&self) -> f64 {
        self.times.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn median(&self) -> f64 {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        let n = t.len();
        if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        }
    }
    fn mbps(&self, secs: f64) -> f64 {
        self.json_bytes as f64 / 1e6 / secs
    }
    fn rss_mib(&self) -> Option<f64> {
        self.max_rss_kib.map(|k| k as f64 / 1024.0)
    }
    fn rss_ratio(&self) -> Option<f64> {
        self.max_rss_kib
            .map(|k| (k * 1024) as f64 / self.json_bytes as f64)
    }
}

struct Bench<'a> {
    kinetoscope: &'a Path,
    command: Vec<String>,
    threads: Option<usize>,
    runs: usize,
}

impl Bench<'_> {
    fn cmd(&self, file: &Path, threads: Option<usize>) -> Command {
        let mut c = Command::new(self.kinetoscope);
        // Every run parses: a benchmark of the reader must not read the trace cache.
        c.env("KINETOSCOPE_NO_CACHE", "1");
        c.args(&self.command).arg(file).args(["--format", "json"]);
        if let Some(j) = threads {
            c.arg("-j").arg(j.to_string());
        }
        c
    }

    /// A first, untimed run that keeps the output, reports errors and warnings and
    /// warms the page cache.
    fn check(&self, file: &Path, threads: Option<usize>) -> anyhow::Result<()> {
        let command = self.command.first().map_or("summary", String::as_str);
        let out_path = check_output(file, command);
        let out = File::create(&out_path)?;
        let run = run_child(&mut self.cmd(file, threads), Stdio::from(out), None)?;
        let mut err = io::stderr().lock();
        writeln!(
            err,
            "check run: {} → exit {:?}, {:.2} s, peak RSS {:.0} MiB (output in {})",
            file.display(),
            run.code,
            run.wall.as_secs_f64(),
            run.max_rss_kib as f64 / 1024.0,
            out_path.display()
        )?;
        if !run.stderr.trim().is_empty() {
            writeln!(err, "  stderr: {}", run.stderr.trim())?;
        }
        let text = fs::read_to_string(&out_path).unwrap_or_default();
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(doc) => {
                for t in doc["traces"].as_array().into_iter().flatten() {
                    // `summary` writes a trace's warnings, events and steps at its top;
                    // `report` only the warnings, under `summary`.
                    let warnings = match &t["warnings"] {
                        serde_json::Value::Null => &t["summary"]["warnings"],
                        w => w,
                    };
                    if warnings.as_array().is_some_and(|w| !w.is_empty()) {
                        writeln!(err, "  warnings: {warnings}")?;
                    }
                    if let Some(events) = t["total_events"].as_u64() {
                        let steps = t["steps"].as_array().map_or(0, Vec::len);
                        writeln!(err, "  events: {events}, steps: {steps}")?;
                    }
                }
                if doc["errors"].as_array().is_some_and(|e| !e.is_empty()) {
                    writeln!(err, "  errors: {}", doc["errors"])?;
                }
            }
            Err(_) if self.command.first().map(String::as_str) != Some("summary") => {}
            Err(e) => writeln!(err, "  output is not JSON: {e}")?,
        }
        if run.code != Some(0) {
            bail!(
                "kinetoscope failed on {} (exit {:?}): {}",
                file.display(),
                run.code,
                run.stderr.trim()
            );
        }
        Ok(())
    }

    fn time(
        &self,
        label: String,
        file: &Path,
        json_bytes: u64,
        threads: Option<usize>,
    ) -> anyhow::Result<Row> {
        self.check(file, threads)?;
        let mut row = Row {
            label,
            json_bytes,
            times: Vec::new(),
            max_rss_kib: Some(0),
        };
        for i in 0..self.runs.max(1) {
            let (wall, rss_kib) = self.run_once(file, threads, i)?;
            row.times.push(wall);
            row.max_rss_kib = row.max_rss_kib.max(Some(rss_kib));
        }
        Ok(row)
    }

    /// One timed run (run `i`, counted from 0): its wall time in seconds and peak RSS in
    /// KiB; an error when it fails.
    fn run_once(
        &self,
        file: &Path,
        threads: Option<usize>,
        i: usize,
    ) -> anyhow::Result<(f64, u64)> {
        let run = run_child(&mut self.cmd(file, threads), Stdio::null(), None)?;
        if run.code != Some(0) {
            bail!(
                "run {i} on {} failed (exit {:?}): {}",
                file.display(),
                run.code,
                run.stderr.trim()
            );
        }
        let threads = threads.map(|j| format!(" -j {j}")).unwrap_or_default();
        let _ = writeln!(
            io::stderr().lock(),
            "  {}{threads} run {}: {:.3} s, {:.0} MiB",
            self.command.join(" "),
            i + 1,
            run.wall.as_secs_f64(),
            run.max_rss_kib as f64 / 1024.0
        );
        Ok((run.wall.as_secs_f64(), run.max_rss_kib))
    }
}

/// The serde_json baseline: one borrowed struct per event.
#[derive(Deserialize)]
#[allow(dead_code)]
struct Ev<'a> {
    ph: Option<&'a str>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    ts: Option<f64>,
    dur: Option<f64>,
    pid: Option<IgnoredAny>,
    tid: Option<IgnoredAny>,
    args: Option<IgnoredAny>,
}

/// The top-level object for the baseline.
#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow, rename = "traceEvents")]
    trace_events: Vec<Ev<'a>>,
}

/// Parses `buf` with serde_json `runs` times; returns the parse times and a checksum.
fn serde_baseline(buf: &[u8], runs: usize) -> anyhow::Result<(Vec<f64>, u64, u64)> {
    let mut times = Vec::new();
    let mut events = 0;
    let mut check = 0u64;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let top: Top = serde_json::from_slice(buf).context("serde_json baseline parse")?;
        // Touch what was parsed so nothing is optimised away.
        let mut x = 0u64;
        for e in &top.trace_events {
            x = x.wrapping_add(e.dur.unwrap_or(0.0) as u64);
            x = x.wrapping_add(e.name.as_ref().map_or(0, |n| n.len()) as u64);
            x = x.wrapping_add(u64::from(e.ph == Some("X")));
            x = x.wrapping_add(e.cat.as_ref().map_or(0, |c| c.len()) as u64);
            x = x.wrapping_add(e.ts.unwrap_or(0.0) as u64 & 1);
        }
        events = top.trace_events.len() as u64;
        drop(std::hint::black_box(top));
        times.push(t.elapsed().as_secs_f64());
        check = std::hint::black_box(x);
    }
    Ok((times, events, check))
}

/// The 1-minute load average (other work on the machine skews the timings).
pub(crate) fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

fn print_table(out: &mut impl Write, rows: &[&Row]) -> io::Result<()> {
    let header = [
        "file",
        "JSON bytes",
        "runs",
        "best s",
        "median s",
        "MB/s best",
        "MB/s median",
        "peak RSS MiB",
        "RSS/size",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.json_bytes.to_string(),
                r.times.len().to_string(),
                format!("{:.3}", r.best()),
                format!("{:.3}", r.median()),
                format!("{:.0}", r.mbps(r.best())),
                format!("{:.0}", r.mbps(r.median())),
                fmt_opt(r.rss_mib(), 0),
                fmt_opt(r.rss_ratio(), 3),
            ]
        })
        .collect();
    table::write_grid(out, &header, &cells)
}

/// `--corpus`: the options from the command line; binaries default to the ones beside
/// this one (so a staged folder runs without a repository).
fn run_corpus(cli: &Cli) -> anyhow::Result<()> {
    if cli.list_seeds {
        let mut out = io::stdout().lock();
        for seed in corpus::sources::seeds() {
            writeln!(out, "{seed}")?;
        }
        return Ok(());
    }
    let exe = std::env::current_exe().context("cannot find this binary's path")?;
    let beside = |name: &str| exe.with_file_name(name);
    let seeds = match &cli.seeds {
        Some(s) => s.clone(),
        None => repo_root()?.join("../shared/external"),
    };
    let opts = corpus::Options {
        kinetoscope: cli
            .kinetoscope
            .clone()
            .unwrap_or_else(|| beside("kinetoscope")),
        synth: cli
            .synth
            .clone()
            .unwrap_or_else(|| beside("kinetoscope-synth")),
        bench: exe.clone(),
        seeds,
        work_dir: cli.work_dir.clone(),
        size: cli.size.clone(),
        small_size: cli.small_size.clone(),
        runs: cli.runs.max(1),
        keep: cli.keep,
        only: cli.only.clone(),
        json_out: cli.json_out.clone(),
    };
    corpus::run(&opts)
}

/// The mode the options ask for; by default the data files, the timed runs, the table
/// and the targets.
fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(file) = &cli.serde_child {
        return corpus::serde_child(file, cli.runs);
    }
    if cli.corpus {
        return run_corpus(&cli);
    }
    let root = repo_root()?;
    let abs = |p: &Option<PathBuf>, default: PathBuf| -> PathBuf { p.clone().unwrap_or(default) };
    let kinetoscope = abs(&cli.kinetoscope, root.join("target/release/kinetoscope"));
    if cli.adversarial {
        return run_adversarial(&cli, &root, &kinetoscope);
    }
    if let Some(trace) = cli.serve.as_ref().filter(|t| !t.as_os_str().is_empty()) {
        return serve::run(&kinetoscope, trace);
    }
    let synth_bin = abs(&cli.synth, root.join("target/release/kinetoscope-synth"));
    let from = abs(
        &cli.from,
        root.join("../shared/external/hta/negative_queue_length_values_check/rank0.json.gz"),
    );
    check_inputs(&kinetoscope, &synth_bin, &from)?;
    let files = data_files(&cli, &root, &synth_bin, &from)?;

    if cli.serve.is_some() {
        return serve::run(&kinetoscope, &files.plain);
    }

    let timings = timed_runs(&cli, &kinetoscope, &files)?;
    let mut out = io::stdout().lock();
    print_results(&mut out, &cli, &timings, &kinetoscope, &from)?;
    print_targets(&mut out, &cli, &timings)
}

/// `--adversarial`: the complexity benchmark, with the options from the command line.
fn run_adversarial(cli: &Cli, root: &Path, kinetoscope: &Path) -> anyhow::Result<()> {
    if !kinetoscope.is_file() {
        bail!(
            "kinetoscope binary not found at {} (run `cargo build --release --workspace`, or pass --kinetoscope)",
            kinetoscope.display()
        );
    }
    let opts = adversarial::Options {
        units: cli.units.max(1),
        scales: cli.scales.clone(),
        shapes: if cli.shapes.is_empty() {
            Shape::ALL.to_vec()
        } else {
            cli.shapes.clone()
        },
        views: if cli.views.is_empty() {
            adversarial::VIEWS.iter().map(|v| v.to_string()).collect()
        } else {
            cli.views.clone()
        },
        baseline: cli.baseline.clone(),
        limit: Duration::from_secs(cli.limit.max(1)),
        runs: cli.runs,
        max_ratio: cli.max_ratio,
        keep: cli.keep,
    };
    adversarial::run(root, kinetoscope, &opts)
}

/// An error unless both binaries and the source trace are files.
fn check_inputs(kinetoscope: &Path, synth_bin: &Path, from: &Path) -> anyhow::Result<()> {
    for (what, p) in [
        ("kinetoscope", kinetoscope),
        ("kinetoscope-synth", synth_bin),
    ] {
        if !p.is_file() {
            bail!(
                "{what} binary not found at {} (run `cargo build --release --workspace`, or pass --{})",
                p.display(),
                if what == "kinetoscope" { "kinetoscope" } else { "synth" }
            );
        }
    }
    if !from.is_file() {
        bail!("source trace not found at {} (pass --from)", from.display());
    }
    Ok(())
}

/// The generated trace, plain and gzip, and its length in bytes of JSON.
struct DataFiles {
    plain: PathBuf,
    gz: PathBuf,
    plain_len: u64,
}

/// The data files, generated from `from` unless they look right (or --regenerate).
fn data_files(cli: &Cli, root: &Path, synth_bin: &Path, from: &Path) -> anyhow::Result<DataFiles> {
    let target = kinetoscope_synth::parse_size(&cli.size)?;
    let data = root.join("bench/data");
    fs::create_dir_all(&data)?;
    let label = size_label(&cli.size);
    let plain = data.join(format!("bench-{label}.json"));
    let gz = data.join(format!("bench-{label}.json.gz"));

    // (2) the data files, reused when they look right.
    let src_len = json_len(from)?;
    let plain_ok =
        |p: &Path| fs::metadata(p).is_ok_and(|m| m.len() >= target && m.len() <= target + src_len);
    if cli.regenerate || !plain_ok(&plain) {
        synth(synth_bin, from, &cli.size, &plain, &[])?;
    }
    let plain_len = fs::metadata(&plain)?.len();
    if !cli.plain_only && (cli.regenerate || gzip_isize(&gz) != Some(plain_len as u32)) {
        synth(synth_bin, from, &cli.size, &gz, &[])?;
        if gzip_isize(&gz) != Some(plain_len as u32) {
            bail!(
                "{} does not decompress to the size of {}",
                gz.display(),
                plain.display()
            );
        }
    }
    Ok(DataFiles {
        plain,
        gz,
        plain_len,
    })
}

/// ` -j N` when a thread count is given, else empty.
fn jobs_label(threads: Option<usize>) -> String {
    threads.map_or_else(String::new, |j| format!(" -j {j}"))
}

/// A file's name, for a row label.
fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// What the timed runs measured.
struct Timings {
    /// The timed kinetoscope subcommand and its options.
    command: Vec<String>,
    /// The load average before the first run.
    load_before: String,
    /// The command on the plain file, on the gzip file (unless --plain-only), then with
    /// `-j 1` (--compare-serde).
    rows: Vec<Row>,
    /// One row per --compare-views view.
    view_rows: Vec<Row>,
    /// The serde_json baseline and the events it parsed (--compare-serde).
    serde_row: Option<(Row, u64)>,
}

/// (3) the timed runs: the command on each file, each view, then the serde_json baseline.
fn timed_runs(cli: &Cli, kinetoscope: &Path, files: &DataFiles) -> anyhow::Result<Timings> {
    let DataFiles {
        plain,
        gz,
        plain_len,
    } = files;
    let plain_len = *plain_len;
    let bench = Bench {
        kinetoscope,
        command: cli.command.split_whitespace().map(String::from).collect(),
        threads: cli.threads,
        runs: cli.runs,
    };
    let load_before = load_average();
    let mut rows = Vec::new();
    rows.push(bench.time(
        format!("{}{}", file_name(plain), jobs_label(bench.threads)),
        plain,
        plain_len,
        bench.threads,
    )?);
    if !cli.plain_only {
        rows.push(bench.time(
            format!("{}{}", file_name(gz), jobs_label(bench.threads)),
            gz,
            plain_len,
            bench.threads,
        )?);
    }
    let mut view_rows = Vec::new();
    for view in &cli.compare_views {
        let vb = Bench {
            kinetoscope,
            command: view.split_whitespace().map(String::from).collect(),
            threads: cli.threads,
            runs: cli.runs,
        };
        view_rows.push(vb.time(
            format!("{view} {}", file_name(plain)),
            plain,
            plain_len,
            cli.threads,
        )?);
    }
    let mut serde_row = None;
    // Last: the in-process baseline grows this process, and a child spawned afterwards
    // could report that in its peak RSS.
    if cli.compare_serde {
        rows.push(bench.time(
            format!("{} -j 1", file_name(plain)),
            plain,
            plain_len,
            Some(1),
        )?);
        let _ = writeln!(
            io::stderr().lock(),
            "serde_json baseline: reading {}…",
            plain.display()
        );
        let buf = fs::read(plain)?;
        let (times, events, _) = serde_baseline(&buf, cli.runs)?;
        serde_row = Some((
            Row {
                label: "serde_json borrowed struct (in-process, 1 thread)".into(),
                json_bytes: plain_len,
                times,
                max_rss_kib: None,
            },
            events,
        ));
    }
    Ok(Timings {
        command: bench.command,
        load_before,
        rows,
        view_rows,
        serde_row,
    })
}

/// (4) the table: what was timed where, the load, one row per timing, the baseline.
fn print_results(
    out: &mut impl Write,
    cli: &Cli,
    timings: &Timings,
    kinetoscope: &Path,
    from: &Path,
) -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    writeln!(
        out,
        "kinetoscope-bench: `{} FILE --format json{}` on {} ({} cores), source {}",
        timings.command.join(" "),
        jobs_label(cli.threads),
        kinetoscope.display(),
        cores,
        from.display()
    )?;
    writeln!(
        out,
        "load average before: {}, after: {}",
        timings.load_before,
        load_average()
    )?;
    let mut all: Vec<&Row> = timings.rows.iter().chain(&timings.view_rows).collect();
    if let Some((row, _)) = &timings.serde_row {
        all.push(row);
    }
    print_table(out, &all)?;
    if let Some((row, events)) = &timings.serde_row {
        writeln!(
            out,
            "serde_json baseline: {events} events, parse only (buffer already in memory), best {:.3} s = {:.0} MB/s",
            row.best(),
            row.mbps(row.best())
        )?;
    }
    Ok(())
}

/// The targets (bench/README.md), each `ok` or `MISS`.
fn print_targets(out: &mut impl Write, cli: &Cli, timings: &Timings) -> anyhow::Result<()> {
    let pass = |ok: bool| if ok { "ok  " } else { "MISS" };
    let rows = &timings.rows;
    let plain_row = &rows[0];
    writeln!(out, "targets:")?;
    writeln!(
        out,
        "  {} plain JSON ≥ 1000 MB/s end to end: {:.0} MB/s (best)",
        pass(plain_row.mbps(plain_row.best()) >= 1000.0),
        plain_row.mbps(plain_row.best())
    )?;
    if !cli.plain_only {
        let g = &rows[1];
        writeln!(
            out,
            "  {} gzip ≥ 500 MB/s of uncompressed JSON: {:.0} MB/s (best)",
            pass(g.mbps(g.best()) >= 500.0),
            g.mbps(g.best())
        )?;
    }
    for (view, r) in cli.compare_views.iter().zip(&timings.view_rows) {
        let ratio = r.best() / plain_row.best();
        writeln!(
            out,
            "  {} `{view}` ≤ {:.1} × `{}` (best times): {ratio:.2} ×",
            pass(ratio <= cli.max_view_ratio),
            cli.max_view_ratio,
            timings.command.join(" ")
        )?;
    }
    for r in rows {
        if let Some(ratio) = r.rss_ratio() {
            writeln!(
                out,
                "  {} peak RSS ≤ 0.3 × JSON size ({}): {ratio:.3}",
                pass(ratio <= 0.3),
                r.label
            )?;
        }
    }
    Ok(())
}

/// Where the check run of `command` on `file` keeps its output: `FILE.<command>.json`
/// (`bench/data/bench-1g.json.summary.json`).
fn check_output(file: &Path, command: &str) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{command}.json"));
    file.with_file_name(name)
}
