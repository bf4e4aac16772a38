//! The operator view (the TensorBoard plugin's Operator view): per operator (or per
//! operator and its input shapes, call stack or enclosing module), calls, host self/total
//! time, device self/total time and tensor-core eligibility and share.
//!
//! Definitions follow the TensorBoard plugin: operators nest by time containment per thread
//! (`tree.rs`); runtime calls hang on the operator the trace's launch link names (its
//! `External id` when the call lies inside it, else the innermost operator around the
//! call) and GPU work on the runtime call with its `correlation` (`launch.rs`); device time is a plain sum of kernel,
//! memcpy and memset durations. Nested operators are separate rows, so totals
//! double-count across rows by design; within a row they do not: a call nested (at any
//! depth) in a call of the same row counts in `calls` and in the self columns, but not
//! again in the total columns, which hold the outermost call's inclusive time. GPU
//! activities without a launch record (no runtime call has their correlation: launched
//! before the profiler window) are in no row. Where kinetoscope departs from the plugin is listed
//! in `docs/tb-plugin-differences.md`.

pub mod eligibility;
pub(crate) mod group;
pub(crate) mod launch;
pub(crate) mod names;
mod sort;
pub(crate) mod stats;
pub(crate) mod tree;

use kinetoscope_trace::{GpuVendor, StrId, Trace};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

pub use sort::OpSortKey;

use crate::note::Note;
use group::Grouper;
use names::NameFlags;
use stats::node_stats;
use tree::{is_excluded_op, NodeKind, NodeTree};

/// How operator calls are grouped into rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpGroupBy {
    /// By operator name (the plugin's "Operator").
    #[default]
    Name,
    /// By name and input shapes (the plugin's "Operator + Input Shape").
    Shape,
    /// By name and `Call stack` (needs `with_stack=True` in PyTorch ≤ 1.x traces).
    Stack,
    /// By name and enclosing `nn.Module` path (`with_modules=True`), or the TorchScript
    /// `Module Hierarchy`.
    Module,
}

/// One row of the operator table. Times are nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpRow {
    /// Operator name.
    pub name: String,
    /// Input shapes as the plugin prints them (`[[32, 3, 224, 224], []]`); only when
    /// grouping by shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_shape: Option<String>,
    /// The `Call stack` text (`;`-separated frames); only when grouping by stack, null
    /// for calls without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_stack: Option<String>,
    /// Enclosing module path (`ResNet_0/Sequential_1/Conv2d_0`) or TorchScript module
    /// hierarchy; only when grouping by module, null for calls outside any module.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// Number of calls.
    pub calls: u64,
    /// Calls whose own runtime calls launched at least one kernel, memcpy or memset
    /// (TraceLens's `Count`).
    #[serde(default)]
    pub launching_calls: u64,
    /// Σ call duration minus child operators/annotations minus own runtime calls.
    pub host_self_ns: i64,
    /// Σ call duration, calls nested in a call of the same row left out.
    pub host_total_ns: i64,
    /// Σ duration of kernels, memcpys and memsets launched by the calls' own runtime
    /// calls.
    pub device_self_ns: i64,
    /// The same including everything launched by nested operators (calls nested in a
    /// call of the same row left out).
    pub device_total_ns: i64,
    /// Tensor-core eligible: by name, by an eligible child operator, or because its
    /// kernels used tensor cores (any call).
    pub tc_eligible: bool,
    /// Tensor-core kernel time within `device_self_ns`.
    pub tc_self_ns: i64,
    /// Tensor-core kernel time within `device_total_ns`.
    pub tc_total_ns: i64,
    /// `tc_self_ns / device_self_ns`, 0–1 (0 when there is no device time).
    pub tc_self_share: f64,
    /// `tc_total_ns / device_total_ns`, 0–1 (0 when there is no device time).
    pub tc_total_share: f64,
    /// Whether some call has a non-empty `Call stack`.
    pub has_call_stack: bool,
}

/// The operator table of one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpsTable {
    /// The file.
    pub path: String,
    /// Rank (`distributedInfo.rank`, else from the file name), when known.
    pub rank: Option<i64>,
    /// Grouping used.
    pub group_by: OpGroupBy,
    /// Sort key used.
    pub sort: OpSortKey,
    /// Number of rows before `--top` cut the table.
    pub total_rows: usize,
    /// Whether the trace has kernels, memcpys or memsets (device columns are all 0
    /// otherwise).
    pub has_device_work: bool,
    /// Rows, sorted.
    pub rows: Vec<OpRow>,
    /// Things the reader should know (repaired launch links, overlapping spans, unmatched
    /// runtime calls).
    pub warnings: Vec<Note>,
    /// Whose GPUs ran the trace (renderers say tensor or matrix cores).
    #[serde(default)]
    pub vendor: GpuVendor,
}

impl OpsTable {
    /// Sort rows by `key` (numbers descending, names ascending; ties by name, then by
    /// the grouping text).
    pub fn sort_by(&mut self, key: OpSortKey) {
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

/// The operator node tree of a trace (operators, steps, annotations and `nn.Module`
/// frames, nested per thread), built once and shared by the analyses that walk it
/// ([`crate::perf::analyze_perf_in`], [`crate::diff::profile::profile_in`]).
#[derive(Debug, Default)]
pub struct OperatorTree(pub(crate) NodeTree);

impl OperatorTree {
    /// Build the tree of `trace`.
    pub fn build(trace: &Trace) -> Self {
        Self(NodeTree::build(trace))
    }
}

/// Build the operator table of a trace, sorted by the default key
/// ([`OpSortKey::DeviceSelf`], then host self time). Each group is its output row from
/// the start (no second copy of the table), and the rows are sorted through their
/// indexes, so the table costs one row per group.
pub fn analyze_ops(trace: &Trace, group_by: OpGroupBy) -> OpsTable {
    let e = &trace.events;
    let tree = NodeTree::build(trace);
    let stats = node_stats(trace, &tree);
    let mut grouper = Grouper::new(trace, &tree, group_by);
    let mut excluded = NameFlags::new(&trace.strings, is_excluded_op);
    let empty = trace.strings.find("");

    // First the group of every operator node, then the rows at their exact number (a
    // table grown by doubling holds up to twice its rows).
    let mut index: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut groups: Vec<(StrId, u32)> = Vec::new();
    let mut group_of = vec![tree::NONE; tree.len()];
    for (idx, group) in group_of.iter_mut().enumerate() {
        if tree.kind[idx] != NodeKind::Op || tree.is_merged(idx) {
            continue;
        }
        let name = e.name[tree.event[idx] as usize];
        if excluded.get(&trace.strings, name) {
            continue;
        }
        let second = grouper.key(trace, &tree, idx);
        *group = *index.entry((name.0, second)).or_insert_with(|| {
            groups.push((name, second));
            (groups.len() - 1) as u32
        });
    }
    drop(index);
    let nested = nested_in_own_group(&tree, &group_of, groups.len());
    let mut rows: Vec<OpRow> = Vec::with_capacity(groups.len());
    rows.extend(
        groups
            .into_iter()
            .map(|(name, second)| new_row(trace, group_by, name, grouper.label(trace, second))),
    );
    for (idx, &group) in group_of.iter().enumerate() {
        let Some(r) = rows.get_mut(group as usize) else {
            continue;
        };
        let ev = tree.event[idx] as usize;
        r.calls += 1;
        r.launching_calls += u64::from(stats.launched[idx]);
        r.host_self_ns += stats.host_self[idx];
        r.device_self_ns += stats.device_self[idx];
        r.tc_self_ns += stats.tc_self[idx];
        if !nested[idx] {
            r.host_total_ns += e.dur_ns.at(ev);
            r.device_total_ns += stats.device_total[idx];
            r.tc_total_ns += stats.tc_total[idx];
        }
        r.tc_eligible |= stats.eligible[idx];
        let arg = tree.arg[idx];
        if arg != tree::NONE && Some(trace.args.op[arg as usize].call_stack) != empty {
            r.has_call_stack = true;
        }
    }
    drop(group_of);
    for r in &mut rows {
        r.tc_self_share = share(r.tc_self_ns, r.device_self_ns);
        r.tc_total_share = share(r.tc_total_ns, r.device_total_ns);
    }

    // The reader's repaired launch links decide device time here: say so.
    let mut warnings: Vec<Note> = Note::from_trace(trace)
        .into_iter()
        .filter(|n| {
            matches!(
                n,
                Note::RepairedLaunchLinks { .. } | Note::GpuWithoutLaunch { .. }
            )
        })
        .collect();
    if tree.overlapping > 0 {
        warnings.push(Note::OverlappingSpans {
            count: tree.overlapping,
        });
    }
    if stats.unmatched_runtimes > 0 {
        warnings.push(Note::UnmatchedRuntimeCalls {
            count: stats.unmatched_runtimes,
        });
    }
    let has_device_work = stats.has_device_work;
    // The per-node tables are done with: free them before the rows are sorted.
    drop((tree, stats, grouper));
    let mut table = OpsTable {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        group_by,
        sort: OpSortKey::DeviceSelf,
        total_rows: rows.len(),
        has_device_work,
        rows,
        warnings,
        vendor: trace.meta.gpu_vendor.unwrap_or_default(),
    };
    table.sort_by(OpSortKey::DeviceSelf);
    table
}

/// Whether each node lies (at any depth) inside a node of its own group: its inclusive
/// times are already in the outermost one's. One pre-order walk with the open path and
/// a count of open nodes per group: O(n).
fn nested_in_own_group(tree: &NodeTree, group_of: &[u32], groups: usize) -> Vec<bool> {
    let mut open = vec![0u32; groups];
    let mut path: Vec<u32> = Vec::new();
    let mut nested = vec![false; tree.len()];
    for (idx, flag) in nested.iter_mut().enumerate() {
        let parent = tree.parent[idx];
        while let Some(&top) = path.last() {
            if top == parent {
                break;
            }
            path.pop();
            if let Some(c) = open.get_mut(group_of[top as usize] as usize) {
                *c -= 1;
            }
        }
        if let Some(c) = open.get_mut(group_of[idx] as usize) {
            *flag = *c > 0;
            *c += 1;
        }
        path.push(idx as u32);
    }
    nested
}

/// An empty row for the group of operator `name` (and `label`, the grouping text).
fn new_row(trace: &Trace, group_by: OpGroupBy, name: StrId, label: Option<String>) -> OpRow {
    let (input_shape, call_stack, module) = match group_by {
        OpGroupBy::Name => (None, None, None),
        OpGroupBy::Shape => (Some(label.unwrap_or_default()), None, None),
        OpGroupBy::Stack => (None, label, None),
        OpGroupBy::Module => (None, None, label),
    };
    OpRow {
        name: trace.strings.get(name).to_owned(),
        input_shape,
        call_stack,
        module,
        calls: 0,
        launching_calls: 0,
        host_self_ns: 0,
        host_total_ns: 0,
        device_self_ns: 0,
        device_total_ns: 0,
        tc_eligible: false,
        tc_self_ns: 0,
        tc_total_ns: 0,
        tc_self_share: 0.0,
        tc_total_share: 0.0,
        has_call_stack: false,
    }
}

/// `part / whole`, or 0 when `whole` is 0.
fn share(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}
