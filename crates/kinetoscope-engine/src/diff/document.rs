//! The document `kinetoscope diff BASE NEW` returns (`docs/json.md`): every section of
//! the comparison as numbers, enums and the findings themselves; renderers word them.

use kinetoscope_advisor::{Finding, Severity};
use kinetoscope_analysis::diff::items::{ItemDelta, MatchCounts};
use kinetoscope_analysis::diff::parts::PartDelta;
use kinetoscope_analysis::diff::steps::StepsDiff;
use kinetoscope_analysis::diff::uniform::MachineChange;
use kinetoscope_analysis::diff::{Change, Combine};
use serde::{Deserialize, Serialize};

use super::gate::GateResult;
use crate::document::ReadFailure;

/// Where a side's numbers came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideFrom {
    /// Traces read now.
    Traces,
    /// A saved `kinetoscope report --format json` document.
    SavedReport,
}

/// One side of the comparison.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SideInfo {
    /// The input given.
    pub input: String,
    /// Where its numbers came from.
    pub from: SideFrom,
    /// How its traces combine (one trace, ranks, phases).
    pub combine: Combine,
    /// Traces compared.
    pub traces: usize,
    /// Schema version of the saved report (traces read now: the current one).
    pub schema_version: u32,
}

/// Operators and kernels, and how they were matched.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Matching {
    /// Operators.
    pub ops: MatchCounts,
    /// Kernels.
    pub kernels: MatchCounts,
}

/// The uniform part of the change, and the step times with it taken out.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    /// The uniform factor and the verdict.
    #[serde(flatten)]
    pub change: MachineChange,
    /// The step times with the new run's divided by the factor (when the change is
    /// uniform; else the plain comparison): what the code changed.
    pub steps_normalized: StepsDiff,
}

/// A deterministic count per step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CountDelta {
    /// The gate metric (`kernels.launches`, `sync.calls`, ...).
    pub metric: String,
    /// Per step, both runs.
    #[serde(flatten)]
    pub value: Change<f64>,
}

/// One GPU's metrics in both runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GpuDelta {
    /// `GPU0`, or `rank 1 GPU0` for rank folders.
    pub device: String,
    /// Share of the step window with a kernel running (0–1).
    pub utilization: Change<f64>,
    /// Estimated SM efficiency (0–1).
    pub sm_efficiency: Change<f64>,
    /// Estimated achieved occupancy (0–1).
    pub achieved_occupancy: Change<f64>,
    /// Tensor-core share of kernel time (0–1).
    pub tensor_core_ratio: Change<f64>,
}

/// What a step processes, to turn step times into throughput.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThroughputUnit {
    /// Samples (`--batch-size`).
    Samples,
    /// Tokens (`--tokens-per-step`).
    Tokens,
}

/// Where the items per step come from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ItemsSource {
    /// `--batch-size` / `--tokens-per-step`.
    #[default]
    Given,
    /// Read from the input shapes of the first input operator of every step
    /// (`kinetoscope_analysis::diff::BatchFromShapes`), summed over ranks.
    Shapes {
        /// The operator (`aten::embedding`).
        op: String,
        /// Its input's dims in the first trace (`[8, 128]`).
        dims: Vec<i64>,
    },
}

/// Items per second at the median step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Throughput {
    /// What is counted.
    pub unit: ThroughputUnit,
    /// Items per step: as given, or the base run's from its shapes.
    pub per_step: f64,
    /// The new run's items per step when read from shapes and different from the base's
    /// (a changed batch size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step_new: Option<f64>,
    /// Where the items per step come from.
    #[serde(default)]
    pub source: ItemsSource,
    /// Items per second at each run's median step.
    #[serde(flatten)]
    pub value: Change<f64>,
}

/// GPU metrics, MFU and throughput.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GpuSection {
    /// Per GPU.
    pub devices: Vec<GpuDelta>,
    /// Model FLOPs utilisation (0–1), the first trace's.
    pub mfu: Change<f64>,
    /// Throughput, when the items per step were given.
    pub throughput: Option<Throughput>,
}

/// One memory category's bytes at the peak in both runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CategoryDelta {
    /// The category.
    pub category: String,
    /// Bytes.
    #[serde(flatten)]
    pub bytes: Change<i64>,
}

/// One device's memory in both runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeviceMemoryDelta {
    /// `CPU`, `GPU0`, or `rank 1 GPU0`.
    pub device: String,
    /// Peak allocated bytes.
    pub peak_bytes: Change<i64>,
    /// Peak reserved bytes.
    pub reserved_bytes: Change<i64>,
    /// Growth of the step troughs, bytes per step.
    pub growth_bytes_per_step: Change<f64>,
    /// Inferred categories at the peak.
    pub categories: Vec<CategoryDelta>,
}

/// Memory in both runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MemorySection {
    /// Per device.
    pub devices: Vec<DeviceMemoryDelta>,
    /// The largest growth per step over the devices.
    pub growth_bytes_per_step: Change<f64>,
}

/// One rank in both runs (rank folders).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankDelta {
    /// The rank.
    pub rank: i64,
    /// Median step, ns.
    pub step_median_ns: Change<f64>,
    /// Host time in collectives per step, ns.
    pub communication_ns: Change<f64>,
    /// Exposed communication per step, ns.
    pub exposed_ns: Change<f64>,
}

/// Communication in both runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CommSection {
    /// Host time in collectives per step, ns (mean over traces).
    pub communication_ns: Change<f64>,
    /// Exposed communication per step, ns: the breakdown's communication part
    /// (collectives under which no computation ran).
    pub exposed_ns: Change<f64>,
    /// Communication kernels' time per step, ns.
    pub kernel_ns: Change<f64>,
    /// Share of the communication kernels' time hidden under computation,
    /// `1 − exposed / kernel time` (0–1; null without communication kernels).
    pub overlap_share: Change<f64>,
    /// Per rank, for rank folders.
    pub ranks: Vec<RankDelta>,
    /// The straggler rank the advisor names (DI001), in each run.
    pub straggler: Change<i64>,
}

/// Whether a finding present in both runs got worse or better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingDirection {
    /// More severe, or the same severity with a larger impact.
    Worse,
    /// Less severe, or the same severity with a smaller impact.
    Better,
}

/// A finding in both runs whose severity or impact changed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FindingChange {
    /// The subject key.
    pub subject: String,
    /// The rank, for rank folders.
    pub rank: Option<i64>,
    /// Its title in the new run.
    pub title: String,
    /// Worse or better.
    pub direction: FindingDirection,
    /// Severity in each run.
    pub base_severity: Severity,
    /// Severity in the new run.
    pub new_severity: Severity,
    /// Impact per step, ns.
    pub impact_ns_per_step: Change<f64>,
}

/// Findings matched by subject key.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FindingsSection {
    /// Only in the new run (ranked as the advisor ranks them).
    pub new: Vec<Finding>,
    /// Only in the base run.
    pub resolved: Vec<Finding>,
    /// In both, worse or better.
    pub changed: Vec<FindingChange>,
}

/// What the comparison had to assume or could not do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DiffNote {
    /// Too few steps for a 95 % interval: the verdict cannot be better than unchanged.
    TooFewSteps {
        /// Steps in the base run.
        base: usize,
        /// Steps in the new run.
        new: usize,
    },
    /// A side holds no step markers: its one "step" is the whole trace.
    NoStepMarkers {
        /// `base` or `new`.
        side: String,
    },
    /// The sides have different numbers of traces; per-rank sections pair ranks by number.
    TraceCountsDiffer {
        /// Traces in the base run.
        base: usize,
        /// Traces in the new run.
        new: usize,
    },
}

/// `kinetoscope diff BASE NEW`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DiffDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The base run.
    pub base: SideInfo,
    /// The new run.
    pub new: SideInfo,
    /// Step times and the verdict.
    pub steps: StepsDiff,
    /// The uniform (machine) part of the change.
    pub machine: Machine,
    /// The step-time breakdown per step, ranked by |Δ|.
    pub breakdown: Vec<PartDelta>,
    /// Host phases per step, ranked by |Δ|.
    pub phases: Vec<PartDelta>,
    /// Operators by name and input shapes, ranked by the size of their change.
    pub ops: Vec<ItemDelta>,
    /// Kernels by name and launching call path, ranked by the size of their change.
    pub kernels: Vec<ItemDelta>,
    /// How operators and kernels were matched.
    pub matching: Matching,
    /// Deterministic counts per step.
    pub counts: Vec<CountDelta>,
    /// GPU metrics, MFU, throughput.
    pub gpu: GpuSection,
    /// Memory.
    pub memory: MemorySection,
    /// Communication and ranks.
    pub communication: CommSection,
    /// Findings matched by subject.
    pub findings: FindingsSection,
    /// The `--fail-if` gates.
    pub gate: GateResult,
    /// What the comparison had to assume.
    pub notes: Vec<DiffNote>,
    /// Traces of either side that could not be read (`base: ` / `new: ` before the path).
    pub errors: Vec<ReadFailure>,
    /// The pstats files of two run folders compared, when both sides have them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pstats: Option<kinetoscope_analysis::pstats::diff::PstatsDiff>,
}
