//! A call tree for flame graphs and collapsed stacks, rebuilt from pstats' caller edges.
//!
//! pstats keeps a call graph (who called whom, with totals per edge), not stacks, so the
//! tree is an estimate. Method: each root (a function no function that took time calls)
//! gets its
//! cumulative time; a node's time is shared among the functions it calls in proportion
//! to each edge's cumulative time over the caller's cumulative time (cProfile's edge
//! `cumtime`; for `profile`, whose edges are counts, the callee's cumulative time times
//! the edge's share of its calls), scaled down when the edges out of a function add up
//! to more than its cumulative time; what is left is the node's own time. A callee already on the path (recursion) is not
//! descended into, nor a node deeper than [`MAX_DEPTH`], nor one under
//! [`MIN_SHARE`] of the total; their time stays with their parent. At most [`MAX_NODES`]
//! nodes are built. Where a function is reached along several paths, its time is
//! split by the proportions of the edges into it, which is exact only when every call
//! of it costs the same.

use std::collections::HashMap;

use kinetoscope_trace::EdgeStats;
use serde::{Deserialize, Serialize};

use super::stats::Stats;

/// Deepest path built.
pub const MAX_DEPTH: usize = 64;
/// Most nodes built.
pub const MAX_NODES: usize = 50_000;
/// Nodes under this share of the total time are left in their parent.
pub const MIN_SHARE: f64 = 1e-4;

/// One node: a function reached along one path.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TreeNode {
    /// The parent node; `None` for a root.
    pub parent: Option<u32>,
    /// The function: an index into [`CallTree::functions`].
    pub func: u32,
    /// Seconds estimated at this node, callees included.
    pub total: f64,
    /// Seconds estimated in the function itself at this node.
    pub self_time: f64,
}

/// The estimated call tree.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CallTree {
    /// Standard names of the functions the nodes name.
    pub functions: Vec<String>,
    /// Nodes, each after its parent (depth-first).
    pub nodes: Vec<TreeNode>,
    /// Seconds of the roots together.
    pub total: f64,
    /// Whether [`MAX_NODES`] stopped the build.
    pub truncated: bool,
}

/// The callees of each entry (by entry index) with each edge's estimated seconds.
fn weighted_callees(stats: &Stats) -> Vec<Vec<(u32, f64)>> {
    let index: HashMap<_, u32> = stats
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (&e.func, i as u32))
        .collect();
    let mut out = vec![Vec::new(); stats.entries.len()];
    for (g, e) in stats.entries.iter().enumerate() {
        for c in &e.callers {
            let Some(&f) = index.get(&c.caller) else {
                continue;
            };
            let w = match c.stats {
                EdgeStats::Timed { cumtime, .. } => cumtime,
                EdgeStats::Count { calls } if e.calls > 0 => {
                    e.cumtime * calls as f64 / e.calls as f64
                }
                EdgeStats::Count { .. } => 0.0,
            };
            if w.is_finite() && w > 0.0 {
                out[f as usize].push((g as u32, w));
            }
        }
    }
    // Heaviest first, so a node stops at the first edge under the size threshold.
    for list in &mut out {
        list.sort_by(|a, b| b.1.total_cmp(&a.1));
    }
    out
}

/// Per function, the factor its edges are scaled by so that they add up to at most its
/// cumulative time (recursive edges to itself left out).
fn edge_scales(stats: &Stats, callees: &[Vec<(u32, f64)>]) -> Vec<f64> {
    callees
        .iter()
        .enumerate()
        .map(|(f, list)| {
            let ct = stats.entries[f].cumtime;
            let sum: f64 = list.iter().filter(|c| c.0 as usize != f).map(|c| c.1).sum();
            if sum > ct && sum > 0.0 {
                ct / sum
            } else {
                1.0
            }
        })
        .collect()
}

/// Build the call tree of `stats` (see the module documentation for the method).
pub fn call_tree(stats: &Stats) -> CallTree {
    let callees = weighted_callees(stats);
    let scales = edge_scales(stats, &callees);
    // Called by a function that took time (`profile`'s own `profiler` entry takes none).
    let called: Vec<bool> = {
        let mut v = vec![false; stats.entries.len()];
        for (f, list) in callees.iter().enumerate() {
            if stats.entries[f].cumtime > 0.0 {
                for &(g, _) in list {
                    v[g as usize] = true;
                }
            }
        }
        v
    };
    let mut tree = CallTree {
        functions: stats.entries.iter().map(|e| e.func.std_string()).collect(),
        ..CallTree::default()
    };
    let roots: Vec<u32> = (0..stats.entries.len() as u32)
        .filter(|&i| !called[i as usize] && stats.entries[i as usize].cumtime > 0.0)
        .collect();
    tree.total = roots
        .iter()
        .map(|&i| stats.entries[i as usize].cumtime)
        .filter(|x| x.is_finite())
        .sum();
    let min = tree.total * MIN_SHARE;
    // (parent node, function, seconds, depth), depth-first
    let mut stack: Vec<(Option<u32>, u32, f64, usize)> = roots
        .iter()
        .rev()
        .map(|&i| (None, i, stats.entries[i as usize].cumtime, 0))
        .collect();
    while let Some((parent, f, total, depth)) = stack.pop() {
        if tree.nodes.len() >= MAX_NODES {
            tree.truncated = true;
            if let Some(p) = parent {
                tree.nodes[p as usize].self_time += total;
            }
            continue;
        }
        let id = tree.nodes.len() as u32;
        let ct = stats.entries[f as usize].cumtime;
        let mut children: Vec<(u32, f64)> = Vec::new();
        if depth < MAX_DEPTH && ct > 0.0 {
            let scale = scales[f as usize] * total / ct;
            for &(g, w) in &callees[f as usize] {
                let t = w * scale;
                if t.is_nan() || t < min {
                    break;
                }
                if !on_path(&tree, parent, f, g) {
                    children.push((g, t));
                }
            }
        }
        let kept: f64 = children.iter().map(|c| c.1).sum();
        tree.nodes.push(TreeNode {
            parent,
            func: f,
            total,
            self_time: (total - kept).max(0.0),
        });
        for &(g, t) in children.iter().rev() {
            stack.push((Some(id), g, t, depth + 1));
        }
    }
    tree
}

/// Whether `g` is `f` or a function on the path above node `parent`.
fn on_path(tree: &CallTree, parent: Option<u32>, f: u32, g: u32) -> bool {
    if g == f {
        return true;
    }
    let mut at = parent;
    while let Some(p) = at {
        let n = &tree.nodes[p as usize];
        if n.func == g {
            return true;
        }
        at = n.parent;
    }
    false
}
