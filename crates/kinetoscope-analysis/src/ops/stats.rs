//! Per-node statistics (the TensorBoard plugin's Operator view): host self time, device
//! self and total time, tensor-core kernel time and tensor-core eligibility, computed in
//! linear passes over the node tree, the runtime calls and the device activities; the
//! self times alone ([`self_times`]) for the diff profile.

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

/// Host and device self time per node: what the diff profile needs of [`NodeStats`].
#[derive(Debug, Default)]
pub(crate) struct SelfTimes {
    /// [`NodeStats::host_self`].
    pub host_self: Vec<i64>,
    /// [`NodeStats::device_self`].
    pub device_self: Vec<i64>,
    /// [`NodeStats::unmatched_runtimes`].
    pub unmatched_runtimes: u64,
    /// [`NodeStats::has_device_work`].
    pub has_device_work: bool,
}

/// The self times of every node of `tree`, calling `device(rep, event, dur)` for each
/// device activity a node launched (`rep`: the node's merge-chain head).
pub(crate) fn self_times(
    trace: &Trace,
    tree: &NodeTree,
    mut device: impl FnMut(usize, usize, i64),
) -> SelfTimes {
    let e = &trace.events;
    let mut host_self: Vec<i64> = tree
        .event
        .iter()
        .map(|&ev| e.dur_ns.at(ev as usize))
        .collect();

    // Runtime calls: their time is not the node's own host time.
    let mut unmatched_runtimes = 0u64;
    for (call, launcher) in trace.launch_links().iter() {
        match launcher_key(Some(launcher), |op| tree.node_of(op.index())) {
            UNMATCHED => unmatched_runtimes += 1,
            node if node < ROOT => {
                let r = tree.rep[node as usize] as usize;
                host_self[r] -= e.dur_ns.at(call.index());
            }
            _ => {}
        }
    }

    // Device work: a plain sum of durations per launching node.
    let mut device_self = vec![0; tree.len()];
    let work = tree.device_work(trace);
    for d in work.iter().filter(|d| d.node < ROOT) {
        let i = d.event as usize;
        let r = tree.rep[d.node as usize] as usize;
        let dur = e.dur_ns.at(i);
        device_self[r] += dur;
        device(r, i, dur);
    }

    // Child nodes' time is not the parent's own.
    for idx in (0..tree.len()).rev() {
        let p = tree.parent[idx];
        if p != NONE && !tree.is_merged(idx) {
            host_self[tree.rep[p as usize] as usize] -= e.dur_ns.at(tree.event[idx] as usize);
        }
    }
    // A runtime call inside a child that names the parent (or a span that overlaps its
    // siblings) would be subtracted twice: host self time is never below 0.
    for h in &mut host_self {
        *h = (*h).max(0);
    }
    SelfTimes {
        host_self,
        device_self,
        unmatched_runtimes,
        has_device_work: !work.is_empty(),
    }
}

/// Compute the statistics of every node of `tree`.
pub(crate) fn node_stats(trace: &Trace, tree: &NodeTree) -> NodeStats {
    let e = &trace.events;
    let n = tree.len();
    let mut tc = NameFlags::new(&trace.strings, uses_tensor_cores);
    let mut tc_self = vec![0; n];
    let mut launched = vec![false; n];
    let times = self_times(trace, tree, |r, i, dur| {
        launched[r] = true;
        if trace.categories.kind(e.cat[i]) == CategoryKind::Kernel
            && tc.get(&trace.strings, e.name[i])
        {
            tc_self[r] += dur;
        }
    });
    let mut s = NodeStats {
        host_self: times.host_self,
        device_total: times.device_self.clone(),
        device_self: times.device_self,
        tc_total: tc_self.clone(),
        tc_self,
        eligible: vec![false; n],
        launched,
        has_device_work: times.has_device_work,
        unmatched_runtimes: times.unmatched_runtimes,
    };

    // Eligibility by name, and by own tensor-core kernels (operators only).
    let mut by_name = NameFlags::new(&trace.strings, is_eligible_name);
    for idx in 0..n {
        let name = e.name[tree.event[idx] as usize];
        s.eligible[idx] = by_name.get(&trace.strings, name)
            || (tree.kind[idx] == NodeKind::Op && s.tc_self[idx] > 0);
    }

    // Children into parents, deepest first (reverse pre-order).
    for idx in (0..n).rev() {
        let p = tree.parent[idx];
        if p == NONE || tree.is_merged(idx) {
            continue;
        }
        let r = tree.rep[p as usize] as usize;
        s.device_total[r] += s.device_total[idx];
        s.tc_total[r] += s.tc_total[idx];
        if s.eligible[idx] && tree.kind[r] == NodeKind::Op {
            s.eligible[r] = true;
        }
    }
    s
}
