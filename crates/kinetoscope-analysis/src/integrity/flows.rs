//! Flow arrows (`ph: s` / `f`) that point nowhere:
//!
//! - **unpaired**: a `(category, id)` with a start and no finish, or a finish and no
//!   start (counted once per flow id). Two causes are told apart: the profiling window
//!   (a finish earlier than every paired flow's finish, a start later than every paired
//!   flow's start: [`CheckKind::FlowCutByWindow`]), and a lone finish on a host thread,
//!   which Kineto writes on runtime calls that launch nothing (`cudaFuncSetAttribute`,
//!   `cudaStreamIsCapturing`: [`CheckKind::LoneFlowOnCall`]);
//! - **unbound**: a flow event binds to a slice on its own track, the slice enclosing its
//!   timestamp (a start or step), or for a finish the enclosing or the next slice
//!   (Chrome's binding points); one with no such slice is drawn from or to nothing.

use kinetoscope_trace::{FlowEnd, Phase, Trace, TrackKind};
use rustc_hash::FxHashMap;

use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts, TrackRef};

/// Per track: the complete slices' starts in order and the running maximum of their
/// ends, to answer "does a slice enclose t" in O(log n).
struct Slices {
    starts: Vec<Vec<i64>>,
    max_end: Vec<Vec<i64>>,
}

impl Slices {
    fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let mut per: Vec<Vec<(i64, i64)>> = vec![Vec::new(); trace.tracks.len()];
        for i in 0..e.len() {
            if e.phase[i] == Phase::Complete {
                if let Some(v) = per.get_mut(e.track[i].index()) {
                    v.push((e.ts_ns[i], e.ts_ns[i].saturating_add(e.dur_ns.at(i).max(0))));
                }
            }
        }
        let mut starts = Vec::with_capacity(per.len());
        let mut max_end = Vec::with_capacity(per.len());
        for mut v in per {
            v.sort_unstable();
            let mut m = i64::MIN;
            max_end.push(
                v.iter()
                    .map(|&(_, end)| {
                        m = m.max(end);
                        m
                    })
                    .collect(),
            );
            starts.push(v.into_iter().map(|(s, _)| s).collect());
        }
        Self { starts, max_end }
    }

    /// Whether a slice on `track` encloses `t` (or, with `next`, starts at or after it).
    fn binds(&self, track: usize, t: i64, next: bool) -> bool {
        let (Some(starts), Some(ends)) = (self.starts.get(track), self.max_end.get(track)) else {
            return false;
        };
        let n = starts.partition_point(|&s| s <= t);
        (n > 0 && ends[n - 1] >= t) || (next && n < starts.len())
    }
}

/// Unpaired and unbound flows.
pub fn check(trace: &Trace, opts: &CheckOptions) -> Vec<CheckResult> {
    let f = &trace.flows;
    if f.is_empty() {
        return Vec::new();
    }
    // (category, id) → (starts, finishes, first flow event).
    let mut ends: FxHashMap<(u16, u64), (u32, u32, usize)> = FxHashMap::default();
    let slices = Slices::build(trace);
    let mut unbound = (0u64, Firsts::new(opts.examples));
    for i in 0..f.len() {
        let entry = ends
            .entry((f.cat[i].0, f.id.at(i) as u64))
            .or_insert((0, 0, i));
        match f.end[i] {
            FlowEnd::Start => entry.0 += 1,
            FlowEnd::Finish => entry.1 += 1,
            FlowEnd::Step => {}
        }
        let finish = f.end[i] == FlowEnd::Finish;
        if !slices.binds(f.track[i].index(), f.ts_ns[i], finish) {
            unbound.0 += 1;
            unbound.1.offer(f.ts_ns[i], || example(trace, i));
        }
    }
    let mut found = [
        (0u64, Firsts::new(opts.examples)),
        (0u64, Firsts::new(opts.examples)),
        (0u64, Firsts::new(opts.examples)),
    ];
    let window = Window::of(trace, &ends);
    for &(starts, finishes, first) in ends.values() {
        if (starts == 0) == (finishes == 0) {
            continue;
        }
        let ts = f.ts_ns[first];
        let host = on_host(trace, first);
        let slot = if starts == 0 && host {
            2
        } else if window.cuts(starts == 0, ts, f.id.at(first) as u64) {
            1
        } else {
            0
        };
        found[slot].0 += 1;
        found[slot].1.offer(ts, || example(trace, first));
    }
    let [unpaired, cut, lone] = found;
    vec![
        CheckResult::new(CheckKind::UnpairedFlow, unpaired.0, unpaired.1),
        CheckResult::new(CheckKind::FlowCutByWindow, cut.0, cut.1),
        CheckResult::new(CheckKind::LoneFlowOnCall, lone.0, lone.1),
        CheckResult::new(CheckKind::UnboundFlow, unbound.0, unbound.1),
    ]
}

/// The first finish on a device track and the last start on a host thread of the paired
/// flows, and the lowest and highest ids of paired flows: where launch arrows (host →
/// device, their id the CUPTI correlation, numbered in launch order) were seen whole.
struct Window {
    first_finish: Option<i64>,
    last_start: Option<i64>,
    ids: Option<(u64, u64)>,
}

impl Window {
    fn of(trace: &Trace, ends: &FxHashMap<(u16, u64), (u32, u32, usize)>) -> Self {
        let f = &trace.flows;
        let mut w = Self {
            first_finish: None,
            last_start: None,
            ids: None,
        };
        for i in 0..f.len() {
            let paired = ends
                .get(&(f.cat[i].0, f.id.at(i) as u64))
                .is_some_and(|&(s, e, _)| s > 0 && e > 0);
            if !paired {
                continue;
            }
            let (t, id) = (f.ts_ns[i], f.id.at(i) as u64);
            let (lo, hi) = w.ids.unwrap_or((id, id));
            w.ids = Some((lo.min(id), hi.max(id)));
            match (f.end[i], on_host(trace, i)) {
                (FlowEnd::Finish, false) => {
                    w.first_finish = Some(w.first_finish.map_or(t, |x| x.min(t)));
                }
                (FlowEnd::Start, true) => {
                    w.last_start = Some(w.last_start.map_or(t, |x| x.max(t)));
                }
                _ => {}
            }
        }
        w
    }

    /// Whether a lone finish (`finish_only`) or a lone start at `ts` with `id` lies
    /// where the window cut its other end.
    fn cuts(&self, finish_only: bool, ts: i64, id: u64) -> bool {
        if finish_only {
            self.first_finish.is_some_and(|first| ts < first)
                || self.ids.is_some_and(|(lo, _)| id < lo)
        } else {
            self.last_start.is_some_and(|last| ts > last) || self.ids.is_some_and(|(_, hi)| id > hi)
        }
    }
}

/// Whether flow event `i` is on a host thread.
fn on_host(trace: &Trace, i: usize) -> bool {
    trace
        .tracks
        .list
        .get(trace.flows.track[i].index())
        .is_some_and(|t| t.kind == TrackKind::CpuThread)
}

/// The flow event `i`: its time, track, category (as the name) and id.
fn example(trace: &Trace, i: usize) -> Example {
    let f = &trace.flows;
    Example {
        ts_ns: Some(f.ts_ns[i]),
        track: Some(TrackRef::of(trace, f.track[i])),
        name: Some(trace.categories.get(f.cat[i]).raw.clone()),
        number: Some(f.id.at(i) as u64 as i64),
        ..Example::default()
    }
}
