//! SY001 `HostDeviceSync`.
//!
//! ## What it finds
//! Calls that make the host wait for the device inside training steps: scalar reads
//! (`aten::item`, `aten::_local_scalar_dense`: `.item()`, `.tolist()`, `if tensor:`) and
//! explicit synchronisations (`cudaStreamSynchronize`, `cudaDeviceSynchronize`,
//! `cudaEventSynchronize` and their driver equivalents), with the code that caused them.
//!
//! ## Why it matters
//! A sync drains the GPU queue: the host stops launching work until every queued kernel
//! has finished, and the GPU then idles while the host catches up. Repeated every step
//! (logging a loss, per-sample metrics), it serialises host and device.
//!
//! ## Evidence
//! Calls per step and their time; the callers (Python frames with `with_stack=True`,
//! else the enclosing operator), with counts.
//!
//! ## Fix
//! Keep scalars on the device (accumulate losses as tensors, log every N steps),
//! vectorise per-sample metrics, avoid data-dependent Python control flow on device
//! tensors; `torch.cuda.set_sync_debug_mode("warn")` finds the offenders.
//!
//! ## Thresholds and sources
//! Syncs in ≥ 2 steps (TraceML step gating); a warning from
//! `host_device_sync.min_per_step` (10) calls per step or `host_device_sync.min_share_pct`
//! (1 %) of step time (proposals: a sync that finds the GPU idle costs little), else
//! info. Scalar reads
//! inside `Optimizer.step` are skipped: `torch.optim` reads its host-side step counters.

use std::collections::BTreeMap;

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct HostDeviceSync;

static META: RuleMeta = RuleMeta {
    code: "SY001",
    name: "HostDeviceSync",
    family: "sync",
    since: "0.1.0",
    summary: "Host-device synchronisation inside steps (.item(), synchronize)",
};

const SCALAR_READS: [&str; 2] = ["aten::item", "aten::_local_scalar_dense"];
const SYNC_CALLS: [&str; 7] = [
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaEventSynchronize",
    "cuStreamSynchronize",
    "cuCtxSynchronize",
    "cuEventSynchronize",
    "hipDeviceSynchronize",
];

impl Rule for HostDeviceSync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if facts.n_steps() == 0 {
            return Vec::new();
        }
        let reads = facts.events(&[CategoryKind::CpuOp], |n| SCALAR_READS.contains(&n));
        let reads: Vec<usize> = facts
            .outermost(&reads)
            .into_iter()
            .filter(|&i| !facts.inside(i, |n| n.starts_with("Optimizer.step#")))
            .collect();
        let syncs = facts.events(
            &[
                CategoryKind::CudaRuntime,
                CategoryKind::CudaDriver,
                CategoryKind::OtherRuntime,
            ],
            |n| SYNC_CALLS.contains(&n),
        );
        // A runtime sync inside a scalar read is the same event.
        let read_set: rustc_hash::FxHashSet<usize> = reads.iter().copied().collect();
        let syncs: Vec<usize> = syncs
            .into_iter()
            .filter(|&i| !facts.ancestors(i).any(|a| read_set.contains(&a)))
            .collect();
        let mut all: Vec<usize> = reads.iter().chain(syncs.iter()).copied().collect();
        all.sort_unstable();
        let per = facts.per_step_ns(&all);
        let counts = facts.per_step_count(&all);
        let seen = counts.iter().filter(|c| **c > 0).count();
        if seen == 0 {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let per_step_calls = counts.iter().sum::<u64>() as f64 / n;
        let mean = per.iter().sum::<i64>() as f64 / n;
        let cpu_only = !facts.has_gpu;
        let th = &config.host_device_sync;
        let share = 100.0 * mean / facts.mean_step_ns().max(1.0);
        let severity = if per_step_calls >= th.min_per_step || share >= th.min_share_pct {
            Severity::Warning
        } else {
            Severity::Info
        };
        // Callers.
        let mut callers: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for &i in &all {
            if facts.step_of(facts.trace.events.ts_ns[i]).is_none() {
                continue;
            }
            let c = facts.caller(i, |n| SCALAR_READS.contains(&n) || SYNC_CALLS.contains(&n));
            let what = facts.name(i);
            let e = callers.entry(format!("{what} ← {c}")).or_default();
            e.0 += 1;
            e.1 += facts.trace.events.dur_ns[i];
        }
        let mut callers: Vec<(String, (u64, i64))> = callers.into_iter().collect();
        callers.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
        let mut evidence = vec![
            format!(
                "{:.1} sync calls per step ({} scalar reads and {} synchronize calls over \
                 the steps), {:.3} ms per step",
                per_step_calls,
                facts.per_step_count(&reads).iter().sum::<u64>(),
                facts.per_step_count(&syncs).iter().sum::<u64>(),
                ms(mean)
            ),
            format!("per step: {}", step_list_ms(&per)),
        ];
        for (who, (c, d)) in callers.iter().take(5) {
            evidence.push(format!(
                "{who}: {:.1} per step, {:.3} ms per step",
                *c as f64 / n,
                *d as f64 / n / 1e6
            ));
        }
        if cpu_only {
            evidence.push(
                "CPU-only trace: these calls are cheap here, but each one drains the GPU \
                 queue when the same code runs on a GPU"
                    .to_owned(),
            );
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "{per_step_calls:.0} host-device sync points per step (.item() / synchronize)"
                ),
                severity,
                impact_ns: mean,
                steps_seen: seen,
                evidence,
                fix: "Keep values on the device: accumulate the loss and metrics as tensors \
                      and call .item() every N steps; vectorise per-sample metrics (one \
                      tensor op, one transfer); avoid Python `if` on device tensors. \
                      torch.cuda.set_sync_debug_mode(\"warn\") lists every sync."
                    .to_owned(),
                details: format!(
                    "Sync calls in {seen} of {} steps; warning from {} \
                     calls per step or {} % of step time (host_device_sync.*, proposals), else \
                     info. Impact: the host time blocked in these calls; on a GPU the idle time \
                     after each sync adds to it.",
                    facts.n_steps(),
                    th.min_per_step,
                    th.min_share_pct
                ),
            },
        )]
    }
}
