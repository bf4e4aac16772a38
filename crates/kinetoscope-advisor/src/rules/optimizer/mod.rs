//! Optimizer rules.
pub mod slow_optimizer_step;
pub mod unfused_optimizer;

use crate::facts::Facts;
use kinetoscope_trace::CategoryKind;

/// `Optimizer.step#<Name>.step` spans (outermost), with their per-step time.
pub(crate) fn optimizer_steps(facts: &Facts) -> (Vec<usize>, Vec<i64>) {
    let ev = facts.events(&[CategoryKind::UserAnnotation, CategoryKind::CpuOp], |n| {
        n.starts_with("Optimizer.step#")
    });
    let ev = facts.outermost(&ev);
    let per = facts.per_step_ns(&ev);
    (ev, per)
}

/// Whether the optimizer already runs fused or foreach kernels (so advice does not
/// suggest them).
pub(crate) fn already_batched(facts: &Facts) -> bool {
    let (steps, _) = optimizer_steps(facts);
    matches!(
        implementation(facts, &steps).0,
        Implementation::Fused | Implementation::Foreach
    )
}

/// How `torch.optim` ran the update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Implementation {
    /// `aten::_fused_*` ops (`fused=True`), or an optimizer named fused (apex's,
    /// DeepSpeed's `FusedAdam`).
    Fused,
    /// `aten::_foreach_*` ops (`foreach=True`), or multi-tensor kernels.
    Foreach,
    /// Per-parameter element-wise ops (the for-loop implementation).
    ForLoop,
    /// No operators seen inside the step.
    Unknown,
}

/// Per-parameter element-wise ops the for-loop implementations issue.
pub(crate) const PER_PARAM_OPS: [&str; 12] = [
    "aten::add_",
    "aten::mul_",
    "aten::addcdiv_",
    "aten::addcmul_",
    "aten::lerp_",
    "aten::sqrt",
    "aten::div_",
    "aten::div",
    "aten::mul",
    "aten::add",
    "aten::sub",
    "aten::maximum",
];

/// The implementation, the number of per-parameter element-wise ops per step, and the
/// estimated number of parameter tensors (updates per step of the op that runs once
/// per parameter: `addcdiv_`, else `lerp_`, else `add_`).
pub(crate) fn implementation(facts: &Facts, steps: &[usize]) -> (Implementation, f64, f64) {
    if steps.is_empty() {
        return (Implementation::Unknown, 0.0, 0.0);
    }
    // A fused optimizer outside torch.optim (apex's, DeepSpeed's `FusedAdam`) names
    // itself, or runs the multi-tensor kernels that torch.optim's foreach and fused
    // paths use too.
    if steps.iter().any(|&s| facts.name(s).contains("Fused")) {
        return (Implementation::Fused, 0.0, 0.0);
    }
    if steps.iter().any(|&s| {
        facts
            .launched_gpu(s)
            .into_iter()
            .any(|k| facts.name(k).contains("multi_tensor_apply_kernel"))
    }) {
        return (Implementation::Foreach, 0.0, 0.0);
    }
    let set: rustc_hash::FxHashSet<usize> = steps.iter().copied().collect();
    // Only the operators counted below: their names are tested once each, and only
    // their events are searched up the nesting.
    let ops = facts.events(&[CategoryKind::CpuOp], |n| {
        n.starts_with("aten::_fused_")
            || n.starts_with("aten::_foreach_")
            || PER_PARAM_OPS.contains(&n)
    });
    let (mut fused, mut foreach, mut per_param) = (0u64, 0u64, 0u64);
    let mut by_name: rustc_hash::FxHashMap<&str, u64> = Default::default();
    let mut in_step = facts.ancestor_search(|a| set.contains(&a));
    for i in ops {
        if !in_step.any(i) {
            continue;
        }
        let n = facts.name(i);
        if n.starts_with("aten::_fused_") {
            fused += 1;
        } else if n.starts_with("aten::_foreach_") {
            foreach += 1;
        } else if PER_PARAM_OPS.contains(&n) {
            // On a GPU run, an op that launched nothing worked on CPU scalars (a step
            // counter), not on a parameter.
            if facts.has_gpu && facts.launched_gpu(i).is_empty() {
                continue;
            }
            per_param += 1;
            *by_name.entry(n).or_default() += 1;
        }
    }
    let n = steps.len() as f64;
    let params = ["aten::addcdiv_", "aten::lerp_", "aten::add_"]
        .iter()
        .find_map(|k| by_name.get(k).copied())
        .unwrap_or(0) as f64
        / n;
    let imp = if fused > 0 {
        Implementation::Fused
    } else if foreach > 0 {
        Implementation::Foreach
    } else if per_param > 0 {
        Implementation::ForLoop
    } else {
        Implementation::Unknown
    };
    (imp, per_param as f64 / n, params)
}
