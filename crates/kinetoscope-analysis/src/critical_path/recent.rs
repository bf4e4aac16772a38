//! The other threads' recent work, for the walk's thread-wait step: on each thread, the
//! last 64 events that started before the walk's time `t` (what the analysis has always
//! looked at, so that paths stay the same), kept in one ordered set by end as `t` moves
//! back.
//!
//! An event at position `p` of its thread (events sorted by start) is among the last 64
//! started before `t` exactly while `start[p] < t ≤ start[p + 64]`. The walk's time only
//! moves back, so each event enters the set once (when `t` falls to `start[p + 64]`) and
//! leaves once (when `t` falls to its start): O(n log n) over the whole walk, and a query
//! skips at most 64 events of the asking thread.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::thread::Thread;

/// How many of a thread's latest-started events are looked at.
const RECENT: usize = 64;

/// One event: `(thread, position)`.
type Slot = (u32, u32);

/// The set and the two sweeps that maintain it.
pub(super) struct RecentEnds {
    /// `(end, thread, position)` of the events in their window, ordered by end, then
    /// by thread from the highest (so the lowest thread of equal ends comes last).
    set: BTreeSet<(i64, Reverse<u32>, u32)>,
    /// Events by the time they enter (the start of the event 64 later), latest first.
    enter: Vec<(i64, Slot)>,
    /// Events by start, latest first.
    leave: Vec<(i64, Slot)>,
    entered: usize,
    left: usize,
    /// Per thread, the first position that has left (all later ones have too).
    gone: Vec<u32>,
}

impl RecentEnds {
    /// Index the events of `threads`.
    pub fn new(threads: &[Thread]) -> Self {
        let (mut enter, mut leave) = (Vec::new(), Vec::new());
        for (ti, th) in threads.iter().enumerate() {
            for (p, x) in th.evs.iter().enumerate() {
                let slot = (ti as u32, p as u32);
                let opens = th.evs.get(p + RECENT).map_or(i64::MAX, |y| y.start);
                enter.push((opens, slot));
                leave.push((x.start, slot));
            }
        }
        enter.sort_unstable_by_key(|e| Reverse(*e));
        leave.sort_unstable_by_key(|e| Reverse(*e));
        Self {
            set: BTreeSet::new(),
            enter,
            leave,
            entered: 0,
            left: 0,
            gone: threads.iter().map(|th| th.evs.len() as u32).collect(),
        }
    }

    /// Move the set to time `t` (never later than the last call's).
    fn advance(&mut self, threads: &[Thread], t: i64) {
        while let Some(&(_, (ti, p))) = self.leave.get(self.left).filter(|e| e.0 >= t) {
            let end = threads[ti as usize].evs[p as usize].end;
            self.set.remove(&(end, Reverse(ti), p));
            self.gone[ti as usize] = self.gone[ti as usize].min(p);
            self.left += 1;
        }
        while let Some(&(_, (ti, p))) = self.enter.get(self.entered).filter(|e| e.0 >= t) {
            if p < self.gone[ti as usize] {
                let end = threads[ti as usize].evs[p as usize].end;
                self.set.insert((end, Reverse(ti), p));
            }
            self.entered += 1;
        }
    }

    /// The latest end in `(b, t]` among the other threads' last 64 events started
    /// before `t`, the lowest thread on ties: `(end, thread)`.
    pub fn latest(
        &mut self,
        threads: &[Thread],
        t: i64,
        b: i64,
        skip: usize,
    ) -> Option<(i64, usize)> {
        self.advance(threads, t);
        self.set
            .range(..=(t, Reverse(0), u32::MAX))
            .rev()
            .take_while(|x| x.0 > b)
            .find(|x| x.1 .0 as usize != skip)
            .map(|x| (x.0, x.1 .0 as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::super::thread::Ev;
    use super::*;

    /// The walk's original search: per other thread, the latest end in (b, t] among its
    /// last 64 events started before t; the lowest thread wins ties.
    fn scan(threads: &[Thread], t: i64, b: i64, skip: usize) -> Option<(i64, usize)> {
        let mut best: Option<(i64, usize)> = None;
        for (tj, o) in threads.iter().enumerate().filter(|(tj, _)| *tj != skip) {
            let k = o.evs.partition_point(|x| x.start < t);
            let x = o.evs[..k]
                .iter()
                .rev()
                .take(RECENT)
                .map(|x| x.end)
                .filter(|&e| e > b && e <= t)
                .max();
            if let Some(x) = x.filter(|x| best.is_none_or(|(y, _)| *x > y)) {
                best = Some((x, tj));
            }
        }
        best
    }

    #[test]
    fn agrees_with_scanning_each_thread() {
        // Three threads of 200 events: nested, sequential and overlapping, some of zero
        // length, with ends that tie across threads.
        let threads: Vec<Thread> = (0..3u32)
            .map(|ti| {
                let evs = (0..200u32)
                    .map(|k| {
                        let start = i64::from(k * 10 + ti);
                        let len = i64::from((k * 7 + ti * 3) % 50);
                        Ev {
                            id: ti * 1000 + k,
                            start,
                            end: (start + len) / 5 * 5,
                        }
                    })
                    .collect();
                Thread::build(evs)
            })
            .collect();
        let mut recent = RecentEnds::new(&threads);
        let mut t = 2_100i64;
        while t > 0 {
            for (b, skip) in [(t - 40, 0), (t - 400, 1), (t - 3, 2), (t - 2_000, 5)] {
                assert_eq!(
                    recent.latest(&threads, t, b, skip),
                    scan(&threads, t, b, skip),
                    "t {t}, b {b}, skip {skip}"
                );
            }
            t -= 7;
        }
    }
}
