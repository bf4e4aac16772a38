//! `kinetoscope report` (also what `kinetoscope PATH` and a bare `kinetoscope` run): the
//! advisor's summary and ranked findings; `--fail-on` turns it into a CI gate.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_advisor::{Config, Severity};
use kinetoscope_report::report::to_table;

use super::output::{finish, note_skipped, render};
use super::{engine, source};
use crate::args::{FailOn, ReportArgs};

/// Run the advisor over the input and apply the gate.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(&args)?;
    let doc = engine(&args.read).report(&source(args.path.as_deref()), &config)?;
    let text = render(&doc, args.format.into(), to_table, None)?;
    note_skipped(&doc.skipped);
    let code = finish(&text, args.format.into(), &doc.errors)?;
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

/// Thresholds: defaults, then `--config`, then `--set`, then `--peak-tflops`.
fn load_config(args: &ReportArgs) -> anyhow::Result<Config> {
    let text = match &args.config {
        Some(p) => read_config(p)?,
        None => String::new(),
    };
    let mut config = Config::from_toml(&text, &args.set)
        .map_err(anyhow::Error::msg)
        .with_context(|| match &args.config {
            Some(p) => format!("invalid thresholds in {} or --set", p.display()),
            None => "invalid --set".to_owned(),
        })?;
    if let Some(p) = args.peak_tflops {
        anyhow::ensure!(p > 0.0, "--peak-tflops must be positive");
        config.peak_tflops = Some(p);
    }
    Ok(config)
}
