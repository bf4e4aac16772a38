//! DI001 `StragglerRank`.
//!
//! ## What it finds
//! One rank that makes the others wait at collectives: it arrives last, because it
//! computes longer outside them, while the other ranks wait inside them.
//!
//! ## Why it matters
//! Collectives finish when the last rank arrives, so every rank runs at the straggler's
//! speed; the other ranks' extra wait is lost on all of them.
//!
//! ## Evidence
//! The what-if: how much shorter a step would be if it computed like the median rank
//! (`kinetoscope_analysis::ranks` module `what_if`: at each collective it arrived
//! last at, its compute before the collective replaced by the median rank's, the
//! others' wait reduced accordingly — never more than they waited); how often it
//! arrived last and the wait it caused per step; its time outside collectives against
//! the median rank; which part of its step (data loading, CPU work, kernels, other) is
//! longer than on the median rank.
//!
//! ## Fix
//! Depends on the cause: input straggler → per-rank data pipeline (workers, storage);
//! compute straggler → uneven sharding or routing, pipeline-stage balance; a slow host
//! → clocks, thermals, other processes on that node.
//!
//! The numbers are those of `kinetoscope ranks` (`kinetoscope_analysis::ranks`), so the
//! two name the same rank: the top straggler there, ranked by the wait it caused at
//! collectives matched across ranks (`Comms Id`, `Seq`, or order within the process
//! group; NCCL kernels, Gloo's worker spans, host collectives), else by its time
//! outside collectives per step. A waiting rank is never the straggler, however long
//! its steps.
//!
//! ## Thresholds and sources
//! Score = the what-if saving per step / the median rank's mean step (also the
//! finding's impact); warning at 10 %, critical at 20 % (TraceML).

use kinetoscope_analysis::ranks::{RanksReport, StragglerBasis};

use crate::config::Config;
use crate::finding::{About, Confidence, Finding, Severity};
use crate::rules::RuleMeta;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "DI001",
    name: "StragglerRank",
    family: "distributed",
    since: "0.1.0",
    summary: "One rank makes the others wait at collectives",
};

/// Per-rank lines of evidence are listed up to this many ranks.
const MAX_RANK_LINES: usize = 8;

/// The finding for the top straggler of `ranks` (the rank comparison of one job's
/// traces), when the wait it causes crosses the threshold.
pub fn check(ranks: &RanksReport, config: &Config, input: &str) -> Vec<Finding> {
    let Some(s) = ranks.stragglers.first() else {
        return Vec::new();
    };
    let wait_ms = s.caused_wait_per_step_ns / 1e6;
    let saving_ms = s.what_if_saving_per_step_ns / 1e6;
    let step_ms = s.median_step_ns / 1e6;
    let score = 100.0 * saving_ms / step_ms.max(1e-9);
    let th = &config.straggler;
    if saving_ms <= 0.0 || score < th.warning_pct {
        return Vec::new();
    }
    let mut severity = if score >= th.critical_pct {
        Severity::Critical
    } else {
        Severity::Warning
    };
    let by_wait = ranks.straggler_basis == StragglerBasis::CausedWait;
    let mut details = format!(
        "Score {score:.1} % ≥ warning {} % / critical {} % (TraceML): the time a step would \
         save if this rank computed like the median rank, over the median rank's mean step, \
         {} (kinetoscope ranks). Impact: that saving, never more than the other ranks \
         waited.",
        th.warning_pct,
        th.critical_pct,
        if by_wait {
            format!(
                "from {} collectives matched across ranks",
                ranks.skew.matched
            )
        } else {
            "from the time outside collectives (no collective could be matched across ranks)"
                .to_owned()
        }
    );
    if severity == Severity::Critical && s.steps < config.gating.min_steps_critical {
        severity = Severity::Warning;
        details.push_str(&format!(
            " Critical threshold crossed with {} step(s) < {} (gating.min_steps_critical), \
             reported as a warning.",
            s.steps, config.gating.min_steps_critical
        ));
    }
    let mut evidence = vec![format!(
        "what-if: computing like the median rank, rank {} would make each step \
         {saving_ms:.2} ms shorter ({:.1} % of the median step{})",
        s.rank,
        100.0 * s.what_if_step_share,
        if by_wait {
            format!(
                ", from {} collective(s) it arrived last at",
                s.what_if_collectives
            )
        } else {
            String::new()
        }
    )];
    evidence.push(if by_wait {
        format!(
            "rank {} arrived last at {} of {} matched collectives; the others waited \
             {wait_ms:.2} ms per step for it on average",
            s.rank, s.arrived_last, s.matched
        )
    } else {
        format!(
            "no collective matched across ranks: rank {} spends the most time outside \
             collectives, {wait_ms:.2} ms per step more than the others on average",
            s.rank
        )
    });
    evidence.push(format!(
        "outside collectives {:.2} ms per step vs {:.2} ms on the median rank ({:+.1} %)",
        s.outside_collectives_ns / 1e6,
        s.median_outside_collectives_ns / 1e6,
        100.0 * s.outside_excess_ratio
    ));
    if ranks.ranks.len() <= MAX_RANK_LINES {
        evidence.extend(ranks.ranks.iter().map(|r| {
            format!(
                "rank {}: step {:.2} ms, outside collectives {:.2} ms{}{}",
                r.rank,
                r.mean_step_ns / 1e6,
                r.outside_collectives_ns / 1e6,
                if by_wait {
                    format!(
                        ", waited {:.2} ms at collectives",
                        r.total_wait_ns as f64 / 1e6 / s.steps as f64
                    )
                } else {
                    String::new()
                },
                if r.rank == s.rank {
                    "  ← straggler"
                } else {
                    ""
                }
            )
        }));
    }
    if let Some(phase) = &s.slower_phase {
        evidence.push(format!(
            "{phase} takes {:.2} ms per step more than on the median rank{}",
            s.slower_phase_excess_ns / 1e6,
            s.slower_phase_excess_ratio
                .map(|x| format!(" ({:+.1} %)", 100.0 * x))
                .unwrap_or_default()
        ));
    }
    vec![Finding {
        id: META.code.to_owned(),
        rule: META.name.to_owned(),
        subject: About::Rank(s.rank).subject(META.code),
        title: format!(
            "Rank {} is a straggler: computing like the median rank, it would make each \
             step {saving_ms:.2} ms shorter ({score:.1} % of a step)",
            s.rank
        ),
        severity,
        impact_ns_per_step: saving_ms.min(step_ms) * 1e6,
        impact_share: score.min(100.0) / 100.0,
        confidence: Confidence {
            steps: s.steps,
            of_steps: s.steps,
            ranks: ranks.ranks.len(),
            of_ranks: ranks.ranks.len(),
        },
        evidence,
        fix: match s.slower_phase.as_deref() {
            Some("DataLoader") => "Fix that rank's input pipeline: more DataLoader workers, \
                                   local or faster storage, balanced shards."
                .to_owned(),
            Some("Kernel") => "Balance compute across ranks: even sharding, MoE routing, \
                               pipeline-stage balance; check that GPU's clocks and thermals."
                .to_owned(),
            _ => "Find what the straggler does outside collectives that the others do not \
                  (extra host work, logging or checkpointing on one rank, a slower or busier \
                  host) and remove or balance it."
                .to_owned(),
        },
        details,
        trace: input.to_owned(),
        rank: Some(s.rank),
        across_ranks: None,
    }]
}
