//! `ranks`: a folder of rank traces side by side. Each rank is reduced to a compact
//! [`RankSummary`] on its reader thread (never all whole traces at once), then the
//! summaries are compared.

use kinetoscope_analysis::ranks::{compare_ranks, RankSummary};

use crate::document::{InputLayout, RanksDocument, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::{split_results, Source};
use crate::views::ensure_any_read;
use crate::Engine;

/// Options of the rank comparison.
pub type RanksOptions = kinetoscope_analysis::ranks::RanksOptions;

impl Engine {
    /// `ranks`: steps side by side, collectives matched, stragglers ranked.
    pub fn ranks(&self, src: &Source, opts: RanksOptions) -> EngineResult<RanksDocument> {
        let mapped = self.map(src, RankSummary::from_trace)?;
        if !matches!(mapped.layout, InputLayout::RankFolder) || mapped.results.len() < 2 {
            return Err(EngineError::WrongInput {
                path: src.name(),
                message: "`ranks` needs a folder with at least two rank trace files".to_owned(),
                hint: Some(
                    "for one trace, `kinetoscope overview` shows its steps and breakdown"
                        .to_owned(),
                ),
            });
        }
        let results = ensure_any_read(mapped.results)?;
        let mut summaries = Vec::new();
        let errors = split_results(results, |_, s| summaries.push(s));
        Ok(RanksDocument {
            schema_version: SCHEMA_VERSION,
            input: src.name(),
            report: compare_ranks(summaries, opts),
            errors,
            skipped: mapped.skipped,
        })
    }
}
