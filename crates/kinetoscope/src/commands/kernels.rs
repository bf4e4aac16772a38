//! `kinetoscope kernels`: the kernel table of each trace in a file or rank folder. Each
//! trace is reduced to its sorted, cut table on the thread that read it, so only the rows
//! shown travel back.

use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy, KernelSortKey};
use kinetoscope_report::kernels::{to_csv, to_json, to_table, KernelsDocument};
use kinetoscope_report::summary::{InputLayout, ReadFailure};
use kinetoscope_trace::read::Input;

use super::common::{map_input, read_options, write_stdout};
use crate::args::{KernelsArgs, KernelsGroupBy, ViewFormat};

pub fn run(args: KernelsArgs) -> anyhow::Result<ExitCode> {
    if args.by_class {
        return super::gpu_time::by_class(&args.view, args.hta_compat);
    }
    let view = &args.view;
    let sort = match view.sort.as_deref() {
        None => KernelSortKey::default(),
        Some(s) => KernelSortKey::parse(s)
            .ok_or_else(|| {
                let keys: Vec<&str> = KernelSortKey::ALL.iter().map(|(n, _)| *n).collect();
                anyhow::anyhow!("unknown key `{s}`; valid keys: {}", keys.join(", "))
            })
            .context("--sort")?,
    };
    let group_by = match args.group_by {
        KernelsGroupBy::Name => KernelGroupBy::Name,
        KernelsGroupBy::Properties => KernelGroupBy::Properties,
    };
    let top = view.top;
    let (input, results) = map_input(&view.path, &read_options(&view.read), |trace| {
        let mut table = analyze_kernels(trace, group_by);
        table.sort_by(sort);
        table.truncate(top);
        table
    })?;
    let layout = match input {
        Input::File(_) => InputLayout::File,
        Input::RankFolder { .. } => InputLayout::RankFolder,
        Input::RunFolder { phases, .. } => InputLayout::RunFolder { phases },
    };
    let mut doc = KernelsDocument::new(view.path.display().to_string(), layout, group_by);
    doc.sort = sort.as_str().to_owned();
    doc.top = top;
    for r in results {
        match r.result {
            Ok(t) => doc.traces.push(t),
            Err(error) => doc.errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    let text = match view.format {
        ViewFormat::Table => to_table(&doc),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => {
            for e in &doc.errors {
                eprintln!("error: {}", e.error);
            }
            to_csv(&doc)
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
