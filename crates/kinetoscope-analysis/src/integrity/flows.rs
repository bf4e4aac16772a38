//! Flow arrows (`ph: s` / `f`) that point nowhere:
//!
//! - **unpaired**: a `(category, id)` with a start and no finish, or a finish and no
//!   start (counted once per flow id);
//! - **unbound**: a flow event binds to a slice on its own track, the slice enclosing its
//!   timestamp (a start or step), or for a finish the enclosing or the next slice
//!   (Chrome's binding points); one with no such slice is drawn from or to nothing.

use kinetoscope_trace::{FlowEnd, Phase, Trace};
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
                    v.push((e.ts_ns[i], e.ts_ns[i].saturating_add(e.dur_ns[i].max(0))));
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
        let entry = ends.entry((f.cat[i].0, f.id[i])).or_insert((0, 0, i));
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
    let mut unpaired = (0u64, Firsts::new(opts.examples));
    for &(starts, finishes, first) in ends.values() {
        if (starts == 0) != (finishes == 0) {
            unpaired.0 += 1;
            unpaired.1.offer(f.ts_ns[first], || example(trace, first));
        }
    }
    vec![
        CheckResult::new(CheckKind::UnpairedFlow, unpaired.0, unpaired.1),
        CheckResult::new(CheckKind::UnboundFlow, unbound.0, unbound.1),
    ]
}

/// The flow event `i`: its time, track, category (as the name) and id.
fn example(trace: &Trace, i: usize) -> Example {
    let f = &trace.flows;
    Example {
        ts_ns: Some(f.ts_ns[i]),
        track: Some(TrackRef::of(trace, f.track[i])),
        name: Some(trace.categories.get(f.cat[i]).raw.clone()),
        number: Some(f.id[i] as i64),
        ..Example::default()
    }
}
