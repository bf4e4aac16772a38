//! `check`: trace integrity. Each trace is checked on the thread that read it
//! (`kinetoscope-analysis::integrity`); for a rank folder the engine then checks the
//! traces against each other: rank numbers, step numbers, and clock offsets from the
//! rank comparison (`clocks::rank_clocks`, on summaries reduced with the checks; `merge`
//! applies the same offsets).

use kinetoscope_analysis::integrity::ranks::{check_ranks, RankFacts};
use kinetoscope_analysis::integrity::{check_trace, CheckOptions, TraceCheck};
use kinetoscope_analysis::ranks::RankSummary;
use kinetoscope_trace::RankSource;

use crate::document::{CheckDocument, DefectCounts, InputLayout, SCHEMA_VERSION};
use crate::error::EngineResult;
use crate::input::{split_results, Source};
use crate::views::clocks::{rank_clocks, DEFAULT_CLOCK};
use crate::views::ensure_any_read;
use crate::Engine;

/// What one trace contributes: its checks, its facts for the cross-rank checks, and
/// its rank summary when it may be one of several ranks.
type PerTraceCheck = (TraceCheck, RankFacts, Option<RankSummary>);

impl Engine {
    /// `check`: every trace's defects, and a rank folder's cross-rank defects.
    pub fn check(&self, src: &Source, opts: &CheckOptions) -> EngineResult<CheckDocument> {
        // Rank summaries cost an overview; only folders and multi-process Nsight Systems
        // exports can be rank folders.
        let folder = src.path().is_some_and(|p| p.is_dir());
        let mapped = self.map(src, |trace| -> PerTraceCheck {
            let many = folder
                || trace
                    .meta
                    .rank
                    .is_some_and(|r| r.source == RankSource::NsysProcess);
            (
                check_trace(trace, opts),
                RankFacts::of(trace),
                many.then(|| RankSummary::from_trace(trace)),
            )
        })?;
        let results = ensure_any_read(mapped.results)?;
        let (mut traces, mut facts, mut summaries) = (Vec::new(), Vec::new(), Vec::new());
        let errors = split_results(results, |_, (c, f, s)| {
            traces.push(c);
            facts.push(f);
            summaries.extend(s);
        });
        let ranks = if matches!(mapped.layout, InputLayout::RankFolder) && facts.len() >= 2 {
            let clocks = (summaries.len() >= 2).then(|| rank_clocks(summaries, DEFAULT_CLOCK));
            check_ranks(&facts, clocks.as_ref(), opts)
        } else {
            Vec::new()
        };
        let all = traces.iter().flat_map(|t| &t.defects).chain(&ranks);
        let counts = DefectCounts::of(all.clone());
        let worst = all.map(|d| d.severity).max();
        Ok(CheckDocument {
            schema_version: SCHEMA_VERSION,
            input: src.name(),
            layout: mapped.layout,
            options: *opts,
            traces,
            ranks,
            counts,
            worst,
            errors,
            skipped: mapped.skipped,
        })
    }
}
