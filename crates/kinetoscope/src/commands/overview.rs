//! `kinetoscope overview`: the step-time breakdown and GPU metrics of each trace in a file
//! or rank folder, each trace reduced to its overview on the thread that read it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_analysis::overview::overview;
use kinetoscope_report::overview::{to_csv, to_json, to_table, OverviewDocument, StepOrder};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::{Input, ReadOptions};

use super::common::{map_input, read_options, write_stdout};
use crate::args::{ViewArgs, ViewFormat};

pub fn run(args: ViewArgs) -> anyhow::Result<ExitCode> {
    let order = args
        .sort
        .as_deref()
        .map(str::parse::<StepOrder>)
        .transpose()
        .map_err(anyhow::Error::msg)
        .context("--sort")?
        .unwrap_or_default();
    let doc = overview_path(&args.path, &read_options(&args.read))?;
    let text = match args.format {
        ViewFormat::Table => to_table(&doc, order, args.top),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc, order, args.top),
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

fn overview_path(path: &Path, opts: &ReadOptions) -> anyhow::Result<OverviewDocument> {
    let (input, results) = map_input(path, opts, overview)?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = OverviewDocument::new(path.display().to_string(), layout);
    for r in results {
        match r.result {
            Ok(o) => doc.traces.push(o),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    Ok(doc)
}
