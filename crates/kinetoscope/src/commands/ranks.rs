//! `kinetoscope ranks`: a folder of rank traces side by side. Each rank is read in
//! parallel and reduced to a compact [`RankSummary`] on its reader thread (never all
//! whole traces at once), then the summaries are compared.

use std::process::ExitCode;

use kinetoscope_analysis::ranks::{compare_ranks, ClockMode, RankSummary, RanksOptions};
use kinetoscope_report::ranks::{to_csv, to_json, to_table, RanksDocument};
use kinetoscope_report::summary::ReadFailure;
use kinetoscope_trace::read::Input;

use super::common::{map_input, read_options, write_stdout};
use crate::args::{ClockArg, RanksArgs, ViewFormat};

pub fn run(args: RanksArgs) -> anyhow::Result<ExitCode> {
    let path = &args.view.path;
    let (input, results) = map_input(
        path,
        &read_options(&args.view.read),
        RankSummary::from_trace,
    )?;
    if !matches!(input, Input::RankFolder { .. }) || results.len() < 2 {
        anyhow::bail!(
            "{}: `ranks` needs a folder with at least two rank trace files",
            path.display()
        );
    }
    let mut summaries = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r.result {
            Ok(s) => summaries.push(s),
            Err(error) => errors.push(ReadFailure {
                path: r.path.display().to_string(),
                error,
            }),
        }
    }
    if summaries.is_empty() {
        anyhow::bail!("{}", errors[0].error);
    }
    let opts = RanksOptions {
        clock: match args.clock {
            ClockArg::Auto => ClockMode::Auto,
            ClockArg::None => ClockMode::None,
            ClockArg::CollectiveEnd => ClockMode::CollectiveEnd,
        },
        top_collectives: if args.view.top == 0 {
            usize::MAX
        } else {
            args.view.top
        },
    };
    let report = compare_ranks(summaries, opts);
    let doc = RanksDocument::new(path.display().to_string(), report, errors);
    let text = match args.view.format {
        ViewFormat::Table => to_table(&doc, args.view.top),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => to_csv(&doc),
    };
    write_stdout(&text)?;
    if !doc.errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
