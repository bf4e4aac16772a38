//! Checks across the traces of a rank folder, from a few facts per trace
//! ([`RankFacts`], taken on the thread that read it) and the rank comparison's clock
//! offsets (`ranks::compare_ranks`, run by the engine):
//!
//! - **missing ranks**: rank numbers below the world size (`distributedInfo.world_size`,
//!   else the highest rank + 1) that no trace carries; **repeated ranks**: two traces
//!   with the same rank;
//! - **steps missing on a rank**: a step number some rank recorded, inside this rank's
//!   first and last step, that this rank lacks (one per rank and number);
//! - **clock skew**: a rank whose clock offset against the reference rank is explained
//!   by a constant offset (the comparison applied it) and is at least
//!   [`CLOCK_SKEW_MIN_NS`].

use std::collections::BTreeMap;

use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

use super::steps::step_marks;
use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts};
use crate::ranks::RanksReport;

/// The smallest clock offset reported as skew: 10 µs, above the spread of the ends of
/// one synchronising collective across ranks on one network.
pub const CLOCK_SKEW_MIN_NS: i64 = 10_000;

/// What the cross-rank checks need of one trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankFacts {
    /// The file.
    pub path: String,
    /// Its rank.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// Its `ProfilerStep#N` numbers, sorted, distinct.
    pub steps: Vec<i64>,
}

impl RankFacts {
    /// The facts of `trace`.
    pub fn of(trace: &Trace) -> Self {
        let mut steps: Vec<i64> = step_marks(trace).iter().map(|m| m.number).collect();
        steps.dedup();
        Self {
            path: trace.path.display().to_string(),
            rank: trace.meta.rank.map(|r| r.value),
            world_size: trace.meta.distributed.as_ref().and_then(|d| d.world_size),
            steps,
        }
    }
}

/// The cross-rank defects of a rank folder.
pub fn check_ranks(
    facts: &[RankFacts],
    clocks: Option<&RanksReport>,
    opts: &CheckOptions,
) -> Vec<CheckResult> {
    let mut out = rank_numbers(facts, opts);
    out.push(steps_across(facts, opts));
    if let Some(report) = clocks {
        let mut skew = (0u64, Firsts::new(opts.examples));
        for r in &report.ranks {
            if r.clock_offset_applied && r.clock_offset_ns.abs() >= CLOCK_SKEW_MIN_NS {
                skew.0 += 1;
                skew.1.offer(r.rank, || Example {
                    rank: Some(r.rank),
                    name: Some(r.path.clone()),
                    amount_ns: Some(r.clock_offset_ns),
                    number: report.clock.reference_rank,
                    ..Example::default()
                });
            }
        }
        out.push(CheckResult::new(CheckKind::ClockSkew, skew.0, skew.1));
    }
    super::finish(&mut out);
    out
}

/// Missing and repeated rank numbers.
fn rank_numbers(facts: &[RankFacts], opts: &CheckOptions) -> Vec<CheckResult> {
    let mut by_rank: BTreeMap<i64, Vec<&RankFacts>> = BTreeMap::new();
    for f in facts {
        if let Some(r) = f.rank {
            by_rank.entry(r).or_default().push(f);
        }
    }
    let mut repeated = (0u64, Firsts::new(opts.examples));
    for (&rank, files) in &by_rank {
        for dup in files.iter().skip(1) {
            repeated.0 += 1;
            repeated.1.offer(rank, || Example {
                rank: Some(rank),
                name: Some(dup.path.clone()),
                other: Some(files[0].path.clone()),
                ..Example::default()
            });
        }
    }
    let highest = by_rank.keys().next_back().copied();
    let world = facts
        .iter()
        .filter_map(|f| f.world_size)
        .max()
        .or(highest.map(|h| h.saturating_add(1)))
        .unwrap_or(0);
    // Counted by arithmetic, examples found by walking up from 0 past the ranks present:
    // a hostile world size or rank number costs nothing.
    let present = by_rank.range(0..world.max(0)).count() as i64;
    let mut missing = (
        world.saturating_sub(present).max(0) as u64,
        Firsts::new(opts.examples),
    );
    let (mut r, mut shown) = (0i64, 0usize);
    while r < world && shown < opts.examples {
        if !by_rank.contains_key(&r) {
            missing.1.offer(r, || Example {
                rank: Some(r),
                number: Some(world),
                ..Example::default()
            });
            shown += 1;
        }
        r += 1;
    }
    vec![
        CheckResult::new(CheckKind::MissingRanks, missing.0, missing.1),
        CheckResult::new(CheckKind::RepeatedRank, repeated.0, repeated.1),
    ]
}

/// Step numbers some rank recorded that another rank lacks within its own steps.
fn steps_across(facts: &[RankFacts], opts: &CheckOptions) -> CheckResult {
    let mut all: Vec<i64> = facts.iter().flat_map(|f| f.steps.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let mut found = (0u64, Firsts::new(opts.examples));
    for f in facts {
        let (Some(&lo), Some(&hi)) = (f.steps.first(), f.steps.last()) else {
            continue;
        };
        let from = all.partition_point(|&n| n < lo);
        let to = all.partition_point(|&n| n <= hi);
        for &n in &all[from..to] {
            if f.steps.binary_search(&n).is_err() {
                found.0 += 1;
                found.1.offer(n, || Example {
                    rank: f.rank,
                    name: Some(f.path.clone()),
                    number: Some(n),
                    ..Example::default()
                });
            }
        }
    }
    CheckResult::new(CheckKind::StepMissingOnRank, found.0, found.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(rank: i64, world: Option<i64>, steps: &[i64]) -> RankFacts {
        RankFacts {
            path: format!("rank{rank}"),
            rank: Some(rank),
            world_size: world,
            steps: steps.to_vec(),
        }
    }

    fn count(results: &[CheckResult], kind: CheckKind) -> u64 {
        results
            .iter()
            .find(|r| r.kind == kind)
            .map_or(0, |r| r.count)
    }

    #[test]
    fn hostile_rank_numbers_cost_nothing() {
        let f = [
            facts(0, None, &[]),
            facts(i64::MAX - 1, Some(i64::MAX), &[]),
        ];
        let r = check_ranks(&f, None, &CheckOptions::default());
        assert_eq!(count(&r, CheckKind::MissingRanks), (i64::MAX - 2) as u64);
        let ex = &r
            .iter()
            .find(|r| r.kind == CheckKind::MissingRanks)
            .unwrap();
        let shown: Vec<_> = ex.examples.iter().map(|e| e.rank).collect();
        assert_eq!(shown, [Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn repeated_ranks_and_steps_missing_on_a_rank() {
        let f = [
            facts(0, Some(2), &[1, 2, 3]),
            facts(1, Some(2), &[1, 3]),
            facts(1, Some(2), &[1, 2, 3]),
        ];
        let r = check_ranks(&f, None, &CheckOptions::default());
        assert_eq!(count(&r, CheckKind::MissingRanks), 0);
        assert_eq!(count(&r, CheckKind::RepeatedRank), 1);
        assert_eq!(count(&r, CheckKind::StepMissingOnRank), 1);
    }
}
