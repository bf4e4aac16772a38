//! `kinetoscope report` (also what `kinetoscope PATH` and a bare `kinetoscope` run): the
//! advisor's summary and ranked findings for a file, rank folder or run folder. Each
//! trace is reduced to its report on the thread that read it; cross-rank rules run on
//! the reports afterwards.

use std::process::ExitCode;

use anyhow::Context;
use kinetoscope_advisor::{advise_ranks, advise_trace, Config, Severity};
use kinetoscope_analysis::ranks::{compare_ranks, RankSummary, RanksOptions};
use kinetoscope_report::document::InputLayout;
use kinetoscope_report::report::{to_json, to_table, ReportDocument};

use super::common::{
    ensure_any_read, layout_of, map_input, read_options, split_results, write_stdout,
};
use super::sample::{read_sample, SAMPLE_NAME};
use crate::args::{FailOn, Format, ReportArgs};

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(&args)?;
    let opts = read_options(&args.read);
    let mut doc = match &args.path {
        None => {
            let mut doc = ReportDocument::new(SAMPLE_NAME.into(), InputLayout::File);
            let trace = read_sample(&opts)?;
            doc.traces.push(advise_trace(&trace, &config));
            doc
        }
        Some(path) => {
            let (input, results) = map_input(path, &opts, |t| {
                (advise_trace(t, &config), RankSummary::from_trace(t))
            })?;
            let mut doc = ReportDocument::new(path.display().to_string(), layout_of(input));
            let mut summaries = Vec::new();
            doc.errors = split_results(results, |_, (t, s)| {
                doc.traces.push(t);
                summaries.push(s);
            });
            if matches!(doc.layout, InputLayout::RankFolder) && summaries.len() >= 2 {
                let ranks = compare_ranks(summaries, RanksOptions::default());
                doc.cross_rank_findings =
                    advise_ranks(&doc.traces, Some(&ranks), &config, &doc.input);
            }
            doc
        }
    };
    ensure_any_read(doc.traces.len(), &doc.errors)?;
    doc.collect_findings();
    let text = match args.format {
        Format::Table => to_table(&doc),
        Format::Json => to_json(&doc) + "\n",
    };
    write_stdout(&text)?;
    if !doc.errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    let gate = args.fail_on.map(|f| match f {
        FailOn::Warning => Severity::Warning,
        FailOn::Critical => Severity::Critical,
    });
    if let (Some(gate), Some(worst)) = (gate, doc.worst()) {
        if worst >= gate {
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Thresholds: defaults, then `--config`, then `--set`, then `--peak-tflops`.
fn load_config(args: &ReportArgs) -> anyhow::Result<Config> {
    let text = match &args.config {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("cannot read --config {}", p.display()))?,
        None => String::new(),
    };
    let mut config = Config::from_toml(&text, &args.set)
        .map_err(anyhow::Error::msg)
        .with_context(|| match &args.config {
            Some(p) => format!("invalid thresholds in {} or --set", p.display()),
            None => "invalid --set".to_owned(),
        })?;
    if let Some(p) = args.peak_tflops {
        anyhow::ensure!(p > 0.0, "--peak-tflops must be positive");
        config.peak_tflops = Some(p);
    }
    Ok(config)
}
