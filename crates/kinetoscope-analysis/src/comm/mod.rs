//! `kinetoscope comm`: per trace, communication/computation overlap, exposed
//! communication per step, and a table of collectives (collective, process group,
//! count, bytes, latency, NCCL algorithm, algorithm and bus bandwidth).
//!
//! Overlap follows kinetoscope's definition by default and HTA 0.5.0's with
//! [`CommOptions::hta_compat`] (see [`overlap`] and docs/hta-differences.md). HTA's
//! load-time filter depends on the step names of *all* ranks, so a multi-rank caller
//! reduces each trace with [`comm`] and then calls [`resolve_hta`] once.

pub mod collectives;
pub mod names;
pub mod overlap;

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use crate::note::Note;

pub use collectives::{collective_instances, collective_rows, CollectiveInstance, CollectiveRow};
pub use overlap::{Overlap, OverlapDefinition, StepComm};

/// Options of [`comm`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommOptions {
    /// Follow HTA 0.5.0 for the overlap number (load-time filter, kernel-class regexes).
    pub hta_compat: bool,
}

/// The communication report of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceComm {
    /// The file.
    pub path: String,
    /// Rank from `distributedInfo`, else from the file name.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`, if recorded.
    pub world_size: Option<i64>,
    /// Overlap by the definition asked for.
    pub overlap: Overlap,
    /// Per step (kinetoscope definition, kept steps of the overview).
    pub steps: Vec<StepComm>,
    /// Collectives by (collective, process group, algorithm), largest total latency
    /// first.
    pub collectives: Vec<CollectiveRow>,
    /// What the analysis had to assume.
    pub warnings: Vec<Note>,
    /// HTA mode: the rank's step names and its overlap without the filter, kept until
    /// [`resolve_hta`] decides which applies.
    #[serde(skip)]
    pub hta_pending: Option<(Vec<String>, Overlap)>,
}

/// Analyse one trace.
pub fn comm(trace: &Trace, opts: CommOptions) -> TraceComm {
    comm_of(trace, opts, &collective_instances(trace))
}

/// Analyse one trace whose collectives ([`collective_instances`]) are already known.
pub fn comm_of(trace: &Trace, opts: CommOptions, instances: &[CollectiveInstance]) -> TraceComm {
    comm_with(trace, opts, instances, overlap::overlap_kinetoscope(trace))
}

/// [`comm_of`] over the overview's step windows, already computed (the advisor has
/// them: [`crate::overview::TraceOverview::steps`]), so they are not planned again.
pub fn comm_in_steps(
    trace: &Trace,
    opts: CommOptions,
    instances: &[CollectiveInstance],
    steps: &[crate::overview::StepBreakdown],
) -> TraceComm {
    let spans: Vec<overlap::StepSpan> = steps
        .iter()
        .map(|s| (s.name.as_str(), s.number, s.start_ns, s.start_ns + s.dur_ns))
        .collect();
    let kinetoscope = overlap::overlap_kinetoscope_in(trace, &spans);
    comm_with(trace, opts, instances, kinetoscope)
}

/// The communication view from the kinetoscope overlap and its steps.
fn comm_with(
    trace: &Trace,
    opts: CommOptions,
    instances: &[CollectiveInstance],
    (kin, steps): (Overlap, Vec<StepComm>),
) -> TraceComm {
    let mut warnings = Vec::new();
    let (ov, pending) = if opts.hta_compat {
        let names = crate::gpu_time::step_names(trace);
        let unfiltered = overlap::overlap_hta(trace, false);
        let filtered = if names.is_empty() {
            unfiltered.clone()
        } else {
            overlap::overlap_hta(trace, true)
        };
        (filtered, Some((names, unfiltered)))
    } else {
        (kin, None)
    };
    if instances.is_empty() {
        warnings.push(Note::NoCollectives);
    }
    let dist = trace.meta.distributed.as_ref();
    TraceComm {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        world_size: dist.and_then(|d| d.world_size),
        overlap: ov,
        steps,
        collectives: collective_rows(instances),
        warnings,
        hta_pending: pending,
    }
}

/// HTA mode over all ranks of an input: HTA filters only when the set of distinct
/// `ProfilerStep#N` names over **all** ranks has at least two members. Each
/// trace's overlap is replaced by its unfiltered one otherwise. A no-op outside HTA
/// mode.
pub fn resolve_hta(traces: &mut [TraceComm]) {
    let mut names: Vec<&String> = traces
        .iter()
        .filter_map(|t| t.hta_pending.as_ref())
        .flat_map(|(n, _)| n)
        .collect();
    names.sort();
    names.dedup();
    let filter = names.len() >= 2;
    for t in traces.iter_mut() {
        if let Some((_, unfiltered)) = t.hta_pending.take() {
            if !filter {
                t.overlap = unfiltered;
                t.warnings.push(Note::HtaFiltersNothing);
            }
        }
    }
}
