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

use kinetoscope_analysis::ancestry::AncestorSearch;
use kinetoscope_analysis::up_search::UpSearch;
use kinetoscope_trace::Nesting;
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

/// Every thread's host-work spans, linked up their nesting.
pub(crate) struct HostWork {
    threads: FxHashMap<u32, Thread>,
}

impl HostWork {
    /// From each thread's spans (sorted as [`Thread::spans`]); a span's parent is its
    /// nearest ancestor in `nesting` that is one of the spans.
    pub(crate) fn new(
        per_track: FxHashMap<u32, Vec<(i64, i64, usize)>>,
        nesting: &Nesting,
    ) -> Self {
        // Each span's position in its thread's list, plus one (0: not a span; zeroed,
        // so the pages of other events are never touched).
        let mut pos = vec![0u32; nesting.parent.len()];
        for spans in per_track.values() {
            for (k, s) in spans.iter().enumerate() {
                pos[s.2] = k as u32 + 1;
            }
        }
        let mut up = AncestorSearch::new(nesting, |a| pos[a] != 0);
        let mut ancestor = |i| up.nearest(i);
        let threads = per_track
            .into_iter()
            .map(|(track, spans)| {
                let parents = spans
                    .iter()
                    .map(|s| ancestor(s.2).map(|a| pos[a] as usize - 1));
                let up = UpSearch::new(parents);
                (track, Thread { spans, up })
            })
            .collect();
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
