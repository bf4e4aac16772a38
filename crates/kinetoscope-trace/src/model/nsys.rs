//! What the Nsight Systems reader found in an export beyond the events: the nsys
//! release, which kinds of data the capture holds, and what the capture window cut.
//! Never the traced processes' environment: the reader does not read it.

use serde::{Deserialize, Serialize};

/// A kind of data an Nsight Systems capture may lack (its tables are created only when
/// the data exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NsysFeature {
    /// CUPTI activity: kernels, copies, sets, graphs and runtime calls
    /// (`CUPTI_ACTIVITY_KIND_*`; absent when `--trace=cuda` was off or failed to start).
    CudaTrace,
    /// NVTX ranges (`NVTX_EVENTS`; absent when `--trace=nvtx` was off or no range was
    /// pushed).
    Nvtx,
    /// The GPUs' properties (`TARGET_INFO_GPU`): without them there is no device name,
    /// SM count or memory, so no peak FLOP/s.
    GpuInfo,
}

/// One process of the capture that ran GPU work.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NsysProcess {
    /// The operating-system process id.
    pub pid: i64,
    /// The process name (`PROCESSES.name`), empty when not recorded.
    pub name: String,
    /// The CUDA devices its kernels, copies and sets ran on, ascending.
    pub devices: Vec<i64>,
}

/// What an Nsight Systems export held, as the reader found it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NsysInfo {
    /// `EXPORT_PRODUCT_VERSION` (`2024.6.2.225`), empty when not recorded.
    pub nsys_version: String,
    /// `EXPORT_SCHEMA_VERSION` (`3.16.1`), empty when not recorded.
    pub schema_version: String,
    /// The export-metadata table the file has: `META_DATA_EXPORT` (current) or
    /// `EXPORT_META_DATA` (nsys 2022 and older); empty when neither.
    pub metadata_table: String,
    /// Kinds of data the capture does not hold, in the order of [`NsysFeature`].
    pub missing: Vec<NsysFeature>,
    /// Processes that ran GPU work, by pid.
    pub gpu_processes: Vec<NsysProcess>,
    /// CUDA graph executions read from `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` (kept as GPU
    /// activities named `CUDA graph <id>`).
    pub graph_executions: u64,
    /// GPU activities whose runtime call is not in the export (launched before the
    /// capture window opened); their device time is kept.
    pub gpu_without_runtime_call: u64,
    /// NVTX ranges still open when the capture ended (no `end`): kept, cut at the last
    /// time of the capture.
    pub ranges_open_at_end: u64,
    /// NVTX marks (instants), counted and not kept as events.
    pub marks: u64,
    /// Where the `nsys` on `PATH` exported a `.nsys-rep` given to kinetoscope (its
    /// cache folder); `None` when an export was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exported_to: Option<String>,
    /// NVTX ranges renamed `ProfilerStep#N` because they were named `step N` (any
    /// case, `step_N`, `step#N`) or with the name given as `ReadOptions::nvtx_step`.
    pub step_ranges_renamed: u64,
    /// When no NVTX range is named as a step: the outermost range that repeats (inside
    /// no other repeating range), or the names that repeat side by side at that level
    /// (phases of one iteration), in order of first start; offered for `--nvtx-step`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_range_candidates: Vec<String>,
}
