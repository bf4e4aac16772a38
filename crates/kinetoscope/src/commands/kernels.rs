//! `kinetoscope kernels`: the kernel table of each trace in a file or rank folder. Each
//! trace is reduced to its sorted, cut table on the thread that read it, so only the rows
//! shown travel back.

use std::process::ExitCode;

use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy, KernelSortKey};
use kinetoscope_report::document::TableOptions;
use kinetoscope_report::kernels::{to_csv, to_json, to_table};

use super::common::{eprint_errors, finish_document, read_document, read_options, sort_key};
use crate::args::{KernelsArgs, KernelsGroupBy, ViewFormat};

pub fn run(args: KernelsArgs) -> anyhow::Result<ExitCode> {
    if args.by_class {
        return super::gpu_time::by_class(&args.view, args.hta_compat);
    }
    let view = &args.view;
    let sort = sort_key(
        view.sort.as_deref(),
        KernelSortKey::default(),
        KernelSortKey::parse,
        &KernelSortKey::ALL,
    )?;
    let group_by = match args.group_by {
        KernelsGroupBy::Name => KernelGroupBy::Name,
        KernelsGroupBy::Properties => KernelGroupBy::Properties,
    };
    let top = view.top;
    let options = TableOptions {
        group_by,
        sort: sort.as_str().to_owned(),
        top,
    };
    let doc = read_document(&view.path, &read_options(&view.read), options, |trace| {
        let mut table = analyze_kernels(trace, group_by);
        table.sort_by(sort);
        table.truncate(top);
        table
    })?;
    let text = match view.format {
        ViewFormat::Table => to_table(&doc),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => {
            eprint_errors(&doc.errors);
            to_csv(&doc)
        }
    };
    finish_document(&text, &doc)
}
