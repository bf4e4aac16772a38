//! Communication/computation overlap, two ways:
//!
//! * **kinetoscope** (default): inside the kept step windows of the overview
//!   (`ProfilerStep#N` stretched to the end of their GPU work), computation = the union
//!   of non-communication kernels, communication = the union of communication kernels
//!   ([`is_comm_kernel`]); overlap share = |comp ∩ comm| / |comm|; exposed
//!   communication = |comm ∖ comp| per step.
//! * **HTA 0.5.0** (`--hta-compat`, `get_comm_comp_overlap`): after HTA's load-time filter
//!   (GPU activities whose launch lies before the start of the rank's last
//!   `ProfilerStep`, when the input has at least two step names) and with HTA 0.5.0's
//!   kernel-class regexes, over the whole trace; times stay exact nanoseconds.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, Phase, Trace};

use super::names::{is_comm_kernel, HtaClass};
use crate::overview::classify::Classes;
use crate::overview::intervals::{intersect, merge, overlap, total, Span};
use crate::overview::step_ranges::plan_steps;

/// Which definition an overlap number follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlapDefinition {
    /// Kernels inside the step windows; communication kernels by name (`nccl`, `rccl`,
    /// `hccl`).
    Kinetoscope,
    /// HTA 0.5.0 `get_comm_comp_overlap`, after its load-time filter.
    Hta,
}

/// Overlap of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    /// The definition followed.
    pub definition: OverlapDefinition,
    /// The window analysed, `[start, end]` epoch ns (kinetoscope: first kept step start
    /// to last kept step end; HTA: first to last kept GPU activity).
    pub window_ns: Option<[i64; 2]>,
    /// |computation|, ns.
    pub computation_ns: i64,
    /// |communication|, ns.
    pub communication_ns: i64,
    /// |computation ∩ communication|, ns.
    pub overlap_ns: i64,
    /// |communication ∖ computation|, ns.
    pub exposed_communication_ns: i64,
    /// overlap / communication (0–1); `None` without communication kernels.
    pub overlap_share: Option<f64>,
    /// HTA mode: GPU activities dropped by HTA's load-time filter.
    pub filtered_gpu_events: Option<u64>,
}

/// One step's communication.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepComm {
    /// `ProfilerStep#N` or `(whole trace)`.
    pub name: String,
    /// N.
    pub number: Option<i64>,
    /// Start (stretched), epoch ns.
    pub start_ns: i64,
    /// Duration (stretched), ns.
    pub dur_ns: i64,
    /// Communication kernel time in the step (union), ns.
    pub communication_ns: i64,
    /// Of it, overlapped by computation, ns.
    pub overlapped_ns: i64,
    /// Communication not overlapped by computation, ns.
    pub exposed_ns: i64,
    /// `exposed_ns / dur_ns`: exposed communication as a share of the step (0–1).
    pub exposed_share: f64,
}

fn make(
    definition: OverlapDefinition,
    window: Option<(i64, i64)>,
    comp: i64,
    comm: i64,
    both: i64,
    filtered: Option<u64>,
) -> Overlap {
    Overlap {
        definition,
        window_ns: window.map(|(a, b)| [a, b]),
        computation_ns: comp,
        communication_ns: comm,
        overlap_ns: both,
        exposed_communication_ns: comm - both,
        overlap_share: (comm > 0).then(|| both as f64 / comm as f64),
        filtered_gpu_events: filtered,
    }
}

/// The kinetoscope overlap and the per-step exposed communication.
pub fn overlap_kinetoscope(trace: &Trace) -> (Overlap, Vec<StepComm>) {
    let classes = Classes::new(trace);
    let plan = plan_steps(trace, &classes);
    let e = &trace.events;
    let (mut comp, mut comm): (Vec<Span>, Vec<Span>) = (Vec::new(), Vec::new());
    let kernel_cats: Vec<bool> = trace
        .categories
        .iter()
        .map(|(_, c)| c.kind == CategoryKind::Kernel)
        .collect();
    for i in 0..e.len() {
        if !kernel_cats[e.cat[i].0 as usize] || e.phase[i] != Phase::Complete {
            continue;
        }
        let span = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns[i]);
        if is_comm_kernel(trace.strings.get(e.name[i])) {
            comm.push(span);
        } else {
            comp.push(span);
        }
    }
    let comp = merge(comp);
    let comm = merge(comm);
    let both = intersect(&comp, &comm);
    let mut steps = Vec::new();
    let (mut tc, mut tm, mut tb) = (0, 0, 0);
    for s in &plan.steps {
        let c = overlap(&comp, s.start, s.end);
        let m = overlap(&comm, s.start, s.end);
        let b = overlap(&both, s.start, s.end);
        tc += c;
        tm += m;
        tb += b;
        let dur = s.end - s.start;
        steps.push(StepComm {
            name: s.name.clone(),
            number: s.number,
            start_ns: s.start,
            dur_ns: dur,
            communication_ns: m,
            overlapped_ns: b,
            exposed_ns: m - b,
            exposed_share: if dur > 0 {
                (m - b) as f64 / dur as f64
            } else {
                0.0
            },
        });
    }
    let window = match (plan.steps.first(), plan.steps.last()) {
        (Some(a), Some(b)) => Some((a.start, b.end)),
        _ => None,
    };
    (
        make(OverlapDefinition::Kinetoscope, window, tc, tm, tb, None),
        steps,
    )
}

/// HTA's load-time cut for one rank: the start of its last `ProfilerStep#N`, and the
/// distinct step names of the rank (HTA takes the set over all ranks; see
/// [`super::resolve_hta`]).
pub fn hta_step_cut(trace: &Trace) -> (Option<i64>, Vec<String>) {
    let (steps, source) = crate::steps::find_steps(trace);
    if source != crate::steps::StepSource::ProfilerStep {
        return (None, Vec::new());
    }
    let mut names: Vec<String> = steps.iter().map(|s| s.name.clone()).collect();
    names.sort();
    names.dedup();
    (steps.iter().map(|s| s.start_ns).max(), names)
}

/// HTA 0.5.0's overlap, with the load-time filter cut at `cut` (epoch ns; `None`: no
/// filtering).
pub fn overlap_hta(trace: &Trace, cut: Option<i64>) -> Overlap {
    let e = &trace.events;
    let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
    // Correlations of CPU-side events (runtime / driver calls) kept by the filter.
    let kept: Option<FxHashSet<i64>> = cut.map(|cut| {
        (0..e.len())
            .filter(|&i| {
                e.correlation[i] != 0
                    && e.phase[i] == Phase::Complete
                    && matches!(
                        kinds[e.cat[i].0 as usize],
                        CategoryKind::CudaRuntime
                            | CategoryKind::CudaDriver
                            | CategoryKind::OtherRuntime
                    )
                    && e.ts_ns[i] < cut
            })
            .map(|i| e.correlation[i])
            .collect()
    });
    let (mut comp, mut comm): (Vec<Span>, Vec<Span>) = (Vec::new(), Vec::new());
    let mut filtered = 0u64;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = kinds[e.cat[i].0 as usize];
        if !matches!(
            kind,
            CategoryKind::Kernel
                | CategoryKind::GpuMemcpy
                | CategoryKind::GpuMemset
                | CategoryKind::CudaSync
        ) {
            continue;
        }
        let name = trace.strings.get(e.name[i]);
        if kind == CategoryKind::CudaSync && (name == "Event Sync" || name == "Context Sync") {
            continue; // stream -1: not in K
        }
        if let Some(kept) = &kept {
            if !kept.contains(&e.correlation[i]) {
                filtered += 1;
                continue;
            }
        }
        // Exact nanoseconds: HTA's rounding to whole µs is not reproduced
        // (docs/hta-differences.md §7).
        let (s, t) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns[i]);
        lo = lo.min(s);
        hi = hi.max(t);
        match HtaClass::of(name) {
            HtaClass::Communication => comm.push((s, t)),
            HtaClass::Computation => comp.push((s, t)),
            _ => {}
        }
    }
    let comp = merge(comp);
    let comm = merge(comm);
    let both = total(&intersect(&comp, &comm));
    make(
        OverlapDefinition::Hta,
        (lo <= hi).then_some((lo, hi)),
        total(&comp),
        total(&comm),
        both,
        cut.map(|_| filtered),
    )
}
