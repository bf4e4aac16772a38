//! Memory categories inferred from a trace recorded with `profile_memory=True`.
//!
//! PyTorch's own memory timeline (`export_memory_timeline`) labels tensors from a
//! data-flow graph of tensor ids and versions (`torch.profiler._memory_profiler`) that is
//! not in the Chrome trace. kinetoscope has only each allocation's size, address, time and the
//! operator it happened in, so it labels allocations by **lifetime relative to the
//! training phases** instead. Each memory record's phase comes from the operators
//! around it: inside `Optimizer.step*` → optimizer; inside `Optimizer.zero_grad*` →
//! zero-grad; inside an autograd backward node (`autograd::engine::evaluate_function`,
//! a name containing `Backward`, `AccumulateGrad`) → backward; inside any other operator
//! → forward; outside every operator → other. Then, for an allocation paired with its
//! free by address ([`super::events`]):
//!
//! 1. allocated under `AccumulateGrad` → **gradient**;
//! 2. freed inside the operator call that allocated it → **temporary**;
//! 3. allocated in the optimizer: freed within the same `Optimizer.step` call →
//!    **temporary**, else (it outlives the step) → **optimizer_state**;
//! 4. allocated in backward: freed in the same backward pass → **autograd_detail**,
//!    else (alive into the optimizer or later) → **gradient**;
//! 5. allocated in forward → **activation**;
//! 6. anything else → **unknown**.
//!
//! A free whose allocation was not recorded (allocated before profiling) counts from the
//! start until that free: as a **gradient** when freed by `Optimizer.zero_grad`, else
//! **unknown**. Memory allocated before profiling and never freed (parameters, inputs
//! and optimizer state of earlier steps) is invisible except through the recorded
//! `Total Allocated`; that difference is the **untracked** column. Inputs are not told
//! apart from activations (no data flow), so **input** stays 0.

use std::collections::HashMap;

use kinetoscope_trace::TIMELINE_CATEGORIES;
use serde::{Deserialize, Serialize};

use super::timeline::{CategoryPoint, CategorySeries};
use super::{MemoryRecord, OpForest};

/// Column indexes, matching [`TIMELINE_CATEGORIES`].
const OPTIMIZER_STATE: usize = 1;
const TEMPORARY: usize = 3;
const ACTIVATION: usize = 4;
const GRADIENT: usize = 5;
const AUTOGRAD_DETAIL: usize = 6;
const UNKNOWN: usize = 7;
/// The extra column: allocated before profiling, never freed (from `Total Allocated`).
const UNTRACKED: usize = 8;

/// The training phase a memory record happened in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Any operator outside the phases below.
    Forward,
    /// An autograd backward node.
    Backward,
    /// `Optimizer.zero_grad*`.
    ZeroGrad,
    /// `Optimizer.step*`.
    Optimizer,
    /// Outside every operator.
    Other,
}

/// What an operator name says about the phase: an `Optimizer.step` call, or the class
/// it gives the records below it, and whether it is `AccumulateGrad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NameClass {
    step: bool,
    class: Option<Phase>,
    accumulate: bool,
}

fn name_class(name: &str) -> NameClass {
    let (step, class, accumulate) = if name.starts_with("Optimizer.step") {
        (true, None, false)
    } else if name.starts_with("Optimizer.zero_grad") {
        (false, Some(Phase::ZeroGrad), false)
    } else if name.contains("AccumulateGrad") {
        (false, Some(Phase::Backward), true)
    } else if name.starts_with("autograd::engine::evaluate_function") || name.contains("Backward") {
        (false, Some(Phase::Backward), false)
    } else {
        (false, None, false)
    };
    NameClass {
        step,
        class,
        accumulate,
    }
}

/// What the calls from an operator call up to its root say, folded parents first: the
/// outermost `Optimizer.step` call, the innermost class, and whether any is
/// `AccumulateGrad`.
#[derive(Clone, Copy, Debug, Default)]
struct Context {
    step: Option<u32>,
    class: Option<Phase>,
    accumulate: bool,
}

/// The context of every call of the forest, in one pass (names classified once each).
fn contexts(ops: &OpForest) -> Vec<Context> {
    let mut by_name: Vec<Option<NameClass>> = vec![None; ops.names.len()];
    ops.fold_down(|name, parent: Option<&Context>, node| {
        let own =
            *by_name[name as usize].get_or_insert_with(|| name_class(&ops.names[name as usize]));
        let parent = parent.copied().unwrap_or_default();
        Context {
            step: parent.step.or(own.step.then_some(node)),
            class: own.class.or(parent.class),
            accumulate: parent.accumulate || own.accumulate,
        }
    })
}

/// The phase of a record made in operator call `op`, the `Optimizer.step` call around
/// it (the outermost), and whether it is under `AccumulateGrad`: inside an
/// `Optimizer.step` the phase is the optimizer's, else the innermost call that names a
/// phase decides.
fn phase_of(contexts: &[Context], op: Option<u32>) -> (Phase, Option<u32>, bool) {
    let Some(c) = op.and_then(|o| contexts.get(o as usize)) else {
        return (Phase::Other, None, false);
    };
    let phase = match c.step {
        Some(_) => Phase::Optimizer,
        None => c.class.unwrap_or(Phase::Forward),
    };
    (phase, c.step, c.accumulate)
}

/// Categories inferred for one device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InferredCategories {
    /// Bytes per category over time: the 8 timeline categories then `untracked`.
    pub series: CategorySeries,
    /// Allocations labelled, per category (same order; `untracked` is 0).
    pub allocations: Vec<u64>,
    /// Records whose `Total Allocated` was missing, so `untracked` is 0 there.
    pub records_without_totals: u64,
    /// How the labels were inferred, in one line.
    pub method: String,
}

/// Category names of an inferred series: the timeline's 8 plus `untracked`.
pub fn category_names() -> Vec<String> {
    TIMELINE_CATEGORIES
        .iter()
        .map(|s| s.to_string())
        .chain(std::iter::once("untracked".to_owned()))
        .collect()
}

/// Infer categories for one device's time-ordered records.
pub fn infer(records: &[&MemoryRecord], ops: &OpForest, points: usize) -> InferredCategories {
    let n = records.len();
    let contexts = contexts(ops);
    let subtrees = ops.subtrees();
    let phases: Vec<(Phase, Option<u32>, bool)> =
        records.iter().map(|r| phase_of(&contexts, r.op)).collect();
    // Backward passes: a run of records not interrupted by forward/optimizer records.
    let mut pass = vec![0u32; n];
    let mut current = 0u32;
    let mut in_backward = false;
    for (k, (ph, _, _)) in phases.iter().enumerate() {
        match ph {
            Phase::Backward if !in_backward => {
                current += 1;
                in_backward = true;
            }
            Phase::Forward | Phase::Optimizer => in_backward = false,
            _ => {}
        }
        pass[k] = current;
    }
    // Pair by address; each record gets the category of its allocation.
    let mut cat_of = vec![UNKNOWN; n];
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut counts = vec![0u64; UNTRACKED + 1];
    // Pre-existing (unmatched-free) bytes per category, live from the start.
    let mut initial = vec![0i64; UNTRACKED + 1];
    let label = |a: usize, free: Option<usize>| -> usize {
        let (ph, step, accumulate) = phases[a];
        if accumulate {
            return GRADIENT;
        }
        if let Some(f) = free {
            if let (Some(outer), Some(inner)) = (records[a].op, records[f].op) {
                if subtrees.contains(outer, inner) {
                    return TEMPORARY;
                }
            }
        }
        match ph {
            Phase::Optimizer => match free {
                Some(f) if phases[f].1.is_some() && phases[f].1 == step => TEMPORARY,
                _ => OPTIMIZER_STATE,
            },
            Phase::Backward => match free {
                Some(f) if phases[f].0 == Phase::Backward && pass[f] == pass[a] => AUTOGRAD_DETAIL,
                _ => GRADIENT,
            },
            Phase::Forward => ACTIVATION,
            _ => UNKNOWN,
        }
    };
    for (k, r) in records.iter().enumerate() {
        let Some(addr) = r.addr else { continue };
        if r.bytes > 0 {
            if let Some(prev) = open.insert(addr, k) {
                let c = label(prev, None);
                cat_of[prev] = c;
                counts[c] += 1;
            }
        } else if r.bytes < 0 {
            if let Some(a) = open.remove(&addr) {
                let c = label(a, Some(k));
                cat_of[a] = c;
                cat_of[k] = c;
                counts[c] += 1;
            } else {
                let c = if phases[k].0 == Phase::ZeroGrad {
                    GRADIENT
                } else {
                    UNKNOWN
                };
                cat_of[k] = c;
                initial[c] += -r.bytes;
            }
        }
    }
    for (_, a) in open {
        let c = label(a, None);
        cat_of[a] = c;
        counts[c] += 1;
    }
    // Replay.
    let mut live = initial;
    let mut full: Vec<CategoryPoint> = Vec::with_capacity(n);
    let mut without_totals = 0u64;
    for (k, r) in records.iter().enumerate() {
        if r.addr.is_some() {
            live[cat_of[k]] += r.bytes;
        } else {
            live[UNKNOWN] += r.bytes;
        }
        match r.total_allocated {
            Some(total) => {
                let tracked: i64 = live[..UNTRACKED].iter().sum();
                live[UNTRACKED] = (total - tracked).max(0);
            }
            None => without_totals += 1,
        }
        if full
            .last()
            .is_some_and(|p: &CategoryPoint| p.ts_ns == r.ts_ns)
        {
            full.last_mut().expect("checked").bytes = live.clone();
        } else {
            full.push(CategoryPoint {
                ts_ns: r.ts_ns,
                bytes: live.clone(),
            });
        }
    }
    InferredCategories {
        series: CategorySeries::new(category_names(), full, points),
        allocations: counts,
        records_without_totals: without_totals,
        method: "lifetime relative to forward / backward / optimizer phases (kinetoscope's \
                 heuristic, not PyTorch's data-flow labels)"
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Device, OpNode};
    use super::*;

    fn forest(names: &[(&str, Option<u32>)]) -> OpForest {
        let mut f = OpForest::default();
        for (i, (n, p)) in names.iter().enumerate() {
            f.names.push(n.to_string());
            f.nodes.push(OpNode {
                name: i as u32,
                parent: *p,
            });
            f.calls.push(1);
        }
        f
    }

    fn rec(t: i64, addr: u64, bytes: i64, op: Option<u32>, total: i64) -> MemoryRecord {
        MemoryRecord {
            ts_ns: t,
            device: Device::CPU,
            addr: Some(addr),
            bytes,
            total_allocated: Some(total),
            total_reserved: None,
            op,
            module: None,
        }
    }

    #[test]
    fn labels_by_phase_and_lifetime() {
        let ops = forest(&[
            ("aten::linear", None),                                      // 0 forward
            ("autograd::engine::evaluate_function: MmBackward0", None),  // 1
            ("torch::autograd::AccumulateGrad", Some(1)),                // 2
            ("Optimizer.step#Adam.step", None),                          // 3
            ("aten::zeros_like", Some(3)),                               // 4
            ("Optimizer.zero_grad#Adam.zero_grad", None),                // 5
            ("aten::mul", Some(3)),                                      // 6
            ("autograd::engine::evaluate_function: AddBackward0", None), // 7
        ]);
        // 1000 bytes existed before profiling (parameters): untracked.
        let recs = [
            rec(1, 0xa, 100, Some(0), 1100), // activation, freed in backward
            rec(2, 0xb, 10, Some(0), 1110),  // temporary (freed in the same op)
            rec(3, 0xb, -10, Some(0), 1100),
            rec(4, 0xc, 50, Some(1), 1150), // autograd detail
            rec(5, 0xc, -50, Some(7), 1100),
            rec(6, 0xa, -100, Some(1), 1000),
            rec(7, 0xd, 30, Some(2), 1030), // gradient (AccumulateGrad)
            rec(8, 0xe, 40, Some(4), 1070), // optimizer state (never freed)
            rec(9, 0xf, 5, Some(6), 1075),  // optimizer temporary
            rec(10, 0xf, -5, Some(6), 1070),
            rec(11, 0x9, -20, Some(5), 1050), // pre-existing gradient, zero_grad
        ];
        let refs: Vec<&MemoryRecord> = recs.iter().collect();
        let inf = infer(&refs, &ops, 100);
        let s = &inf.series;
        assert_eq!(s.categories.len(), 9);
        let peak = s.peak.as_ref().unwrap();
        assert_eq!(peak.ts_ns, 4);
        assert_eq!(peak.total_bytes, 1150);
        // At t=4: 100 activation, 50 autograd detail, 20 pre-existing gradient, the rest
        // (1150 - 170) untracked.
        assert_eq!(peak.by_category, vec![0, 0, 0, 0, 100, 20, 50, 0, 980]);
        let last = s.points.last().unwrap();
        assert_eq!(last.bytes, vec![0, 40, 0, 0, 0, 30, 0, 0, 980]);
        assert_eq!(inf.allocations[TEMPORARY], 2);
        assert_eq!(inf.allocations[OPTIMIZER_STATE], 1);
        assert_eq!(inf.allocations[GRADIENT], 1);
    }
}
