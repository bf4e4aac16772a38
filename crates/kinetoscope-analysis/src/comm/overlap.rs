//! Communication/computation overlap, two ways:
//!
//! * **kinetoscope** (default): inside the kept step windows of the overview
//!   (`ProfilerStep#N` stretched to the end of their GPU work), computation = the union
//!   of non-communication kernels, communication = the union of communication kernels
//!   ([`is_comm_kernel`]); overlap share = |comp ∩ comm| / |comm|; exposed
//!   communication = |comm ∖ comp| per step.
//! * **HTA 0.5.0** (`--hta-compat`, `get_comm_comp_overlap`): the GPU rows, load-time
//!   filter, rounding to whole µs and kernel classes of `gpu_time` in HTA mode, over the
//!   whole trace; overlap share = |comp ∩ comm| / |comm| (HTA's percentage before it
//!   rounds to 2 decimals).

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, Phase, Trace};

use super::names::is_comm_kernel;
use crate::gpu_time::classes::{comm_comp_of, ClassRules};
use crate::gpu_time::{select, Compat};
use crate::name_memo::NameMemo;
use crate::overview::intervals::{intersect, merge, Measure, Span};
use crate::overview::step_ranges::step_plan;

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
    let plan = step_plan(trace);
    let steps: Vec<StepSpan> = plan
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.number, s.start, s.end))
        .collect();
    overlap_kinetoscope_in(trace, &steps)
}

/// A step window: name, number, start and end, epoch ns.
pub type StepSpan<'a> = (&'a str, Option<i64>, i64, i64);

/// [`overlap_kinetoscope`] over the overview's step windows, already computed (the
/// advisor has them), in time order.
pub fn overlap_kinetoscope_in(trace: &Trace, plan_steps: &[StepSpan]) -> (Overlap, Vec<StepComm>) {
    let e = &trace.events;
    let (mut comp, mut comm): (Vec<Span>, Vec<Span>) = (Vec::new(), Vec::new());
    let kernel_cats: Vec<bool> = trace
        .categories
        .iter()
        .map(|(_, c)| c.kind == CategoryKind::Kernel)
        .collect();
    let mut comm_kernel = NameMemo::new(trace, is_comm_kernel);
    for i in 0..e.len() {
        if !kernel_cats[e.cat[i].0 as usize] || e.phase[i] != Phase::Complete {
            continue;
        }
        let span = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i));
        if comm_kernel.get(e.name[i]) {
            comm.push(span);
        } else {
            comp.push(span);
        }
    }
    let comp = merge(comp);
    let comm = merge(comm);
    let both = intersect(&comp, &comm);
    let (comp_m, comm_m, both_m) = (
        Measure::new(&comp),
        Measure::new(&comm),
        Measure::new(&both),
    );
    let mut steps = Vec::new();
    let (mut tc, mut tm, mut tb) = (0, 0, 0);
    for &(name, number, start, end) in plan_steps {
        let c = comp_m.len_in(start, end);
        let m = comm_m.len_in(start, end);
        let b = both_m.len_in(start, end);
        tc += c;
        tm += m;
        tb += b;
        let dur = end - start;
        steps.push(StepComm {
            name: name.to_owned(),
            number,
            start_ns: start,
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
    let window = match (plan_steps.first(), plan_steps.last()) {
        (Some(a), Some(b)) => Some((a.2, b.3)),
        _ => None,
    };
    (
        make(OverlapDefinition::Kinetoscope, window, tc, tm, tb, None),
        steps,
    )
}

/// HTA 0.5.0's overlap of one rank, with its load-time filter when `filter` (HTA's
/// cross-rank decision: see [`super::resolve_hta`]): the GPU rows, clock and kernel classes
/// of `gpu_time` in HTA mode, and HTA's ratio (`gpu_time::classes::CommComp`).
pub fn overlap_hta(trace: &Trace, filter: bool) -> Overlap {
    let rows = select(trace, Compat::Hta, filter);
    let cc = comm_comp_of(trace, &rows, ClassRules::Hta050);
    let window = rows
        .rows
        .iter()
        .map(|&id| rows.clock.span(trace, id as usize))
        .fold(None, |w: Option<(i64, i64)>, (s, e)| {
            Some(w.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
        });
    Overlap {
        overlap_share: cc.share(),
        ..make(
            OverlapDefinition::Hta,
            window,
            cc.comp_ns,
            cc.comm_ns,
            cc.overlap_ns,
            rows.window
                .step_filter
                .then_some(rows.window.gpu_rows_dropped),
        )
    }
}
