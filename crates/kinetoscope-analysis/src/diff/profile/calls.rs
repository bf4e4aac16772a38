//! Operators by name and input shapes, and kernels by name and the call path of the
//! operator that launched them, summed over a window.
//!
//! A kernel's launcher is the operator (or annotation) the trace's launch link names for
//! its runtime call ([`crate::ops`]' definition); its call path is the chain of
//! operators, annotations and `nn.Module` frames around that launcher (steps left out,
//! the innermost [`MAX_PATH_DEPTH`] kept), ending with the launcher's input shapes. The
//! path is what lets a comparison pair kernels whose names changed (another GPU, library
//! version or `torch.compile`): the same call path launched them.

use kinetoscope_trace::{sort_runs_by_key, CategoryKind, StrId, Trace};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::kernels::{CALL_TREE_ROOT, UNKNOWN_OP};
use crate::ops::group::Grouper;
use crate::ops::launch::{ROOT, UNMATCHED};
use crate::ops::names::NameFlags;
use crate::ops::stats::self_times;
use crate::ops::tree::{is_excluded_op, NodeKind, NodeTree, NONE};
use crate::ops::OpGroupBy;

/// Innermost elements of a call path kept in a kernel's launcher text.
pub const MAX_PATH_DEPTH: usize = 12;

/// Separator of the elements of a call path.
pub const PATH_SEPARATOR: &str = " > ";

/// One operator (name and input shapes) summed over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpTotals {
    /// Operator name.
    pub name: String,
    /// Input shapes (`[[512, 256], []]`; empty without `record_shapes`).
    pub input_shape: String,
    /// Calls.
    pub calls: u64,
    /// Σ host self time, ns (the operator view's definition).
    pub host_self_ns: i64,
    /// Σ device time of the work its own runtime calls launched, ns.
    pub device_self_ns: i64,
}

/// One kernel (name and launcher call path) summed over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelTotals {
    /// Kernel name.
    pub name: String,
    /// Call path of the launching operator, ending with it and its input shapes;
    /// `CallTreeRoot` (outside any operator) or `N/A` (unknown operator).
    pub launcher: String,
    /// Its position among the kernels of one launching call (0 = first), at its first
    /// launch.
    pub position: u32,
    /// Launches.
    pub calls: u64,
    /// Σ duration, ns.
    pub total_ns: i64,
}

/// Operators and kernels starting in `[lo, hi)`, over the trace's operator tree.
pub(super) fn totals(
    trace: &Trace,
    tree: &NodeTree,
    lo: i64,
    hi: i64,
) -> (Vec<OpTotals>, Vec<KernelTotals>) {
    let mut grouper = Grouper::new(trace, tree, OpGroupBy::Shape);
    let ops = op_totals(trace, tree, &mut grouper, lo, hi);
    let kernels = kernel_totals(trace, tree, &mut grouper, lo, hi);
    (ops, kernels)
}

/// Operators grouped by name and input shapes.
fn op_totals(
    trace: &Trace,
    tree: &NodeTree,
    grouper: &mut Grouper,
    lo: i64,
    hi: i64,
) -> Vec<OpTotals> {
    let e = &trace.events;
    let stats = self_times(trace, tree, |_, _, _| {});
    let mut excluded = NameFlags::new(&trace.strings, is_excluded_op);
    // Row of each (name, shape); of each (name, recorded `Input Dims` text), which
    // most calls repeat, so the shape is made once per distinct text.
    let mut index: FxHashMap<(StrId, u32), usize> = FxHashMap::default();
    let mut by_dims: FxHashMap<(StrId, StrId), usize> = FxHashMap::default();
    let mut rows: Vec<OpTotals> = Vec::new();
    for idx in 0..tree.len() {
        let ev = tree.event[idx] as usize;
        if tree.kind[idx] != NodeKind::Op
            || tree.is_merged(idx)
            || e.ts_ns[ev] < lo
            || e.ts_ns[ev] >= hi
            || excluded.get(&trace.strings, e.name[ev])
        {
            continue;
        }
        let dims = match tree.arg[idx] {
            NONE => StrId(u32::MAX),
            a => trace.args.op[a as usize].input_dims,
        };
        let slot = *by_dims.entry((e.name[ev], dims)).or_insert_with(|| {
            let shape = grouper.key(trace, tree, idx);
            *index.entry((e.name[ev], shape)).or_insert_with(|| {
                rows.push(OpTotals {
                    name: trace.strings.get(e.name[ev]).to_owned(),
                    input_shape: grouper.label(trace, shape).unwrap_or_default(),
                    calls: 0,
                    host_self_ns: 0,
                    device_self_ns: 0,
                });
                rows.len() - 1
            })
        });
        let t = &mut rows[slot];
        t.calls += 1;
        t.host_self_ns = t.host_self_ns.saturating_add(stats.host_self[idx]);
        t.device_self_ns = t.device_self_ns.saturating_add(stats.device_self[idx]);
    }
    rows
}

/// Interned call paths: `(parent path, element)` pairs, with the path of each node
/// found so far.
struct Paths {
    ids: FxHashMap<(u32, StrId), u32>,
    pairs: Vec<(u32, StrId)>,
    /// Per node, its path id ([`NONE`] for none), or [`UNSET`] before it is asked for.
    of: Vec<u32>,
    /// The nodes met going up, reused from call to call.
    chain: Vec<u32>,
}

/// A node whose path is not found yet.
const UNSET: u32 = u32::MAX - 1;

impl Paths {
    /// Paths for the nodes of `tree`, none found yet.
    fn new(tree: &NodeTree) -> Self {
        Self {
            ids: FxHashMap::default(),
            pairs: Vec::new(),
            of: vec![UNSET; tree.len()],
            chain: Vec::new(),
        }
    }

    /// The call path id of node `idx` (steps and merged nodes take their parent's),
    /// found with those of its ancestors not found yet: only the nodes that launched a
    /// kernel and the nodes around them are interned, not every node.
    fn of_node(&mut self, trace: &Trace, tree: &NodeTree, idx: usize) -> u32 {
        self.chain.clear();
        let mut x = idx as u32;
        while x != NONE && self.of[x as usize] == UNSET {
            self.chain.push(x);
            x = tree.parent[x as usize];
        }
        let mut up = if x == NONE { NONE } else { self.of[x as usize] };
        for &n in self.chain.iter().rev() {
            let n = n as usize;
            if tree.kind[n] != NodeKind::Step && !tree.is_merged(n) {
                let key = (up, trace.events.name[tree.event[n] as usize]);
                let next = self.pairs.len() as u32;
                up = *self.ids.entry(key).or_insert(next);
                if up == next {
                    self.pairs.push(key);
                }
            }
            self.of[n] = up;
        }
        up
    }

    /// The text of a path, innermost [`MAX_PATH_DEPTH`] elements.
    fn text(&self, trace: &Trace, mut id: u32) -> String {
        let mut names = Vec::new();
        while id != NONE {
            if names.len() == MAX_PATH_DEPTH {
                names.push("…");
                break;
            }
            let (parent, name) = self.pairs[id as usize];
            names.push(trace.strings.get(name));
            id = parent;
        }
        names.reverse();
        names.join(PATH_SEPARATOR)
    }
}

/// Kernels grouped by name and launcher call path.
fn kernel_totals(
    trace: &Trace,
    tree: &NodeTree,
    grouper: &mut Grouper,
    lo: i64,
    hi: i64,
) -> Vec<KernelTotals> {
    let e = &trace.events;
    // (launching node or ROOT / UNMATCHED, start, event) of every kernel in the window.
    let mut launches: Vec<(u32, i64, u32)> = Vec::new();
    for d in tree.device_work(trace) {
        let i = d.event as usize;
        if trace.categories.kind(e.cat[i]) != CategoryKind::Kernel
            || e.ts_ns[i] < lo
            || e.ts_ns[i] >= hi
        {
            continue;
        }
        let node = match d.node {
            UNMATCHED => UNMATCHED,
            n if n >= ROOT => ROOT,
            n => tree.rep[n as usize],
        };
        launches.push((node, e.ts_ns[i], i as u32));
    }
    // Kernels come in long runs of rising launchers: merged (the keys are distinct).
    sort_runs_by_key(&mut launches, |&l| l);

    let mut paths = Paths::new(tree);
    // Row key: (kernel name, launcher path, launcher shape); the text once per key.
    let mut index: FxHashMap<(StrId, u32, u32), usize> = FxHashMap::default();
    let mut rows: Vec<KernelTotals> = Vec::new();
    let mut position = 0u32;
    for (k, &(node, _, ev)) in launches.iter().enumerate() {
        position = if k > 0 && launches[k - 1].0 == node && node < ROOT {
            position + 1
        } else {
            0
        };
        let ev = ev as usize;
        let (path, shape) = match node {
            ROOT | UNMATCHED => (node, NONE),
            n if tree.kind[n as usize] == NodeKind::Op => (
                paths.of_node(trace, tree, n as usize),
                grouper.key(trace, tree, n as usize),
            ),
            n => (paths.of_node(trace, tree, n as usize), NONE),
        };
        let next = rows.len();
        let slot = *index.entry((e.name[ev], path, shape)).or_insert(next);
        if slot == next {
            rows.push(KernelTotals {
                name: trace.strings.get(e.name[ev]).to_owned(),
                launcher: launcher_text(trace, &paths, grouper, path, shape),
                position,
                calls: 0,
                total_ns: 0,
            });
        }
        let r = &mut rows[slot];
        r.calls += 1;
        r.total_ns = r.total_ns.saturating_add(e.dur_ns.at(ev));
        r.position = r.position.min(position);
    }
    rows
}

/// The text of a launcher: its call path, then its input shapes when it has any.
fn launcher_text(trace: &Trace, paths: &Paths, grouper: &Grouper, path: u32, shape: u32) -> String {
    match path {
        ROOT => CALL_TREE_ROOT.to_owned(),
        UNMATCHED => UNKNOWN_OP.to_owned(),
        _ => {
            let text = paths.text(trace, path);
            match (shape != NONE)
                .then(|| grouper.label(trace, shape))
                .flatten()
            {
                Some(s) if !s.is_empty() => format!("{text} {s}"),
                _ => text,
            }
        }
    }
}
