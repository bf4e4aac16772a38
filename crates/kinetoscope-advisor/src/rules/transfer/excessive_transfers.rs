//! TR002 `ExcessiveTransfers`.
//!
//! ## What it finds
//! A host–device copy direction (host→device or device→host) that takes a large share
//! of step time or happens many times per step. Device→device copies are not
//! host–device traffic and are left out.
//!
//! ## Why it matters
//! Many small copies per step (per-sample `.to(device)`, constants created on the CPU,
//! `.item()` / `.cpu()` for logging) each cost a launch and often a sync; large ones
//! compete with compute for the step.
//!
//! ## Evidence
//! Per direction: copies, bytes and time per step; the operators that issued them.
//!
//! ## Fix
//! Batch transfers, create tensors on the device (`device=`), register constants once
//! as buffers, log less often, avoid `.contiguous()` copies.
//!
//! ## Thresholds and sources
//! Time > 5 % of step time or > 10 transfers per step per direction (TraceLens; the
//! count is per step here). `transfers.*`.

use std::collections::BTreeMap;

use kinetoscope_trace::{CategoryKind, EventId};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct ExcessiveTransfers;

static META: RuleMeta = RuleMeta {
    code: "TR002",
    name: "ExcessiveTransfers",
    family: "transfer",
    since: "0.1.0",
    summary: "Too many or too long host-device copies per step",
};

fn direction(name: &str) -> Option<&'static str> {
    if name.contains("HtoD") {
        Some("HtoD")
    } else if name.contains("DtoH") {
        Some("DtoH")
    } else {
        None
    }
}

impl Rule for ExcessiveTransfers {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if facts.n_steps() == 0 {
            return Vec::new();
        }
        let t = facts.trace;
        let e = &t.events;
        let th = &config.transfers;
        let mut dirs: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for i in facts.each_event(&[CategoryKind::GpuMemcpy], |n| direction(n).is_some()) {
            if facts.step_of_event(i).is_some() {
                dirs.entry(direction(facts.name(i)).unwrap_or("?"))
                    .or_default()
                    .push(i);
            }
        }
        let n = facts.n_steps() as f64;
        let step = facts.mean_step_ns();
        let idx = t.correlation_index();
        let mut out = Vec::new();
        for (dir, ev) in dirs {
            let per = facts.per_step_ns(&ev);
            let time = per.iter().sum::<i64>() as f64 / n;
            let count = ev.len() as f64 / n;
            let share = 100.0 * time / step.max(1.0);
            if share <= th.max_share_pct && count <= th.max_per_step {
                continue;
            }
            let bytes: u64 = ev
                .iter()
                .filter_map(|&i| t.args.transfer_of(EventId(i as u32)))
                .map(|a| a.bytes)
                .sum();
            let mut callers: BTreeMap<String, u64> = BTreeMap::new();
            let mut caller = facts.callers(|_| false);
            for &i in &ev {
                let launcher = idx.launch(e.correlation.at(i)).map(|l| l.index());
                let who = launcher
                    .map(|l| caller.of(l))
                    .unwrap_or_else(|| "(unknown launcher)".to_owned());
                *callers.entry(who).or_default() += 1;
            }
            let mut callers: Vec<(String, u64)> = callers.into_iter().collect();
            callers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut evidence = vec![format!(
                "{dir}: {count:.1} copies per step, {:.1} KiB per step, {:.3} ms per step \
                 ({share:.1} % of step)",
                bytes as f64 / n / 1024.0,
                ms(time)
            )];
            evidence.extend(
                callers
                    .iter()
                    .take(3)
                    .map(|(c, k)| format!("issued by {c}: {:.1} per step", *k as f64 / n)),
            );
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Direction(dir.to_owned()),
                    title: format!("{count:.0} {dir} copies per step ({share:.1} % of step time)"),
                    severity: Severity::Warning,
                    impact_ns: time,
                    steps_seen: per.iter().filter(|v| **v > 0).count(),
                    evidence,
                    fix: "Batch the copies (one .to(device) per batch, not per sample), create \
                          tensors directly on the device, keep constants as registered buffers, \
                          log scalars every N steps instead of every step."
                        .to_owned(),
                    details: format!(
                        "{share:.1} % > {} % of step or {count:.1} > {} copies per step \
                         (TraceLens). Impact: the copies' GPU time.",
                        th.max_share_pct, th.max_per_step
                    ),
                },
            ));
        }
        out
    }
}
