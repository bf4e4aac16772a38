//! OP002 `SlowOptimizerStep`.
//!
//! ## What it finds
//! An optimizer step (`Optimizer.step#…`) that takes a large share of each step even
//! though it already uses the foreach or fused implementation (the for-loop case is
//! `UnfusedOptimizer`).
//!
//! ## Why it matters
//! The update is memory-bound work proportional to the parameter count; a large share
//! means the model is small relative to its optimizer state, or the step is run more
//! often than needed.
//!
//! ## Evidence
//! The optimizer, its time per step and share, the implementation.
//!
//! ## Fix
//! Gradient accumulation (fewer updates per sample), larger micro-batches, `fused=True`,
//! ZeRO / FSDP optimizer-state sharding across ranks.
//!
//! ## Thresholds and sources
//! Warning above 15 % of step time (`optimizer.slow_step_pct`; a proposal after common
//! profiling checklists; `UnfusedOptimizer` judges the for-loop implementation from
//! 10 %).

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::optimizer::{implementation, optimizer_steps, Implementation};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct SlowOptimizerStep;

static META: RuleMeta = RuleMeta {
    code: "OP002",
    name: "SlowOptimizerStep",
    family: "optimizer",
    since: "0.1.0",
    summary: "Optimizer step takes a large share of step time",
};

impl Rule for SlowOptimizerStep {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let (ev, per) = optimizer_steps(facts);
        if ev.is_empty() || facts.n_steps() == 0 {
            return Vec::new();
        }
        let (imp, _, _) = implementation(facts, &ev);
        if imp == Implementation::ForLoop {
            return Vec::new();
        }
        let mean = per.iter().sum::<i64>() as f64 / facts.n_steps() as f64;
        let step = facts.mean_step_ns();
        let share = 100.0 * mean / step.max(1.0);
        if share <= config.optimizer.slow_step_pct {
            return Vec::new();
        }
        let seen = per
            .iter()
            .zip(&facts.steps)
            .filter(|(v, s)| {
                100.0 * **v as f64 / s.dur_ns().max(1) as f64 > config.optimizer.slow_step_pct
            })
            .count();
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("Optimizer step takes {share:.1} % of step time"),
                severity: Severity::Warning,
                impact_ns: mean,
                steps_seen: seen,
                evidence: vec![
                    format!(
                        "{}: {:.2} ms per step ({share:.1} %), implementation {:?}",
                        facts.name(ev[0]),
                        ms(mean),
                        imp
                    ),
                    format!("per step: {}", step_list_ms(&per)),
                ],
                fix: "Update less often per sample (gradient accumulation, larger \
                      micro-batches), use fused=True, or shard optimizer state (ZeRO / FSDP)."
                    .to_owned(),
                details: format!(
                    "Optimizer share {share:.1} % > {} % (optimizer.slow_step_pct; \
                     proposal).",
                    config.optimizer.slow_step_pct
                ),
            },
        )]
    }
}
