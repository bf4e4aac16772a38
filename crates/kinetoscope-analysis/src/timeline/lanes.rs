//! Lanes: the slices of one track at one nesting depth, sorted by start and never
//! overlapping, with what makes a window query a few binary searches: prefix sums of
//! busy time and the longest slice of any range.

use kinetoscope_trace::{EventId, Trace};

use super::longest::Longest;

/// The slices of one track at one depth, in time order (starts and ends both sorted).
#[derive(Clone, Debug, Default)]
pub(crate) struct Lane {
    /// Start of each slice (epoch ns).
    pub starts: Vec<i64>,
    /// Duration of each slice (ns).
    pub durs: Vec<i64>,
    /// The event of each slice.
    pub events: Vec<EventId>,
    /// `busy[i]`: total duration of slices `0..i` (`len + 1` values).
    pub busy: Vec<i64>,
    /// The longest slice of any range.
    longest: Longest,
}

impl Lane {
    /// Number of slices.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// End of slice `i`.
    pub fn end(&self, i: usize) -> i64 {
        self.starts[i].saturating_add(self.durs[i])
    }

    /// The first slice that ends after `start` or starts at or after it (so a zero-length
    /// slice at `start` counts as inside).
    pub fn first_from(&self, start: i64) -> usize {
        partition(self.len(), |i| {
            self.end(i) <= start && self.starts[i] < start
        })
    }

    /// The first slice that starts at or after `end`.
    pub fn first_at_or_after(&self, end: i64) -> usize {
        self.starts.partition_point(|&s| s < end)
    }

    /// The index of the longest slice in `[lo, hi)`.
    pub fn longest(&self, lo: usize, hi: usize) -> Option<usize> {
        self.longest.get(&self.durs, lo, hi)
    }

    /// Total duration of slices `[lo, hi)`.
    pub fn busy_between(&self, lo: usize, hi: usize) -> i64 {
        self.busy[hi] - self.busy[lo]
    }

    /// Finish a lane whose slices were pushed in time order.
    fn seal(&mut self) {
        self.busy = std::iter::once(0)
            .chain(self.durs.iter().scan(0i64, |acc, &d| {
                *acc = acc.saturating_add(d);
                Some(*acc)
            }))
            .collect();
        self.longest = Longest::new(&self.durs);
    }
}

/// The first index in `0..n` for which `before` is false (`before` must hold for a
/// prefix).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Split one track's spans (`events`, any order) into lanes by nesting depth: sorted by
/// start (longest first on ties), each span goes one level below the spans still open
/// at its start. A span that outlives its parent (improper nesting) still gets a lane
/// of its own, so lanes never overlap.
pub(crate) fn build_lanes(trace: &Trace, mut events: Vec<EventId>) -> Vec<Lane> {
    let e = &trace.events;
    events.sort_by_key(|&id| {
        (
            e.ts_ns[id.index()],
            std::cmp::Reverse(e.dur_ns.at(id.index())),
        )
    });
    let mut lanes: Vec<Lane> = Vec::new();
    // Ends of the spans open at the current start, outermost first.
    let mut open: Vec<i64> = Vec::new();
    for &id in &events {
        let start = e.ts_ns[id.index()];
        let dur = e.dur_ns.at(id.index()).max(0);
        while open.last().is_some_and(|&end| end <= start) {
            open.pop();
        }
        let depth = open.len();
        if lanes.len() == depth {
            lanes.push(Lane::default());
        }
        let lane = &mut lanes[depth];
        lane.starts.push(start);
        lane.durs.push(dur);
        lane.events.push(id);
        open.push(start.saturating_add(dur));
    }
    for lane in &mut lanes {
        lane.seal();
    }
    lanes
}
