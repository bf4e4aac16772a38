//! `ProfilerStep#N` numbering: the profiler numbers the steps it records one by one, so
//! a gap means steps were lost (or the trace was cut and stitched), and a number
//! recorded for two different spans means two step counters were mixed.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts};
use crate::steps::{find_steps, Step, StepSource};

/// A numbered step: its number and start, epoch ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepMark {
    /// N of `ProfilerStep#N`.
    pub number: i64,
    /// Start, epoch ns.
    pub start_ns: i64,
}

/// The numbered steps of a trace, by number (then start).
pub fn step_marks(trace: &Trace) -> Vec<StepMark> {
    let (steps, source) = find_steps(trace);
    if source != StepSource::ProfilerStep {
        return Vec::new();
    }
    let mut marks: Vec<StepMark> = steps
        .iter()
        .filter_map(|s: &Step| {
            s.number.map(|number| StepMark {
                number,
                start_ns: s.start_ns,
            })
        })
        .collect();
    marks.sort_unstable_by_key(|m| (m.number, m.start_ns));
    marks
}

/// Gaps and repeats in the step numbers of `trace`.
pub fn check(trace: &Trace, opts: &CheckOptions) -> Vec<CheckResult> {
    check_marks(&step_marks(trace), opts)
}

/// Gaps and repeats in step marks sorted by number.
pub fn check_marks(marks: &[StepMark], opts: &CheckOptions) -> Vec<CheckResult> {
    let mut missing = (0u64, Firsts::new(opts.examples));
    let mut repeated = (0u64, Firsts::new(opts.examples));
    for w in marks.windows(2) {
        let (a, b) = (w[0], w[1]);
        let gap = b.number.saturating_sub(a.number).saturating_sub(1);
        if gap > 0 {
            missing.0 = missing.0.saturating_add(gap as u64);
            missing.1.offer(b.start_ns, || Example {
                ts_ns: Some(b.start_ns),
                name: Some(format!("ProfilerStep#{}", b.number)),
                other: Some(format!("ProfilerStep#{}", a.number)),
                other_ts_ns: Some(a.start_ns),
                number: Some(gap),
                ..Example::default()
            });
        } else if a.number == b.number {
            repeated.0 += 1;
            repeated.1.offer(b.start_ns, || Example {
                ts_ns: Some(b.start_ns),
                name: Some(format!("ProfilerStep#{}", b.number)),
                other_ts_ns: Some(a.start_ns),
                number: Some(b.number),
                ..Example::default()
            });
        }
    }
    vec![
        CheckResult::new(CheckKind::MissingSteps, missing.0, missing.1),
        CheckResult::new(CheckKind::RepeatedStep, repeated.0, repeated.1),
    ]
}
