//! Launch calls and the GPU activities they launched, linked by CUPTI `correlation`
//! (`Trace::correlation_index`):
//!
//! - a kernel, copy or set launch call (`gpu_time::launches` names, graph launches)
//!   whose correlation no activity carries. The profiling window can close after a
//!   launch and before its activity ran: launches later than the last launch whose
//!   activity was recorded (by start, or by correlation id: CUPTI numbers calls in
//!   order) are counted apart ([`CheckKind::LaunchCutAtEnd`]);
//! - a kernel, copy or set whose correlation no launch call carries. The window can
//!   open after a launch and before its activity ran: activities starting before the
//!   first activity whose launch was recorded, or whose correlation id is below every
//!   launch call's (a stream still draining work queued before the window opened), are
//!   counted apart ([`CheckKind::ActivityCutAtStart`]). In a trace without any launch call (host
//!   activity not recorded) they are [`CheckKind::NoLaunchCalls`];
//! - an activity that starts before its launch call (a negative launch latency: the
//!   host and device clocks disagree).

use kinetoscope_trace::{CategoryKind, EventId, Phase, Trace};

use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts};
use crate::device_activity::is_graph_launch;
use crate::gpu_time::launches::is_launch_call;
use crate::gpu_time::Compat;
use crate::name_memo::NameMemo;

/// Whether a kind is a GPU activity a launch call makes.
fn is_activity(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
    )
}

/// Launches without activity, activities without launch, negative launch latencies.
pub fn check(trace: &Trace, opts: &CheckOptions) -> Vec<CheckResult> {
    let e = &trace.events;
    let idx = trace.correlation_index();
    let mut launches_name = NameMemo::new(trace, |n: &str| {
        is_launch_call(n, Compat::Kinetoscope) || is_graph_launch(n)
    });
    // Launch calls: those without activity, and the last start of one with.
    let mut orphans: Vec<u32> = Vec::new();
    let mut last_linked: Option<(i64, i64)> = None;
    let mut first_call: Option<i64> = None;
    let mut any_call = false;
    // Activities: those without launch, and the first start of one with.
    let mut lost: Vec<u32> = Vec::new();
    let mut first_linked: Option<i64> = None;
    let mut negative = (0u64, Firsts::new(opts.examples));
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = trace.categories.kind(e.cat[i]);
        let c = e.correlation.at(i);
        if kind.is_launch_call() {
            any_call = true;
            if c > 0 {
                first_call = Some(first_call.map_or(c, |f| f.min(c)));
            }
            if c == 0 || !launches_name.get(e.name[i]) {
                continue;
            }
            if !idx.gpu(c).is_empty() {
                let (t, id) = last_linked.unwrap_or((e.ts_ns[i], c));
                last_linked = Some((t.max(e.ts_ns[i]), id.max(c)));
            } else {
                orphans.push(i as u32);
            }
        } else if is_activity(kind) {
            match idx.launch(c) {
                Some(call) => {
                    first_linked = Some(first_linked.map_or(e.ts_ns[i], |t| t.min(e.ts_ns[i])));
                    let call_ts = e.ts_ns[call.index()];
                    if e.ts_ns[i] < call_ts {
                        negative.0 += 1;
                        negative.1.offer(e.ts_ns[i], || Example {
                            amount_ns: Some(e.ts_ns[i].saturating_sub(call_ts)),
                            number: Some(c),
                            ..Example::at(trace, EventId(i as u32)).with_other(trace, call)
                        });
                    }
                }
                None => lost.push(i as u32),
            }
        }
    }
    let (without, cut_end) = split(trace, &orphans, opts, |t, c| {
        last_linked.is_some_and(|(ts, id)| t > ts || c > id)
    });
    let (no_launch, cut_start) = split(trace, &lost, opts, |t, c| {
        first_linked.is_some_and(|first| t < first)
            || first_call.is_some_and(|first| c > 0 && c < first)
    });
    let mut out = vec![
        result(CheckKind::LaunchWithoutActivity, without),
        result(CheckKind::LaunchCutAtEnd, cut_end),
        result(CheckKind::NegativeLaunchLatency, negative),
    ];
    if any_call {
        out.push(result(CheckKind::ActivityWithoutLaunch, no_launch));
        out.push(result(CheckKind::ActivityCutAtStart, cut_start));
    } else {
        let mut all = no_launch;
        all.0 += cut_start.0;
        out.push(result(CheckKind::NoLaunchCalls, all));
    }
    out
}

/// A result from a count and its examples.
fn result(kind: CheckKind, (count, first): (u64, Firsts)) -> CheckResult {
    CheckResult::new(kind, count, first)
}

/// Split `events` into (not cut, cut by the window) by their start and correlation.
fn split(
    trace: &Trace,
    events: &[u32],
    opts: &CheckOptions,
    cut: impl Fn(i64, i64) -> bool,
) -> ((u64, Firsts), (u64, Firsts)) {
    let e = &trace.events;
    let mut kept = (0u64, Firsts::new(opts.examples));
    let mut window = (0u64, Firsts::new(opts.examples));
    for &i in events {
        let ts = e.ts_ns[i as usize];
        let c = e.correlation.at(i as usize);
        let into = if cut(ts, c) { &mut window } else { &mut kept };
        into.0 += 1;
        into.1.offer(ts, || Example {
            number: Some(c),
            ..Example::at(trace, EventId(i))
        });
    }
    (kept, window)
}
