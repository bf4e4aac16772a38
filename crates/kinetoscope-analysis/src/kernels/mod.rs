//! The GPU kernel view (the TensorBoard plugin's GPU Kernel view): per kernel name, or per
//! kernel name + launching operator + launch properties, calls, total / mean / min / max
//! duration, tensor-core use, and time-weighted mean blocks per SM and estimated achieved
//! occupancy.
//!
//! Every kernel event counts, in both groupings. A kernel's launching operator is the host
//! node whose `External id` its runtime call carries (`CallTreeRoot` when that id is 0 or
//! no runtime call has the kernel's correlation, `N/A` when the id matches no node). Where
//! kinetoscope departs from the plugin is listed in `docs/tb-plugin-differences.md`.

mod sort;

use kinetoscope_trace::{
    CategoryKind, EventId, GpuVendor, KernelArgs, LaunchLinks, Phase, StrId, Trace,
};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

pub use sort::KernelSortKey;

use crate::ops::eligibility::is_eligible_name;
use crate::ops::launch::{launcher_key, ROOT, UNMATCHED};
use crate::ops::names::NameFlags;
use crate::overview::tensor_cores::uses_tensor_cores;

/// The operator name shown for kernels launched outside any operator (as the plugin).
pub const CALL_TREE_ROOT: &str = "CallTreeRoot";
/// The operator name shown for kernels whose runtime call names no known operator.
pub const UNKNOWN_OP: &str = "N/A";

/// How kernel launches are grouped into rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelGroupBy {
    /// By kernel name (the plugin's "Kernel Name").
    #[default]
    Name,
    /// By kernel name, launching operator, grid, block, registers per thread and shared
    /// memory (the plugin's "Kernel Properties + Op Name").
    Properties,
}

/// The launch properties of a row grouped by [`KernelGroupBy::Properties`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelProperties {
    /// Launching operator, [`CALL_TREE_ROOT`] or [`UNKNOWN_OP`].
    pub operator: String,
    /// Grid `[x, y, z]` (zeros when the trace does not record it).
    pub grid: [u32; 3],
    /// Block `[x, y, z]` (zeros when not recorded).
    pub block: [u32; 3],
    /// Registers per thread (0 when not recorded).
    pub registers_per_thread: u32,
    /// Shared memory per block in bytes, as Kineto records it (0 when not recorded).
    pub shared_memory_bytes: u64,
    /// Whether the launching operator is tensor-core eligible (by name, or because it
    /// launched a tensor-core kernel anywhere in the trace).
    pub op_tc_eligible: bool,
}

/// One row of the kernel table. Times are nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    /// Kernel name.
    pub name: String,
    /// Launch properties; only when grouping by properties.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub properties: Option<KernelProperties>,
    /// Number of launches.
    pub calls: u64,
    /// Σ duration.
    pub total_ns: i64,
    /// Mean duration.
    pub mean_ns: f64,
    /// Shortest launch.
    pub min_ns: i64,
    /// Longest launch.
    pub max_ns: i64,
    /// Whether the kernel runs on tensor cores (recognised by name).
    pub tensor_cores: bool,
    /// `Σ blocks_per_SM · dur / Σ dur` over launches that record `blocks per SM`; null when
    /// none does.
    pub mean_blocks_per_sm: Option<f64>,
    /// `Σ occupancy · dur / Σ dur` over launches with a known `est. achieved occupancy
    /// %`, as a fraction (0–1); null when none has one.
    pub mean_est_achieved_occupancy: Option<f64>,
    /// For a table over time windows ([`analyze_kernels_in`]): the windows (indices) in
    /// which the row's kernels ran; empty (and not serialised) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<u32>,
}

/// The kernel table of one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelsTable {
    /// The file.
    pub path: String,
    /// Rank (`distributedInfo.rank`, else from the file name), when known.
    pub rank: Option<i64>,
    /// Grouping used.
    pub group_by: KernelGroupBy,
    /// Sort key used.
    pub sort: KernelSortKey,
    /// Number of rows before `--top` cut the table.
    pub total_rows: usize,
    /// Σ duration of all kernels, ns.
    pub total_kernel_ns: i64,
    /// Σ duration of tensor-core (NVIDIA) or matrix-core (AMD) kernels among all
    /// kernels, ns (the plugin's Kernel-view tensor-core pie).
    pub tensor_core_kernel_ns: i64,
    /// `tensor_core_kernel_ns / total_kernel_ns`, 0–1 (0 without kernel time).
    pub tensor_core_share: f64,
    /// Rows, sorted.
    pub rows: Vec<KernelRow>,
    /// Whose GPUs ran the kernels (renderers say tensor or matrix cores).
    #[serde(default)]
    pub vendor: GpuVendor,
}

impl KernelsTable {
    /// Sort rows by `key` (numbers descending, names ascending; ties by total, name and
    /// properties).
    pub fn sort_by(&mut self, key: KernelSortKey) {
        self.sort = key;
        sort::sort_rows(&mut self.rows, key);
    }

    /// Keep the first `top` rows (0 keeps all).
    pub fn truncate(&mut self, top: usize) {
        if top > 0 {
            self.rows.truncate(top);
        }
    }
}

/// A time-weighted mean under construction.
#[derive(Default, Clone, Copy)]
struct Weighted {
    weighted_sum: f64,
    weight: i64,
    plain_sum: f64,
    count: u64,
}

impl Weighted {
    fn add(&mut self, value: Option<f32>, dur: i64) {
        if let Some(v) = value {
            let v = f64::from(v);
            self.weighted_sum += v * dur as f64;
            self.weight += dur;
            self.plain_sum += v;
            self.count += 1;
        }
    }

    /// Time-weighted mean; the plain mean when every launch lasted 0 ns; `None` without
    /// values.
    fn mean(&self) -> Option<f64> {
        if self.count == 0 {
            None
        } else if self.weight > 0 {
            Some(self.weighted_sum / self.weight as f64)
        } else {
            Some(self.plain_sum / self.count as f64)
        }
    }
}

/// Key of a row: kernel name, launching operator (a name id, or a sentinel), grid, block,
/// registers, shared memory. Name grouping leaves everything but the name at zero.
type RowKey = (u32, u32, [u32; 3], [u32; 3], u32, u64);

/// One row under construction.
struct Acc {
    key: RowKey,
    calls: u64,
    total: i64,
    min: i64,
    max: i64,
    blocks: Weighted,
    occupancy: Weighted,
    windows: Vec<u32>,
}

impl Acc {
    /// A row of `key` without launches.
    fn new(key: RowKey) -> Self {
        Self {
            key,
            calls: 0,
            total: 0,
            min: i64::MAX,
            max: i64::MIN,
            blocks: Weighted::default(),
            occupancy: Weighted::default(),
            windows: Vec::new(),
        }
    }

    /// Add one launch: its duration, launch arguments and the window it ran in.
    fn add(&mut self, dur: i64, args: Option<KernelArgs>, window: Option<u32>) {
        self.calls += 1;
        self.total += dur;
        self.min = self.min.min(dur);
        self.max = self.max.max(dur);
        self.blocks
            .add(args.and_then(|x| x.launch.blocks_per_sm), dur);
        self.occupancy
            .add(args.and_then(|x| x.launch.est_achieved_occupancy_pct), dur);
        if let Some(w) = window {
            if self.windows.last() != Some(&w) {
                self.windows.push(w);
            }
        }
    }

    /// The finished row.
    fn into_row(
        self,
        trace: &Trace,
        tensor_cores: bool,
        properties: Option<KernelProperties>,
    ) -> KernelRow {
        KernelRow {
            name: trace.strings.get(StrId(self.key.0)).to_owned(),
            properties,
            calls: self.calls,
            total_ns: self.total,
            mean_ns: self.total as f64 / self.calls as f64,
            min_ns: self.min,
            max_ns: self.max,
            tensor_cores,
            mean_blocks_per_sm: self.blocks.mean(),
            mean_est_achieved_occupancy: self.occupancy.mean().map(|pct| pct / 100.0),
            windows: {
                // Kernels come in file order, not always time order.
                let mut w = self.windows;
                w.sort_unstable();
                w.dedup();
                w.shrink_to_fit();
                w
            },
        }
    }
}

/// Build the kernel table of a trace, sorted by total time.
pub fn analyze_kernels(trace: &Trace, group_by: KernelGroupBy) -> KernelsTable {
    analyze_kernels_in(trace, group_by, None)
}

/// The kernel table of the kernels that start inside one of `windows` (`[start, end)`
/// epoch ns, sorted and disjoint, e.g. the overview's steps), each row listing the
/// windows it ran in; every kernel of the trace when `windows` is `None`.
pub fn analyze_kernels_in(
    trace: &Trace,
    group_by: KernelGroupBy,
    windows: Option<&[(i64, i64)]>,
) -> KernelsTable {
    let by_props = group_by == KernelGroupBy::Properties;
    let accs = accumulate(trace, by_props, windows);
    let (rows, total_kernel_ns, tensor_core_kernel_ns) = rows_of(trace, accs, by_props);
    let mut table = KernelsTable {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        group_by,
        sort: KernelSortKey::Total,
        total_rows: rows.len(),
        total_kernel_ns,
        tensor_core_kernel_ns,
        tensor_core_share: if total_kernel_ns > 0 {
            tensor_core_kernel_ns as f64 / total_kernel_ns as f64
        } else {
            0.0
        },
        rows,
        vendor: trace.meta.gpu_vendor.unwrap_or_default(),
    };
    table.sort_by(KernelSortKey::Total);
    table
}

/// Every kernel event (inside one of `windows` when given) added to its row; rows in
/// the order of their first kernel.
fn accumulate(trace: &Trace, by_props: bool, windows: Option<&[(i64, i64)]>) -> Vec<Acc> {
    let e = &trace.events;
    let window_of = |ts: i64| -> Option<u32> {
        let w = windows?;
        let at = w.partition_point(|x| x.0 <= ts).checked_sub(1)?;
        (ts < w[at].1).then_some(at as u32)
    };

    let links = trace.launch_links();

    let kargs = &trace.args.kernel;
    let mut cursor = 0usize;
    let mut index: FxHashMap<RowKey, u32> = FxHashMap::default();
    let mut accs: Vec<Acc> = Vec::new();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || trace.categories.kind(e.cat[i]) != CategoryKind::Kernel
        {
            continue;
        }
        let window = window_of(e.ts_ns[i]);
        if windows.is_some() && window.is_none() {
            continue;
        }
        while cursor < kargs.len() && (kargs.events()[cursor].0 as usize) < i {
            cursor += 1;
        }
        let args = kargs.get(cursor).filter(|a| a.event.0 as usize == i);
        let key = row_key(trace, links, i, args, by_props);
        let next = accs.len() as u32;
        let slot = *index.entry(key).or_insert(next) as usize;
        if slot == next as usize {
            accs.push(Acc::new(key));
        }
        accs[slot].add(e.dur_ns.at(i), args, window);
    }
    accs
}

/// The row key of kernel event `i` (`args` its launch arguments): its name, and when
/// grouping by properties its launching operator and launch properties.
fn row_key(
    trace: &Trace,
    links: &LaunchLinks,
    i: usize,
    args: Option<KernelArgs>,
    by_props: bool,
) -> RowKey {
    let e = &trace.events;
    if by_props {
        let launcher = links.of_activity(trace, EventId(i as u32));
        let op = launcher_key(launcher, |op| e.name[op.index()].0);
        match args {
            Some(a) => (
                e.name[i].0,
                op,
                a.launch.grid,
                a.launch.block,
                a.launch.registers_per_thread,
                a.launch.shared_memory,
            ),
            None => (e.name[i].0, op, [0; 3], [0; 3], 0, 0),
        }
    } else {
        (e.name[i].0, 0, [0; 3], [0; 3], 0, 0)
    }
}

/// The rows of `accs`, in their order, with the Σ duration of all kernels and of the
/// tensor-core kernels, ns.
fn rows_of(trace: &Trace, accs: Vec<Acc>, by_props: bool) -> (Vec<KernelRow>, i64, i64) {
    let mut tc = NameFlags::new(&trace.strings, uses_tensor_cores);
    let tc_rows: Vec<bool> = accs
        .iter()
        .map(|a| tc.get(&trace.strings, StrId(a.key.0)))
        .collect();
    let ops_with_tc: FxHashSet<u32> = accs
        .iter()
        .zip(&tc_rows)
        .filter(|(a, &t)| t && a.key.1 < ROOT)
        .map(|(a, _)| a.key.1)
        .collect();
    let mut eligible = NameFlags::new(&trace.strings, is_eligible_name);

    let mut total_kernel_ns = 0;
    let mut tensor_core_kernel_ns = 0;
    let rows: Vec<KernelRow> = accs
        .into_iter()
        .zip(tc_rows)
        .map(|(a, tensor_cores)| {
            total_kernel_ns += a.total;
            if tensor_cores {
                tensor_core_kernel_ns += a.total;
            }
            let properties =
                by_props.then(|| properties_of(trace, a.key, &mut eligible, &ops_with_tc));
            a.into_row(trace, tensor_cores, properties)
        })
        .collect();
    (rows, total_kernel_ns, tensor_core_kernel_ns)
}

/// The launch properties of the row of `key`; `eligible` tells tensor-core eligible
/// operator names, `ops_with_tc` the operators that launched a tensor-core kernel.
fn properties_of(
    trace: &Trace,
    key: RowKey,
    eligible: &mut NameFlags<impl Fn(&str) -> bool>,
    ops_with_tc: &FxHashSet<u32>,
) -> KernelProperties {
    let (_, op, grid, block, registers_per_thread, shared_memory_bytes) = key;
    let (operator, op_tc_eligible) = match op {
        ROOT => (CALL_TREE_ROOT.to_owned(), false),
        UNMATCHED => (UNKNOWN_OP.to_owned(), false),
        id => (
            trace.strings.get(StrId(id)).to_owned(),
            eligible.get(&trace.strings, StrId(id)) || ops_with_tc.contains(&id),
        ),
    };
    KernelProperties {
        operator,
        grid,
        block,
        registers_per_thread,
        shared_memory_bytes,
        op_tc_eligible,
    }
}
