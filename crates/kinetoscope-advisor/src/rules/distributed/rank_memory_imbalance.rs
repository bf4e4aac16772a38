//! DI004 `RankMemoryImbalance`.
//!
//! ## What it finds
//! Ranks of one job whose peak GPU memory differs widely while the fullest rank is under
//! memory pressure: one rank holds more (a larger pipeline stage, uneven sharding, rank 0
//! keeping metrics or the full checkpoint) and sets the memory ceiling for all.
//!
//! ## Why it matters
//! The job's batch size, activation checkpointing and sharding are sized for the fullest
//! rank; the others leave memory idle that could hold a larger micro-batch or fewer
//! recomputations, and the fullest rank is the one that runs out of memory.
//!
//! ## Evidence
//! Per rank: peak allocated GPU memory and its share of device memory; the skew.
//!
//! ## Fix
//! Balance what each rank holds: even FSDP / ZeRO sharding, balanced pipeline stages,
//! no rank-0-only buffers (metrics, gathered outputs, full state dicts) kept on the GPU.
//!
//! ## Thresholds and sources
//! Skew = (largest − smallest peak allocated) / largest; warning at 20 %, critical at
//! 30 % (TraceML rank memory imbalance; TraceML's exact skew
//! formula unverified), gated on memory pressure: the fullest rank's peak must reach
//! 90 % of device memory (`rank_memory.min_pressure_pct`, as `MemoryPressure`'s warning,
//! torch-tb-profiler). Steps gate severity as for every finding. No time impact (the
//! cost is memory headroom). `rank_memory.*`.

use crate::config::Config;
use crate::finding::{About, Confidence, Finding, Severity};
use crate::rules::RuleMeta;
use crate::summary::MemoryPeak;
use crate::TraceReport;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "DI004",
    name: "RankMemoryImbalance",
    family: "distributed",
    since: "0.1.0",
    summary: "Peak GPU memory differs widely across ranks under memory pressure",
};

/// What the rule needs of one rank: its fullest GPU and its number of steps.
#[derive(Clone, Debug, PartialEq)]
pub struct RankMemory {
    /// The rank.
    pub rank: i64,
    /// Peak allocated bytes of the rank's fullest GPU (by peak allocated).
    pub peak_allocated_bytes: i64,
    /// That GPU's peak (allocated or reserved, the higher) over its memory (0–1), when
    /// the trace says how much memory it has.
    pub peak_share_of_capacity: Option<f64>,
    /// Steps of the rank's trace (the fewest of the compared ranks gates the severity).
    pub steps: usize,
}

impl RankMemory {
    /// The rank's row from its devices' peaks: `None` without a rank or without a GPU
    /// whose records report allocated bytes.
    pub fn of_peaks(rank: Option<i64>, peaks: &[MemoryPeak], steps: usize) -> Option<Self> {
        let gpu = peaks
            .iter()
            .filter(|m| m.device.starts_with("GPU") && m.peak_allocated_bytes > 0)
            .max_by_key(|m| m.peak_allocated_bytes)?;
        Some(Self {
            rank: rank?,
            peak_allocated_bytes: gpu.peak_allocated_bytes,
            peak_share_of_capacity: gpu.peak_share_of_capacity,
            steps,
        })
    }

    /// The rows of the reports of one job's rank traces.
    pub fn of_reports(reports: &[TraceReport]) -> Vec<Self> {
        reports
            .iter()
            .filter_map(|r| Self::of_peaks(r.rank, &r.summary.memory, r.summary.steps))
            .collect()
    }
}

/// Cross-rank memory imbalance over the ranks of one job: one row per rank with GPU
/// memory records.
pub fn check(ranks: &[RankMemory], config: &Config, input: &str) -> Vec<Finding> {
    let th = &config.rank_memory;
    // (rank, peak allocated bytes, % of device memory) per rank.
    let mut rows: Vec<(i64, i64, Option<f64>)> = ranks
        .iter()
        .map(|r| {
            let pct = r.peak_share_of_capacity.map(|s| 100.0 * s);
            (r.rank, r.peak_allocated_bytes, pct)
        })
        .collect();
    if rows.len() < 2 {
        return Vec::new();
    }
    rows.sort_by_key(|r| (std::cmp::Reverse(r.1), r.0));
    let (top, low) = (rows[0], rows[rows.len() - 1]);
    let skew = 100.0 * (top.1 - low.1) as f64 / top.1 as f64;
    let pressure = top.2.unwrap_or(0.0);
    if skew < th.warning_skew_pct || pressure < th.min_pressure_pct {
        return Vec::new();
    }
    let steps = ranks.iter().map(|r| r.steps).min().unwrap_or(0);
    let mut details = format!(
        "Skew {skew:.1} % ≥ {} % (critical {} %; TraceML rank memory \
         imbalance) with the fullest rank at {pressure:.1} % ≥ {} % of device \
         memory (gate). No time impact is claimed.",
        th.warning_skew_pct, th.critical_skew_pct, th.min_pressure_pct
    );
    let mut severity = if skew >= th.critical_skew_pct {
        Severity::Critical
    } else {
        Severity::Warning
    };
    if severity == Severity::Critical && steps < config.gating.min_steps_critical {
        severity = Severity::Warning;
        details.push_str(&format!(
            " Critical threshold crossed, but {steps} step(s) < {} (gating.min_steps_critical), \
             so reported as a warning.",
            config.gating.min_steps_critical
        ));
    }
    if severity == Severity::Warning && steps < config.gating.min_steps_warning {
        severity = Severity::Info;
        details.push_str(&format!(
            " {steps} step(s) < {} (gating.min_steps_warning), so reported as info.",
            config.gating.min_steps_warning
        ));
    }
    let gib = |b: i64| b as f64 / (1u64 << 30) as f64;
    let mut evidence = vec![format!(
        "rank {} peaks at {:.2} GiB, rank {} at {:.2} GiB: skew {skew:.1} %",
        top.0,
        gib(top.1),
        low.0,
        gib(low.1)
    )];
    for (rank, bytes, pct) in rows.iter().take(8) {
        evidence.push(format!(
            "rank {rank}: peak allocated {:.2} GiB{}",
            gib(*bytes),
            pct.map(|p| format!(" ({p:.1} % of device memory)"))
                .unwrap_or_default()
        ));
    }
    vec![Finding {
        id: META.code.to_owned(),
        rule: META.name.to_owned(),
        subject: About::Rank(top.0).subject(META.code),
        title: format!(
            "GPU memory imbalance across ranks: rank {} peaks {skew:.0} % above rank {}",
            top.0, low.0
        ),
        severity,
        impact_ns_per_step: 0.0,
        impact_share: 0.0,
        confidence: Confidence {
            steps,
            of_steps: steps,
            ranks: rows.len(),
            of_ranks: rows.len(),
        },
        evidence,
        fix: "Balance what each rank holds: even FSDP / ZeRO sharding, balanced pipeline \
              stages, no rank-0-only tensors (metrics, gathered outputs, full state dicts) \
              kept on the GPU; then raise the micro-batch on all ranks."
            .to_owned(),
        details,
        trace: input.to_owned(),
        rank: Some(top.0),
        across_ranks: None,
    }]
}
