//! Which calls the perf model measures, and their kernel time.
//!
//! A call of a modelled operator ([`super::family::formula`]) is a *unit* when no
//! call below it is modelled in the same family and no call above it is a unit: the
//! innermost modelled call of a family stands for the work (`aten::linear` →
//! `aten::addmm`, `aten::matmul` → `aten::bmm`), and a call of another family inside a
//! unit is part of it (the `fill_` inside a ROCm flash attention), so nested calls never
//! count twice.
//! A unit's kernel time is the busy time (union of intervals) of every kernel, memcpy
//! and memset launched in its subtree (autograd nodes are not modelled, so the GEMMs
//! under `MmBackward0` are units). GPU work launched outside every unit is measured on
//! its direct launcher. GPU work without a launch record is in no call.

use kinetoscope_trace::{sort_runs_by_key, CategoryKind, StrId, Trace};
use rustc_hash::FxHashMap;

use crate::ops::launch::ROOT;
use crate::ops::names::NameFlags;
use crate::ops::tree::{NodeKind, NodeTree, NONE};
use crate::overview::tensor_cores::uses_tensor_cores;

use super::family::{family_of, formula};

/// Per node of the operator tree: whether it is measured and what it measured.
pub(crate) struct Measured {
    /// Whether the node is a unit (module docs).
    pub unit: Vec<bool>,
    /// Busy time of the GPU work the node is measured with, ns (0 for nodes measured
    /// with nothing).
    pub busy_ns: Vec<i64>,
    /// Whether some of that work ran on tensor/matrix cores.
    pub tensor_cores: Vec<bool>,
    /// Whether the node launched GPU work outside every unit (a row of its own).
    pub direct: Vec<bool>,
}

/// Decide the units of `tree` and measure them with the GPU activities `keep_gpu` keeps.
pub(crate) fn measure(
    trace: &Trace,
    tree: &NodeTree,
    keep_gpu: &dyn Fn(usize) -> bool,
) -> Measured {
    let e = &trace.events;
    let n = tree.len();
    // The family bit of each modelled call (0 for the rest), decided once per name.
    let mut by_name: FxHashMap<StrId, u16> = FxHashMap::default();
    let fam_bit: Vec<u16> = (0..n)
        .map(|i| {
            if tree.kind[i] != NodeKind::Op {
                return 0;
            }
            let name = e.name[tree.event[i] as usize];
            *by_name.entry(name).or_insert_with(|| {
                let text = trace.strings.get(name);
                formula(text).map_or(0, |_| 1 << (family_of(text) as u16))
            })
        })
        .collect();
    // Children come after their parent in pre-order: a reverse pass lifts the families
    // modelled below to every ancestor.
    let mut below = vec![0u16; n];
    for i in (0..n).rev() {
        let p = tree.parent[i];
        if p != NONE {
            below[p as usize] |= below[i] | fam_bit[i];
        }
    }
    // A unit: modelled, no call of its family below, no unit above. `owner`: the unit
    // each node is inside (itself included), in pre-order.
    let mut unit = vec![false; n];
    let mut owner = vec![NONE; n];
    for i in 0..n {
        let above = match tree.parent[i] {
            NONE => NONE,
            p => owner[p as usize],
        };
        unit[i] = above == NONE && fam_bit[i] != 0 && below[i] & fam_bit[i] == 0;
        owner[i] = if unit[i] { i as u32 } else { above };
    }
    let mut tc = NameFlags::new(&trace.strings, uses_tensor_cores);
    let mut m = Measured {
        unit,
        busy_ns: vec![0; n],
        tensor_cores: vec![false; n],
        direct: vec![false; n],
    };
    // (measured node, start, end) of every GPU activity with a launcher.
    let mut spans: Vec<(u32, i64, i64)> = Vec::new();
    for d in tree.device_work(trace) {
        let (i, node) = (d.event as usize, d.node);
        if node >= ROOT || !keep_gpu(i) {
            continue;
        }
        let kind = trace.categories.kind(e.cat[i]);
        let target = match owner[node as usize] {
            NONE => {
                m.direct[node as usize] = true;
                node
            }
            u => u,
        };
        if kind == CategoryKind::Kernel && tc.get(&trace.strings, e.name[i]) {
            m.tensor_cores[target as usize] = true;
        }
        spans.push((
            target,
            e.ts_ns[i],
            e.ts_ns[i].saturating_add(e.dur_ns.at(i).max(0)),
        ));
    }
    // Activities come in long runs of rising launchers: merged (equal items are
    // alike, so a stable merge gives the order of any sort).
    sort_runs_by_key(&mut spans, |&s| s);
    let mut at = 0;
    while at < spans.len() {
        let node = spans[at].0;
        let (mut busy, mut open_start, mut open_end) = (0i64, spans[at].1, spans[at].2);
        while at < spans.len() && spans[at].0 == node {
            let (_, s, end) = spans[at];
            if s > open_end {
                busy = busy.saturating_add(open_end.saturating_sub(open_start));
                open_start = s;
            }
            open_end = open_end.max(end);
            at += 1;
        }
        busy = busy.saturating_add(open_end.saturating_sub(open_start));
        m.busy_ns[node as usize] = busy;
    }
    m
}
