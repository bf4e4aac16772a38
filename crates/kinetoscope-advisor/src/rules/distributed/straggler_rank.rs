//! DI001 `StragglerRank`.
//!
//! ## What it finds
//! One rank that makes the others wait at every collective: it spends the least time
//! inside collectives (it arrives last, so it waits least) while the other ranks wait
//! for it.
//!
//! ## Why it matters
//! Collectives finish when the last rank arrives, so every rank runs at the straggler's
//! speed; the other ranks' extra wait is lost on all of them.
//!
//! ## Evidence
//! Per rank: time in collectives and outside them per step; the straggler; which part
//! of its step (data loading, CPU work, kernels, other) explains the difference.
//!
//! ## Fix
//! Depends on the cause: input straggler → per-rank data pipeline (workers, storage);
//! compute straggler → uneven sharding or routing, pipeline-stage balance; a slow host
//! → clocks, thermals, other processes on that node.
//!
//! Two sources, the first that applies: collectives matched across ranks by
//! `kinetoscope_analysis::ranks` (GPU traces with NCCL kernels: the rank that arrives
//! last and the wait it causes), else host time in collective spans per rank (CPU / gloo
//! traces, where the host blocks in the collective: the straggler waits least).
//!
//! ## Thresholds and sources
//! Score = (largest wait − straggler's wait) / mean step time of the waiting rank
//! (matched collectives: the wait the straggler caused per step / mean step);
//! warning at 10 %, critical at 20 % (TraceML); the cause is named only if that part's
//! excess covers ≥ 80 % of the wait (TraceML). Waits are host time in collective spans
//! (`gloo:*`, `nccl:*`, `c10d::*`, `record_param_comms`), which includes the transfer
//! itself.

use kinetoscope_analysis::overview::Parts;
use kinetoscope_analysis::ranks::RanksReport;

use crate::config::Config;
use crate::finding::{About, Confidence, Finding, Severity};
use crate::rules::RuleMeta;
use crate::TraceReport;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "DI001",
    name: "StragglerRank",
    family: "distributed",
    since: "0.1.0",
    summary: "One rank makes the others wait at collectives",
};

/// Per-rank numbers the rule uses.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    /// Rank.
    pub rank: i64,
    /// Mean step, ms.
    pub step_ms: f64,
    /// Time in collectives per step, ms.
    pub collective_ms: f64,
}

/// Check the rank traces of one job (two or more traces with ranks); `ranks` is the
/// cross-rank comparison when it was computed.
pub fn check(
    reports: &[TraceReport],
    ranks: Option<&RanksReport>,
    config: &Config,
    input: &str,
) -> Vec<Finding> {
    if let Some(f) = ranks.and_then(|r| from_matched(r, config, input)) {
        return vec![f];
    }
    let ranked: Vec<&TraceReport> = reports.iter().filter(|r| r.rank.is_some()).collect();
    if ranked.len() < 2 {
        return Vec::new();
    }
    let rows: Vec<RankRow> = ranked
        .iter()
        .map(|r| RankRow {
            rank: r.rank.unwrap_or(-1),
            step_ms: r
                .summary
                .step_stats
                .as_ref()
                .map(|s| s.mean_ns / 1e6)
                .unwrap_or(0.0),
            collective_ms: r.summary.communication_ns / 1e6,
        })
        .collect();
    if rows.iter().all(|r| r.collective_ms == 0.0) {
        return Vec::new();
    }
    let (si, straggler) = rows
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.collective_ms.total_cmp(&b.1.collective_ms))
        .map(|(i, r)| (i, r.clone()))
        .unwrap_or((0, rows[0].clone()));
    let (vi, victim) = rows
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.collective_ms.total_cmp(&b.1.collective_ms))
        .map(|(i, r)| (i, r.clone()))
        .unwrap_or((0, rows[0].clone()));
    let wait = victim.collective_ms - straggler.collective_ms;
    let score = 100.0 * wait / victim.step_ms.max(1e-9);
    let th = &config.straggler;
    if score < th.warning_pct {
        return Vec::new();
    }
    let steps = ranked.iter().map(|r| r.summary.steps).min().unwrap_or(0);
    let mut severity = if score >= th.critical_pct {
        Severity::Critical
    } else {
        Severity::Warning
    };
    let mut details = format!(
        "Score {score:.1} % ≥ warning {} % / critical {} % (TraceML). \
         Impact: the waiting rank's extra time in collectives per step.",
        th.warning_pct, th.critical_pct
    );
    if severity == Severity::Critical && steps < config.gating.min_steps_critical {
        severity = Severity::Warning;
        details.push_str(&format!(
            " Critical threshold crossed with {steps} step(s) < {} (gating.min_steps_critical), \
             reported as a warning.",
            config.gating.min_steps_critical
        ));
    }
    // Cause: the breakdown part whose excess on the straggler covers ≥ 80 % of the wait.
    let cause = match (
        ranked[si].summary.breakdown_ns.as_ref(),
        ranked[vi].summary.breakdown_ns.as_ref(),
    ) {
        (Some(s), Some(v)) => {
            let (sa, va) = (
                s.map(|ns| ns / 1e6).to_array(),
                v.map(|ns| ns / 1e6).to_array(),
            );
            (0..8)
                .filter(|&k| Parts::<f64>::KEYS[k] != "communication")
                .map(|k| (k, sa[k] - va[k]))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .filter(|(_, d)| *d >= 0.8 * wait)
                .map(|(k, d)| (Parts::<f64>::NAMES[k], d))
        }
        _ => None,
    };
    let mut evidence: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "rank {}: step {:.2} ms, in collectives {:.2} ms, outside {:.2} ms{}",
                r.rank,
                r.step_ms,
                r.collective_ms,
                r.step_ms - r.collective_ms,
                if r.rank == straggler.rank {
                    "  ← straggler (waits least)"
                } else {
                    ""
                }
            )
        })
        .collect();
    match cause {
        Some((part, d)) => evidence.push(format!(
            "cause: rank {} spends {d:.2} ms more per step in {part} than rank {} (≥ 80 % of \
             the {wait:.2} ms wait)",
            straggler.rank, victim.rank
        )),
        None => evidence.push(
            "cause: no single breakdown part covers ≥ 80 % of the wait (TraceML rule); \
             compare the ranks with kinetoscope overview"
                .to_owned(),
        ),
    }
    vec![Finding {
        id: META.code.to_owned(),
        rule: META.name.to_owned(),
        subject: About::Rank(straggler.rank).subject(META.code),
        title: format!(
            "Rank {} is a straggler: rank {} waits {wait:.2} ms per step ({score:.1} % of its step)",
            straggler.rank, victim.rank
        ),
        severity,
        impact_ns_per_step: wait.min(victim.step_ms) * 1e6,
        impact_share: score.min(100.0) / 100.0,
        confidence: Confidence {
            steps,
            of_steps: steps,
            ranks: rows.len(),
            of_ranks: rows.len(),
        },
        evidence,
        fix: match cause.map(|c| c.0) {
            Some("DataLoader") => "Fix rank's input pipeline: more DataLoader workers, local \
                                   or faster storage, balanced shards."
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
        rank: Some(straggler.rank),
    }]
}

/// The finding from collectives matched across ranks, when the top straggler caused a
/// measurable wait.
fn from_matched(r: &RanksReport, config: &Config, input: &str) -> Option<Finding> {
    let s = r
        .stragglers
        .first()
        .filter(|s| s.caused_wait_ns > 0.0 && s.matched > 0)?;
    let steps = r.ranks.iter().map(|x| x.steps).min().unwrap_or(0).max(1);
    let step_us = r
        .ranks
        .iter()
        .map(|x| x.mean_step_ns / 1e3)
        .fold(0.0, f64::max);
    let wait_us = s.caused_wait_ns / 1e3 / steps as f64;
    let score = 100.0 * wait_us / step_us.max(1e-9);
    let th = &config.straggler;
    if score < th.warning_pct {
        return None;
    }
    let mut severity = if score >= th.critical_pct {
        Severity::Critical
    } else {
        Severity::Warning
    };
    let mut details = format!(
        "Score {score:.1} % ≥ warning {} % / critical {} % (TraceML), from \
         {} collectives matched across ranks (kinetoscope ranks). Impact: the wait this rank \
         caused per step.",
        th.warning_pct, th.critical_pct, s.matched
    );
    if severity == Severity::Critical && steps < config.gating.min_steps_critical {
        severity = Severity::Warning;
        details.push_str(&format!(
            " Critical threshold crossed with {steps} step(s) < {} (gating.min_steps_critical), \
             reported as a warning.",
            config.gating.min_steps_critical
        ));
    }
    let mut evidence = vec![format!(
        "rank {} arrived last at {} of {} matched collectives; it caused {:.2} ms of waiting per step",
        s.rank,
        s.arrived_last,
        s.matched,
        wait_us / 1e3
    )];
    if s.mean_step_ns > 0.0 {
        evidence.push(format!(
            "mean step {:.2} ms vs {:.2} ms on the median rank ({:+.1} %)",
            s.mean_step_ns / 1e6,
            s.median_step_ns / 1e6,
            100.0 * s.step_excess_ratio
        ));
    }
    if !s.slowest_steps.is_empty() {
        evidence.push(format!(
            "slowest rank in {} of {} steps",
            s.slowest_steps.len(),
            s.of_steps
        ));
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
    Some(Finding {
        id: META.code.to_owned(),
        rule: META.name.to_owned(),
        subject: About::Rank(s.rank).subject(META.code),
        title: format!(
            "Rank {} is a straggler: the others wait {:.2} ms per step for it ({score:.1} % of a step)",
            s.rank,
            wait_us / 1e3
        ),
        severity,
        impact_ns_per_step: wait_us.min(step_us) * 1e3,
        impact_share: score.min(100.0) / 100.0,
        confidence: Confidence {
            steps,
            of_steps: steps,
            ranks: r.ranks.len(),
            of_ranks: r.ranks.len(),
        },
        evidence,
        fix: "Find what the straggler does that the others do not (the slower phase above): \
              input pipeline → per-rank data loading; compute → uneven sharding, MoE routing, \
              pipeline-stage balance; hardware → clocks, thermals, PCIe/NVLink on that node."
            .to_owned(),
        details,
        trace: input.to_owned(),
        rank: Some(s.rank),
    })
}
