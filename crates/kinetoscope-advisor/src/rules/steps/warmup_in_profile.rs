//! ST002 `WarmupInProfile`.
//!
//! ## What it finds
//! Warm-up inside the profiled steps: the first step much slower than the others, or
//! compilation and autotuning in it (`Torch-Compiled Region`, `CompiledFunction`,
//! Triton / inductor compilation, cuDNN / cuBLAS autotuning).
//!
//! ## Why it matters
//! One-off costs inflate the averages every other view shows; the profile then
//! describes start-up rather than steady state.
//!
//! ## Evidence
//! The first step's time vs the median of the others; compile events seen.
//!
//! ## Fix
//! `torch.profiler.schedule(skip_first=…, wait=1, warmup=1, active=…)`; run a few steps
//! before profiling; for `torch.compile`, warm up every shape first.
//!
//! ## Thresholds and sources
//! First step ≥ 1.5× the median of the others (`warmup.first_step_ratio`; proposal —
//! no reference tool gives a ratio); ≥ 3 steps.

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use kinetoscope_analysis::stats::DurationStats;

use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct WarmupInProfile;

static META: RuleMeta = RuleMeta {
    code: "ST002",
    name: "WarmupInProfile",
    family: "steps",
    since: "0.1.0",
    summary: "Warm-up or compilation inside the profiled steps",
};

fn is_compile(name: &str) -> bool {
    name.starts_with("Torch-Compiled Region")
        || name.starts_with("TorchDynamo")
        || name.contains("compile_fx")
        || name.contains("_compile")
        || name.contains("autotune")
        || name.contains("cudnnFind")
}

impl Rule for WarmupInProfile {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_step_markers || facts.n_steps() < 3 {
            return Vec::new();
        }
        let durs: Vec<i64> = facts.steps.iter().map(|s| s.dur_ns()).collect();
        let d: Vec<f64> = durs.iter().map(|x| *x as f64).collect();
        let med = DurationStats::of(&durs[1..]).map_or(0.0, |s| s.median_ns);
        let ratio = d[0] / med.max(1.0);
        let compile = facts.events(
            &[
                CategoryKind::UserAnnotation,
                CategoryKind::CpuOp,
                CategoryKind::PythonFunction,
            ],
            is_compile,
        );
        let compile_first: Vec<usize> = compile
            .into_iter()
            .filter(|&i| facts.step_of_event(i) == Some(0))
            .collect();
        if ratio < config.warmup.first_step_ratio {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let mut evidence = vec![format!(
            "{}: {:.2} ms vs median {:.2} ms of the other {} steps ({ratio:.1}×)",
            facts.steps[0].name,
            ms(d[0]),
            ms(med),
            facts.n_steps() - 1
        )];
        let mut names: Vec<&str> = compile_first.iter().map(|&i| facts.name(i)).collect();
        names.sort_unstable();
        names.dedup();
        if !names.is_empty() {
            evidence.push(format!(
                "compilation in the first step: {}",
                names.join(", ")
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "First profiled step is {ratio:.1}× slower than the others (warm-up)"
                ),
                severity: Severity::Info,
                impact_ns: (d[0] - med).max(0.0) / n,
                steps_seen: 1,
                evidence,
                fix: "Profile steady state: torch.profiler.schedule(skip_first=10, wait=1, \
                      warmup=2, active=5), or run a few steps (every input shape, with \
                      torch.compile) before starting the profiler."
                    .to_owned(),
                details: format!(
                    "First step ≥ {}× the median (warmup.first_step_ratio, \
                     proposal). Impact: its excess over the median, spread over \
                     the profiled steps — a profiling artefact, not a training cost.",
                    config.warmup.first_step_ratio
                ),
            },
        )]
    }
}
