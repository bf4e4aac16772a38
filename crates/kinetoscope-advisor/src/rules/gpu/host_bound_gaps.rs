//! GP005 `HostBoundGaps`.
//!
//! ## What it finds
//! GPU idle time caused by the host: HTA's host-wait gaps, with all streams taken as one
//! queue — the GPU had finished all its work and the next kernel or copy was launched
//! only afterwards (on one stream, `kinetoscope idle`'s `host_wait`) — up to the end of
//! that launch call (what follows it the GPU had the work queued: it waited on another
//! stream, on work outside the trace or on a clock offset, not on the host), with what
//! the launching thread was executing during the gaps.
//!
//! ## Why it matters
//! These gaps are pure host overhead — Python, per-op dispatch, data handling, syncs —
//! that the GPU waits through. They are what CUDA graphs, `torch.compile`, and moving
//! work off the training thread recover.
//!
//! ## Evidence
//! Host-wait time per step, its share of the step, gaps per step, and what the
//! launching thread executed during the gaps, by time: the innermost operator,
//! annotation (DataLoader fetches, `record_function` ranges) or user Python frame
//! running at each instant.
//!
//! ## Fix
//! Remove per-step Python work from the hot loop (logging, `.item()`, metric
//! computation), vectorise, move preprocessing to DataLoader workers, `torch.compile`,
//! CUDA graphs for launch-bound phases (extend the captured region when graphs already
//! replay part of the step; replay the compiled kernels from graphs when the steps
//! already run `torch.compile`'s kernels); `py-spy --native` on the live process for the Python
//! side.
//!
//! ## Thresholds and sources
//! Host-wait idle ≥ 15 % of step time (TraceLens Agent flags idle > 15 %); the host-wait
//! class is HTA's idle-time breakdown (`get_idle_time_breakdown`); a gap that spans a
//! step boundary counts in each step for its part there. `host_bound_gaps.*`.

use std::collections::BTreeMap;

use crate::config::Config;
use kinetoscope_analysis::name_memo::NameMemo;
use kinetoscope_analysis::Measure;
use kinetoscope_trace::StrId;
use rustc_hash::FxHashMap;

use crate::facts::{ms, AncestorSearch, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::input::dataloader_stall::is_dataloader;
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct HostBoundGaps;

static META: RuleMeta = RuleMeta {
    code: "GP005",
    name: "HostBoundGaps",
    family: "gpu",
    since: "0.1.0",
    summary: "GPU waits for the host between kernels",
};

/// Where the time of a gap whose launch thread is unknown goes.
const UNKNOWN_THREAD: &str = "(launch call unknown)";

/// What a part of a gap is labelled by, as name ids: the label is worded once per
/// distinct key ([`Who::label`]), not once per part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Who {
    /// The launch call is unknown.
    UnknownThread,
    /// The thread ran no span of [`Facts::host_work_in`]: Python or an idle thread.
    NoSpan,
    /// A span's name, with the name of the DataLoader fetch it runs in.
    Span(StrId, Option<StrId>),
}

impl Who {
    /// The key of a span of [`Facts::host_work_in`] (`in_dataloader` searches the
    /// nesting for a DataLoader fetch, when the trace `has_dataloader` spans; a fetch
    /// itself is named alone).
    fn of<P: FnMut(usize) -> bool, Q: FnMut(&str) -> bool>(
        facts: &Facts,
        (in_dataloader, has_dataloader): (&mut AncestorSearch<'_, P>, bool),
        dataloader_name: &mut NameMemo<'_, bool, Q>,
        who: Option<usize>,
    ) -> Self {
        let Some(i) = who else {
            return Self::NoSpan;
        };
        let name = facts.trace.events.name[i];
        if !has_dataloader || dataloader_name.get(name) {
            return Self::Span(name, None);
        }
        let dl = in_dataloader
            .nearest(i)
            .map(|dl| facts.trace.events.name[dl]);
        Self::Span(name, dl)
    }

    /// How the key is named: the span's name, with the DataLoader fetch it runs in.
    fn label(self, facts: &Facts) -> String {
        let strings = &facts.trace.strings;
        match self {
            Self::UnknownThread => UNKNOWN_THREAD.to_owned(),
            Self::NoSpan => "(no operator or annotation: Python or an idle thread)".to_owned(),
            Self::Span(name, None) => strings.get(name).to_owned(),
            Self::Span(name, Some(dl)) => {
                format!("{} in {}", strings.get(name), strings.get(dl))
            }
        }
    }
}

/// The host's part of each host-wait gap (until the launch call that ended it
/// returned), with that call: disjoint, in time order.
fn host_parts(facts: &Facts) -> Vec<(i64, i64, Option<usize>)> {
    let e = &facts.trace.events;
    facts
        .host_wait()
        .iter()
        .filter_map(|g| {
            let launch = g.launch.map(|l| l as usize);
            let end = launch.map_or(g.end_ns, |l| g.end_ns.min(e.ts_ns[l] + e.dur_ns.at(l)));
            (end > g.start_ns).then_some((g.start_ns, end, launch))
        })
        .collect()
}

/// What the launching threads executed during the parts, by label, each instant
/// counted once per step window holding it; and the parts that lie in a window.
fn work_in_steps(
    facts: &Facts,
    parts: &[(i64, i64, Option<usize>)],
) -> (u64, BTreeMap<String, i64>) {
    let e = &facts.trace.events;
    let coverage = facts.window_coverage();
    let mut in_dataloader = facts.named_ancestor_search(is_dataloader);
    let mut dataloader_name = NameMemo::new(facts.trace, is_dataloader);
    // Without a DataLoader fetch in the trace, no span runs in one: no search.
    let has_dataloader = facts.any_named(is_dataloader);
    let mut by_who: FxHashMap<Who, i64> = FxHashMap::default();
    let mut gaps = 0u64;
    for &(start, end, launch) in parts {
        let mut counted = false;
        let first = coverage.partition_point(|c| c.0 <= start).saturating_sub(1);
        for (k, &(from, windows)) in coverage.iter().enumerate().skip(first) {
            let to = coverage.get(k + 1).map_or(i64::MAX, |c| c.0);
            let (a, b) = (start.max(from), end.min(to));
            if from >= end {
                break;
            }
            if windows == 0 || a >= b {
                continue;
            }
            counted = true;
            let times = i64::from(windows);
            match launch {
                Some(l) => facts.host_work_in(e.track[l].0, a, b, |who, d| {
                    let search = (&mut in_dataloader, has_dataloader);
                    let key = Who::of(facts, search, &mut dataloader_name, who);
                    *by_who.entry(key).or_default() += d * times;
                }),
                None => *by_who.entry(Who::UnknownThread).or_default() += (b - a) * times,
            }
        }
        gaps += u64::from(counted);
    }
    let mut by_work: BTreeMap<String, i64> = BTreeMap::new();
    for (who, d) in by_who {
        *by_work.entry(who.label(facts)).or_default() += d;
    }
    (gaps, by_work)
}

impl Rule for HostBoundGaps {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        // Each part of a gap counts in the step window it lies in.
        let parts = host_parts(facts);
        let spans: Vec<(i64, i64)> = parts.iter().map(|p| (p.0, p.1)).collect();
        let measure = Measure::new(&spans);
        let per_step: Vec<i64> = facts
            .steps
            .iter()
            .map(|w| measure.len_in(w.start_ns, w.end_ns))
            .collect();
        let n = facts.n_steps() as f64;
        let mean = per_step.iter().sum::<i64>() as f64 / n;
        let step = facts.mean_step_ns();
        let share = 100.0 * mean / step.max(1.0);
        let th = &config.host_bound_gaps;
        if share < th.warning_pct {
            return Vec::new();
        }
        // What the host did in the gaps is asked only of a finding: it costs a pass
        // over every host span.
        let (gaps, by_work) = work_in_steps(facts, &parts);
        let seen = per_step
            .iter()
            .zip(&facts.steps)
            .filter(|(v, s)| 100.0 * **v as f64 / s.dur_ns().max(1) as f64 >= th.warning_pct)
            .count();
        let mut ops: Vec<(String, i64)> = by_work.into_iter().collect();
        ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut evidence = vec![
            format!(
                "{:.2} ms per step of host-wait gaps in the GPU timeline ({share:.1} % of a \
                 {:.2} ms step), {:.1} gaps per step",
                ms(mean),
                ms(step),
                gaps as f64 / n
            ),
            format!("per step: {}", step_list_ms(&per_step)),
        ];
        for (op, d) in ops.iter().take(4) {
            evidence.push(format!(
                "host in {op} while the GPU waited: {:.2} ms per step",
                ms(*d as f64 / n)
            ));
        }
        let graphs = super::graph_replay_line(facts);
        evidence.extend(graphs.clone());
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("GPU waits for the host {share:.1} % of each step"),
                severity: Severity::Warning,
                impact_ns: mean,
                steps_seen: seen,
                evidence,
                fix: format!(
                    "Take work off the training thread's critical path: no per-step Python \
                     logging or .item(), vectorise, preprocess in DataLoader workers; {}",
                    if graphs.is_some() {
                        "CUDA graphs already replay part of the step: extend the captured \
                         region to the eager launches (torch.compile mode=\"reduce-overhead\" \
                         on more of the model, fewer graph breaks)."
                    } else if crate::summary::uses_torch_compile(facts) {
                        "the model is already compiled: replay its kernels from CUDA graphs \
                         (torch.compile mode=\"reduce-overhead\") for the launch-bound parts."
                    } else {
                        "torch.compile or CUDA graphs for the launch-bound parts."
                    }
                ),
                details: format!(
                    "Host-wait idle {share:.1} % ≥ {} % of step (TraceLens Agent idle > 15 %; \
                     HTA host-wait class, as kinetoscope idle, each gap up to the end of the \
                     launch call that ended it). Impact: the host-wait gaps (part of \
                     LowGpuUtilization's idle time).",
                    th.warning_pct
                ),
            },
        )]
    }
}
