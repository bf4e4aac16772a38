//! `kinetoscope overview`: the step-time breakdown and GPU metrics of each trace in a file
//! or rank folder, each trace reduced to its overview on the thread that read it.

use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_analysis::overview::overview;
use kinetoscope_report::overview::{to_csv, to_json, to_table, OverviewDocument, StepOrder};

use super::common::{finish_document, read_document, read_options};
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
    let doc: OverviewDocument = read_document(&args.path, &read_options(&args.read), (), overview)?;
    let text = match args.format {
        ViewFormat::Table => to_table(&doc, order, args.top),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc, order, args.top),
    };
    finish_document(&text, &doc)
}
