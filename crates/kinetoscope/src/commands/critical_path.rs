//! `kinetoscope critical-path`: the critical path of one step of each trace in a file or
//! rank folder.

use std::process::ExitCode;

use kinetoscope_analysis::critical_path::{critical_path, CriticalPathOptions};
use kinetoscope_report::critical_path::{to_csv, to_json, to_table, CriticalPathDocument};

use super::common::{finish_document, read_document, read_options};
use crate::args::{CriticalPathArgs, ViewFormat};

pub fn run(args: CriticalPathArgs) -> anyhow::Result<ExitCode> {
    let opts = CriticalPathOptions {
        step: args.step,
        top: args.top,
    };
    let path = &args.path;
    let doc: CriticalPathDocument = read_document(path, &read_options(&args.read), (), |t| {
        critical_path(t, opts)
    })?;
    let text = match args.format {
        ViewFormat::Table => to_table(&doc),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc),
    };
    finish_document(&text, &doc)
}
