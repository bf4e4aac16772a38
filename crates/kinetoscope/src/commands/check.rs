//! `kinetoscope check`: the integrity report (`Engine::check`), rendered; the exit
//! status is the CI gate: 1 when a defect reaches `--fail-on`, 2 when a trace could not
//! be read.

use std::process::ExitCode;

use kinetoscope_analysis::integrity::{CheckOptions, Severity};
use kinetoscope_report as render;

use super::output::{finish, note_skipped, render};
use super::{engine, source};
use crate::args::{CheckArgs, CheckFailOn};

/// Run `kinetoscope check`.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let opts = CheckOptions {
        examples: usize::from(args.examples),
    };
    let doc = engine(&args.read).check(&source(Some(&args.path)), &opts)?;
    note_skipped(&doc.skipped);
    let text = render(
        &doc,
        args.format,
        render::check::to_table,
        Some(&render::check::to_csv),
    )?;
    let code = finish(&text, args.format, &doc.errors)?;
    if !doc.errors.is_empty() {
        return Ok(code);
    }
    let gate = match args.fail_on {
        CheckFailOn::Warning => Some(Severity::Warning),
        CheckFailOn::Error => Some(Severity::Error),
        CheckFailOn::None => None,
    };
    Ok(match (gate, doc.worst) {
        (Some(gate), Some(worst)) if worst >= gate => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}
