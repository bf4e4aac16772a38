//! `kinetoscope sequences`: the most frequent kernel sequences inside a named operator
//! or a whole step, for each trace of a file or rank folder.

use std::process::ExitCode;

use kinetoscope_analysis::sequences::{frequent_sequences, SequenceOptions};
use kinetoscope_report::sequences::{to_csv, to_json, to_table, SequencesDocument};

use super::common::{finish_document, read_document, read_options};
use crate::args::{SequencesArgs, ViewFormat};

pub fn run(args: SequencesArgs) -> anyhow::Result<ExitCode> {
    let opts = SequenceOptions {
        op: args.op.clone(),
        min_len: args.min_len.max(1),
        max_len: args.max_len.max(args.min_len),
        top: args.top,
    };
    let path = &args.path;
    let doc: SequencesDocument = read_document(path, &read_options(&args.read), (), |t| {
        frequent_sequences(t, &opts)
    })?;
    let text = match args.format {
        ViewFormat::Table => to_table(&doc),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc),
    };
    finish_document(&text, &doc)
}
