//! `kinetoscope comm`: communication/computation overlap, exposed communication per step
//! and the collectives table of each trace in a file or rank folder, each trace reduced
//! on the thread that read it.

use std::process::ExitCode;

use kinetoscope_analysis::comm::{comm, resolve_hta, CommOptions};
use kinetoscope_report::comm::{to_csv, to_json, to_table, CommDocument};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::Input;

use super::common::{map_input, read_options, write_stdout};
use crate::args::{CommArgs, ViewFormat};

pub fn run(args: CommArgs) -> anyhow::Result<ExitCode> {
    let opts = CommOptions {
        hta_compat: args.hta_compat,
    };
    let path = &args.view.path;
    let (input, results) = map_input(path, &read_options(&args.view.read), |t| comm(t, opts))?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = CommDocument::new(path.display().to_string(), layout);
    for r in results {
        match r.result {
            Ok(c) => doc.traces.push(c),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    resolve_hta(&mut doc.traces);
    let text = match args.view.format {
        ViewFormat::Table => to_table(&doc, args.view.top),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc, args.view.top),
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
