//! Searches up the host nesting (`Trace::nesting`): the nearest ancestor of an event that
//! passes a test. Every answer found by a walk of more than one step is memoised for the
//! whole path walked, so answering for any number of events costs O(n) in all, however
//! deep the nesting (a walk per event would be quadratic on deeply nested spans); an
//! answer found in one step (the parent passes, or there is none) is not, as nothing
//! could share it.

use kinetoscope_trace::Nesting;

/// Not computed yet: every slot of a chunk starts so.
const UNKNOWN: u32 = u32::MAX;
/// No ancestor passes.
const NONE: u32 = u32::MAX - 1;

/// Events per memo chunk: one 4 KiB page of slots.
const CHUNK: usize = 1024;

/// The nearest ancestor passing `test`, for any events, in O(n) in all.
pub struct AncestorSearch<'a, P> {
    parent: &'a [u32],
    test: P,
    /// Per event, by chunks of [`CHUNK`] events each made on the first write to it:
    /// [`UNKNOWN`], [`NONE`], or its nearest ancestor that passes (event indices are
    /// below [`NONE`]: `u32::MAX` is the nesting's "no parent"). Many searches answer for
    /// a few events, or none, and their walks stay near the events asked about; a slot
    /// for every event, made up front, cost each search a page fault per 1,024 events
    /// of the trace (on a real trace, half of `report`'s searches asked nothing).
    memo: Vec<Option<Box<[u32; CHUNK]>>>,
    /// The path being walked (kept to reuse its allocation).
    path: Vec<u32>,
}

impl<'a, P: FnMut(usize) -> bool> AncestorSearch<'a, P> {
    /// A search over `nesting` for ancestors that pass `test` (called with an event
    /// index, at most once per event walked through plus once per query).
    pub fn new(nesting: &'a Nesting, test: P) -> Self {
        Self {
            parent: &nesting.parent,
            test,
            memo: (0..nesting.parent.len().div_ceil(CHUNK))
                .map(|_| None)
                .collect(),
            path: Vec::new(),
        }
    }

    /// The memoised answer of event `k` (below the number of events).
    fn known(&self, k: usize) -> u32 {
        self.memo[k / CHUNK]
            .as_ref()
            .map_or(UNKNOWN, |c| c[k % CHUNK])
    }

    /// The nearest strict ancestor of `event` that passes the test.
    pub fn nearest(&mut self, event: usize) -> Option<usize> {
        let n = self.parent.len();
        if event >= n {
            return None;
        }
        let mut cur = event as u32;
        let found = loop {
            let m = self.known(cur as usize);
            if m != UNKNOWN {
                break m;
            }
            let p = self.parent[cur as usize];
            let root = p == u32::MAX || p as usize >= n;
            let passes = !root && (self.test)(p as usize);
            if self.path.is_empty() && (root || passes) {
                // Answered in one hop (most events: an operator in an operator): no
                // walk to share, so nothing is remembered, and no memo page is made.
                return passes.then_some(p as usize);
            }
            self.path.push(cur);
            if root {
                break NONE;
            }
            if passes {
                break p;
            }
            cur = p;
        };
        // Every event on the path has the same answer: the ancestors between them and
        // `found` failed the test.
        for k in self.path.drain(..) {
            let k = k as usize;
            let chunk = self.memo[k / CHUNK].get_or_insert_with(|| Box::new([UNKNOWN; CHUNK]));
            chunk[k % CHUNK] = found;
        }
        (found != NONE).then_some(found as usize)
    }

    /// Whether some strict ancestor of `event` passes the test.
    pub fn any(&mut self, event: usize) -> bool {
        self.nearest(event).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(parent: &[u32], mut e: usize, test: impl Fn(usize) -> bool) -> Option<usize> {
        loop {
            let p = parent[e];
            if p == u32::MAX {
                return None;
            }
            if test(p as usize) {
                return Some(p as usize);
            }
            e = p as usize;
        }
    }

    #[test]
    fn agrees_with_a_walk_in_any_query_order() {
        //   0 ─ 1 ─ 2 ─ 3 ─ 4      5 ─ 6
        //           └ 7 ─ 8
        let parent = vec![u32::MAX, 0, 1, 2, 3, u32::MAX, 5, 2, 7];
        let nesting = Nesting {
            parent: parent.clone(),
            ..Default::default()
        };
        let test = |e: usize| e % 3 == 1;
        for order in [
            [4usize, 8, 3, 6, 0, 2, 1, 5, 7],
            [0, 1, 2, 3, 4, 5, 6, 7, 8],
        ] {
            let mut s = AncestorSearch::new(&nesting, test);
            for e in order {
                assert_eq!(s.nearest(e), walk(&parent, e, test), "event {e}");
            }
            assert_eq!(s.nearest(99), None);
        }
    }

    #[test]
    fn agrees_with_a_walk_across_chunks() {
        // A forest over several chunks: each event's parent a little before it (as in a
        // trace, where a span's children follow it), or none; queries in a scattered order.
        let n = 5 * CHUNK + 17;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let parent: Vec<u32> = (0..n)
            .map(|i| match next() % 3000 {
                r if r as usize >= i || r % 97 == 0 => u32::MAX,
                r => (i - 1 - r as usize) as u32,
            })
            .collect();
        let nesting = Nesting {
            parent: parent.clone(),
            ..Default::default()
        };
        let test = |e: usize| e % 7 == 3;
        let mut s = AncestorSearch::new(&nesting, test);
        for k in 0..2 * n {
            let e = (k * 7919 + (next() % 5) as usize) % n;
            assert_eq!(s.nearest(e), walk(&parent, e, test), "event {e}");
        }
        assert!(
            s.memo.iter().all(Option::is_some),
            "every chunk was written"
        );
        let untouched = AncestorSearch::new(&nesting, test);
        assert!(untouched.memo.iter().all(Option::is_none));
    }

    #[test]
    fn answers_found_in_one_step_make_no_memo_page() {
        // Event 0 encloses every other and passes: each answer is one step.
        let n = 3 * CHUNK;
        let nesting = Nesting {
            parent: std::iter::once(u32::MAX)
                .chain(std::iter::repeat_n(0, n - 1))
                .collect(),
            ..Default::default()
        };
        let mut s = AncestorSearch::new(&nesting, |e| e == 0);
        for e in 0..n {
            assert_eq!(s.nearest(e), (e > 0).then_some(0), "event {e}");
        }
        assert!(s.memo.iter().all(Option::is_none));
    }

    #[test]
    fn tests_each_event_at_most_once_on_a_deep_chain() {
        let n = 200_000u32;
        let nesting = Nesting {
            parent: std::iter::once(u32::MAX).chain(0..n - 1).collect(),
            ..Default::default()
        };
        let mut calls = 0u64;
        let mut s = AncestorSearch::new(&nesting, |_| {
            calls += 1;
            false
        });
        for e in (0..n as usize).rev() {
            assert!(!s.any(e));
        }
        drop(s);
        assert!(calls < u64::from(n), "{calls} tests for {n} events");
    }
}
