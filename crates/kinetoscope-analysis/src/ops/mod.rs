//! The operator view (the TensorBoard plugin's Operator view): per operator (or per
//! operator and its input shapes, call stack or enclosing module), calls, host self/total
//! time, device self/total time and tensor-core eligibility and share.
//!
//! Definitions follow the TensorBoard plugin: operators nest by time containment per thread
//! (`tree.rs`); runtime calls hang on the operator the trace's launch link names (its
//! `External id` when the call lies inside it, else the innermost operator around the
//! call) and GPU work on the runtime call with its `correlation` (`launch.rs`); device time is a plain sum of kernel,
//! memcpy and memset durations. Nested operators are separate rows, so totals
//! double-count across rows by design. Where kinetoscope departs from the plugin is listed
//! in `docs/tb-plugin-differences.md`.

pub mod eligibility;
pub(crate) mod group;
pub(crate) mod launch;
pub(crate) mod names;
mod sort;
pub(crate) mod stats;
pub(crate) mod tree;

use kinetoscope_trace::{GpuVendor, Trace};
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
    /// Σ call duration minus child operators/annotations minus own runtime calls.
    pub host_self_ns: i64,
    /// Σ call duration.
    pub host_total_ns: i64,
    /// Σ duration of kernels, memcpys and memsets launched by the calls' own runtime
    /// calls.
    pub device_self_ns: i64,
    /// The same including everything launched by nested operators.
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

/// Per-row sums while scanning nodes.
#[derive(Default)]
struct Acc {
    name: u32,
    second: u32,
    calls: u64,
    host_self: i64,
    host_total: i64,
    device_self: i64,
    device_total: i64,
    tc_self: i64,
    tc_total: i64,
    eligible: bool,
    has_call_stack: bool,
}

/// Build the operator table of a trace, sorted by the default key
/// ([`OpSortKey::DeviceSelf`], then host self time).
pub fn analyze_ops(trace: &Trace, group_by: OpGroupBy) -> OpsTable {
    let e = &trace.events;
    let tree = NodeTree::build(trace);
    let stats = node_stats(trace, &tree);
    let mut grouper = Grouper::new(trace, &tree, group_by);
    let mut excluded = NameFlags::new(&trace.strings, is_excluded_op);
    let empty = trace.strings.find("");

    let mut index: FxHashMap<(u32, u32), usize> = FxHashMap::default();
    let mut accs: Vec<Acc> = Vec::new();
    for idx in 0..tree.len() {
        if tree.kind[idx] != NodeKind::Op || tree.is_merged(idx) {
            continue;
        }
        let ev = tree.event[idx] as usize;
        let name = e.name[ev];
        if excluded.get(&trace.strings, name) {
            continue;
        }
        let second = grouper.key(trace, &tree, idx);
        let next = accs.len();
        let slot = *index.entry((name.0, second)).or_insert(next);
        if slot == next {
            accs.push(Acc {
                name: name.0,
                second,
                ..Acc::default()
            });
        }
        let a = &mut accs[slot];
        a.calls += 1;
        a.host_total += e.dur_ns[ev];
        a.host_self += stats.host_self[idx];
        a.device_self += stats.device_self[idx];
        a.device_total += stats.device_total[idx];
        a.tc_self += stats.tc_self[idx];
        a.tc_total += stats.tc_total[idx];
        a.eligible |= stats.eligible[idx];
        let arg = tree.arg[idx];
        if arg != tree::NONE && Some(trace.args.op[arg as usize].call_stack) != empty {
            a.has_call_stack = true;
        }
    }

    let label = |a: &Acc| grouper.label(trace, a.second);
    let rows: Vec<OpRow> = accs
        .iter()
        .map(|a| {
            let text = label(a);
            OpRow {
                name: trace
                    .strings
                    .get(kinetoscope_trace::StrId(a.name))
                    .to_owned(),
                input_shape: (group_by == OpGroupBy::Shape)
                    .then(|| text.clone().unwrap_or_default()),
                call_stack: if group_by == OpGroupBy::Stack {
                    text.clone()
                } else {
                    None
                },
                module: if group_by == OpGroupBy::Module {
                    text
                } else {
                    None
                },
                calls: a.calls,
                host_self_ns: a.host_self,
                host_total_ns: a.host_total,
                device_self_ns: a.device_self,
                device_total_ns: a.device_total,
                tc_eligible: a.eligible,
                tc_self_ns: a.tc_self,
                tc_total_ns: a.tc_total,
                tc_self_share: share(a.tc_self, a.device_self),
                tc_total_share: share(a.tc_total, a.device_total),
                has_call_stack: a.has_call_stack,
            }
        })
        .collect();

    // The reader's repaired launch links decide device time here: say so.
    let mut warnings: Vec<Note> = Note::from_read(&trace.report)
        .into_iter()
        .filter(|n| matches!(n, Note::RepairedLaunchLinks { .. }))
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
    let mut table = OpsTable {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        group_by,
        sort: OpSortKey::DeviceSelf,
        total_rows: rows.len(),
        has_device_work: stats.has_device_work,
        rows,
        warnings,
        vendor: trace.meta.gpu_vendor.unwrap_or_default(),
    };
    table.sort_by(OpSortKey::DeviceSelf);
    table
}

/// `100 · part / whole`, or 0 when `whole` is 0.
fn share(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}
