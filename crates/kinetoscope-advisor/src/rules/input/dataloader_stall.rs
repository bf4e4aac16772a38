//! IN001 `DataloaderStall`.
//!
//! ## What it finds
//! Steps that spend a large share of their time waiting for the next batch: the
//! DataLoader part of the overview's step breakdown (`kinetoscope overview`), i.e. the
//! time inside the DataLoader iterator's `__next__` spans (`enumerate(DataLoader)#…
//! __next__`) during which no GPU work, communication or runtime call runs.
//!
//! ## Why it matters
//! While the training loop waits for data, nothing else runs on the host and the GPU
//! drains. This time is entirely recoverable by loading the next batch in the
//! background.
//!
//! ## Evidence
//! The iterator class (single-process vs multi-process), calls and time per step, the
//! per-step times.
//!
//! ## Fix
//! `DataLoader(num_workers>0, pin_memory=True, persistent_workers=True,
//! prefetch_factor=…)`; move decoding and augmentation to workers or the GPU; faster
//! storage formats; check `collate_fn`.
//!
//! ## Thresholds and sources
//! Warning at ≥ 5 % of step time (the TensorBoard plugin's DataLoader recommendation,
//! over the same breakdown part); critical at ≥ 20 % (TraceML `INPUT_BOUND`), with ≥ 2
//! steps for a warning and ≥ 20 for critical (TraceML).

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct DataloaderStall;

static META: RuleMeta = RuleMeta {
    code: "IN001",
    name: "DataloaderStall",
    family: "input",
    since: "0.1.0",
    summary: "Steps wait for the DataLoader",
};

/// Whether a span is a DataLoader fetch (the plugin's prefix/suffix match).
pub fn is_dataloader(name: &str) -> bool {
    name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")
        || name.starts_with("enumerate(DataPipe)#")
}

impl Rule for DataloaderStall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let ev = facts.events(
            &[CategoryKind::UserAnnotation, CategoryKind::CpuOp],
            is_dataloader,
        );
        let ev = facts.outermost(&ev);
        let Some(avg) = facts.overview.average.as_ref() else {
            return Vec::new();
        };
        if ev.is_empty() || facts.n_steps() == 0 {
            return Vec::new();
        }
        // The breakdown's DataLoader part: per step, its mean and its share of the mean
        // step.
        let per: Vec<i64> = facts
            .overview
            .steps
            .iter()
            .map(|s| s.breakdown_ns.dataloader)
            .collect();
        let calls = facts.per_step_count(&ev);
        let mean = avg.breakdown_ns.dataloader;
        let step = avg.dur_ns;
        let share = 100.0 * avg.share.dataloader;
        let th = &config.dataloader_stall;
        if share < th.warning_pct {
            return Vec::new();
        }
        let severity = if share >= th.critical_pct {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let seen = per
            .iter()
            .zip(facts.steps.iter())
            .filter(|(v, s)| 100.0 * **v as f64 / s.dur_ns().max(1) as f64 >= th.warning_pct)
            .count();
        let mut names: Vec<&str> = ev.iter().map(|&i| facts.name(i)).collect();
        names.sort_unstable();
        names.dedup();
        let single = names
            .iter()
            .any(|n| n.contains("_SingleProcessDataLoaderIter"));
        let total_calls: u64 = calls.iter().sum();
        let mut evidence = vec![
            format!(
                "{}: {:.2} ms per step ({:.1} % of a {:.2} ms step), {:.1} calls per step",
                names.join(", "),
                ms(mean),
                share,
                ms(step),
                total_calls as f64 / calls.len() as f64
            ),
            format!("per step: {}", step_list_ms(&per)),
        ];
        if single {
            evidence.push(
                "_SingleProcessDataLoaderIter: batches are loaded in the training process \
                 (num_workers=0)"
                    .to_owned(),
            );
        }
        let fix = if single {
            "Load batches in background workers: DataLoader(num_workers=4 or more, \
             pin_memory=True, persistent_workers=True); move decoding/augmentation out of \
             __getitem__ or onto the GPU."
        } else {
            "Give the DataLoader more throughput: raise num_workers and prefetch_factor, \
             persistent_workers=True, pin_memory=True; profile the Dataset's __getitem__ \
             and collate_fn; use a faster storage format."
        };
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("Data loading takes {share:.1} % of each step"),
                severity,
                impact_ns: mean,
                steps_seen: seen,
                evidence,
                fix: fix.to_owned(),
                details: format!(
                    "DataLoader share {share:.1} % of the step breakdown ≥ warning {} % \
                     (torch-tb-profiler) / critical {} % (TraceML INPUT_BOUND). Impact: the \
                     whole wait, recoverable by loading in the background.",
                    th.warning_pct, th.critical_pct
                ),
            },
        )]
    }
}
