//! `kinetoscope summary`.

use std::process::ExitCode;

use kinetoscope_report::summary::to_table;

use super::output::{emit, note_skipped};
use super::{engine, source};
use crate::args::SummaryArgs;

/// Summarise every trace of the input (the embedded sample without a path).
pub fn run(args: SummaryArgs) -> anyhow::Result<ExitCode> {
    let doc = engine(&args.read).summary(&source(args.path.as_deref()))?;
    note_skipped(&doc.skipped);
    emit(&doc, &doc.errors, args.format.into(), to_table, None)
}
