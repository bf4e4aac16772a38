//! ST001 `StepTimeVariance`.
//!
//! ## What it finds
//! Step times that vary a lot: the coefficient of variation (population σ / mean) of
//! the step durations above 10 %.
//!
//! ## Why it matters
//! Identical steps should take the same time. Variation points at intermittent work
//! (periodic logging, checkpointing, evaluation, garbage collection), input-dependent
//! shapes, or contention (other processes, thermal throttling); in distributed runs
//! every rank waits for the slowest step.
//!
//! ## Evidence
//! Mean, median, min and max step time; the slowest steps.
//!
//! ## Fix
//! Find what the slow steps do differently (`kinetoscope overview --sort total`); move
//! periodic work out of the profiled window or make it asynchronous; bucket input
//! shapes.
//!
//! ## Thresholds and sources
//! CV > 10 % (`step_time_variance.warning_cv_pct`; the TensorBoard-era checklist in
//! docs/users.md), with ≥ 3 steps. The first step is left out when `WarmupInProfile`
//! would flag it.

use crate::config::Config;
use crate::facts::{median, ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct StepTimeVariance;

static META: RuleMeta = RuleMeta {
    code: "ST001",
    name: "StepTimeVariance",
    family: "steps",
    since: "0.1.0",
    summary: "Step time varies a lot between steps",
};

impl Rule for StepTimeVariance {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let th = &config.step_time_variance;
        if !facts.has_step_markers || facts.n_steps() < th.min_steps {
            return Vec::new();
        }
        let all: Vec<f64> = facts.steps.iter().map(|s| s.dur_ns() as f64).collect();
        // Leave out a warm-up first step (reported by WarmupInProfile).
        let skip = usize::from(
            all.len() > th.min_steps
                && all[0] >= config.warmup.first_step_ratio * median(&all[1..]),
        );
        let d = &all[skip..];
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        let cv = 100.0 * sd / mean.max(1.0);
        if cv <= th.warning_cv_pct {
            return Vec::new();
        }
        let med = median(d);
        let excess: f64 = d.iter().map(|x| (x - med).max(0.0)).sum::<f64>() / n;
        let mut slow: Vec<(usize, f64)> =
            d.iter().enumerate().map(|(i, x)| (i + skip, *x)).collect();
        slow.sort_by(|a, b| b.1.total_cmp(&a.1));
        let seen = d
            .iter()
            .filter(|x| (**x - med).abs() > med * th.warning_cv_pct / 100.0)
            .count();
        let min = d.iter().copied().fold(f64::INFINITY, f64::min);
        let max = d.iter().copied().fold(0.0, f64::max);
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("Step time varies by {cv:.1} % (coefficient of variation)"),
                severity: Severity::Warning,
                impact_ns: excess,
                steps_seen: seen,
                evidence: vec![
                    format!(
                        "{} steps: mean {:.2} ms, median {:.2} ms, min {:.2} ms, max {:.2} ms",
                        d.len(),
                        ms(mean),
                        ms(med),
                        ms(min),
                        ms(max)
                    ),
                    format!(
                        "slowest: {}",
                        slow.iter()
                            .take(3)
                            .map(|(i, x)| format!("{} {:.2} ms", facts.steps[*i].name, ms(*x)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ],
                fix: "Compare the slowest steps with the median one (kinetoscope overview \
                      --sort total): move periodic work (logging, checkpointing, evaluation, \
                      gc) out of the loop or make it asynchronous; bucket variable input shapes."
                    .to_owned(),
                details: format!(
                    "CV {cv:.1} % > {} % (step_time_variance.warning_cv_pct; TensorBoard-era \
                     checklist, docs/users.md).{} Impact: mean excess of steps over the median.",
                    th.warning_cv_pct,
                    if skip == 1 {
                        " First step excluded (warm-up)."
                    } else {
                        ""
                    }
                ),
            },
        )]
    }
}
