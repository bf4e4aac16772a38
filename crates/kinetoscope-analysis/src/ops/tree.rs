//! The TensorBoard plugin's host node tree (per thread), built over the columnar model.
//!
//! Nodes are the host spans the TensorBoard plugin nests: operators (`cpu_op`, 1.8/1.9
//! `Operator`), `ProfilerStep#N` steps, `record_function` annotations (`user_annotation`)
//! and `nn.Module` frames (`python_function` with a `Python module id`). Per track they are
//! sorted by (start asc, end desc, file order) and nested by containment with a stack, so
//! the sorted order is a pre-order of every track's forest.
//!
//! Two choices differ from the plugin (`docs/tb-plugin-differences.md`):
//! * a node that starts inside its would-be parent but ends after it is **kept** as a
//!   sibling (the parent is closed early) instead of being dropped;
//! * a same-name merge (an operator whose only child is an operator of the same name is
//!   folded into one call) keeps the runtimes of both levels.

use std::sync::OnceLock;

use kinetoscope_trace::{CategoryKind, Trace};

use super::launch::{device_launches, DeviceLaunch};
use super::names::NameFlags;

/// "No node": a root's parent, or an absent link.
pub(crate) const NONE: u32 = u32::MAX;

/// What a node is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// An operator: can be merged with a same-name only child, and is a table row unless
    /// its name is excluded ([`is_excluded_op`]).
    #[default]
    Op,
    /// A `ProfilerStep#N` span.
    Step,
    /// A `record_function` annotation that is not a step.
    Annotation,
    /// An `nn.Module` frame (`python_function` with `Python module id`).
    Module,
}

/// The node forest of one trace, in pre-order (track, start, end desc, file order).
#[derive(Debug, Default)]
pub(crate) struct NodeTree {
    /// The event of each node.
    pub event: Vec<u32>,
    /// The node's row in `trace.args.op`, or [`NONE`].
    pub arg: Vec<u32>,
    /// The kind of each node.
    pub kind: Vec<NodeKind>,
    /// The parent node, or [`NONE`].
    pub parent: Vec<u32>,
    /// The node that receives a node's statistics: itself, or the outermost node of a
    /// same-name merge chain.
    pub rep: Vec<u32>,
    /// Nodes that started inside an open node and ended after it (kept as siblings).
    pub overlapping: u64,
    /// The node of every event plus one (0: none; a zeroed map's pages that hold no
    /// node, such as GPU activities', are never written): the passes that take launches
    /// to their operators share it.
    node_of: Vec<u32>,
    /// The trace's GPU activities with their launching nodes, made on first use
    /// ([`NodeTree::device_work`]).
    device_work: OnceLock<Vec<DeviceLaunch>>,
}

/// Whether an operator name is left out of the operator table (as in the plugin): the
/// DataLoader
/// iterator, optimizer steps and the (D)DP forward wrappers.
pub(crate) fn is_excluded_op(name: &str) -> bool {
    name.starts_with("Optimizer.")
        || name == "DataParallel.forward"
        || name == "DistributedDataParallel.forward"
        || (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
}

/// The node kind of each host span, decided from its category, name and Python
/// arguments: `None` for a span that is not a node (runtime calls, Python frames that
/// are not `nn.Module` frames).
struct NodeKinds<'t> {
    trace: &'t Trace,
    step: NameFlags<fn(&str) -> bool>,
    /// A bit per event: a Python frame with a `Python module id` (its first arguments
    /// row's).
    module: Vec<u64>,
}

impl<'t> NodeKinds<'t> {
    fn new(trace: &'t Trace) -> Self {
        let mut module = vec![0u64; trace.events.len().div_ceil(64)];
        let mut last = None;
        for p in &trace.args.python {
            let i = p.event.index();
            if last != Some(i) && p.module_id >= 0 && i < trace.events.len() {
                module[i / 64] |= 1 << (i % 64);
            }
            last = Some(i);
        }
        Self {
            trace,
            step: NameFlags::new(&trace.strings, |n: &str| n.starts_with("ProfilerStep#")),
            module,
        }
    }

    /// The kind of span `i` (a complete host event), if it is a node.
    fn of(&mut self, i: usize) -> Option<NodeKind> {
        let (t, e) = (self.trace, &self.trace.events);
        match t.categories.kind(e.cat[i]) {
            c @ (CategoryKind::CpuOp | CategoryKind::UserAnnotation) => {
                Some(if self.step.get(&t.strings, e.name[i]) {
                    NodeKind::Step
                } else if c == CategoryKind::CpuOp {
                    NodeKind::Op
                } else {
                    NodeKind::Annotation
                })
            }
            CategoryKind::PythonFunction => {
                (self.module[i / 64] & (1 << (i % 64)) != 0).then_some(NodeKind::Module)
            }
            _ => None,
        }
    }
}

impl NodeTree {
    /// Build the forest of a trace: its nodes are the operators, annotations, steps and
    /// `nn.Module` frames among the nesting's spans, taken in the nesting's order (by
    /// track, then start, longest first, then file order): the pre-order of each track.
    pub(crate) fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let nesting = trace.nesting();
        let mut kinds = NodeKinds::new(trace);
        let end = |i: u32| e.ts_ns[i as usize] + e.dur_ns.at(i as usize);
        // At most every span of the nesting is a node: reserved, so that growing never
        // copies.
        let most = nesting.order.items().len();
        let mut tree = NodeTree {
            event: Vec::with_capacity(most),
            kind: Vec::with_capacity(most),
            parent: Vec::with_capacity(most),
            ..NodeTree::default()
        };
        let mut children: Vec<u32> = Vec::with_capacity(most);
        let mut stack: Vec<(u32, i64)> = Vec::new();
        // Each track's nodes, nested with a stack of (node, end) of their own.
        for t in 0..nesting.order.len() {
            stack.clear();
            for &ev in nesting.in_start_order(t) {
                let Some(kind) = kinds.of(ev as usize) else {
                    continue;
                };
                let idx = tree.event.len() as u32;
                let (start, end) = (e.ts_ns[ev as usize], end(ev));
                let mut overlapped = false;
                while let Some(&(_, top_end)) = stack.last() {
                    if start < top_end {
                        if end <= top_end {
                            break;
                        }
                        overlapped = true;
                    }
                    stack.pop();
                }
                if overlapped {
                    tree.overlapping += 1;
                }
                let parent = stack.last().map_or(NONE, |&(p, _)| p);
                if parent != NONE {
                    children[parent as usize] += 1;
                }
                stack.push((idx, end));
                tree.event.push(ev);
                tree.kind.push(kind);
                tree.parent.push(parent);
                children.push(0);
            }
        }
        let n = tree.event.len();

        // Each node's row of operator arguments (the first row of its event), through
        // the map from events to nodes, which the passes over launches share.
        let mut node_of = vec![0u32; e.len()];
        for (idx, &ev) in tree.event.iter().enumerate() {
            node_of[ev as usize] = idx as u32 + 1;
        }
        tree.arg = vec![NONE; n];
        for (row, a) in trace.args.op.iter().enumerate() {
            let node = node_of.get(a.event.index()).map_or(0, |&x| x);
            if let Some(slot) = node.checked_sub(1).map(|x| &mut tree.arg[x as usize]) {
                if *slot == NONE {
                    *slot = row as u32;
                }
            }
        }
        tree.node_of = node_of;
        tree.rep = Vec::with_capacity(n);

        // Same-name merge (the plugin's): an operator whose only child is an operator of the same
        // name is one call. Parents come before children in pre-order.
        for idx in 0..n {
            let p = tree.parent[idx];
            let merged = p != NONE
                && children[p as usize] == 1
                && tree.kind[p as usize] == NodeKind::Op
                && tree.kind[idx] == NodeKind::Op
                && e.name[tree.event[p as usize] as usize] == e.name[tree.event[idx] as usize];
            let r = if merged {
                tree.rep[p as usize]
            } else {
                idx as u32
            };
            tree.rep.push(r);
        }
        tree
    }

    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.event.len()
    }

    /// The node of an event ([`NONE`] for an event that is not a node).
    pub(crate) fn node_of(&self, event: usize) -> u32 {
        self.node_of.get(event).map_or(NONE, |&n| n.wrapping_sub(1))
    }

    /// Every complete kernel, memcpy and memset of `trace` (the trace this tree was built
    /// from), in file order, with the node that launched it. Made on first use: the
    /// operator statistics, the perf model and the diff profile's kernels share it,
    /// instead of each scanning the events and looking each launch up again.
    pub(crate) fn device_work(&self, trace: &Trace) -> &[DeviceLaunch] {
        self.device_work
            .get_or_init(|| device_launches(trace, |op| self.node_of(op)))
    }

    /// Whether node `i` was folded into an ancestor of the same name.
    pub(crate) fn is_merged(&self, i: usize) -> bool {
        self.rep[i] as usize != i
    }
}
