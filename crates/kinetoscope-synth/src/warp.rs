//! Where a planted straggler's events land: a piecewise-linear map of source time.
//!
//! A real straggler computes longer before each collective while the other ranks wait
//! inside it, and the collective ends at the same instant on every rank. With the
//! source's communication kernels (NCCL kernels, merged into intervals `[s_i, e_i]`)
//! as the synchronisation points and a slowdown `F`:
//!
//! - the **slow rank** runs the time outside those intervals `F` times slower and the
//!   collectives at their own speed: `S(x) = x + (F − 1) × (time outside collectives
//!   before x)`;
//! - every **other rank** computes at its own speed, arrives at collective `i` at
//!   `S(e_{i−1}) + (s_i − e_{i−1})` and waits there: its collective is stretched to end
//!   at `S(e_i)`, when the slow rank's does; after the last collective it runs at its
//!   own speed and idles until the next copy.
//!
//! Both maps move one copy of the source by the same period, so every copy stays
//! aligned across ranks. A source without communication kernels has no
//! synchronisation point: the slow rank is then stretched uniformly and the others are
//! left as they are.

use crate::decimal::Factor;

/// A planted straggler's effect on one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// This rank computes `F` times slower outside collectives.
    Slow(Factor),
    /// Another rank is `F` times slower: this one waits for it in collectives.
    Waits(Factor),
}

/// A monotone piecewise-linear map of source time (ns from the first event) for one
/// copy, and the output period that copies are moved by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warp {
    /// `(source, output)` knots, increasing in both.
    knots: Vec<(i64, i64)>,
    /// What copy `k` is moved by, `k ×` this, ns.
    pub period_ns: i64,
}

impl Warp {
    /// The map of `role` over one source period `period_ns` with the communication
    /// intervals `sync` (sorted, disjoint, relative to the first event); `None` when the
    /// output is the source's timing (a waiting rank without synchronisation points).
    pub fn new(role: Role, sync: &[(i64, i64)], period_ns: i64) -> Option<Warp> {
        let (f, slow) = match role {
            Role::Slow(f) => (f, true),
            Role::Waits(f) => (f, false),
        };
        if sync.is_empty() {
            return slow.then(|| Warp {
                knots: vec![(0, 0), (period_ns, f.scale(period_ns, 1))],
                period_ns: f.scale(period_ns, 1),
            });
        }
        let mut knots = vec![(0, 0)];
        // The slow rank's time at the end of the previous interval, and that end.
        let (mut s_end, mut prev) = (0i64, 0i64);
        for &(s, e) in sync {
            let arrive_slow = s_end + f.scale(s - prev, 1);
            let arrive = if slow {
                arrive_slow
            } else {
                s_end + (s - prev)
            };
            s_end = arrive_slow + (e - s);
            knots.push((s, arrive));
            knots.push((e, s_end));
            prev = e;
        }
        let period_out = s_end + f.scale(period_ns - prev, 1);
        let tail = if slow {
            period_out
        } else {
            s_end + (period_ns - prev)
        };
        knots.push((period_ns, tail));
        knots.dedup_by_key(|k| k.0);
        Some(Warp {
            knots,
            period_ns: period_out,
        })
    }

    /// Where source offset `x` lands (slope 1 outside the knots).
    pub fn at(&self, x: i64) -> i64 {
        let i = self.knots.partition_point(|k| k.0 <= x);
        if i == 0 {
            let (a, b) = self.knots[0];
            return b + (x - a);
        }
        let (x0, y0) = self.knots[i - 1];
        let Some(&(x1, y1)) = self.knots.get(i) else {
            return y0 + (x - x0);
        };
        let t = i128::from(x - x0) * i128::from(y1 - y0);
        y0 + (t / i128::from(x1 - x0).max(1)) as i64
    }
}

/// The source's communication intervals: `kernels` the `(start, end)` of each NCCL
/// kernel relative to the first event, merged where they overlap.
pub fn merge_intervals(mut kernels: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    kernels.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(kernels.len());
    for (s, e) in kernels {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Source: compute 0–10, collective 10–12, compute 12–20, collective 20–21, idle to
    /// the period 30. Slowdown 2.
    #[test]
    fn the_slow_rank_arrives_late_and_the_others_wait() {
        let f = Factor::parse("2").unwrap();
        let sync = [(10, 12), (20, 21)];
        let slow = Warp::new(Role::Slow(f), &sync, 30).unwrap();
        let wait = Warp::new(Role::Waits(f), &sync, 30).unwrap();
        // Slow: arrives at 20, ends 22; arrives 22 + 16 = 38, ends 39; period 39 + 18.
        assert_eq!(
            [slow.at(10), slow.at(12), slow.at(20), slow.at(21)],
            [20, 22, 38, 39]
        );
        assert_eq!(slow.period_ns, 57);
        // Waiting: arrives at 10 and waits to 22; arrives 22 + 8 = 30, waits to 39.
        assert_eq!(
            [wait.at(10), wait.at(12), wait.at(20), wait.at(21)],
            [10, 22, 30, 39]
        );
        assert_eq!(wait.period_ns, 57);
        assert_eq!(wait.at(11), 16);
        assert_eq!(wait.at(30), 48);
        assert!(Warp::new(Role::Waits(f), &[], 30).is_none());
        assert_eq!(Warp::new(Role::Slow(f), &[], 30).unwrap().at(7), 14);
    }

    #[test]
    fn overlapping_kernels_merge() {
        assert_eq!(
            merge_intervals(vec![(5, 9), (1, 3), (2, 4), (9, 10)]),
            vec![(1, 4), (5, 10)]
        );
    }
}
