//! `ranks`: a folder of rank traces side by side. Each rank is reduced to a compact
//! [`RankSummary`] on its reader thread (never all whole traces at once), then the
//! summaries are compared. A Parquet export (`export --parquet`) gives the same
//! summaries from its tables, one rank at a time.

use std::path::Path;

use kinetoscope_analysis::ranks::{compare_ranks, RankSummary};
use kinetoscope_parquet::read::DevicePeak;

use crate::document::{InputLayout, RanksDocument, ReadFailure, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::{split_results, Source};
use crate::views::ensure_any_read;
use crate::Engine;

/// Options of the rank comparison.
pub type RanksOptions = kinetoscope_analysis::ranks::RanksOptions;

impl Engine {
    /// `ranks`: steps side by side, collectives matched, stragglers ranked.
    pub fn ranks(&self, src: &Source, opts: RanksOptions) -> EngineResult<RanksDocument> {
        if let Some(dir) = src.path().filter(|p| kinetoscope_parquet::is_export(p)) {
            return ranks_of_export(src, dir, opts);
        }
        let mapped = self.map(src, RankSummary::from_trace)?;
        if !matches!(mapped.layout, InputLayout::RankFolder) || mapped.results.len() < 2 {
            return Err(too_few_ranks(src));
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

fn too_few_ranks(src: &Source) -> EngineError {
    EngineError::WrongInput {
        path: src.name(),
        message: "`ranks` needs a folder with at least two rank trace files".to_owned(),
        hint: Some(
            "for one trace, `kinetoscope overview` shows its steps and breakdown".to_owned(),
        ),
    }
}

/// The rank comparison of the Parquet export in `dir`.
fn ranks_of_export(src: &Source, dir: &Path, opts: RanksOptions) -> EngineResult<RanksDocument> {
    let read = read_export_ranks(src, dir, false)?;
    Ok(RanksDocument {
        schema_version: SCHEMA_VERSION,
        input: src.name(),
        report: compare_ranks(read.summaries, opts),
        errors: read.errors,
        skipped: Vec::new(),
    })
}

/// The ranks of a Parquet export, read back one at a time.
pub(crate) struct ExportRanks {
    /// Each readable rank's summary, in the manifest's order.
    pub summaries: Vec<RankSummary>,
    /// Each of those ranks' memory peaks per device (empty unless asked for).
    pub peaks: Vec<Vec<DevicePeak>>,
    /// Traces the export could not read, and ranks whose files cannot be read.
    pub errors: Vec<ReadFailure>,
}

/// Read the ranks of the export in `dir` (with each rank's device memory peaks when
/// `memory`); an error when fewer than two ranks were exported or none can be read.
pub(crate) fn read_export_ranks(
    src: &Source,
    dir: &Path,
    memory: bool,
) -> EngineResult<ExportRanks> {
    let (manifest, results) = kinetoscope_parquet::read::rank_summaries(dir)?;
    let mut errors: Vec<ReadFailure> = manifest.errors.iter().map(ReadFailure::from).collect();
    let (mut summaries, mut peaks) = (Vec::new(), Vec::new());
    for (entry, r) in manifest.ranks.iter().zip(results) {
        let p = match memory {
            true => kinetoscope_parquet::read::device_peaks(dir, entry),
            false => Ok(Vec::new()),
        };
        match r.and_then(|s| Ok((s, p?))) {
            Ok((s, p)) => {
                summaries.push(s);
                peaks.push(p);
            }
            Err(e) => errors.push(ReadFailure {
                path: entry.source.clone(),
                error: e.to_string(),
            }),
        }
    }
    if summaries.len() + errors.len() < 2 {
        return Err(too_few_ranks(src));
    }
    if summaries.is_empty() {
        return Err(EngineError::WrongInput {
            path: src.name(),
            message: format!("no rank of this export could be read: {}", errors[0].error),
            hint: None,
        });
    }
    Ok(ExportRanks {
        summaries,
        peaks,
        errors,
    })
}
