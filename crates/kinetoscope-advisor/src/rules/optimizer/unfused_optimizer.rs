//! OP001 `UnfusedOptimizer`.
//!
//! ## What it finds
//! `torch.optim` steps (`Optimizer.step#<Name>.step`) run by the for-loop
//! implementation: one small element-wise operator (and kernel) per parameter tensor
//! and per update term (`aten::add_`, `mul_`, `addcdiv_`, `lerp_`, `sqrt`, …), with no
//! `aten::_foreach_*` or `aten::_fused_*` operators, no multi-tensor kernels
//! (`multi_tensor_apply_kernel`) and no optimizer named fused (apex's or DeepSpeed's
//! `FusedAdam`). On a GPU run, an operator that launched no kernel (a step counter on
//! a CPU scalar) is not a per-parameter update.
//!
//! ## Why it matters
//! Each of those operators costs a dispatch and a kernel launch (5–20 µs of host time;
//! HTA). With hundreds of parameter tensors the update becomes launch-bound and can
//! take longer than forward and backward together. `foreach=True` batches them into a
//! few multi-tensor kernels, `fused=True` into one per parameter group.
//!
//! ## Evidence
//! The optimizer, its time and share of the step, element-wise operators per step and
//! the estimated number of parameter tensors.
//!
//! ## Fix
//! The optimizer's own batched implementation, named by its class:
//! `torch.optim.<Class>(params, fused=True)` where the class has one, else
//! `foreach=True`; or `torch.compile` of the optimizer step.
//!
//! ## Thresholds and sources
//! Warning when the for-loop step takes ≥ 10 % of step time
//! (`optimizer.unfused_warning_pct`; proposal), else info.

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::optimizer::{implementation, optimizer_steps, Implementation};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct UnfusedOptimizer;

static META: RuleMeta = RuleMeta {
    code: "OP001",
    name: "UnfusedOptimizer",
    family: "optimizer",
    since: "0.1.0",
    summary: "Optimizer step runs one small kernel per parameter (for-loop implementation)",
};

impl Rule for UnfusedOptimizer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let (ev, per) = optimizer_steps(facts);
        let (imp, ops_per_step, params) = implementation(facts, &ev);
        if imp != Implementation::ForLoop || facts.n_steps() == 0 {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let mean = per.iter().sum::<i64>() as f64 / n;
        let step = facts.mean_step_ns();
        let share = 100.0 * mean / step.max(1.0);
        let seen = per.iter().filter(|v| **v > 0).count();
        let severity = if share >= config.optimizer.unfused_warning_pct {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut names: Vec<&str> = ev.iter().map(|&i| facts.name(i)).collect();
        names.sort_unstable();
        names.dedup();
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "Optimizer runs the for-loop implementation: {ops_per_step:.0} element-wise \
                     ops per step, {share:.1} % of step time"
                ),
                severity,
                impact_ns: mean,
                steps_seen: seen,
                evidence: vec![
                    format!(
                        "{}: {:.2} ms per step ({share:.1} % of a {:.2} ms step)",
                        names.join(", "),
                        ms(mean),
                        ms(step)
                    ),
                    format!(
                        "{ops_per_step:.0} per-parameter element-wise ops per step for ≈{params:.0} \
                         parameter tensors ({:.1} per tensor); no aten::_foreach_* or \
                         aten::_fused_* ops",
                        if params > 0.0 { ops_per_step / params } else { 0.0 }
                    ),
                    format!("optimizer time per step: {}", step_list_ms(&per)),
                ],
                fix: fix_for(&names),
                details: format!(
                    "For-loop optimizer; warning from {} % of step time \
                     (optimizer.unfused_warning_pct; proposal). Impact: \
                     the whole optimizer step (upper bound; a fused step still takes some time).",
                    config.optimizer.unfused_warning_pct
                ),
            },
        )]
    }
}

/// The fix, in the words of the optimizer class the steps name (`Optimizer.step#<Class>.step`).
fn fix_for(steps: &[&str]) -> String {
    let class = match steps {
        [one] => one
            .strip_prefix("Optimizer.step#")
            .and_then(|s| s.strip_suffix(".step"))
            .filter(|c| {
                !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            }),
        _ => None,
    };
    match class {
        Some(c) => format!(
            "Use {c}'s batched implementation: torch.optim.{c}(params, fused=True) where \
             {c} has one, else foreach=True — or torch.compile the optimizer step."
        ),
        None => "Use the optimizer's batched implementation: fused=True where the optimizer \
                 has one (Adam, AdamW, SGD, …), else foreach=True — or torch.compile the \
                 optimizer step."
            .to_owned(),
    }
}
