//! The memory view behind `kinetoscope memory`, for traces recorded with
//! `profile_memory=True`: allocated and reserved curves per device, the peak with its
//! time and operator, the allocation events table (allocations paired with their frees)
//! and per-operator statistics (self and including children).
//!
//! The analyses work on a [`MemoryInput`]: memory records in time order, each attributed
//! to the operator that made it, plus the operator tree those statistics roll up. A
//! source builds it; today the only source is the Kineto trace's `[memory]` instants
//! ([`trace_source`]); a CUDA memory snapshot reader can produce the same input later.
//!
//! - [`curve`]: curves, down-sampling that keeps each bucket's exact min/max, peaks.
//! - [`events`]: pairing allocations with frees by device and address.
//! - [`forest`]: subtree membership and parent-first folds over the operator forest, one
//!   pass each (no per-record walk up the nesting).
//! - [`op_stats`]: per-operator statistics.
//! - [`sort`]: sort keys and row limits for the tables.
//! - [`step_pattern`]: per-step verdict (stable, gradual increase = leak, sudden spike).
//! - [`categories`]: categories (parameter, gradient, activation, ...) inferred from
//!   allocation lifetimes relative to forward / backward / optimizer phases.
//! - [`timeline`]: bytes per category over time; the view of a profiler memory
//!   timeline file (`export_memory_timeline`).
//! - [`snapshot`]: the separate view of a CUDA caching-allocator snapshot (pickle).
//!
//! Definitions follow the TensorBoard plugin's Memory view; where that plugin has a
//! quirk kinetoscope does the sound thing instead, listed in
//! `docs/tb-plugin-differences.md`.

pub mod categories;
pub mod curve;
pub mod events;
pub mod forest;
pub mod modules;
pub mod op_stats;
pub mod snapshot;
pub mod sort;
pub mod step_pattern;
pub mod timeline;
pub mod trace_source;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

use crate::note::Note;

pub use curve::{Curve, CurveKind, CurvePoint, Peak};
pub use events::{Allocation, AllocationTable};
pub use op_stats::OpMemoryStats;
pub use sort::SortKey;

/// Default number of curve points per device after down-sampling.
pub const DEFAULT_POINTS: usize = 500;

/// A memory device as `[memory]` events name it (`Device Type`, `Device Id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Device {
    /// `c10::DeviceType`: 0 CPU, 1 CUDA, others as written.
    pub device_type: i64,
    /// Device ordinal (-1 for the CPU).
    pub device_id: i64,
}

impl Device {
    /// The CPU.
    pub const CPU: Device = Device {
        device_type: 0,
        device_id: -1,
    };

    /// CUDA device `id`.
    pub const fn cuda(id: i64) -> Self {
        Device {
            device_type: 1,
            device_id: id,
        }
    }

    /// Whether this is a GPU: CUDA (`c10::DeviceType` 1), or HIP (6, what ROCm builds
    /// of PyTorch write in `[memory]` records).
    pub fn is_gpu(self) -> bool {
        is_gpu_type(self.device_type)
    }
}

/// Whether a `c10::DeviceType` is a GPU: CUDA (1) or HIP (6).
pub fn is_gpu_type(device_type: i64) -> bool {
    device_type == 1 || device_type == 6
}

impl fmt::Display for Device {
    /// `CPU`, `GPU0` (the plugin's names; CUDA and HIP alike), or `device<type>:<id>`
    /// for other types.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.device_type {
            0 => f.write_str("CPU"),
            t if is_gpu_type(t) => write!(f, "GPU{}", self.device_id),
            t => write!(f, "device{t}:{}", self.device_id),
        }
    }
}

/// Which devices to keep (`--device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceFilter {
    /// The CPU.
    Cpu,
    /// Every CUDA device.
    AllGpus,
    /// One CUDA device.
    Gpu(i64),
}

impl DeviceFilter {
    /// Whether `device` passes.
    pub fn matches(self, device: Device) -> bool {
        match self {
            Self::Cpu => device.device_type == 0,
            Self::AllGpus => device.is_gpu(),
            Self::Gpu(id) => device.is_gpu() && device.device_id == id,
        }
    }
}

impl FromStr for DeviceFilter {
    type Err = String;

    /// `cpu`; `gpu` or `cuda` (all GPUs); `gpu0`, `gpu:0`, `cuda:0`, `GPU0` or `0`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.trim().to_ascii_lowercase();
        if l == "cpu" {
            return Ok(Self::Cpu);
        }
        if l == "gpu" || l == "cuda" {
            return Ok(Self::AllGpus);
        }
        let digits = l
            .strip_prefix("gpu")
            .or_else(|| l.strip_prefix("cuda"))
            .map(|r| r.trim_start_matches(':'))
            .unwrap_or(&l);
        digits
            .parse::<i64>()
            .ok()
            .filter(|d| *d >= 0)
            .map(Self::Gpu)
            .ok_or_else(|| format!("unknown device {s:?}: use cpu, gpu, gpu0, cuda:0 or 0"))
    }
}

/// One memory event from any source.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRecord {
    /// When, epoch ns.
    pub ts_ns: i64,
    /// Which device.
    pub device: Device,
    /// Address (`Addr`); `None` when the source has none (PyTorch < 1.10 traces).
    pub addr: Option<u64>,
    /// Bytes: positive for an allocation, negative for a free.
    pub bytes: i64,
    /// Bytes allocated on the device after this event, when recorded.
    pub total_allocated: Option<i64>,
    /// Bytes reserved by the caching allocator after this event, when recorded.
    pub total_reserved: Option<i64>,
    /// The innermost operator it happened in (a node of [`OpForest`]).
    pub op: Option<u32>,
    /// The innermost `nn.Module` it happened in (an index of [`MemoryInput::modules`]).
    pub module: Option<u32>,
}

/// One operator call in an [`OpForest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpNode {
    /// Index into [`OpForest::names`].
    pub name: u32,
    /// The enclosing operator call on the same thread.
    pub parent: Option<u32>,
}

/// The operator calls that memory records are attributed to, with their nesting.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpForest {
    /// Operator names, each once.
    pub names: Vec<String>,
    /// Operator calls; a call's parent always has a smaller index.
    pub nodes: Vec<OpNode>,
    /// Calls per name (same index as `names`) over the whole trace.
    pub calls: Vec<u64>,
}

impl OpForest {
    /// The name of a call.
    pub fn name_of(&self, node: u32) -> &str {
        &self.names[self.nodes[node as usize].name as usize]
    }

    /// The enclosing call.
    pub fn parent_of(&self, node: u32) -> Option<u32> {
        self.nodes[node as usize].parent
    }
}

/// What a source of memory records produces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryInput {
    /// Where the records came from.
    pub source: MemorySource,
    /// Memory records in time order (ties in source order).
    pub records: Vec<MemoryRecord>,
    /// The operator calls records are attributed to.
    pub ops: OpForest,
    /// Time zero for relative times: the first event of the trace, epoch ns.
    pub origin_ns: i64,
    /// Device capacities (`totalGlobalMem`) by GPU ordinal (keyed as [`Device::cuda`],
    /// also for HIP records), bytes.
    pub capacity: BTreeMap<Device, u64>,
    /// `[OutOfMemory]` events per device.
    pub out_of_memory: BTreeMap<Device, u64>,
    /// `nn.Module` paths (`GPT/Block_0/MLP_0`) records are attributed to.
    pub modules: Vec<String>,
}

/// Options of the memory view.
#[derive(Clone, Debug)]
pub struct MemoryOptions {
    /// Most curve points per device after down-sampling (at least 10).
    pub points: usize,
    /// Keep only matching devices.
    pub device: Option<DeviceFilter>,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self {
            points: DEFAULT_POINTS,
            device: None,
        }
    }
}

/// Where the memory records came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemorySource {
    /// `[memory]` instants of a Kineto trace.
    #[default]
    KinetoTrace,
}

/// The memory view of one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemoryView {
    /// The file.
    pub path: String,
    /// Where the records came from.
    pub source: MemorySource,
    /// Time zero for relative times (first event of the trace), epoch ns.
    pub origin_ns: i64,
    /// Memory records, all devices (before `--device`).
    pub records: u64,
    /// Of those, records with an address (PyTorch 1.10+).
    pub records_with_addr: u64,
    /// Of those, records with `Total Allocated`.
    pub records_with_totals: u64,
    /// Records inside no operator (attributed to nothing).
    pub unattributed_records: u64,
    /// `[OutOfMemory]` events, all devices.
    pub out_of_memory_events: u64,
    /// Per device, CPU first then GPUs by id (after `--device`).
    pub devices: Vec<DeviceMemory>,
    /// Notes on what could not be computed and why.
    pub notes: Vec<Note>,
    /// PyTorch's memory-timeline categories next to the inferred ones, when a
    /// timeline of the same run was found or given (`--timeline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline_comparison: Option<timeline::CategoryComparison>,
}

/// Everything the view shows for one device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeviceMemory {
    /// `CPU`, `GPU0`, ...
    pub device: String,
    /// `Device Type` as written (0 CPU, 1 CUDA, 6 HIP).
    pub device_type: i64,
    /// `Device Id` (-1 for the CPU).
    pub device_id: i64,
    /// Memory records on this device.
    pub records: u64,
    /// `[OutOfMemory]` events on this device.
    pub out_of_memory_events: u64,
    /// Device memory (`totalGlobalMem` from `deviceProperties`), when known.
    pub capacity_bytes: Option<u64>,
    /// Highest allocated bytes: when first reached and by which operator.
    pub peak_allocated: Option<Peak>,
    /// Highest reserved bytes (caching allocator), when recorded.
    pub peak_reserved: Option<Peak>,
    /// `peak_allocated` over `capacity_bytes` (0–1), when both are known.
    pub peak_allocated_share_of_capacity: Option<f64>,
    /// `peak_reserved` over `capacity_bytes` (0–1), when both are known.
    pub peak_reserved_share_of_capacity: Option<f64>,
    /// Allocated / reserved over time, down-sampled.
    pub curve: Curve,
    /// Allocations paired with their frees.
    pub allocations: AllocationTable,
    /// Per-operator statistics.
    pub operators: Vec<OpMemoryStats>,
    /// Operator rows before `--top`.
    pub operators_total: usize,
    /// Per-step pattern (stable / gradual increase / sudden spike), with 3+
    /// `ProfilerStep#N` steps ([`step_pattern`]).
    pub step_pattern: Option<step_pattern::StepPattern>,
    /// Bytes per category over time, inferred from allocation lifetimes
    /// ([`categories`]); `None` when the records have no addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories: Option<categories::InferredCategories>,
    /// The bytes live at the allocated peak by `nn.Module` ([`modules`]); `None` without
    /// module frames or addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules_at_peak: Option<modules::ModulesAtPeak>,
}

/// How much of the view to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detail {
    /// Everything `kinetoscope memory` shows.
    Full,
    /// What the advisor's rules read: curves, peaks, the step pattern and the allocations
    /// never freed (with every count); no per-operator table, no inferred categories.
    Rules,
}

/// The memory view of a Kineto trace.
pub fn analyze_trace(trace: &Trace, opts: &MemoryOptions) -> MemoryView {
    analyze_trace_with(trace, opts, Detail::Full)
}

/// The parts of a trace's memory view the advisor's rules read: curves, peaks, the
/// step pattern and the allocations never freed (the allocation counts cover every
/// row); the per-operator table is empty and no categories are inferred.
pub fn analyze_trace_for_rules(trace: &Trace, opts: &MemoryOptions) -> MemoryView {
    analyze_trace_with(trace, opts, Detail::Rules)
}

fn analyze_trace_with(trace: &Trace, opts: &MemoryOptions, detail: Detail) -> MemoryView {
    let modules = match detail {
        Detail::Full => trace_source::Modules::Find,
        Detail::Rules => trace_source::Modules::Skip,
    };
    let input = trace_source::from_trace_with(trace, modules);
    let mut view = analyze_with(&trace.path.display().to_string(), &input, opts, detail);
    step_pattern::attach(&mut view, trace, &input);
    view
}

/// The memory view of any source's records.
pub fn analyze(path: &str, input: &MemoryInput, opts: &MemoryOptions) -> MemoryView {
    analyze_with(path, input, opts, Detail::Full)
}

fn analyze_with(
    path: &str,
    input: &MemoryInput,
    opts: &MemoryOptions,
    detail: Detail,
) -> MemoryView {
    let recs = &input.records;
    let mut view = MemoryView {
        path: path.to_owned(),
        source: input.source,
        origin_ns: input.origin_ns,
        records: recs.len() as u64,
        records_with_addr: recs.iter().filter(|r| r.addr.is_some()).count() as u64,
        records_with_totals: recs.iter().filter(|r| r.total_allocated.is_some()).count() as u64,
        unattributed_records: recs.iter().filter(|r| r.op.is_none()).count() as u64,
        out_of_memory_events: input.out_of_memory.values().sum(),
        devices: Vec::new(),
        notes: Vec::new(),
        timeline_comparison: None,
    };
    if recs.is_empty() {
        view.notes.push(Note::NoMemoryEvents);
    } else if view.records_with_addr == 0 && view.records_with_totals == 0 {
        view.notes.push(Note::NoAddressOrTotals);
    }
    let mut by_device: BTreeMap<Device, Vec<&MemoryRecord>> = BTreeMap::new();
    for r in recs {
        by_device.entry(r.device).or_default().push(r);
    }
    for d in input.out_of_memory.keys() {
        by_device.entry(*d).or_default();
    }
    for (device, records) in by_device {
        if opts.device.is_some_and(|f| !f.matches(device)) {
            continue;
        }
        view.devices.push(device_memory(
            device,
            &records,
            input,
            (opts.points, detail),
        ));
    }
    if !recs.is_empty() && view.devices.is_empty() {
        view.notes.push(Note::NoRecordsOnDevice);
    }
    view
}

fn device_memory(
    device: Device,
    records: &[&MemoryRecord],
    input: &MemoryInput,
    (points, detail): (usize, Detail),
) -> DeviceMemory {
    let full = curve::build(records);
    let peak_allocated = curve::peak_allocated(&full, records, &input.ops);
    let modules_at_peak = match (detail, curve::peak_allocated_record(&full)) {
        (Detail::Full, Some((bytes, at))) => modules::at_peak(records, at, bytes, &input.modules),
        _ => None,
    };
    let peak_reserved = curve::peak_reserved(&full, records, &input.ops);
    let operators = match detail {
        Detail::Full => op_stats::op_stats(records, &input.ops),
        Detail::Rules => Vec::new(),
    };
    // Capacities are keyed by GPU ordinal (`Device::cuda`), whatever the record type.
    let capacity_bytes = device
        .is_gpu()
        .then(|| input.capacity.get(&Device::cuda(device.device_id)))
        .flatten()
        .copied();
    let share_of_capacity = |p: &Option<Peak>| match (p, capacity_bytes) {
        (Some(p), Some(c)) if c > 0 => Some(p.bytes as f64 / c as f64),
        _ => None,
    };
    DeviceMemory {
        device: device.to_string(),
        device_type: device.device_type,
        device_id: device.device_id,
        records: records.len() as u64,
        out_of_memory_events: input.out_of_memory.get(&device).copied().unwrap_or(0),
        capacity_bytes,
        peak_allocated_share_of_capacity: share_of_capacity(&peak_allocated),
        peak_reserved_share_of_capacity: share_of_capacity(&peak_reserved),
        peak_allocated,
        peak_reserved,
        curve: curve::downsampled(full, points),
        allocations: events::pair_rows(
            records,
            &input.ops,
            match detail {
                Detail::Full => events::Rows::All,
                Detail::Rules => events::Rows::Unreleased,
            },
        ),
        operators_total: operators.len(),
        operators,
        step_pattern: None,
        categories: (detail == Detail::Full && records.iter().any(|r| r.addr.is_some()))
            .then(|| categories::infer(records, &input.ops, points)),
        modules_at_peak,
    }
}

/// The operator to show for an allocation: `parent (aten::empty…)` when the allocating
/// operator is an `aten::empty*` (PyTorch's malloc) with a parent, as the plugin does;
/// else the operator, or `<unknown>`.
pub fn op_context(op: Option<&str>, parent: Option<&str>) -> String {
    match (op, parent) {
        (Some(o), Some(p)) if o.starts_with("aten::empty") => format!("{p} ({o})"),
        (Some(o), _) => o.to_owned(),
        (None, _) => "<unknown>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_filter_parses() {
        assert_eq!("cpu".parse(), Ok(DeviceFilter::Cpu));
        assert_eq!("GPU".parse(), Ok(DeviceFilter::AllGpus));
        assert_eq!("gpu0".parse(), Ok(DeviceFilter::Gpu(0)));
        assert_eq!("cuda:3".parse(), Ok(DeviceFilter::Gpu(3)));
        assert_eq!("1".parse(), Ok(DeviceFilter::Gpu(1)));
        assert!("tpu".parse::<DeviceFilter>().is_err());
        assert!(DeviceFilter::Gpu(1).matches(Device::cuda(1)));
        assert!(!DeviceFilter::Gpu(1).matches(Device::cuda(0)));
        assert!(!DeviceFilter::AllGpus.matches(Device::CPU));
        assert_eq!(Device::cuda(2).to_string(), "GPU2");
        assert_eq!(Device::CPU.to_string(), "CPU");
    }

    #[test]
    fn empty_context() {
        assert_eq!(
            op_context(Some("aten::empty_strided"), Some("aten::to")),
            "aten::to (aten::empty_strided)"
        );
        assert_eq!(
            op_context(Some("aten::mm"), Some("aten::linear")),
            "aten::mm"
        );
        assert_eq!(op_context(Some("aten::empty"), None), "aten::empty");
        assert_eq!(op_context(None, None), "<unknown>");
    }
}
