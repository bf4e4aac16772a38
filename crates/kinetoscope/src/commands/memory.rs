//! `kinetoscope memory`: the memory view of each trace in a file or rank folder.
//!
//! The trace path lives here: read each trace, build its memory view on the worker
//! thread that read it ([`analyze_trace`]), sort and cut the tables, render. A file
//! whose content is a pickle (a CUDA memory snapshot) goes to `memory_snapshot` instead.

use std::path::Path;
use std::process::ExitCode;

use kinetoscope_analysis::memory::{analyze_trace, sort, MemoryOptions, SortKey};
use kinetoscope_report::memory::{to_csv, to_json, to_table, MemoryDocument, MemoryTable};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::{Input, ReadOptions};

use super::common::{map_input, read_options, write_stdout};
use crate::args::{MemoryArgs, MemoryTableArg, ViewFormat};

pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    if args.view.path.is_file() && kinetoscope_trace::read::is_snapshot_file(&args.view.path) {
        return super::memory_snapshot::run(&args);
    }
    let sort_key = args
        .view
        .sort
        .as_deref()
        .map(str::parse::<SortKey>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("invalid --sort: {e}"))?;
    let opts = MemoryOptions {
        points: args.points as usize,
        device: args.device,
    };
    let mut doc = view_traces(&args.view.path, &read_options(&args.view.read), &opts)?;
    doc.sort = sort_key.map(|k| k.to_string());
    doc.top = args.view.top;
    for v in &mut doc.traces {
        sort::sort_and_limit(v, sort_key, args.view.top);
    }
    let table = args.table.map(|t| match t {
        MemoryTableArg::Curve => MemoryTable::Curve,
        MemoryTableArg::Events => MemoryTable::Events,
        MemoryTableArg::Operators => MemoryTable::Operators,
    });
    let text = match args.view.format {
        ViewFormat::Table => to_table(&doc, table),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => {
            for v in doc.traces.iter().filter(|v| v.records == 0) {
                eprintln!("{}: {}", v.path, v.notes.join("; "));
            }
            to_csv(&doc, table.unwrap_or(MemoryTable::Operators))
        }
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

/// The memory views of every trace in `path` (a file or a rank folder).
fn view_traces(
    path: &Path,
    read: &ReadOptions,
    opts: &MemoryOptions,
) -> anyhow::Result<MemoryDocument> {
    let (input, results) = map_input(path, read, |t| analyze_trace(t, opts))?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = MemoryDocument::new(path.display().to_string(), layout);
    for r in results {
        match r.result {
            Ok(v) => doc.traces.push(v),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    Ok(doc)
}
