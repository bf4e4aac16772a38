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
//! CV > 10 % (`step_time_variance.warning_cv_pct`; a proposal after common profiling
//! checklists), with ≥ 3 steps; the statistics are `kinetoscope summary`'s. The first
//! step is left out when `WarmupInProfile` would flag it.

use crate::config::Config;
use kinetoscope_analysis::stats::DurationStats;

use crate::facts::{ms, Facts};
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
        let durs: Vec<i64> = facts.steps.iter().map(|s| s.dur_ns()).collect();
        // Leave out a warm-up first step (reported by WarmupInProfile).
        let rest_median = DurationStats::of(&durs[1..]).map_or(0.0, |s| s.median_ns);
        let skip = usize::from(
            durs.len() > th.min_steps
                && durs[0] as f64 >= config.warmup.first_step_ratio * rest_median,
        );
        let Some(st) = DurationStats::of(&durs[skip..]) else {
            return Vec::new();
        };
        let cv = 100.0 * st.cv;
        if cv <= th.warning_cv_pct {
            return Vec::new();
        }
        let d: Vec<f64> = durs[skip..].iter().map(|x| *x as f64).collect();
        let n = d.len() as f64;
        let med = st.median_ns;
        let excess: f64 = d.iter().map(|x| (x - med).max(0.0)).sum::<f64>() / n;
        let mut slow: Vec<(usize, f64)> =
            d.iter().enumerate().map(|(i, x)| (i + skip, *x)).collect();
        slow.sort_by(|a, b| b.1.total_cmp(&a.1));
        let seen = d
            .iter()
            .filter(|x| (**x - med).abs() > med * th.warning_cv_pct / 100.0)
            .count();
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
                        st.count,
                        ms(st.mean_ns),
                        ms(med),
                        ms(st.min_ns as f64),
                        ms(st.max_ns as f64)
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
                    "CV {cv:.1} % > {} % (step_time_variance.warning_cv_pct; proposal).{} \
                     Impact: mean excess of steps over the median.",
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
