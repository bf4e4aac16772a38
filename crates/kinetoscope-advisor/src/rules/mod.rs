//! The rule catalogue, one file per rule in `rules/<family>/`, each named after the
//! problem it finds. Every rule has a stable code (never reused), a `since` version and
//! a doc comment with the sections *What it finds*, *Why it matters*, *Evidence*, *Fix*
//! and *Thresholds and sources*; `docs/rules.md` is generated from them.
//!
//! | family | codes |
//! |---|---|
//! | `input` | IN001 `DataloaderStall` |
//! | `sync` | SY001 `HostDeviceSync` |
//! | `optimizer` | OP001 `UnfusedOptimizer`, OP002 `SlowOptimizerStep` |
//! | `memory` | ME001 `MemoryLeak`, ME002 `MemoryPressure`, ME003 `MemoryUnderused`, ME004 `ReservedOverhang`, ME005 `AllocatorChurn`, ME006 `MemorySpike` |
//! | `gpu` | GP001 `LowGpuUtilization`, GP002 `LaunchBound`, GP003 `Fp32GemmWithoutTensorCores`, GP004 `AttentionWithoutFlash`, GP005 `HostBoundGaps`, GP006 `ConvLayoutTransposes`, GP007 `GemmDimsNotAligned`, GP008 `LowOccupancy` |
//! | `transfer` | TR001 `PageableMemcpy`, TR002 `ExcessiveTransfers` |
//! | `steps` | ST001 `StepTimeVariance`, ST002 `WarmupInProfile` |
//! | `comm` | CM001 `ExposedCommunication` |
//! | `profiler` | PF001 `ProfilerOverhead` |
//! | `pstats` | PY001 `DataLoaderWorkerShutdown`, PY002 `TokenCounting`, PY003 `SyncItem`, PY004 `DeviceDtypeCopies`, PY005 `LoggingAndCallbacks`, PY006 `GarbageCollection` (over cProfile / pstats files) |
//! | `distributed` | DI001 `StragglerRank` (across rank traces), DI002 `DataParallelInsteadOfDdp`, DI003 `NonNcclBackend`, DI004 `RankMemoryImbalance` (across rank traces) |

pub mod comm;
pub mod distributed;
pub mod gpu;
pub mod input;
pub mod memory;
pub mod optimizer;
pub mod profiler;
pub mod pstats;
pub mod steps;
pub mod sync;
pub mod transfer;

use serde::Serialize;

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Confidence, Finding, Severity};

/// What identifies a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RuleMeta {
    /// Stable code (`IN001`).
    pub code: &'static str,
    /// Name after the problem (`DataloaderStall`).
    pub name: &'static str,
    /// Family folder (`input`).
    pub family: &'static str,
    /// kinetoscope version that introduced it.
    pub since: &'static str,
    /// One line: what it finds.
    pub summary: &'static str,
}

/// A rule over one trace.
pub trait Rule: Sync {
    /// Its identity.
    fn meta(&self) -> &'static RuleMeta;
    /// Its findings on one trace (usually zero or one).
    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding>;
}

/// Every per-trace rule, in code order.
pub fn all() -> Vec<&'static dyn Rule> {
    vec![
        &input::dataloader_stall::DataloaderStall,
        &sync::host_device_sync::HostDeviceSync,
        &optimizer::unfused_optimizer::UnfusedOptimizer,
        &optimizer::slow_optimizer_step::SlowOptimizerStep,
        &memory::memory_leak::MemoryLeak,
        &memory::memory_pressure::MemoryPressure,
        &memory::memory_underused::MemoryUnderused,
        &memory::reserved_overhang::ReservedOverhang,
        &memory::allocator_churn::AllocatorChurn,
        &memory::memory_spike::MemorySpike,
        &gpu::low_gpu_utilization::LowGpuUtilization,
        &gpu::launch_bound::LaunchBound,
        &gpu::host_bound_gaps::HostBoundGaps,
        &gpu::fp32_gemm::Fp32GemmWithoutTensorCores,
        &gpu::attention_without_flash::AttentionWithoutFlash,
        &gpu::conv_layout::ConvLayoutTransposes,
        &gpu::gemm_alignment::GemmDimsNotAligned,
        &gpu::low_occupancy::LowOccupancy,
        &gpu::roofline_gap::RooflineGap,
        &transfer::pageable_memcpy::PageableMemcpy,
        &transfer::excessive_transfers::ExcessiveTransfers,
        &comm::exposed_communication::ExposedCommunication,
        &steps::step_time_variance::StepTimeVariance,
        &steps::warmup_in_profile::WarmupInProfile,
        &profiler::profiler_overhead::ProfilerOverhead,
        &distributed::data_parallel::DataParallelInsteadOfDdp,
        &distributed::non_nccl_backend::NonNcclBackend,
    ]
}

/// Identities of every rule, the cross-rank ones included.
pub fn catalogue() -> Vec<&'static RuleMeta> {
    let mut v: Vec<&'static RuleMeta> = all().iter().map(|r| r.meta()).collect();
    v.push(&distributed::straggler_rank::META);
    v.push(&distributed::rank_memory_imbalance::META);
    v.extend(pstats::all().iter().map(|r| r.meta()));
    v
}

/// A finding before gating and impact percentages.
pub(crate) struct Draft {
    /// What the finding is about (its subject key with the rule code).
    pub about: About,
    pub title: String,
    pub severity: Severity,
    /// Affected (recoverable upper-bound) time per step, ns.
    pub impact_ns: f64,
    /// Steps in which the problem was seen.
    pub steps_seen: usize,
    pub evidence: Vec<String>,
    pub fix: String,
    pub details: String,
}

/// Turn a draft into a finding: impact per step and as a share of the mean step, and confidence
/// gating (fewer steps than `gating.min_steps_warning` → info; fewer than
/// `gating.min_steps_critical` → at most a warning).
pub(crate) fn finish(meta: &RuleMeta, facts: &Facts, config: &Config, d: Draft) -> Finding {
    let step = facts.mean_step_ns();
    let impact_ns = if step > 0.0 {
        d.impact_ns.clamp(0.0, step)
    } else {
        d.impact_ns.max(0.0)
    };
    let mut severity = d.severity;
    let mut details = d.details;
    if severity == Severity::Critical && d.steps_seen < config.gating.min_steps_critical {
        severity = Severity::Warning;
        details.push_str(&format!(
            " Critical threshold crossed, but seen in {} step(s) < {} (TraceML gating; \
             gating.min_steps_critical), so reported as a warning.",
            d.steps_seen, config.gating.min_steps_critical
        ));
    }
    if severity == Severity::Warning && d.steps_seen < config.gating.min_steps_warning {
        severity = Severity::Info;
        details.push_str(&format!(
            " Seen in {} step(s) < {} (gating.min_steps_warning), so reported as info.",
            d.steps_seen, config.gating.min_steps_warning
        ));
    }
    Finding {
        id: meta.code.to_owned(),
        rule: meta.name.to_owned(),
        subject: d.about.subject(meta.code),
        title: d.title,
        severity,
        impact_ns_per_step: impact_ns,
        impact_share: if step > 0.0 { impact_ns / step } else { 0.0 },
        confidence: Confidence {
            steps: d.steps_seen,
            of_steps: facts.n_steps(),
            ranks: 1,
            of_ranks: 1,
        },
        evidence: d.evidence,
        fix: d.fix,
        details,
        trace: facts.trace.path.display().to_string(),
        rank: facts.overview.rank,
        across_ranks: None,
    }
}

/// Per-step values as a short list (`12.3, 11.9, … ms`).
pub(crate) fn step_list_ms(v: &[i64]) -> String {
    let shown: Vec<String> = v
        .iter()
        .take(8)
        .map(|x| format!("{:.2}", *x as f64 / 1e6))
        .collect();
    let more = if v.len() > 8 { ", …" } else { "" };
    format!("{}{} ms", shown.join(", "), more)
}
