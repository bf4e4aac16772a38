//! `kinetoscope summary`.

use std::path::Path;
use std::process::ExitCode;

use kinetoscope_analysis::summary::summarize;
use kinetoscope_report::summary::{to_json, to_table, InputLayout, SummaryDocument};
use kinetoscope_trace::read::{Input, ReadOptions};

use super::common::{
    ensure_any_read, finish_document, layout_of, map_input, read_options, split_results,
};
use super::sample::{read_sample, SAMPLE_NAME};
use crate::args::{Format, SummaryArgs};

pub fn run(args: SummaryArgs) -> anyhow::Result<ExitCode> {
    let opts = read_options(&args.read);
    let doc = match &args.path {
        None => {
            let mut doc = SummaryDocument::new(SAMPLE_NAME.into(), InputLayout::File);
            let trace = read_sample(&opts)?;
            doc.traces.push(summarize(&trace));
            doc
        }
        Some(path) => summarize_path(path, &opts)?,
    };
    ensure_any_read(doc.traces.len(), &doc.errors)?;
    let text = match args.format {
        Format::Table => to_table(&doc),
        Format::Json => to_json(&doc) + "\n",
    };
    finish_document(&text, &doc)
}

fn summarize_path(path: &Path, opts: &ReadOptions) -> anyhow::Result<SummaryDocument> {
    let (input, results) = map_input(path, opts, summarize)?;
    // Run folders: snapshots and memory timelines; the trace summaries are collected below.
    let memory = match &input {
        Input::RunFolder { phases, .. } => {
            super::run_folder::phase_memory(phases, &Default::default())
        }
        _ => Vec::new(),
    };
    let mut doc = SummaryDocument::new(path.display().to_string(), layout_of(input));
    doc.memory = memory;
    doc.doc.errors = split_results(results, |_, s| doc.doc.traces.push(s));
    Ok(doc)
}
