//! `kinetoscope critical-path`: the critical path of one step of each trace in a file or
//! rank folder.

use std::process::ExitCode;

use kinetoscope_analysis::critical_path::{critical_path, CriticalPathOptions};
use kinetoscope_report::critical_path::{to_csv, to_json, to_table, CriticalPathDocument};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::Input;

use super::common::{map_input, read_options, write_stdout};
use crate::args::{CriticalPathArgs, ViewFormat};

pub fn run(args: CriticalPathArgs) -> anyhow::Result<ExitCode> {
    let opts = CriticalPathOptions {
        step: args.step,
        top: args.top,
    };
    let path = &args.path;
    let (input, results) = map_input(path, &read_options(&args.read), |t| critical_path(t, opts))?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = CriticalPathDocument::new(path.display().to_string(), layout);
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
