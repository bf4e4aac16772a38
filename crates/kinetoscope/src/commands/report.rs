//! `kinetoscope report` (also what `kinetoscope PATH` and a bare `kinetoscope` run): the
//! advisor's summary and ranked findings; `--fail-on` turns it into a CI gate.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kinetoscope_advisor::{Config, Severity};
use kinetoscope_analysis::perf::PerfOptions;
use kinetoscope_engine::diff::document::ThroughputUnit;
use kinetoscope_engine::{
    BundleOptions, Engine, ReportDocument, ReportJson, ReportSink, Source, TraceCache,
};
use kinetoscope_report::report::to_table;

use super::output::{finish, note_skipped, render, Stdout};
use super::{engine, output_file, source};
use crate::args::{FailOn, ReportArgs, ViewFormat};

/// Most memory the traces read for `--html` stay loaded between its views (the least
/// recently used are dropped, then read again, beyond it): `serve`'s `--max-loaded`
/// default.
const HTML_MAX_LOADED: u64 = 8 << 30;

/// Run the advisor over the input and apply the gate.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(&args)?;
    let src = source(args.path.as_deref());
    let reads = args
        .path
        .as_deref()
        .map(|p| output_file::files_read(p, args.config.clone()))
        .unwrap_or_default();
    if let Some(out) = &args.html {
        // Refused before anything is read; checked again when written.
        output_file::check("--html", out, &reads)?;
    }
    let mut engine = engine(&args.read);
    if args.html.is_some() {
        // The page needs a dozen views of the same traces: each is read once, kept.
        engine.cache = Some(Arc::new(TraceCache::new(HTML_MAX_LOADED)));
    }
    let format = ViewFormat::from(args.format);
    // JSON is written trace by trace as the report is made (over thousands of ranks the
    // document is large); the terminal table needs no trace's operator tables.
    let mut json = (format == ViewFormat::Json)
        .then(|| ReportJson::new(std::io::BufWriter::with_capacity(1 << 16, Stdout::new())));
    let mut doc = match (&args.xlsx, &args.html, &mut json) {
        (Some(out), _, _) => write_workbook(&engine, &args, (&src, &config), out, &reads)?,
        (None, Some(_), _) => engine.report(&src, &config)?,
        (None, None, Some(json)) => engine.report_streamed(&src, &config, json)?,
        (None, None, None) => engine.report_streamed(&src, &config, &mut Nowhere)?,
    };
    if let Some((unit, n)) = items_per_step(args.batch_size, args.tokens_per_step)? {
        doc = doc.with_throughput(unit, n);
    }
    if let Some(out) = &args.html {
        let opts = BundleOptions {
            budget_bytes: usize::try_from(args.html_budget).unwrap_or(usize::MAX),
        };
        let bundle = engine.offline_bundle(&src, &doc, &opts)?;
        let html = kinetoscope_report::web::offline_html(&bundle)?;
        output_file::write("--html", out, &reads, html.as_bytes())?;
    }
    let text = match json {
        Some(json) => {
            json.finish(&mut doc)?;
            String::new()
        }
        None => render(&doc, format, to_table, None)?,
    };
    note_skipped(&doc.skipped);
    let code = finish(&text, format, &doc.errors)?;
    if !doc.errors.is_empty() {
        return Ok(code);
    }
    let gate = args.fail_on.map(|f| match f {
        FailOn::Warning => Severity::Warning,
        FailOn::Critical => Severity::Critical,
    });
    if let (Some(gate), Some(worst)) = (gate, doc.worst()) {
        if worst >= gate {
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A report sink that keeps nothing: the terminal table is made from the document.
struct Nowhere;

impl ReportSink for Nowhere {
    fn begin(&mut self, _: &str, _: &kinetoscope_engine::InputLayout) -> std::io::Result<()> {
        Ok(())
    }

    fn trace(&mut self, _: &kinetoscope_advisor::TraceReport) -> std::io::Result<()> {
        Ok(())
    }
}

/// Write the workbook of every view to `out` (`--xlsx`), from one read of the input;
/// the report, for the terminal. `out` is refused when it is an input or a terminal.
fn write_workbook(
    engine: &Engine,
    args: &ReportArgs,
    (src, config): (&Source, &Config),
    out: &Path,
    reads: &[std::path::PathBuf],
) -> anyhow::Result<ReportDocument> {
    // Refused before anything is read; checked again when written.
    output_file::check("--xlsx", out, reads)?;
    anyhow::ensure!(
        !is_terminal(out),
        "--xlsx {}: is a terminal; a workbook is a binary file, give a file name",
        out.display()
    );
    let perf = PerfOptions {
        peak_tflops: args.peak_tflops,
        ..PerfOptions::default()
    };
    let wb = engine.workbook(src, config, &perf)?;
    let bytes = kinetoscope_report::xlsx::to_xlsx(&wb)
        .with_context(|| format!("--xlsx {}: cannot make the workbook", out.display()))?;
    output_file::write("--xlsx", out, reads, &bytes)?;
    Ok(wb.report)
}

/// Whether `out` is an existing terminal (`/dev/tty`, `/dev/stdout` on a terminal).
fn is_terminal(out: &Path) -> bool {
    use std::io::IsTerminal;
    let char_device = std::fs::metadata(out).is_ok_and(|m| !m.is_file() && !m.is_dir());
    char_device
        && std::fs::OpenOptions::new()
            .write(true)
            .open(out)
            .is_ok_and(|f| f.is_terminal())
}

/// The largest `--config` file read: thresholds take a few KiB, and a file without end
/// (`/dev/zero`) must not fill the memory.
const CONFIG_MAX_BYTES: u64 = 1 << 20;

/// The text of a `--config` file (a pipe such as `<(...)` too), at most
/// [`CONFIG_MAX_BYTES`].
fn read_config(p: &Path) -> anyhow::Result<String> {
    let cannot = || format!("cannot read --config {}", p.display());
    let file = std::fs::File::open(p).with_context(cannot)?;
    let mut text = String::new();
    file.take(CONFIG_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(cannot)?;
    anyhow::ensure!(
        text.len() as u64 <= CONFIG_MAX_BYTES,
        "--config {}: larger than {} KiB; a thresholds file is a few lines of TOML",
        p.display(),
        CONFIG_MAX_BYTES >> 10
    );
    Ok(text)
}

/// What `--batch-size` / `--tokens-per-step` give, checked (positive).
pub fn items_per_step(
    batch_size: Option<f64>,
    tokens_per_step: Option<f64>,
) -> anyhow::Result<Option<(ThroughputUnit, f64)>> {
    let given = match (tokens_per_step, batch_size) {
        (Some(n), _) => Some((ThroughputUnit::Tokens, n, "--tokens-per-step")),
        (None, Some(n)) => Some((ThroughputUnit::Samples, n, "--batch-size")),
        _ => None,
    };
    match given {
        Some((_, n, name)) if !(n > 0.0 && n.is_finite()) => {
            anyhow::bail!("{name} must be a positive number")
        }
        Some((unit, n, _)) => Ok(Some((unit, n))),
        None => Ok(None),
    }
}

/// Thresholds: defaults, then `--config`, then `--set`, then `--peak-tflops`.
fn load_config(args: &ReportArgs) -> anyhow::Result<Config> {
    let mut config = thresholds(args.config.as_deref(), &args.set)?;
    if let Some(p) = args.peak_tflops {
        anyhow::ensure!(p > 0.0, "--peak-tflops must be positive");
        config.peak_tflops = Some(p);
    }
    Ok(config)
}

/// Thresholds: defaults, then the file `config`, then the `set` overrides.
pub fn thresholds(config: Option<&std::path::Path>, set: &[String]) -> anyhow::Result<Config> {
    let text = match config {
        Some(p) => read_config(p)?,
        None => String::new(),
    };
    Config::from_toml(&text, set)
        .map_err(anyhow::Error::msg)
        .with_context(|| match config {
            Some(p) => format!("invalid thresholds in {} or --set", p.display()),
            None => "invalid --set".to_owned(),
        })
}
