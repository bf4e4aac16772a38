//! `merge`: every trace of a rank folder read whole and kept (an exporter writes them
//! as one timeline), with the rank of each and the clock offset to subtract from its
//! times. The offsets are the ones `check` reports ([`rank_clocks`]), or none, or each
//! rank's first event moved onto the reference rank's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kinetoscope_analysis::ranks::{ClockMode, RankSummary};
use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::{Trace, TraceResult};

use crate::document::{InputLayout, ReadFailure, SkippedFile};
use crate::error::{EngineError, EngineResult};
use crate::input::{map_paths_with, open_path, split_results, Source};
use crate::views::clocks::{rank_clocks, DEFAULT_CLOCK};
use crate::views::ensure_any_read;
use crate::Engine;

/// How the ranks' clocks are lined up in a merged timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Align {
    /// What `check` decides: offsets estimated from collective end times, applied only
    /// where one constant offset explains them.
    #[default]
    Auto,
    /// The timestamps as recorded (one shared clock).
    None,
    /// Always subtract the offsets estimated from collective end times.
    Collectives,
    /// Move each rank's first event onto the reference (lowest) rank's first event.
    Start,
}

/// One rank of a merged timeline.
pub struct RankTrace {
    /// The rank: the trace's own, else its position in the folder (also when ranks
    /// repeat).
    pub rank: i64,
    /// The whole model.
    pub trace: Arc<Trace>,
    /// What is subtracted from every time of this rank, ns (0 when nothing applies).
    pub offset_ns: i64,
}

/// Every rank of an input, read whole, in rank order.
pub struct MergeSet {
    /// The input as documents name it.
    pub input: String,
    /// Its layout.
    pub layout: InputLayout,
    /// The alignment applied.
    pub align: Align,
    /// The ranks, lowest first.
    pub ranks: Vec<RankTrace>,
    /// The traces that could not be read.
    pub errors: Vec<ReadFailure>,
    /// Special files of the folder, never opened.
    pub skipped: Vec<SkippedFile>,
}

impl Engine {
    /// Read every trace of `src` whole (in parallel, with progress) and decide each
    /// one's rank and clock offset. Memory: every rank's model at once.
    pub fn merge_set(&self, src: &Source, align: Align) -> EngineResult<MergeSet> {
        let Source::Path(path) = src else {
            return Err(EngineError::WrongInput {
                path: src.name(),
                message: "merge reads files on disk".to_owned(),
                hint: None,
            });
        };
        let input = open_path(path)?;
        let files = input.trace_files();
        let needs_clocks = matches!(align, Align::Auto | Align::Collectives);
        let (kept, results) = self.read_whole(&files, needs_clocks);
        let results = ensure_any_read(results)?;
        let mut summaries = Vec::new();
        let mut traces = Vec::new();
        let errors = split_results(results, |p, s: Option<RankSummary>| {
            summaries.extend(s);
            traces.push(take_kept(&kept, &p));
        });
        if traces.is_empty() {
            return Err(EngineError::WrongInput {
                path: src.name(),
                message: "no trace files to merge here (*.json, *.json.gz)".to_owned(),
                hint: None,
            });
        }
        let ranks = decide(traces, summaries, align);
        Ok(MergeSet {
            input: src.name(),
            layout: input.layout(),
            align,
            ranks,
            errors,
            skipped: input.skipped().to_vec(),
        })
    }

    /// Read `files` in parallel, keeping each model (by path) and reducing it to its
    /// rank summary when the clocks need one.
    fn read_whole(
        &self,
        files: &[PathBuf],
        summaries: bool,
    ) -> (Kept, Vec<crate::input::PerTrace<Option<RankSummary>>>) {
        let kept: Kept = Mutex::new(Vec::with_capacity(files.len()));
        let mut opts = self.read.clone();
        if let Some(p) = &self.progress {
            opts.progress = p.start(files);
        }
        let read = |p: &Path, o: &ReadOptions| -> TraceResult<Arc<Trace>> {
            let trace = Arc::new(read_trace(p, o)?);
            lock(&kept).push((p.to_owned(), trace.clone()));
            Ok(trace)
        };
        let results = map_paths_with(files, &opts, read, |t| {
            summaries.then(|| RankSummary::from_trace(t))
        });
        if let Some(p) = &self.progress {
            p.finish();
        }
        (kept, results)
    }
}

/// The models read, by path.
type Kept = Mutex<Vec<(PathBuf, Arc<Trace>)>>;

fn lock(kept: &Kept) -> std::sync::MutexGuard<'_, Vec<(PathBuf, Arc<Trace>)>> {
    kept.lock().unwrap_or_else(|p| p.into_inner())
}

/// The model read from `path` (every success was kept).
fn take_kept(kept: &Kept, path: &Path) -> Arc<Trace> {
    let mut k = lock(kept);
    let i = k
        .iter()
        .position(|(p, _)| p == path)
        .expect("every trace read is kept");
    k.swap_remove(i).1
}

/// Each trace's rank and offset, in rank order.
fn decide(traces: Vec<Arc<Trace>>, summaries: Vec<RankSummary>, align: Align) -> Vec<RankTrace> {
    let ids = rank_ids(&traces);
    let mut ranks: Vec<RankTrace> = traces
        .into_iter()
        .zip(ids)
        .map(|(trace, rank)| RankTrace {
            rank,
            trace,
            offset_ns: 0,
        })
        .collect();
    ranks.sort_by_key(|r| r.rank);
    match align {
        Align::None => {}
        Align::Start => {
            let starts: Vec<Option<i64>> = ranks
                .iter()
                .map(|r| r.trace.span_ns().map(|s| s.0))
                .collect();
            if let Some(reference) = starts.iter().flatten().next().copied() {
                for (r, s) in ranks.iter_mut().zip(starts) {
                    r.offset_ns = s.map_or(0, |s| s - reference);
                }
            }
        }
        Align::Auto | Align::Collectives if summaries.len() >= 2 => {
            let clock = if align == Align::Auto {
                DEFAULT_CLOCK
            } else {
                ClockMode::CollectiveEnd
            };
            let report = rank_clocks(summaries, clock);
            for row in report.ranks.iter().filter(|r| r.clock_offset_applied) {
                if let Some(r) = ranks
                    .iter_mut()
                    .find(|r| r.trace.path.display().to_string() == row.path)
                {
                    r.offset_ns = row.clock_offset_ns;
                }
            }
        }
        Align::Auto | Align::Collectives => {}
    }
    ranks
}

/// Rank ids the way the rank comparison numbers them: the traces' own, else the
/// position; positions for all when two traces claim the same rank.
fn rank_ids(traces: &[Arc<Trace>]) -> Vec<i64> {
    let ids: Vec<i64> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| t.meta.rank.map_or(i as i64, |r| r.value))
        .collect();
    let mut seen = ids.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() == ids.len() {
        ids
    } else {
        (0..ids.len() as i64).collect()
    }
}
