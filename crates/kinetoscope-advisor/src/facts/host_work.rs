//! What a host thread was executing during a window: for each instant, the innermost
//! operator, annotation (steps not) or user-code Python frame running then.
//!
//! A window starts inside the spans still running at its start: the innermost of them
//! is the first span still running on the path from the last span started up through
//! its host-work ancestors (span ends only grow up the nesting), found in O(log depth)
//! ([`UpSearch`]); the others are reached one by one, only when the one
//! inside them ends within the window. So a window costs O(log n) plus the spans that
//! start or end in it, and disjoint windows cost O(n log n) in all, however deep the
//! nesting.

use kinetoscope_analysis::up_search::UpSearch;
use kinetoscope_trace::Trace;
use rustc_hash::FxHashMap;

/// One thread's host-work spans.
struct Thread {
    /// (start, end, event), sorted by start, longest first, then event.
    spans: Vec<(i64, i64, usize)>,
    /// Each span's nearest host-work ancestor, searchable up the path.
    up: UpSearch,
}

impl Thread {
    /// The nearest host-work ancestor of span `k`.
    fn parent(&self, k: usize) -> Option<usize> {
        self.up.parent(k)
    }

    /// The first span on the path from `k` up that still runs after `t` (span ends
    /// only grow up the path).
    fn innermost_running(&self, k: usize, t: i64) -> Option<usize> {
        self.up.first_up(k, |x| self.spans[x].1 > t).ok()
    }
}

/// The tag of a span that is not host work in [`HostWork::new`]'s positions.
const OTHER: u32 = 1 << 31;

/// Every thread's host-work spans, linked up their nesting.
pub(crate) struct HostWork {
    threads: FxHashMap<u32, Thread>,
}

impl HostWork {
    /// The spans of `trace`'s nesting that pass `is_work`, each thread's in the
    /// nesting's order (start, longest first, then file order); a span's parent is its
    /// nearest ancestor in the nesting that passes.
    pub(crate) fn new(trace: &Trace, mut is_work: impl FnMut(usize) -> bool) -> Self {
        let e = &trace.events;
        let nesting = trace.nesting();
        // Per span of the nesting, in one pass down each track (a parent comes before
        // its children): a host-work span's position in its thread's list plus one, any
        // other span's nearest host-work ancestor's position plus one (0 for none),
        // tagged. Zeroed, so the pages of events that are not spans are never written.
        let mut pos = vec![0u32; e.len()];
        let nearest = |pos: &[u32], p: u32| match pos.get(p as usize) {
            Some(&v) if v & OTHER == 0 => v.checked_sub(1),
            Some(&v) => (v & !OTHER).checked_sub(1),
            None => None,
        };
        let mut threads = FxHashMap::default();
        for track in 0..nesting.order.len() {
            // At most the track's spans: reserved, so that growing never copies.
            let most = nesting.in_start_order(track).len();
            let mut spans: Vec<(i64, i64, usize)> = Vec::with_capacity(most);
            // Each span's parent's position ([`OTHER`] for none).
            let mut parents: Vec<u32> = Vec::with_capacity(most);
            for &i in nesting.in_start_order(track) {
                let up = nearest(&pos, nesting.parent[i as usize]);
                let i = i as usize;
                if is_work(i) {
                    spans.push((e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i), i));
                    parents.push(up.unwrap_or(OTHER));
                    pos[i] = spans.len() as u32;
                } else {
                    pos[i] = OTHER | up.map_or(0, |k| k + 1);
                }
            }
            if !spans.is_empty() {
                let up = UpSearch::new(parents.iter().map(|&p| (p != OTHER).then_some(p as usize)));
                threads.insert(track as u32, Thread { spans, up });
            }
        }
        Self { threads }
    }

    /// What thread `track` was executing during `[lo, hi)`: `add(span, time)` for each
    /// stretch of it (an event; `None` for time in none), in time order. A span may be
    /// handed more than one stretch; no stretch is empty.
    pub(crate) fn work_in(
        &self,
        track: u32,
        lo: i64,
        hi: i64,
        mut add: impl FnMut(Option<usize>, i64),
    ) {
        let mut add = |who, d: i64| {
            if d > 0 {
                add(who, d);
            }
        };
        if hi <= lo {
            return;
        }
        let Some(t) = self.threads.get(&track) else {
            add(None, hi - lo);
            return;
        };
        let first = t.spans.partition_point(|s| s.0 <= lo);
        let mut stack = Stack {
            thread: t,
            chain: first
                .checked_sub(1)
                .and_then(|k| t.innermost_running(k, lo)),
            pushed: Vec::new(),
        };
        let mut cur = lo;
        for &(start, end, id) in t.spans[first..].iter().take_while(|s| s.0 < hi) {
            // Close the spans that end before this one starts.
            while let Some((top_end, top)) = stack.top() {
                if top_end > start {
                    break;
                }
                add(Some(top), top_end.min(hi) - cur);
                cur = cur.max(top_end.min(hi));
                stack.pop();
            }
            add(stack.top().map(|s| s.1), start - cur);
            cur = cur.max(start);
            stack.pushed.push((end, id));
        }
        while let Some((top_end, top)) = stack.top() {
            if cur >= hi {
                break;
            }
            add(Some(top), top_end.min(hi) - cur);
            cur = cur.max(top_end.min(hi));
            stack.pop();
        }
        add(None, hi - cur);
    }
}

/// The spans open at some instant of a window, innermost on top: those pushed in the
/// window above the chain of spans that were running at its start, which is walked up
/// lazily.
struct Stack<'a> {
    thread: &'a Thread,
    /// The innermost span of the chain not yet closed.
    chain: Option<usize>,
    /// (end, event) of the spans started in the window.
    pushed: Vec<(i64, usize)>,
}

impl Stack<'_> {
    fn top(&self) -> Option<(i64, usize)> {
        self.pushed.last().copied().or_else(|| {
            self.chain.map(|k| {
                let s = self.thread.spans[k];
                (s.1, s.2)
            })
        })
    }

    fn pop(&mut self) {
        if self.pushed.pop().is_none() {
            self.chain = self.chain.and_then(|k| self.thread.parent(k));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};

    use super::*;

    /// A complete event on thread 1.
    fn span(cat: &str, name: &str, ts: u32, dur: u32) -> String {
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}}}"#
        )
    }

    #[test]
    fn time_in_a_span_that_is_not_work_goes_to_the_work_around_it() {
        // A user frame holds a library frame (not work), which holds an operator, which
        // holds a runtime call (not work); a second operator follows at top level.
        let events = [
            span("python_function", "train.py(1): step", 0, 100),
            span("python_function", "torch/lib.py(2): helper", 10, 80),
            span("cpu_op", "aten::mm", 20, 20),
            span("cuda_runtime", "cudaLaunchKernel", 25, 5),
            span("cpu_op", "aten::add", 150, 10),
        ];
        let json = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
        let trace = read_trace_bytes(
            Path::new("t.json"),
            json.as_bytes(),
            &ReadOptions::default(),
        )
        .unwrap();
        let e = &trace.events;
        let name = |i: usize| trace.strings.get(e.name[i]).to_owned();
        let work = HostWork::new(&trace, |i| {
            let n = name(i);
            n.starts_with("aten::") || n.starts_with("train.py")
        });
        let track = e.track[0].0;
        let mut got: Vec<(Option<String>, i64)> = Vec::new();
        work.work_in(track, 0, 200_000, |who, d| got.push((who.map(name), d)));
        let us = |n: Option<&str>, d: i64| (n.map(str::to_owned), d * 1000);
        assert_eq!(
            got,
            [
                us(Some("train.py(1): step"), 20),
                us(Some("aten::mm"), 20),
                us(Some("train.py(1): step"), 60),
                us(None, 50),
                us(Some("aten::add"), 10),
                us(None, 40),
            ]
        );
        // A window that starts inside the operator climbs to the user frame when it
        // ends, past the library frame.
        let mut got: Vec<(Option<String>, i64)> = Vec::new();
        work.work_in(track, 30_000, 50_000, |who, d| got.push((who.map(name), d)));
        assert_eq!(
            got,
            [us(Some("aten::mm"), 10), us(Some("train.py(1): step"), 10)]
        );
    }
}
