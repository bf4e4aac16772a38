//! `kinetoscope comm`: communication/computation overlap, exposed communication per step
//! and the collectives table of each trace in a file or rank folder, each trace reduced
//! on the thread that read it.

use std::process::ExitCode;

use kinetoscope_analysis::comm::{comm, resolve_hta, CommOptions};
use kinetoscope_report::comm::{to_csv, to_json, to_table, CommDocument};

use super::common::{finish_document, read_document, read_options};
use crate::args::{CommArgs, ViewFormat};

pub fn run(args: CommArgs) -> anyhow::Result<ExitCode> {
    let opts = CommOptions {
        hta_compat: args.hta_compat,
    };
    let path = &args.view.path;
    let mut doc: CommDocument =
        read_document(path, &read_options(&args.view.read), (), |t| comm(t, opts))?;
    resolve_hta(&mut doc.traces);
    let text = match args.view.format {
        ViewFormat::Table => to_table(&doc, args.view.top),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc, args.view.top),
    };
    finish_document(&text, &doc)
}
