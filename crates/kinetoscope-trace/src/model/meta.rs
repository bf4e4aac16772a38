//! Top-level trace metadata: devices, distributed info, profiler options, the time base,
//! and the format features the reader saw (used to tell the PyTorch era).

use serde::{Deserialize, Serialize};

use super::rank_from_file_name;

/// Top-level keys of a Kineto trace, read leniently.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TraceMeta {
    /// `schemaVersion` (always 1 when present; not a version signal).
    pub schema_version: Option<i64>,
    /// `baseTimeNanoseconds` (PyTorch 2.4+): added to every `ts`.
    pub base_time_ns: Option<i64>,
    /// `displayTimeUnit` (a viewer hint only).
    pub display_time_unit: Option<String>,
    /// `trace_id` (2.5+).
    pub trace_id: Option<String>,
    /// `host_name` (2.10+).
    pub host_name: Option<String>,
    /// `traceName`: the path the writer opened.
    pub trace_name: Option<String>,
    /// GPUs from `deviceProperties` (or the pre-1.9 `computeProperties`).
    pub devices: Vec<DeviceInfo>,
    /// Whose GPUs ran the trace, decided by the reader: AMD when the header has ROCm keys
    /// (`roctracer_version`, `hip_runtime_version`, `hip_driver_version`), a device is
    /// named AMD / Radeon / Instinct, or a HIP launch or copy call (`hipLaunchKernel`, …)
    /// is named; NVIDIA when there are
    /// devices or GPU events otherwise; `None` for a CPU-only trace.
    #[serde(default)]
    pub gpu_vendor: Option<GpuVendor>,
    /// ROCm traces: the device number the events wrote (the HSA agent index, which counts
    /// the CPU agents first) and the `deviceProperties` id the reader replaced it with,
    /// in every kernel, memcpy and memset and on every GPU track. Empty when nothing was
    /// renumbered.
    #[serde(default)]
    pub gpu_agents: Vec<GpuAgent>,
    /// `distributedInfo`, when `torch.distributed` was initialised.
    pub distributed: Option<DistributedInfo>,
    /// The rank of the process that wrote the trace, decided once by the reader:
    /// `distributedInfo.rank`, else the number in the file name (`rank-3`, `rank_3`,
    /// `rank3`); `None` when neither says.
    pub rank: Option<Rank>,
    /// Profiler options that were on (`record_shapes`, `profile_memory`, `with_stack`,
    /// `with_modules`, `with_flops`).
    pub profiler_options: Vec<String>,
    /// Format features observed while reading.
    pub features: FormatFeatures,
    /// What an Nsight Systems export held (`None`, and absent from the JSON, for a
    /// Kineto trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nsys: Option<super::NsysInfo>,
}

/// Whose GPUs ran a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuVendor {
    /// NVIDIA (CUDA).
    #[default]
    Nvidia,
    /// AMD (ROCm / HIP).
    Amd,
}

impl GpuVendor {
    /// What the vendor calls its matrix-multiply units: `tensor cores`, `matrix cores`.
    pub fn matrix_units(self) -> &'static str {
        match self {
            Self::Nvidia => "tensor cores",
            Self::Amd => "matrix cores",
        }
    }

    /// What the vendor calls one multiprocessor: `SM` (streaming multiprocessor), `CU`
    /// (compute unit).
    pub fn multiprocessor(self) -> &'static str {
        match self {
            Self::Nvidia => "SM",
            Self::Amd => "CU",
        }
    }

    /// What the vendor calls its general-purpose lanes, the units a GEMM runs on without
    /// matrix units: `CUDA cores`, `vector ALUs`.
    pub fn vector_units(self) -> &'static str {
        match self {
            Self::Nvidia => "CUDA cores",
            Self::Amd => "vector ALUs",
        }
    }
}

/// A ROCm device number as the events wrote it and the `deviceProperties` id it stands
/// for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuAgent {
    /// The number in the events (`device` args, the GPU tracks' `pid`).
    pub agent: i64,
    /// The `deviceProperties` id.
    pub device: i64,
}

/// One GPU from `deviceProperties`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub id: i64,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// `totalGlobalMem` in bytes.
    pub total_memory_bytes: u64,
    /// Number of SMs (`numSms`).
    pub num_sms: u64,
    /// Compute capability major.
    pub compute_major: i64,
    /// Compute capability minor.
    pub compute_minor: i64,
    /// `maxThreadsPerMultiprocessor`.
    pub max_threads_per_sm: u64,
    /// Whose GPU it is (the trace's [`TraceMeta::gpu_vendor`]).
    #[serde(default)]
    pub vendor: GpuVendor,
    /// The architecture in the vendor's terms, decided by the reader: `sm_90` from the
    /// compute capability (NVIDIA); `gfx942`, `gfx950`, `gfx90a`, `gfx908` from the HIP
    /// major.minor and the name (AMD), or `gfx9.0` when they do not say which. Empty
    /// when unknown (major 0).
    #[serde(default)]
    pub arch: String,
}

impl DeviceInfo {
    /// The architecture name (see [`DeviceInfo::arch`]) from what `deviceProperties`
    /// says.
    pub fn arch_of(vendor: GpuVendor, major: i64, minor: i64, name: &str) -> String {
        if major <= 0 {
            return String::new();
        }
        match vendor {
            GpuVendor::Nvidia => format!("sm_{major}{minor}"),
            GpuVendor::Amd => match (major, minor) {
                // HIP reports gfx942 (MI300A/X, MI325X) as 9.4 and gfx950 (MI350/355X)
                // as 9.5; 9.0 is gfx908 (MI100) or gfx90a (MI200), told apart by name.
                (9, 4) => "gfx942".to_owned(),
                (9, 5) => "gfx950".to_owned(),
                (9, 0) if name.contains("MI100") => "gfx908".to_owned(),
                (9, 0) if name.contains("MI2") => "gfx90a".to_owned(),
                _ => format!("gfx{major}.{minor}"),
            },
        }
    }

    /// The name to show: the marketing name, else the vendor and architecture
    /// (`AMD gfx942`), else `unknown`.
    pub fn display_name(&self) -> String {
        if !self.name.trim().is_empty() {
            return self.name.clone();
        }
        match (self.vendor, self.arch.is_empty()) {
            (_, true) => "unknown".to_owned(),
            (GpuVendor::Nvidia, false) => format!("NVIDIA {}", self.arch),
            (GpuVendor::Amd, false) => format!("AMD {}", self.arch),
        }
    }
}

/// `distributedInfo`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DistributedInfo {
    /// `backend` (`nccl`, `gloo`, ...).
    pub backend: Option<String>,
    /// `rank`.
    pub rank: Option<i64>,
    /// `world_size`.
    pub world_size: Option<i64>,
    /// `pg_count`.
    pub pg_count: Option<i64>,
    /// `nccl_version`.
    pub nccl_version: Option<String>,
}

/// The rank of a trace and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rank {
    /// The rank number.
    pub value: i64,
    /// Where it came from.
    pub source: RankSource,
}

/// Where a trace's rank number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    /// `distributedInfo.rank`.
    DistributedInfo,
    /// The file name (`rank-3...`).
    FileName,
    /// One process of an Nsight Systems export: its place among the processes that ran
    /// GPU work, ordered by their first device.
    NsysProcess,
}

/// Features of the file format the reader saw, from which the PyTorch era is estimated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FormatFeatures {
    /// A legacy bare JSON array instead of an object.
    pub bare_array: bool,
    /// Some `ts` had a fractional (nanosecond) part.
    pub fractional_ts: bool,
    /// `baseTimeNanoseconds` came before `traceEvents` (kineto 2025-03+).
    pub base_time_before_events: bool,
    /// 1.8/1.9 `Operator` category.
    pub operator_category: bool,
    /// Capitalised CUDA categories (`Runtime`, `Kernel`, `Memcpy`, `Memset`).
    pub capitalised_cuda_categories: bool,
    /// String `tid`s (1.8/1.9).
    pub string_tids: bool,
    /// The flow category names seen (`ac2g`, `async`, `async_gpu`, `async_cpu_to_gpu`,
    /// `fwdbwd`).
    pub flow_categories: Vec<String>,
    /// `Profiler Event Index` argument (≤1.13) was seen.
    pub profiler_event_index: bool,
    /// `Ev Idx` argument (2.0+) was seen.
    pub ev_idx: bool,
    /// `Record function id` argument (2.4+) was seen.
    pub record_function_id: bool,
    /// `Concrete Inputs` argument (2.1+) was seen.
    pub concrete_inputs: bool,
}

impl TraceMeta {
    /// Decide [`TraceMeta::rank`]: `distributedInfo.rank`, else the rank in `file_name`.
    pub(crate) fn decide_rank(&mut self, file_name: &str) {
        if self
            .rank
            .is_some_and(|r| r.source == RankSource::NsysProcess)
        {
            return;
        }
        self.rank = match self.distributed.as_ref().and_then(|d| d.rank) {
            Some(value) => Some(Rank {
                value,
                source: RankSource::DistributedInfo,
            }),
            None => rank_from_file_name(file_name).map(|value| Rank {
                value,
                source: RankSource::FileName,
            }),
        };
    }

    /// The PyTorch release range that wrote this trace, estimated from format features
    /// (the keys and event fields each Kineto release added): never from `schemaVersion`.
    pub fn pytorch_era(&self) -> &'static str {
        let f = &self.features;
        let flow = |c: &str| f.flow_categories.iter().any(|x| x == c);
        if self.nsys.is_some() {
            return "unknown (an Nsight Systems export)";
        }
        if f.bare_array {
            return "legacy autograd profiler (no Kineto)";
        }
        if f.operator_category || f.string_tids || flow("async") {
            return "PyTorch 1.8–1.9";
        }
        if f.capitalised_cuda_categories || flow("async_gpu") {
            return "PyTorch 1.10";
        }
        if flow("async_cpu_to_gpu") || f.profiler_event_index {
            return "PyTorch 1.11–1.13";
        }
        if self.base_time_ns.is_some() {
            if self.host_name.is_some() {
                return "PyTorch 2.10+";
            }
            if f.base_time_before_events {
                return "PyTorch 2.7+";
            }
            return "PyTorch 2.4–2.6";
        }
        if f.fractional_ts {
            return "PyTorch 2.4 nightly (2024-03/04 Kineto)";
        }
        if f.concrete_inputs {
            return "PyTorch 2.1–2.3";
        }
        if f.ev_idx {
            return "PyTorch 2.0–2.3";
        }
        "PyTorch ≤2.3 (Kineto, integer µs)"
    }
}
