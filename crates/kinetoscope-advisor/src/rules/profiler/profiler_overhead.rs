//! PF001 `ProfilerOverhead`.
//!
//! ## What it finds
//! Profiler settings that inflate the trace and the measured times: `with_stack`,
//! `record_shapes` and `profile_memory` all on, or CUPTI's own overhead events
//! (`overhead`, `Activity Buffer Request`) inside the steps. CUPTI's `Lazy Function
//! Loading` events are not counted: CUDA loads a kernel's module on its first launch
//! whether a profiler runs or not.
//!
//! ## Why it matters
//! Python stack tracing and shape recording add host time to every operator, so host
//! times and GPU idle are overstated, and traces get large and slow to open.
//!
//! ## Evidence
//! The options on, events per step, overhead time per step.
//!
//! ## Fix
//! Record what the question needs: `with_stack` only when looking for the code behind
//! an operator, `profile_memory` only for memory questions; keep `active` steps few.
//!
//! ## Thresholds and sources
//! All three options on (the pattern of nanochat's profiling pull request, which records
//! with every option), or overhead events present. Always info.

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct ProfilerOverhead;

/// CUPTI's overhead event for CUDA's lazy module loading (`CUDA_MODULE_LOADING=LAZY`):
/// the first launch of a kernel loads its module, with or without a profiler.
fn is_lazy_loading(name: &str) -> bool {
    name == "Lazy Function Loading"
}

static META: RuleMeta = RuleMeta {
    code: "PF001",
    name: "ProfilerOverhead",
    family: "profiler",
    since: "0.1.0",
    summary: "Profiler settings that inflate the trace",
};

impl Rule for ProfilerOverhead {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let t = facts.trace;
        let opts = &t.meta.profiler_options;
        let all_on = ["with_stack", "record_shapes", "profile_memory"]
            .iter()
            .all(|o| opts.iter().any(|x| x == o));
        // CUDA's lazy module loading (a kernel's module loaded on its first launch) is
        // recorded as an overhead event, but it is the runtime's, not the profiler's.
        let overhead = facts.events(&[CategoryKind::Overhead], |n| !is_lazy_loading(n));
        let overhead: Vec<usize> = overhead
            .into_iter()
            .filter(|&i| facts.step_of_event(i).is_some())
            .collect();
        if !all_on && overhead.is_empty() {
            return Vec::new();
        }
        let n = facts.n_steps().max(1) as f64;
        let per = facts.per_step_ns(&overhead);
        let time = per.iter().sum::<i64>() as f64 / n;
        let mut evidence = vec![format!(
            "profiler options on: {}; {:.0} events per step",
            if opts.is_empty() {
                "(none recorded)".to_owned()
            } else {
                opts.join(", ")
            },
            t.report.elements as f64 / n
        )];
        if !overhead.is_empty() {
            evidence.push(format!(
                "{} profiler overhead events in the steps, {:.3} ms per step",
                overhead.len(),
                ms(time)
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: "Profiler settings inflate the trace and host times".to_owned(),
                severity: Severity::Info,
                impact_ns: time,
                steps_seen: facts.n_steps(),
                evidence,
                fix: "Turn on only what the question needs: with_stack=False unless you need the \
                      code behind an operator, profile_memory=False unless it is a memory \
                      question; keep the active window short."
                    .to_owned(),
                details: "with_stack + record_shapes + profile_memory all on, or CUPTI overhead \
                          events. Impact: overhead events only; the \
                          per-operator cost of the options is not measurable from the trace."
                    .to_owned(),
            },
        )]
    }
}
