//! Temporal breakdown (HTA's `get_temporal_breakdown`): over the span from a rank's first
//! to its last GPU activity, the time no GPU row runs (idle), the time some computation
//! kernel runs (compute), and the rest (non-compute: communication, memory and sync not
//! overlapped by computation).

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use super::classes::{ClassCache, ClassRules, KernelClass};
use super::{select, share, union_sorted, Compat, GpuRows, Window};

/// The temporal breakdown of one rank. Times ns; shares of `total_ns` (0–1, full
/// precision: HTA rounds its percentages to 2 decimals).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Temporal {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// What was looked at.
    pub window: Window,
    /// Start of the first GPU row (epoch ns); null without GPU rows.
    pub gpu_start_ns: Option<i64>,
    /// End of the last merged GPU interval (epoch ns).
    pub gpu_end_ns: Option<i64>,
    /// GPU-active span: last end − first start (HTA's `kernel_time`).
    pub total_ns: i64,
    /// Span minus the union of all GPU rows.
    pub idle_ns: i64,
    /// Union of computation kernels.
    pub compute_ns: i64,
    /// Span − compute − idle.
    pub non_compute_ns: i64,
    /// `idle_ns / total_ns` (0 when the span is empty).
    pub idle_share: f64,
    /// `compute_ns / total_ns`.
    pub compute_share: f64,
    /// `non_compute_ns / total_ns`.
    pub non_compute_share: f64,
}

/// The breakdown from already selected rows.
pub fn temporal_of(trace: &Trace, rows: &GpuRows, rules: ClassRules) -> Temporal {
    let e = &trace.events;
    let span = |&id: &u32| rows.clock.span(trace, id as usize);
    let all = union_sorted(rows.rows.iter().map(span));
    let mut cache = ClassCache::new(trace, rules);
    let compute = union_sorted(
        rows.rows
            .iter()
            .filter(|&&id| cache.get(trace, e.name[id as usize]) == KernelClass::Computation)
            .map(span),
    )
    .map_or(0, |u| u.2);
    let (start, end, busy) = match all {
        Some((s, e, b)) => (Some(s), Some(e), b),
        None => (None, None, 0),
    };
    let total = end.unwrap_or(0) - start.unwrap_or(0);
    let idle = total - busy;
    let non_compute = total - compute - idle;
    Temporal {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        window: rows.window.clone(),
        gpu_start_ns: start,
        gpu_end_ns: end,
        total_ns: total,
        idle_ns: idle,
        compute_ns: compute,
        non_compute_ns: non_compute,
        idle_share: share(idle, total),
        compute_share: share(compute, total),
        non_compute_share: share(non_compute, total),
    }
}

/// The temporal breakdown of a trace (`filter`: apply HTA's step filter, see
/// [`super::PerRank`]).
pub fn temporal(trace: &Trace, compat: Compat, filter: bool) -> Temporal {
    let rows = select(trace, compat, filter);
    temporal_of(trace, &rows, ClassRules::of(compat))
}
