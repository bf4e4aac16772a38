//! `kinetoscope summary`.

use std::path::Path;
use std::process::ExitCode;

use kinetoscope_analysis::summary::summarize;
use kinetoscope_report::summary::{to_json, to_table, InputLayout, ReadFailure, SummaryDocument};
use kinetoscope_trace::read::{Input, ReadOptions};

use super::common::{map_input, read_options, write_stdout};
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
    if let (Some(failure), true) = (doc.errors.first(), doc.traces.is_empty()) {
        anyhow::bail!("{}", failure.error);
    }
    let text = match args.format {
        Format::Table => to_table(&doc),
        Format::Json => to_json(&doc) + "\n",
    };
    write_stdout(&text)?;
    if !doc.errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn summarize_path(path: &Path, opts: &ReadOptions) -> anyhow::Result<SummaryDocument> {
    let (input, results) = map_input(path, opts, summarize)?;
    let mut memory = Vec::new();
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => {
            // Snapshots and memory timelines; traces are summarised below.
            memory = super::run_folder::phase_memory(&phases, &Default::default());
            InputLayout::RunFolder { phases }
        }
    };
    let mut doc = SummaryDocument::new(path.display().to_string(), layout);
    doc.memory = memory;
    for r in results {
        match r.result {
            Ok(s) => doc.traces.push(s),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    Ok(doc)
}
