//! `kinetoscope sequences`: the most frequent kernel sequences inside a named operator
//! or a whole step, for each trace of a file or rank folder.

use std::process::ExitCode;

use kinetoscope_analysis::sequences::{frequent_sequences, SequenceOptions};
use kinetoscope_report::sequences::{to_csv, to_json, to_table, SequencesDocument};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::Input;

use super::common::{map_input, read_options, write_stdout};
use crate::args::{SequencesArgs, ViewFormat};

pub fn run(args: SequencesArgs) -> anyhow::Result<ExitCode> {
    let opts = SequenceOptions {
        op: args.op.clone(),
        min_len: args.min_len.max(1),
        max_len: args.max_len.max(args.min_len),
        top: args.top,
    };
    let path = &args.path;
    let (input, results) = map_input(path, &read_options(&args.read), |t| {
        frequent_sequences(t, &opts)
    })?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = SequencesDocument::new(path.display().to_string(), layout);
    for r in results {
        match r.result {
            Ok(c) => doc.traces.push(c),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    let text = match args.format {
        ViewFormat::Table => to_table(&doc),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc),
    };
    write_stdout(&text)?;
    if let Some(failure) = doc.errors.first() {
        if doc.traces.is_empty() {
            anyhow::bail!("{}", failure.error);
        }
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
