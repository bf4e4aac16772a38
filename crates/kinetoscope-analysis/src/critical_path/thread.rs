//! One host thread's events in the window, nested by time, with the lookups the walk
//! makes at each point: the deepest event running at a time (O(log depth) up the
//! nesting) and an event's children (one flat list).

use crate::up_search::UpSearch;

/// An event of the window: index and `[start, end)`, ns.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ev {
    pub id: u32,
    pub start: i64,
    pub end: i64,
}

/// Host events of one thread in the window, nested.
pub(super) struct Thread {
    /// Sorted by start, longest first, then event: a pre-order of the nesting.
    pub evs: Vec<Ev>,
    /// Each event's parent, searchable up the path.
    up: UpSearch,
    /// `kids[first_kid[k]..first_kid[k + 1]]`: the children of event `k`, in order.
    first_kid: Vec<u32>,
    kids: Vec<u32>,
}

impl Thread {
    /// Nest `evs` with a stack: an event's parent is the innermost open event that
    /// holds it; one that starts inside an open event but ends after it has none.
    pub fn build(mut evs: Vec<Ev>) -> Self {
        evs.sort_unstable_by_key(|e| (e.start, std::cmp::Reverse(e.end - e.start), e.id));
        let mut parent: Vec<Option<usize>> = vec![None; evs.len()];
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..evs.len() {
            while stack
                .last()
                .is_some_and(|&top| evs[i].start >= evs[top].end)
            {
                stack.pop();
            }
            if let Some(&top) = stack.last() {
                if evs[i].end <= evs[top].end {
                    parent[i] = Some(top);
                }
            }
            stack.push(i);
        }
        // Children in order: count per parent, then place each child at its parent's
        // next slot.
        let mut first_kid = vec![0u32; evs.len() + 1];
        for p in parent.iter().flatten() {
            first_kid[p + 1] += 1;
        }
        for k in 0..evs.len() {
            first_kid[k + 1] += first_kid[k];
        }
        let mut next = first_kid.clone();
        let mut kids = vec![0u32; first_kid[evs.len()] as usize];
        for (c, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                kids[next[p] as usize] = c as u32;
                next[p] += 1;
            }
        }
        Self {
            evs,
            up: UpSearch::new(parent.into_iter()),
            first_kid,
            kids,
        }
    }

    /// The deepest event with start < t ≤ end, else the latest root ending before t:
    /// `(event, running)`.
    pub fn at(&self, t: i64) -> Option<(usize, bool)> {
        let k = self.evs.partition_point(|e| e.start < t).checked_sub(1)?;
        Some(match self.up.first_up(k, |i| self.evs[i].end >= t) {
            Ok(i) => (i, true),
            Err(root) => (root, false),
        })
    }

    /// The children of event `k`, in order.
    pub fn children(&self, k: usize) -> &[u32] {
        match (self.first_kid.get(k), self.first_kid.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.kids[a as usize..b as usize],
            _ => &[],
        }
    }
}
