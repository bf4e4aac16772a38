//! Training steps. A step is a host-side `ProfilerStep#N` span (a `user_annotation`, or
//! an `Operator` in 1.8/1.9 files), which `prof.step()` opens and closes. The number is a
//! label: it depends on the schedule and on the PyTorch version, never an index.
//!
//! Fallback: a trace with no `ProfilerStep#` span (a plain `with profile():` block, or
//! an inference trace) is treated as **one step covering every event**, named
//! `(whole trace)`, as the TensorBoard plugin does; [`StepSource`] says which was used.

use crate::name_memo::NameMemo;
use kinetoscope_trace::{CategoryKind, Phase, Trace};
use serde::{Deserialize, Serialize};

/// One step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// `ProfilerStep#N`, or `(whole trace)` in the fallback.
    pub name: String,
    /// N, when the name carries it.
    pub number: Option<i64>,
    /// Start, epoch ns.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
}

/// Where the steps came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    /// `ProfilerStep#N` spans.
    ProfilerStep,
    /// No step markers: the whole trace is one step.
    WholeTrace,
    /// No events at all.
    None,
}

/// The steps of a trace, in time order, and where they came from: found by a pass over
/// the events on first use, then kept with the trace (the overview, the launch
/// statistics, the memory view and the advisor each ask).
pub fn find_steps(trace: &Trace) -> (Vec<Step>, StepSource) {
    /// The kept steps.
    struct Found((Vec<Step>, StepSource));
    trace.derived(|| Found(scan_steps(trace))).0.clone()
}

/// [`find_steps`]' pass.
fn scan_steps(trace: &Trace) -> (Vec<Step>, StepSource) {
    let e = &trace.events;
    let mut steps: Vec<Step> = Vec::new();
    // Whether a name is a step's, decided once per name.
    let mut is_step = NameMemo::new(trace, |n| n.starts_with("ProfilerStep#"));
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || !is_step.get(e.name[i]) {
            continue;
        }
        let kind = trace.categories.kind(e.cat[i]);
        if !matches!(kind, CategoryKind::UserAnnotation | CategoryKind::CpuOp) {
            continue;
        }
        let name = trace.strings.get(e.name[i]);
        if let Some(n) = name.strip_prefix("ProfilerStep#") {
            steps.push(Step {
                name: name.to_owned(),
                number: n.trim().parse().ok(),
                start_ns: e.ts_ns[i],
                dur_ns: e.dur_ns.at(i),
            });
        }
    }
    if !steps.is_empty() {
        steps.sort_by_key(|s| (s.start_ns, s.number));
        // The same step recorded twice (identical span) counts once.
        steps.dedup_by(|a, b| a.name == b.name && a.start_ns == b.start_ns);
        return (steps, StepSource::ProfilerStep);
    }
    match trace.span_ns() {
        Some((lo, hi)) => (
            vec![Step {
                name: "(whole trace)".into(),
                number: None,
                start_ns: lo,
                dur_ns: hi - lo,
            }],
            StepSource::WholeTrace,
        ),
        None => (Vec::new(), StepSource::None),
    }
}
