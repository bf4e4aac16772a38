//! Searches up the host nesting (`Trace::nesting`): the nearest ancestor of an event that
//! passes a test. Every answer is memoised for the whole path walked, so answering for
//! any number of events costs O(n) in all, however deep the nesting (a walk per event
//! would be quadratic on deeply nested spans).

use kinetoscope_trace::Nesting;

/// Not computed yet. Not 0 on purpose: a zeroed memo would be allocated as pages the
/// kernel maps to its zero page and copies on the first write, one fault and one TLB
/// flush of every core running the process per page, as the searches read before they
/// write (on a 2-core VM, 8 % of `report`'s time after the read); filled with this
/// value, the memo's pages are written once, in order, when it is made.
const UNKNOWN: u32 = u32::MAX;
/// No ancestor passes.
const NONE: u32 = u32::MAX - 1;

/// The nearest ancestor passing `test`, for any events, in O(n) in all.
pub struct AncestorSearch<'a, P> {
    parent: &'a [u32],
    test: P,
    /// Per event: [`UNKNOWN`], [`NONE`], or its nearest ancestor that passes (event
    /// indices are below [`NONE`]: `u32::MAX` is the nesting's "no parent").
    memo: Vec<u32>,
    /// The path being walked (kept to reuse its allocation).
    path: Vec<u32>,
}

impl<'a, P: FnMut(usize) -> bool> AncestorSearch<'a, P> {
    /// A search over `nesting` for ancestors that pass `test` (called at most once per
    /// event, with the event index).
    pub fn new(nesting: &'a Nesting, test: P) -> Self {
        Self {
            parent: &nesting.parent,
            test,
            memo: vec![UNKNOWN; nesting.parent.len()],
            path: Vec::new(),
        }
    }

    /// The nearest strict ancestor of `event` that passes the test.
    pub fn nearest(&mut self, event: usize) -> Option<usize> {
        if event >= self.memo.len() {
            return None;
        }
        let mut cur = event as u32;
        let found = loop {
            let m = self.memo[cur as usize];
            if m != UNKNOWN {
                break m;
            }
            self.path.push(cur);
            let p = self.parent[cur as usize];
            if p == u32::MAX || p as usize >= self.memo.len() {
                break NONE;
            }
            if (self.test)(p as usize) {
                break p;
            }
            cur = p;
        };
        // Every event on the path has the same answer: the ancestors between them and
        // `found` failed the test.
        for k in self.path.drain(..) {
            self.memo[k as usize] = found;
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
    fn tests_each_event_at_most_once_on_a_deep_chain() {
        let n = 200_000u32;
        let nesting = Nesting {
            parent: std::iter::once(u32::MAX).chain(0..n - 1).collect(),
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
