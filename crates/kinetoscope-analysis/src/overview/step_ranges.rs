//! Step windows as the TensorBoard plugin draws them: host `ProfilerStep#N` spans,
//! stretched to the end of the GPU work they launched, then trailing steps whose GPU work
//! was probably not captured are dropped.

use std::sync::Arc;

use kinetoscope_trace::{EventId, Trace};

use super::classify::{Class, Classes};
use crate::steps::{find_steps, StepSource};

/// One step window, ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepRange {
    /// `ProfilerStep#N`, or `(whole trace)`.
    pub name: String,
    /// N.
    pub number: Option<i64>,
    /// Start (after stretching).
    pub start: i64,
    /// End (after stretching).
    pub end: i64,
    /// GPU activities (kernels, memcpys, memsets) launched by runtime calls lying
    /// completely inside the host span.
    pub device_events: u64,
}

/// The steps of a trace after stretching and trimming.
#[derive(Clone, Debug)]
pub(crate) struct StepPlan {
    /// Kept steps, in time order, disjoint.
    pub steps: Vec<StepRange>,
    /// Trailing steps dropped by tail trimming.
    pub dropped: Vec<StepRange>,
    /// Where the host steps came from.
    pub source: StepSource,
}

/// The step plan of `trace`, computed once per trace and shared by every analysis that
/// starts from the steps (overview, communication, critical path, sequences).
pub(crate) fn step_plan(trace: &Trace) -> Arc<StepPlan> {
    trace.derived(|| plan_steps(trace, &Classes::new(trace)))
}

/// Host steps, stretched and trimmed.
fn plan_steps(trace: &Trace, classes: &Classes) -> StepPlan {
    let (mut steps, source) = host_steps(trace, classes);
    if steps.is_empty() {
        return StepPlan {
            steps,
            dropped: Vec::new(),
            source,
        };
    }
    let index = trace.correlation_index();
    let e = &trace.events;

    // Each launch lying completely inside the host span of the step it meets
    // contributes its GPU activities to that step; launches that straddle a step's end
    // are ignored. The step a launch meets is the one a walk of launches and steps in
    // time order would be at: the first whose span ends after the launch starts (a
    // search on the running maximum of the ends), so the launches are taken in file
    // order, without sorting them.
    let n = steps.len();
    let reach: Vec<i64> = steps
        .iter()
        .scan(i64::MIN, |m, s| {
            *m = (*m).max(s.end);
            Some(*m)
        })
        .collect();
    let mut device_span = vec![(i64::MAX, i64::MIN); n];
    let mut matched = vec![false; e.len()];
    let mut any_matched = false;
    // The step of the launch before, tried first: launches come in time order, mostly.
    let mut at = 0usize;
    for call in (0..e.len()).filter(|&i| classes.of(trace, i) == Class::Launch) {
        let start = e.ts_ns[call];
        let end = start + e.dur_ns.at(call);
        let is_first_after =
            |i: usize| reach.get(i).is_none_or(|&m| m > start) && (i == 0 || reach[i - 1] <= start);
        if !is_first_after(at) {
            at = reach.partition_point(|&m| m <= start);
        }
        let i = at;
        if i == n || start < steps[i].start || end > steps[i].end {
            continue;
        }
        let (lo, hi) = &mut device_span[i];
        for &d in index.gpu_of_call(EventId(call as u32)).iter().filter(|d| {
            matches!(
                classes.of(trace, d.index()),
                Class::Kernel | Class::Memcpy | Class::Memset
            )
        }) {
            *lo = (*lo).min(e.ts_ns[d.index()]);
            *hi = (*hi).max(e.end_ns(d));
            matched[d.index()] = true;
            any_matched = true;
            steps[i].device_events += 1;
        }
    }
    if !any_matched {
        return StepPlan {
            steps,
            dropped: Vec::new(),
            source,
        };
    }

    // Stretch. The first step starts no earlier than the end of GPU work that was not
    // launched inside a step and finished before the first step's GPU work began.
    let mut prev_end = steps[0].start;
    if device_span[0].0 != i64::MAX {
        for (d, &is_matched) in matched.iter().enumerate() {
            if !is_matched
                && matches!(
                    classes.of(trace, d),
                    Class::Kernel | Class::Memcpy | Class::Memset
                )
            {
                let end = e.ts_ns[d] + e.dur_ns.at(d);
                if end < device_span[0].0 {
                    prev_end = prev_end.max(end);
                }
            }
        }
    }
    for (s, &(dlo, dhi)) in steps.iter_mut().zip(&device_span) {
        let start = prev_end.max(s.start);
        let end = if dlo == i64::MAX {
            s.end.max(start)
        } else {
            s.end.max(dhi).max(start)
        };
        s.start = start;
        s.end = end;
        prev_end = end;
    }

    // Trim: drop trailing steps that launched nothing, then the last one if it launched
    // fewer than 0.8 × the GPU activities of the step before it.
    let mut dropped = Vec::new();
    if n > 1 {
        if let Some(last) = steps.iter().rposition(|s| s.device_events > 0) {
            let mut keep = last + 1;
            if last > 0
                && steps[last - 1].device_events as f64 * 0.8 > steps[last].device_events as f64
            {
                keep = last;
            }
            dropped = steps.split_off(keep);
        }
    }
    StepPlan {
        steps,
        dropped,
        source,
    }
}

/// `ProfilerStep#N` spans in time order; without any, one step over the host span of
/// all CPU operators (as the plugin does), else over the whole trace.
fn host_steps(trace: &Trace, classes: &Classes) -> (Vec<StepRange>, StepSource) {
    let (found, source) = find_steps(trace);
    if source == StepSource::ProfilerStep {
        let steps = found
            .into_iter()
            .map(|s| StepRange {
                name: s.name,
                number: s.number,
                start: s.start_ns,
                end: s.start_ns + s.dur_ns,
                device_events: 0,
            })
            .collect();
        return (steps, source);
    }
    let e = &trace.events;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for i in 0..e.len() {
        if matches!(classes.of(trace, i), Class::Op | Class::Python) {
            lo = lo.min(e.ts_ns[i]);
            hi = hi.max(e.ts_ns[i] + e.dur_ns.at(i));
        }
    }
    let span = if lo <= hi {
        Some((lo, hi))
    } else {
        trace.span_ns()
    };
    match span {
        Some((start, end)) => (
            vec![StepRange {
                name: "(whole trace)".into(),
                number: None,
                start,
                end,
                device_events: 0,
            }],
            StepSource::WholeTrace,
        ),
        None => (Vec::new(), StepSource::None),
    }
}
