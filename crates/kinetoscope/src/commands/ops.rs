//! `kinetoscope ops`: the operator table of each trace in a file or rank folder. Each
//! trace is reduced to its sorted, cut table on the thread that read it, so only the rows
//! shown travel back.

use std::process::ExitCode;

use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpSortKey};
use kinetoscope_report::document::TableOptions;
use kinetoscope_report::ops::{to_csv, to_json, to_table};

use super::common::{eprint_errors, finish_document, read_document, read_options, sort_key};
use crate::args::{OpsArgs, OpsGroupBy, ViewFormat};

pub fn run(args: OpsArgs) -> anyhow::Result<ExitCode> {
    let view = &args.view;
    let sort = sort_key(
        view.sort.as_deref(),
        OpSortKey::default(),
        OpSortKey::parse,
        &OpSortKey::ALL,
    )?;
    let group_by = match args.group_by {
        OpsGroupBy::Name => OpGroupBy::Name,
        OpsGroupBy::Shape => OpGroupBy::Shape,
        OpsGroupBy::Stack => OpGroupBy::Stack,
        OpsGroupBy::Module => OpGroupBy::Module,
    };
    let top = view.top;
    let options = TableOptions {
        group_by,
        sort: sort.as_str().to_owned(),
        top,
    };
    let doc = read_document(&view.path, &read_options(&view.read), options, |trace| {
        let mut table = analyze_ops(trace, group_by);
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
