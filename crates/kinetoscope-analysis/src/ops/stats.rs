//! Per-node statistics (the TensorBoard plugin's Operator view): host self time, device
//! self and total time, tensor-core kernel time and tensor-core eligibility, computed in
//! three linear passes over the node tree, the runtime calls and the device activities.

use kinetoscope_trace::{CategoryKind, Trace};

use super::eligibility::is_eligible_name;
use super::launch::{launcher_key, ROOT, UNMATCHED};
use super::names::NameFlags;
use super::tree::{NodeKind, NodeTree, NONE};
use crate::overview::tensor_cores::uses_tensor_cores;

/// Statistics per node; only merge-chain heads ([`NodeTree::rep`]) carry values.
#[derive(Debug, Default)]
pub(crate) struct NodeStats {
    /// Duration minus child nodes minus own runtime calls, ns, at least 0.
    pub host_self: Vec<i64>,
    /// Device work launched by the node's own runtime calls, ns.
    pub device_self: Vec<i64>,
    /// `device_self` plus that of every descendant, ns.
    pub device_total: Vec<i64>,
    /// Tensor-core kernel time among `device_self`, ns.
    pub tc_self: Vec<i64>,
    /// Tensor-core kernel time among `device_total`, ns.
    pub tc_total: Vec<i64>,
    /// Tensor-core eligible (by name, by an eligible child operator, or by own
    /// tensor-core kernels).
    pub eligible: Vec<bool>,
    /// Whether the node's own runtime calls launched at least one kernel, memcpy or
    /// memset.
    pub launched: Vec<bool>,
    /// Whether the trace has any kernel, memcpy or memset.
    pub has_device_work: bool,
    /// Runtime calls with an `External id` but no operator (none carries the id, none
    /// encloses the call).
    pub unmatched_runtimes: u64,
}

/// Compute the statistics of every node of `tree`.
pub(crate) fn node_stats(trace: &Trace, tree: &NodeTree) -> NodeStats {
    let e = &trace.events;
    let n = tree.len();
    let mut s = NodeStats {
        host_self: tree
            .event
            .iter()
            .map(|&ev| e.dur_ns.at(ev as usize))
            .collect(),
        device_self: vec![0; n],
        device_total: Vec::new(),
        tc_self: vec![0; n],
        tc_total: Vec::new(),
        eligible: vec![false; n],
        launched: vec![false; n],
        has_device_work: false,
        unmatched_runtimes: 0,
    };

    // Node of each launching event (operators and annotations are nodes).
    let links = trace.launch_links();

    // Runtime calls: their time is not the node's own host time.
    let mut unmatched = 0u64;
    for (call, launcher) in links.iter() {
        match launcher_key(Some(launcher), |op| tree.node_of(op.index())) {
            UNMATCHED => unmatched += 1,
            node if node < ROOT => {
                let r = tree.rep[node as usize] as usize;
                s.host_self[r] -= e.dur_ns.at(call.index());
            }
            _ => {}
        }
    }
    s.unmatched_runtimes = unmatched;

    // Device work: a plain sum of durations per launching node.
    let mut tc = NameFlags::new(&trace.strings, uses_tensor_cores);
    let device = tree.device_work(trace);
    s.has_device_work = !device.is_empty();
    for d in device.iter().filter(|d| d.node < ROOT) {
        let i = d.event as usize;
        let r = tree.rep[d.node as usize] as usize;
        let dur = e.dur_ns.at(i);
        s.device_self[r] += dur;
        s.launched[r] = true;
        if trace.categories.kind(e.cat[i]) == CategoryKind::Kernel
            && tc.get(&trace.strings, e.name[i])
        {
            s.tc_self[r] += dur;
        }
    }

    // Eligibility by name, and by own tensor-core kernels (operators only).
    let mut by_name = NameFlags::new(&trace.strings, is_eligible_name);
    for idx in 0..n {
        let name = e.name[tree.event[idx] as usize];
        s.eligible[idx] = by_name.get(&trace.strings, name)
            || (tree.kind[idx] == NodeKind::Op && s.tc_self[idx] > 0);
    }

    // Children into parents, deepest first (reverse pre-order).
    s.device_total = s.device_self.clone();
    s.tc_total = s.tc_self.clone();
    for idx in (0..n).rev() {
        let p = tree.parent[idx];
        if p == NONE || tree.is_merged(idx) {
            continue;
        }
        let r = tree.rep[p as usize] as usize;
        s.host_self[r] -= e.dur_ns.at(tree.event[idx] as usize);
        s.device_total[r] += s.device_total[idx];
        s.tc_total[r] += s.tc_total[idx];
        if s.eligible[idx] && tree.kind[r] == NodeKind::Op {
            s.eligible[r] = true;
        }
    }
    // A runtime call inside a child that names the parent (or a span that overlaps its
    // siblings) would be subtracted twice: host self time is never below 0.
    for h in &mut s.host_self {
        *h = (*h).max(0);
    }
    s
}
