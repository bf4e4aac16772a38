//! `report`: the advisor's summary and ranked findings for every trace of an input.
//! Each trace is reduced to its report on the thread that read it; for a rank folder
//! the cross-rank rules run afterwards on the rank comparison.

use kinetoscope_advisor::{advise_ranks, advise_trace, all_findings, Config, SeverityCounts};
use kinetoscope_analysis::ranks::{compare_ranks, RankSummary, RanksOptions};

use crate::document::{InputLayout, ReportDocument, SCHEMA_VERSION};
use crate::error::EngineResult;
use crate::input::{split_results, Source};
use crate::views::ensure_any_read;
use crate::Engine;

impl Engine {
    /// `report`: per trace the advisor's report; across ranks the straggler and memory
    /// imbalance rules; every finding ranked by estimated recoverable time.
    pub fn report(&self, src: &Source, config: &Config) -> EngineResult<ReportDocument> {
        let mapped = self.map(src, |t| {
            (advise_trace(t, config), RankSummary::from_trace(t))
        })?;
        let results = ensure_any_read(mapped.results)?;
        let mut traces = Vec::new();
        let mut summaries = Vec::new();
        let errors = split_results(results, |_, (t, s)| {
            traces.push(t);
            summaries.push(s);
        });
        let input = src.name();
        let cross_rank_findings =
            if matches!(mapped.layout, InputLayout::RankFolder) && summaries.len() >= 2 {
                let ranks = compare_ranks(summaries, RanksOptions::default());
                advise_ranks(&traces, &ranks, config, &input)
            } else {
                Vec::new()
            };
        let findings = all_findings(
            traces.iter().map(|t| t.findings.as_slice()),
            &cross_rank_findings,
        );
        let counts = SeverityCounts::of(&findings);
        Ok(ReportDocument {
            schema_version: SCHEMA_VERSION,
            input,
            layout: mapped.layout,
            traces,
            cross_rank_findings,
            findings,
            counts,
            errors,
        })
    }
}
