//! GP005 `HostBoundGaps`.
//!
//! ## What it finds
//! GPU idle time caused by the host: HTA's host-wait gaps, with all streams taken as one
//! queue — the GPU had finished all its work and the next kernel or copy was launched
//! only afterwards (on one stream, exactly `kinetoscope idle`'s `host_wait`) — with what
//! the launching thread was doing when the queue drained.
//!
//! ## Why it matters
//! These gaps are pure host overhead — Python, per-op dispatch, data handling, syncs —
//! that the GPU waits through. They are what CUDA graphs, `torch.compile`, and moving
//! work off the training thread recover.
//!
//! ## Evidence
//! Host-wait time per step, its share of the step, gaps per step, and the
//! host operators active at the start of the gaps, by time.
//!
//! ## Fix
//! Remove per-step Python work from the hot loop (logging, `.item()`, metric
//! computation), vectorise, move preprocessing to DataLoader workers, `torch.compile`,
//! CUDA graphs for launch-bound phases; `py-spy --native` on the live process for the
//! Python side.
//!
//! ## Thresholds and sources
//! Host-wait idle ≥ 15 % of step time (TraceLens Agent flags idle > 15 %); the host-wait
//! class is HTA's idle-time breakdown (`get_idle_time_breakdown`); `host_bound_gaps.*`.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
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

impl Rule for HostBoundGaps {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let e = &facts.trace.events;
        let mut per_step = vec![0i64; facts.n_steps()];
        let mut gaps = 0u64;
        let mut by_op: BTreeMap<String, i64> = BTreeMap::new();
        for g in facts.host_wait() {
            // A gap counts in a step when it lies inside it.
            let (Some(a), Some(b)) = (facts.step_of(g.start_ns), facts.step_of(g.end_ns - 1))
            else {
                continue;
            };
            if a != b {
                continue;
            }
            let len = g.end_ns - g.start_ns;
            per_step[a] += len;
            gaps += 1;
            let who = g
                .launch
                .and_then(|l| facts.host_op_at(e.track[l as usize].0, g.start_ns))
                .map(|o| facts.name(o).to_owned())
                .unwrap_or_else(|| "(no operator: Python or idle host)".to_owned());
            *by_op.entry(who).or_default() += len;
        }
        let n = facts.n_steps() as f64;
        let mean = per_step.iter().sum::<i64>() as f64 / n;
        let step = facts.mean_step_ns();
        let share = 100.0 * mean / step.max(1.0);
        let th = &config.host_bound_gaps;
        if share < th.warning_pct {
            return Vec::new();
        }
        let seen = per_step
            .iter()
            .zip(&facts.steps)
            .filter(|(v, s)| 100.0 * **v as f64 / s.dur_ns().max(1) as f64 >= th.warning_pct)
            .count();
        let mut ops: Vec<(String, i64)> = by_op.into_iter().collect();
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
                "host busy in {op} when the GPU queue drained: {:.2} ms per step",
                ms(*d as f64 / n)
            ));
        }
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
                fix: "Take work off the training thread's critical path: no per-step Python \
                      logging or .item(), vectorise, preprocess in DataLoader workers; \
                      torch.compile or CUDA graphs for the launch-bound parts."
                    .to_owned(),
                details: format!(
                    "Host-wait idle {share:.1} % ≥ {} % of step (TraceLens Agent idle > 15 %; \
                     HTA host-wait class, as kinetoscope idle). Impact: the host-wait gaps \
                     (part of LowGpuUtilization's idle time).",
                    th.warning_pct
                ),
            },
        )]
    }
}
