//! `kinetoscope diff BASE NEW`: two runs compared; `--fail-if` turns it into a CI gate
//! (exit 1 when a gate trips, 2 when an input could not be read).

use std::process::ExitCode;

use kinetoscope_engine::{DiffOptions, Source};
use kinetoscope_report::diff::{to_html, to_table};

use super::engine;
use super::output::write_stdout;
use super::report::{items_per_step, thresholds};
use crate::args::{DiffArgs, DiffFormat};

/// Compare, render, and exit by the gate.
pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    if kinetoscope_engine::diff::is_pstats_file(&args.base)
        && kinetoscope_engine::diff::is_pstats_file(&args.new)
    {
        return pstats(&args);
    }
    let config = thresholds(args.config.as_deref(), &args.set)?;
    items_per_step(args.batch_size, args.tokens_per_step)?;
    let opts = DiffOptions {
        fail_if: args.fail_if.clone(),
        batch_size: args.batch_size,
        tokens_per_step: args.tokens_per_step,
    };
    let doc = engine(&args.read).diff(
        &Source::Path(args.base.clone()),
        &Source::Path(args.new.clone()),
        &config,
        &opts,
    )?;
    let text = match args.format {
        DiffFormat::Table => to_table(&doc, args.top),
        DiffFormat::Json => kinetoscope_engine::to_json(&doc)? + "\n",
        DiffFormat::Html => to_html(&doc),
    };
    write_stdout(&text)?;
    if !doc.errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(if doc.gate.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Two pstats files compared function by function (no gates: they read step times).
fn pstats(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.fail_if.is_empty(),
        "--fail-if gates apply to traces; two pstats files are compared without them"
    );
    let doc = engine(&args.read).diff_pstats(
        &Source::Path(args.base.clone()),
        &Source::Path(args.new.clone()),
    )?;
    let text = match args.format {
        DiffFormat::Table => kinetoscope_report::diff::pstats::to_table(&doc, args.top),
        DiffFormat::Json => kinetoscope_engine::to_json(&doc)? + "\n",
        DiffFormat::Html => anyhow::bail!("--format html compares traces; use table or json"),
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
