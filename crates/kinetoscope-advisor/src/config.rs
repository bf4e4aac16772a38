//! Advisor thresholds. Every default names its source (see also `docs/rules.md`); a TOML
//! file (`--config advisor.toml`) and `--set section.key=value` flags override them.
//!
//! ```toml
//! [dataloader_stall]
//! warning_pct = 10.0
//!
//! [gating]
//! min_steps_critical = 5
//! ```

use serde::{Deserialize, Serialize};

/// All thresholds.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Confidence gating (TraceML: ≥ 2 steps for warnings, ≥ 20 for critical).
    pub gating: Gating,
    /// `DataloaderStall`.
    pub dataloader_stall: ShareThresholds,
    /// `LowGpuUtilization`.
    pub low_gpu_utilization: Utilization,
    /// `StepTimeVariance`.
    pub step_time_variance: Variance,
    /// `SlowOptimizerStep` and `UnfusedOptimizer`.
    pub optimizer: Optimizer,
    /// `HostDeviceSync`.
    pub host_device_sync: Sync,
    /// `MemoryPressure` and `MemoryUnderused`.
    pub memory_pressure: MemoryPressure,
    /// `MemoryLeak`.
    pub memory_leak: MemoryLeak,
    /// `ReservedOverhang`.
    pub reserved_overhang: ReservedOverhang,
    /// `AllocatorChurn`.
    pub allocator_churn: AllocatorChurn,
    /// `ExcessiveTransfers`.
    pub transfers: Transfers,
    /// `LaunchBound`.
    pub launch_bound: LaunchBound,
    /// `WarmupInProfile`.
    pub warmup: Warmup,
    /// `StragglerRank`.
    pub straggler: Straggler,
    /// `ExposedCommunication`.
    pub exposed_communication: ExposedCommunication,
    /// `HostBoundGaps`.
    pub host_bound_gaps: HostBoundGaps,
    /// `ConvLayoutTransposes`.
    pub conv_layout: ConvLayout,
    /// `GemmDimsNotAligned`.
    pub gemm_alignment: GemmAlignment,
    /// `LowOccupancy`.
    pub low_occupancy: LowOccupancy,
    /// `RooflineGap`.
    pub roofline_gap: RooflineGap,
    /// `RankMemoryImbalance`.
    pub rank_memory: RankMemory,
    /// The pstats rules (PY001–PY006): shares of a cProfile profile's own time.
    pub pstats: PstatsShares,
    /// Peak FLOP/s override, TFLOP/s (`--peak-tflops`); else the table for the detected GPU.
    pub peak_tflops: Option<f64>,
}

/// Confidence gating.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gating {
    /// Steps needed for a warning (TraceML: 2).
    pub min_steps_warning: usize,
    /// Steps needed for a critical finding (TraceML: 20); fewer downgrade it to a warning.
    pub min_steps_critical: usize,
}

impl Default for Gating {
    fn default() -> Self {
        Self {
            min_steps_warning: 2,
            min_steps_critical: 20,
        }
    }
}

/// A share-of-step threshold pair, percent.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShareThresholds {
    /// Warning at or above this share of step time (tb_plugin: 5 %).
    pub warning_pct: f64,
    /// Critical at or above (TraceML `INPUT_BOUND`: 20 %).
    pub critical_pct: f64,
}

impl Default for ShareThresholds {
    fn default() -> Self {
        Self {
            warning_pct: 5.0,
            critical_pct: 20.0,
        }
    }
}

/// Share-of-profile thresholds of the pstats rules, percent of `total_tt`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PstatsShares {
    /// Reported as info at or above (kinetoscope: 1 %, below which a known bottleneck is
    /// noise in a profile).
    pub info_pct: f64,
    /// Warning at or above (the TensorBoard plugin's 5 %, as `dataloader_stall`).
    pub warning_pct: f64,
    /// Critical at or above (TraceML `INPUT_BOUND`'s 20 %, as `dataloader_stall`).
    pub critical_pct: f64,
}

impl Default for PstatsShares {
    fn default() -> Self {
        Self {
            info_pct: 1.0,
            warning_pct: 5.0,
            critical_pct: 20.0,
        }
    }
}

/// GPU utilization thresholds, percent.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Utilization {
    /// Warning below (TraceLens Agent: computation > 80 % is efficient).
    pub warning_below_pct: f64,
    /// Critical below (TraceML: < 30 % is low).
    pub critical_below_pct: f64,
    /// GPUs of one trace judged at most, the least utilized first (each costs a pass
    /// over the steps; kinetoscope's bound against traces naming thousands of devices).
    pub max_gpus: usize,
}

impl Default for Utilization {
    fn default() -> Self {
        Self {
            warning_below_pct: 80.0,
            critical_below_pct: 30.0,
            max_gpus: 64,
        }
    }
}

/// Step-time variation.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Variance {
    /// Warning when the coefficient of variation exceeds this, percent (proposal: 10 %).
    pub warning_cv_pct: f64,
    /// Steps needed to compute it.
    pub min_steps: usize,
}

impl Default for Variance {
    fn default() -> Self {
        Self {
            warning_cv_pct: 10.0,
            min_steps: 3,
        }
    }
}

/// Optimizer thresholds.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Optimizer {
    /// `SlowOptimizerStep` warning share of step time, percent (proposal: 15 %).
    pub slow_step_pct: f64,
    /// `UnfusedOptimizer` warning when the for-loop optimizer takes at least this share
    /// of step time, percent (proposal: 10 %).
    pub unfused_warning_pct: f64,
}

impl Default for Optimizer {
    fn default() -> Self {
        Self {
            slow_step_pct: 15.0,
            unfused_warning_pct: 10.0,
        }
    }
}

/// Host–device synchronisation.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sync {
    /// On a CPU-only trace, warning from this many sync calls per step (proposal: each
    /// one drains the GPU queue when the code runs on a GPU).
    pub min_per_step: f64,
    /// Warning when the GPU idle the sync points cause (on a CPU-only trace, their host
    /// time) is at least this share of step time, percent (proposal).
    pub min_share_pct: f64,
}

impl Default for Sync {
    fn default() -> Self {
        Self {
            min_per_step: 10.0,
            min_share_pct: 1.0,
        }
    }
}

/// Device allocations in steady state.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllocatorChurn {
    /// Without step markers (no steady state to tell apart from warm-up), a finding when
    /// the allocator calls take at least this share of the trace's host time, percent
    /// (proposal).
    pub whole_trace_min_share_pct: f64,
}

impl Default for AllocatorChurn {
    fn default() -> Self {
        Self {
            whole_trace_min_share_pct: 5.0,
        }
    }
}

/// Device memory use.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryPressure {
    /// Warning above, percent of device memory (tb_plugin: 90 %).
    pub warning_pct: f64,
    /// Critical above (proposal: 95 %; TraceML uses 97 %).
    pub critical_pct: f64,
    /// Info "underused" below (proposal: 50 %).
    pub underused_pct: f64,
}

impl Default for MemoryPressure {
    fn default() -> Self {
        Self {
            warning_pct: 90.0,
            critical_pct: 95.0,
            underused_pct: 50.0,
        }
    }
}

/// Memory growth across steps.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryLeak {
    /// Minimum steps with memory records.
    pub min_steps: usize,
    /// Share of step-to-step changes of the per-step minimum that must be rises
    /// (proposal; TraceML requires recent > mid ≥ baseline).
    pub rising_fraction: f64,
    /// Minimum growth per step, MiB (proposal; TraceML scores on a 100 MiB scale and
    /// confirms at 1 GiB over ≥ 50 steps, which short profiles never reach).
    pub min_mib_per_step: f64,
}

impl Default for MemoryLeak {
    fn default() -> Self {
        Self {
            min_steps: 3,
            rising_fraction: 0.8,
            min_mib_per_step: 1.0,
        }
    }
}

/// Reserved vs allocated.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReservedOverhang {
    /// Reserved / allocated ratio (TraceML `GPU_MEMORY_RESERVED_OVERHANG`: 2.0).
    pub ratio: f64,
    /// And reserved at least this share of device memory, percent (TraceML: 30 %).
    pub min_reserved_pct: f64,
}

impl Default for ReservedOverhang {
    fn default() -> Self {
        Self {
            ratio: 2.0,
            min_reserved_pct: 30.0,
        }
    }
}

/// Memory copies.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Transfers {
    /// A direction whose time exceeds this share of step time, percent (TraceLens: 5 %).
    pub max_share_pct: f64,
    /// Or that has more transfers than this per step (TraceLens: 10).
    pub max_per_step: f64,
    /// `PageableMemcpy` is a warning when the pageable copies take at least this share
    /// of step time, percent, else info (proposal: a 4-byte copy per step costs
    /// nothing, however it is staged).
    pub pageable_warning_share_pct: f64,
}

impl Default for Transfers {
    fn default() -> Self {
        Self {
            max_share_pct: 5.0,
            max_per_step: 10.0,
            pageable_warning_share_pct: 1.0,
        }
    }
}

/// Launch-bound steps.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LaunchBound {
    /// Flag when at least this share of the launches are short kernels (HTA: GPU time
    /// shorter than the launch call), percent (proposal).
    pub short_share_pct: f64,
}

impl Default for LaunchBound {
    fn default() -> Self {
        Self {
            short_share_pct: 50.0,
        }
    }
}

/// Warm-up inside the profiled steps.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Warmup {
    /// The first step is flagged when it is at least this many times the median of the
    /// others (proposal; no reference tool gives a ratio).
    pub first_step_ratio: f64,
}

impl Default for Warmup {
    fn default() -> Self {
        Self {
            first_step_ratio: 1.5,
        }
    }
}

/// Stragglers across ranks.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Straggler {
    /// Warning score, percent of step time (TraceML: 10 %).
    pub warning_pct: f64,
    /// Critical score (TraceML: 20 %).
    pub critical_pct: f64,
}

impl Default for Straggler {
    fn default() -> Self {
        Self {
            warning_pct: 10.0,
            critical_pct: 20.0,
        }
    }
}

/// GPU gaps caused by the host.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostBoundGaps {
    /// Warning at or above this share of step time, percent (TraceLens Agent: idle
    /// > 15 %).
    pub warning_pct: f64,
}

impl Default for HostBoundGaps {
    fn default() -> Self {
        Self { warning_pct: 15.0 }
    }
}

/// Exposed communication.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExposedCommunication {
    /// Warning at or above this share of step time, percent (TraceLens: 5 % of GPU time).
    pub warning_pct: f64,
    /// Ignore steps with less communication than this, µs (TraceLens: 100 µs).
    pub min_comm_us: f64,
}

impl Default for ExposedCommunication {
    fn default() -> Self {
        Self {
            warning_pct: 5.0,
            min_comm_us: 100.0,
        }
    }
}

/// Layout transposes around convolutions.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConvLayout {
    /// Flag when layout-transpose kernels take more than this share of the convolutions'
    /// kernel time, percent (TraceLens conv analyser: `nchwToNhwc…` > 10 %).
    pub max_transpose_share_pct: f64,
    /// Warning (else info) when the transposes take at least this share of step time,
    /// percent (proposal).
    pub warning_step_share_pct: f64,
}

impl Default for ConvLayout {
    fn default() -> Self {
        Self {
            max_transpose_share_pct: 10.0,
            warning_step_share_pct: 1.0,
        }
    }
}

/// GEMM dimensions that are not multiples of the tensor-core granule.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct GemmAlignment {
    /// FP16/BF16 GEMM dimensions should be multiples of this (after NVIDIA's matmul
    /// performance guide: 8; unverified per dtype).
    pub multiple_16bit: i64,
    /// FP8 GEMM dimensions should be multiples of this (after NVIDIA's matmul performance
    /// guide: 16).
    pub multiple_8bit: i64,
    /// Warning (else info) when the misaligned GEMMs take at least this share of step
    /// time, percent (proposal, as `Fp32GemmWithoutTensorCores`).
    pub warning_step_share_pct: f64,
    /// Share of the misaligned GEMMs' time counted as recoverable by padding, percent
    /// (proposal: no tool measures it; the gain depends on the cuBLAS version and GPU).
    pub recoverable_pct: f64,
}

impl Default for GemmAlignment {
    fn default() -> Self {
        Self {
            multiple_16bit: 8,
            multiple_8bit: 16,
            warning_step_share_pct: 1.0,
            recoverable_pct: 25.0,
        }
    }
}

/// Operator shapes far below the roofline (the perf model's time lost).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RooflineGap {
    /// Shapes named (the ones with the most time lost).
    pub top_shapes: usize,
    /// Only shapes below this fraction of their roofline count, 0–1 (proposal: tuned
    /// GEMMs reach 60–80 % of the dense peak; below half is far from it).
    pub max_roofline_fraction: f64,
    /// No finding below this share of the step, percent (proposal, as `LowOccupancy`).
    pub min_step_share_pct: f64,
    /// Warning (else info) from this share of the step, percent (proposal).
    pub warning_step_share_pct: f64,
}

impl Default for RooflineGap {
    fn default() -> Self {
        Self {
            top_shapes: 5,
            max_roofline_fraction: 0.5,
            min_step_share_pct: 1.0,
            warning_step_share_pct: 5.0,
        }
    }
}

/// Low achieved occupancy of the dominant kernels.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LowOccupancy {
    /// A kernel is flagged when its time-weighted `est. achieved occupancy %` is below
    /// this, percent (proposal: no reference tool gives a threshold;
    /// torch-tb-profiler shows the number without judging it).
    pub warning_below_pct: f64,
    /// The dominant kernels: by name, longest total first, until they cover this share
    /// of kernel time, percent (proposal).
    pub dominant_share_pct: f64,
    /// Warning (else info) when the flagged kernels take at least this share of step
    /// time, percent (proposal).
    pub warning_step_share_pct: f64,
    /// No finding when the flagged kernels take less than this share of step time,
    /// percent (proposal).
    pub min_step_share_pct: f64,
    /// A grid is smaller than the GPU when its time-weighted blocks per SM is below
    /// this (proposal: persistent and clustered kernels size their grid to the SMs in
    /// whole clusters, 126 blocks on an H100's 132 SMs, which is a full GPU).
    pub small_grid_blocks_per_sm: f64,
}

impl Default for LowOccupancy {
    fn default() -> Self {
        Self {
            warning_below_pct: 25.0,
            dominant_share_pct: 80.0,
            warning_step_share_pct: 5.0,
            min_step_share_pct: 1.0,
            small_grid_blocks_per_sm: 0.9,
        }
    }
}

/// Peak GPU memory across ranks.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankMemory {
    /// Warning skew, (largest − smallest peak) / largest, percent (TraceML: 20 %).
    pub warning_skew_pct: f64,
    /// Critical skew (TraceML: 30 %).
    pub critical_skew_pct: f64,
    /// Only when the fullest rank's peak reaches this share of device memory, percent
    /// (TraceML gates on memory pressure; the level is `MemoryPressure`'s warning,
    /// torch-tb-profiler: 90 %).
    pub min_pressure_pct: f64,
}

impl Default for RankMemory {
    fn default() -> Self {
        Self {
            warning_skew_pct: 20.0,
            critical_skew_pct: 30.0,
            min_pressure_pct: 90.0,
        }
    }
}

impl Config {
    /// Parse a TOML document, then apply `key=value` overrides (`section.key=value`,
    /// values in TOML syntax).
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Self, String> {
        let mut table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
        for o in overrides {
            let (key, value) = o
                .split_once('=')
                .ok_or_else(|| format!("--set {o:?}: expected section.key=value"))?;
            let value: toml::Value = format!("v = {}", value.trim())
                .parse::<toml::Table>()
                .map_err(|e| format!("--set {o:?}: {e}"))?
                .remove("v")
                .unwrap_or(toml::Value::Boolean(false));
            let mut cursor = &mut table;
            let parts: Vec<&str> = key.trim().split('.').collect();
            for (i, part) in parts.iter().enumerate() {
                if i + 1 == parts.len() {
                    cursor.insert((*part).to_owned(), value.clone());
                } else {
                    let next = cursor
                        .entry((*part).to_owned())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                    cursor = next
                        .as_table_mut()
                        .ok_or_else(|| format!("--set {o:?}: {part} is not a section"))?;
                }
            }
        }
        Config::deserialize(toml::Value::Table(table)).map_err(|e| format!("{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let c = Config::from_toml("", &[]).unwrap();
        assert_eq!(c, Config::default());
        let c = Config::from_toml(
            "[dataloader_stall]\nwarning_pct = 12.5\n",
            &[
                "gating.min_steps_critical=3".into(),
                "peak_tflops = 100".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.dataloader_stall.warning_pct, 12.5);
        assert_eq!(c.dataloader_stall.critical_pct, 20.0);
        assert_eq!(c.gating.min_steps_critical, 3);
        assert_eq!(c.peak_tflops, Some(100.0));
        assert!(Config::from_toml("[nope]\nx = 1\n", &[]).is_err());
    }
}
