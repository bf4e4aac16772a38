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
    let mut missing = (0u64, Firsts::new(opts.examples));
    // Rank numbers are checked up to the world size, at most one per trace beyond the
    // ranks present (a hostile world size must not cost its value in time).
    let limit = world.min(highest.unwrap_or(0).saturating_add(1).max(0) + facts.len() as i64);
    for r in 0..limit.max(0) {
        if !by_rank.contains_key(&r) {
            missing.0 += 1;
            missing.1.offer(r, || Example {
                rank: Some(r),
                number: Some(world),
                ..Example::default()
            });
        }
    }
    if world > limit {
        missing.0 += (world - limit) as u64;
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
