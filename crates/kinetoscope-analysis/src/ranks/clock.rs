//! Clock offsets between ranks (step 3 of the module documentation): estimated from
//! the ends of matched collectives, applied as [`ClockMode`] says.

use super::{median_i64, ClockMode, Matching};

/// Per rank index, its clock offset relative to rank index 0 and whether it is applied.
pub(super) struct Clocks {
    /// The offset estimated, ns (0 for a rank without a collective matched with rank
    /// index 0).
    pub(super) offsets: Vec<i64>,
    /// Whether the offset is applied.
    pub(super) applied: Vec<bool>,
}

impl Clocks {
    /// Estimate the offsets of `n` ranks from the matched collectives' ends (the median
    /// difference to rank index 0) and decide, by `mode`, where they apply.
    pub(super) fn estimate(matching: &Matching, n: usize, mode: ClockMode) -> Self {
        // Clock offsets from collective ends, relative to rank index 0.
        let mut diffs: Vec<Vec<i64>> = vec![Vec::new(); n];
        for run in matching.matched() {
            if run[0].rank != 0 {
                continue;
            }
            for e in &run[1..] {
                diffs[e.rank].push(e.end - run[0].end);
            }
        }
        let mut offsets = vec![0i64; n];
        let mut applied = vec![false; n];
        for r in 1..n {
            if diffs[r].is_empty() {
                continue;
            }
            let med = median_i64(&mut diffs[r]);
            let mut dev: Vec<i64> = diffs[r].iter().map(|d| (d - med).abs()).collect();
            let mad = median_i64(&mut dev);
            offsets[r] = med;
            applied[r] = match mode {
                ClockMode::None => false,
                ClockMode::CollectiveEnd => true,
                ClockMode::Auto => med != 0 && mad <= (med.abs() / 10).max(5_000),
            };
        }
        Self { offsets, applied }
    }

    /// Time `t` of rank index `r` on the reference clock.
    pub(super) fn corr(&self, r: usize, t: i64) -> i64 {
        if self.applied[r] {
            t - self.offsets[r]
        } else {
            t
        }
    }
}
