//! `kinetoscope tables`: PyTorch key_averages tables (`prof.key_averages().table()`,
//! oumi's `prof_*.txt`), sorted and cut, next to the Chrome trace of the same run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kinetoscope_engine::{Source, TablesOptions};
use kinetoscope_report as render;

use super::engine;
use super::output::emit;
use crate::args::{ReadArgs, ViewFormat};

/// `kinetoscope tables`'s arguments.
#[derive(Debug, Args, Clone)]
pub struct TablesArgs {
    /// key_averages table files (detected by content) or folders of them (*.txt).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format (CSV: one line per cell, in JSON units).
    #[arg(long, value_enum, default_value_t)]
    pub format: ViewFormat,
    /// Sort the rows by the column with this header, as printed ("Self CPU",
    /// "CPU Mem", "# of Calls"; case ignored): numbers largest first, text A to Z.
    #[arg(long, value_name = "COLUMN")]
    pub sort: Option<String>,
    /// Show the first N rows of each table (0 = all).
    #[arg(long, default_value_t = 0)]
    pub top: usize,
    /// Reading options.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Read, sort, compare, render.
pub fn run(args: TablesArgs) -> anyhow::Result<ExitCode> {
    let opts = TablesOptions {
        sort: args.sort.clone(),
        top: (args.top > 0).then_some(args.top),
    };
    let sources: Vec<Source> = args.paths.iter().map(|p| Source::Path(p.clone())).collect();
    let doc = engine(&args.read).tables(&sources, &opts)?;
    emit(
        &doc,
        &doc.errors,
        args.format,
        render::tables::to_table,
        Some(&render::tables::to_csv),
    )
}
