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

use kinetoscope_trace::{sort_by_start, CategoryKind, Groups, Phase, Trace};

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
    /// Events in the trace.
    events: usize,
    /// The node of every event plus one (0: none), made on first use
    /// ([`NodeTree::node_of`]).
    node_of: OnceLock<Vec<u32>>,
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

/// Call `f(event, node kind)` for every node event, in file order.
pub(crate) fn for_each_node_event(trace: &Trace, mut f: impl FnMut(usize, NodeKind)) {
    let e = &trace.events;
    let python = &trace.args.python;
    let mut py = 0usize;
    let mut step = NameFlags::new(&trace.strings, |n: &str| n.starts_with("ProfilerStep#"));
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = match trace.categories.kind(e.cat[i]) {
            c @ (CategoryKind::CpuOp | CategoryKind::UserAnnotation) => {
                if step.get(&trace.strings, e.name[i]) {
                    NodeKind::Step
                } else if c == CategoryKind::CpuOp {
                    NodeKind::Op
                } else {
                    NodeKind::Annotation
                }
            }
            CategoryKind::PythonFunction => {
                while py < python.len() && (python[py].event.0 as usize) < i {
                    py += 1;
                }
                let module = py < python.len()
                    && python[py].event.0 as usize == i
                    && python[py].module_id >= 0;
                if !module {
                    continue;
                }
                NodeKind::Module
            }
            _ => continue,
        };
        f(i, kind);
    }
}

impl NodeTree {
    /// Build the forest of a trace.
    pub(crate) fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        // (event, kind, op args row), grouped by track in file order (a counting sort:
        // file order interleaves the threads), then each track's sorted on its own by
        // (start, end desc, file order), read from the columns: the pre-order of each
        // track.
        let op_args = &trace.args.op;
        let tracks = trace.tracks.len();
        let mut order: Groups<(u32, NodeKind, u32)> = Groups::build(tracks, |put| {
            let mut cursor = 0usize;
            for_each_node_event(trace, |i, k| {
                while cursor < op_args.len() && (op_args[cursor].event.0 as usize) < i {
                    cursor += 1;
                }
                let arg = if cursor < op_args.len() && op_args[cursor].event.0 as usize == i {
                    cursor as u32
                } else {
                    NONE
                };
                put(e.track[i].index(), (i as u32, k, arg));
            });
        });
        let end = |i: u32| e.ts_ns[i as usize] + e.dur_ns.at(i as usize);
        for t in 0..tracks {
            // File order holds each track's events in start order, ties aside (the keys
            // are distinct).
            sort_by_start(
                order.group_mut(t),
                |n| e.ts_ns[n.0 as usize],
                |a, b| (end(b.0), a.0).cmp(&(end(a.0), b.0)),
            );
        }

        let n = order.items().len();
        let mut tree = NodeTree {
            event: Vec::with_capacity(n),
            arg: Vec::with_capacity(n),
            kind: Vec::with_capacity(n),
            parent: vec![NONE; n],
            rep: Vec::with_capacity(n),
            overlapping: 0,
            events: e.len(),
            node_of: OnceLock::new(),
            device_work: OnceLock::new(),
        };
        let mut children = vec![0u32; n];
        let mut stack: Vec<(u32, i64)> = Vec::new();
        // Each track's nodes, nested with a stack of (node, end) of their own.
        for t in 0..tracks {
            stack.clear();
            for idx in order.range(t) {
                let (ev, kind, arg) = order.items()[idx];
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
                if let Some(&(p, _)) = stack.last() {
                    tree.parent[idx] = p;
                    children[p as usize] += 1;
                }
                stack.push((idx as u32, end));
                tree.event.push(ev);
                tree.arg.push(arg);
                tree.kind.push(kind);
            }
        }

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

    /// The node of an event ([`NONE`] for an event that is not a node). The map of
    /// every event is made on first use: the passes that take launches to their
    /// operators share it.
    pub(crate) fn node_of(&self, event: usize) -> u32 {
        // Each event's node plus one, 0 for none: a zeroed map's pages that hold no
        // node (GPU activities, runtime calls) are never written.
        let map = self.node_of.get_or_init(|| {
            let mut of = vec![0u32; self.events];
            for (idx, &ev) in self.event.iter().enumerate() {
                of[ev as usize] = idx as u32 + 1;
            }
            of
        });
        map.get(event).map_or(NONE, |&n| n.wrapping_sub(1))
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
