//! The GPU work launched during a host span: the runtime and driver calls on the span's
//! thread that lie inside it in time, and the activities they launched (by CUPTI
//! correlation).
//!
//! Calls on one thread run one after the other, so the calls inside a span are one run
//! of the thread's calls sorted by start: prefix sums give a span's totals in O(log n)
//! and its list in O(log n + found). A thread whose calls overlap (only a hostile trace
//! has one) is answered without scanning calls that fail: lists through a range-minimum
//! search on call ends, totals for all its spans at once by one offline sweep. Either
//! way, any number of spans, nested or not, cost O(n log n) in all.

use std::ops::{Add, Sub};
use std::sync::OnceLock;

use kinetoscope_analysis::overview::tensor_cores::uses_tensor_cores;
use kinetoscope_analysis::range_extremes::RangeExtremes;
use kinetoscope_trace::{CategoryKind, Phase, StrId, Trace};
use rustc_hash::FxHashMap;

/// Totals of the GPU activities some calls launched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Launched {
    /// Σ activity time, ns.
    pub device_ns: i64,
    /// Activities that ran on tensor cores (or say `tf32`).
    pub tensor_core: u64,
}

impl Add for Launched {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            device_ns: self.device_ns + o.device_ns,
            tensor_core: self.tensor_core + o.tensor_core,
        }
    }
}

impl Sub for Launched {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self {
            device_ns: self.device_ns - o.device_ns,
            tensor_core: self.tensor_core - o.tensor_core,
        }
    }
}

/// One thread's launch calls.
struct Thread {
    /// (start, end, correlation), sorted.
    calls: Vec<(i64, i64, i64)>,
    /// `before[k]`: totals of `calls[..k]`.
    before: Vec<Launched>,
    /// Call ends, when they decrease somewhere in start order (calls overlap).
    overlapping: Option<RangeExtremes>,
}

impl Thread {
    /// The calls starting in `[s, e)`: `[lo, hi)` indexes of `calls`.
    fn starting_in(&self, s: i64, e: i64) -> (usize, usize) {
        let lo = self.calls.partition_point(|c| c.0 < s);
        let hi = self.calls.partition_point(|c| c.0 < e).max(lo);
        (lo, hi)
    }

    /// Indexes of the calls inside `[s, e)`, in order.
    fn inside(&self, s: i64, e: i64) -> Vec<usize> {
        let (lo, hi) = self.starting_in(s, e);
        match &self.overlapping {
            None => (lo..lo + self.calls[lo..hi].partition_point(|c| c.1 <= e)).collect(),
            Some(ends) => {
                let mut out = Vec::new();
                ends.each_at_most(lo, hi, e, &mut |k| out.push(k));
                out
            }
        }
    }
}

/// Every thread's launch calls, with what each launched.
pub(crate) struct Launches {
    threads: FxHashMap<u32, Thread>,
    /// Totals of every host span on a thread whose calls overlap, by event.
    swept: OnceLock<FxHashMap<u32, Launched>>,
}

impl Launches {
    /// Index the launch calls of `trace` (those whose correlation names GPU work).
    pub(crate) fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let idx = trace.correlation_index();
        let mut tensor_core: FxHashMap<StrId, bool> = FxHashMap::default();
        let mut weight = |corr: i64| -> Launched {
            let mut w = Launched::default();
            for g in idx.gpu(corr) {
                let g = g.index();
                w.device_ns += e.dur_ns.at(g);
                let tc = *tensor_core.entry(e.name[g]).or_insert_with(|| {
                    let n = trace.strings.get(e.name[g]);
                    n.contains("tf32") || uses_tensor_cores(n)
                });
                w.tensor_core += u64::from(tc);
            }
            w
        };
        let mut calls: FxHashMap<u32, Vec<(i64, i64, i64)>> = FxHashMap::default();
        for i in 0..e.len() {
            let c = e.correlation.at(i);
            if c == 0
                || !matches!(
                    trace.categories.kind(e.cat[i]),
                    CategoryKind::CudaRuntime | CategoryKind::CudaDriver
                )
                || idx.gpu(c).is_empty()
            {
                continue;
            }
            let start = e.ts_ns[i];
            calls
                .entry(e.track[i].0)
                .or_default()
                .push((start, start + e.dur_ns.at(i), c));
        }
        let threads = calls
            .into_iter()
            .map(|(track, mut calls)| {
                calls.sort();
                let mut before = Vec::with_capacity(calls.len() + 1);
                let mut sum = Launched::default();
                before.push(sum);
                for c in &calls {
                    sum = sum + weight(c.2);
                    before.push(sum);
                }
                let overlapping = calls
                    .windows(2)
                    .any(|w| w[1].1 < w[0].1)
                    .then(|| RangeExtremes::new(calls.iter().map(|c| c.1)));
                let t = Thread {
                    calls,
                    before,
                    overlapping,
                };
                (track, t)
            })
            .collect();
        Self {
            threads,
            swept: OnceLock::new(),
        }
    }

    /// The correlations of the calls made during `event` on its thread, in call order.
    pub(crate) fn correlations_inside(&self, trace: &Trace, event: usize) -> Vec<i64> {
        let e = &trace.events;
        let Some(t) = self.threads.get(&e.track[event].0) else {
            return Vec::new();
        };
        let (s, end) = (e.ts_ns[event], e.ts_ns[event] + e.dur_ns.at(event));
        t.inside(s, end).into_iter().map(|k| t.calls[k].2).collect()
    }

    /// The totals of what the calls made during `event` on its thread launched.
    pub(crate) fn totals_inside(&self, trace: &Trace, event: usize) -> Launched {
        let e = &trace.events;
        let Some(t) = self.threads.get(&e.track[event].0) else {
            return Launched::default();
        };
        let (s, end) = (e.ts_ns[event], e.ts_ns[event] + e.dur_ns.at(event));
        if t.overlapping.is_none() {
            let (lo, _) = t.starting_in(s, end);
            let hi = lo + t.calls[lo..].partition_point(|c| c.0 < end && c.1 <= end);
            return t.before[hi] - t.before[lo];
        }
        let swept = self.swept.get_or_init(|| self.sweep(trace));
        match swept.get(&(event as u32)) {
            Some(v) => *v,
            None => t
                .inside(s, end)
                .into_iter()
                .fold(Launched::default(), |acc, k| {
                    acc + (t.before[k + 1] - t.before[k])
                }),
        }
    }

    /// The totals of every host span on the threads whose calls overlap, by one sweep
    /// per thread over span ends (calls enter a Fenwick tree over start order as their
    /// end is passed).
    fn sweep(&self, trace: &Trace) -> FxHashMap<u32, Launched> {
        let e = &trace.events;
        let mut spans: FxHashMap<u32, Vec<(i64, i64, u32)>> = FxHashMap::default();
        for i in 0..e.len() {
            let track = e.track[i].0;
            if e.phase[i] != Phase::Complete
                || trace.categories.kind(e.cat[i]).is_gpu()
                || self
                    .threads
                    .get(&track)
                    .is_none_or(|t| t.overlapping.is_none())
            {
                continue;
            }
            let s = e.ts_ns[i];
            spans
                .entry(track)
                .or_default()
                .push((s + e.dur_ns.at(i), s, i as u32));
        }
        let mut out = FxHashMap::default();
        for (track, mut spans) in spans {
            let t = &self.threads[&track];
            let mut by_end: Vec<usize> = (0..t.calls.len()).collect();
            by_end.sort_unstable_by_key(|&k| t.calls[k].1);
            spans.sort();
            let mut tree = Fenwick::new(t.calls.len());
            let mut next = 0;
            for (end, s, i) in spans {
                while let Some(&k) = by_end.get(next).filter(|&&k| t.calls[k].1 <= end) {
                    tree.add(k, t.before[k + 1] - t.before[k]);
                    next += 1;
                }
                let (lo, hi) = t.starting_in(s, end);
                out.insert(i, tree.prefix(hi) - tree.prefix(lo));
            }
        }
        out
    }
}

/// Prefix sums with point updates, O(log n) each.
struct Fenwick(Vec<Launched>);

impl Fenwick {
    fn new(n: usize) -> Self {
        Self(vec![Launched::default(); n + 1])
    }

    fn add(&mut self, k: usize, v: Launched) {
        let mut k = k + 1;
        while k < self.0.len() {
            self.0[k] = self.0[k] + v;
            k += k & k.wrapping_neg();
        }
    }

    /// Σ of the first `k` values.
    fn prefix(&self, k: usize) -> Launched {
        let (mut k, mut s) = (k.min(self.0.len() - 1), Launched::default());
        while k > 0 {
            s = s + self.0[k];
            k -= k & k.wrapping_neg();
        }
        s
    }
}
