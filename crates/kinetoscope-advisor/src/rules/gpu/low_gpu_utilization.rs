//! GP001 `LowGpuUtilization`.
//!
//! ## What it finds
//! GPUs that wait for the host for a large share of the steps: time in the step windows
//! in which no kernel, copy or set runs on the GPU and none has been launched for it
//! (the device timeline of `kinetoscope_analysis::device_activity`). Idle time in which
//! launched work was queued — the GPU waited on another stream, on work outside the
//! trace or on a host/device clock offset — is not the host's and is left out.
//!
//! ## Why it matters
//! Idle GPU time is the upper bound of what any host-side fix can recover. The
//! breakdown says what the host was doing meanwhile (data loading, Python / CPU work,
//! runtime calls), which points at the cause.
//!
//! ## Evidence
//! Utilization per GPU (the overview's: the share of the step window with a kernel
//! running), how much of the idle time the GPU waited for the host and how much it had
//! work queued, the step breakdown (kernel, memcpy, DataLoader, CPU exec, runtime,
//! other) as % of the step, the runtime calls that take the most host time, and graph
//! replay when CUDA / HIP graphs are in use.
//!
//! ## Fix
//! Depends on the cause: see the other findings (DataloaderStall, HostDeviceSync,
//! LaunchBound). Generic: larger batch, fewer syncs, CUDA graphs / `torch.compile(mode=
//! "reduce-overhead")` (when graphs already replay part of the step: a larger captured
//! region; when the steps already run `torch.compile`'s kernels: replaying them from
//! graphs rather than compiling), overlapping data movement.
//!
//! ## Thresholds and sources
//! Warning when the GPU waits for the host more than 20 % of the step, i.e. is busy or
//! has work queued less than 80 % of it (TraceLens Agent: computation > 80 % is
//! efficient); critical below 30 % (TraceML "low" band). torch-tb-profiler's own hint
//! fires below 50 % utilization. At most `low_gpu_utilization.max_gpus` (64) GPUs of a
//! trace are judged, the least utilized. `low_gpu_utilization.*`.

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct LowGpuUtilization;

/// The GPUs judged: every GPU with a utilization, or the `max_gpus` least utilized of
/// them (each costs a pass over the steps: a trace naming thousands of devices would
/// otherwise cost devices × steps), in device order.
fn judged<'f>(
    facts: &'f Facts,
    max_gpus: usize,
) -> Vec<&'f kinetoscope_analysis::overview::GpuMetrics> {
    let mut gpus: Vec<_> = facts
        .overview
        .gpus
        .iter()
        .filter(|g| g.utilization.is_some())
        .collect();
    if gpus.len() > max_gpus {
        gpus.sort_by(|a, b| {
            a.utilization
                .unwrap_or(0.0)
                .total_cmp(&b.utilization.unwrap_or(0.0))
                .then(a.id.cmp(&b.id))
        });
        gpus.truncate(max_gpus);
        gpus.sort_by_key(|g| g.id);
    }
    gpus
}

static META: RuleMeta = RuleMeta {
    code: "GP001",
    name: "LowGpuUtilization",
    family: "gpu",
    since: "0.1.0",
    summary: "GPU idle for a large share of each step",
};

impl Rule for LowGpuUtilization {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let th = &config.low_gpu_utilization;
        let step = facts.mean_step_ns();
        let n = facts.n_steps() as f64;
        let graphs = crate::summary::graph_replay(facts);
        let graph_line = super::graph_replay_line(facts);
        let runtime_calls = crate::summary::dominant_runtime_calls(facts);
        let mut out = Vec::new();
        for g in judged(facts, th.max_gpus) {
            let Some(u) = g.utilization else { continue };
            let Some(timeline) = facts.gpu_timeline().device(g.id) else {
                continue;
            };
            // Per step: time waiting for the host, and queued time.
            let per_step: Vec<(i64, i64)> = facts
                .steps
                .iter()
                .map(|s| {
                    (
                        timeline.waiting_ns(s.start_ns, s.end_ns),
                        timeline.queued_in(s.start_ns, s.end_ns),
                    )
                })
                .collect();
            let waiting = per_step.iter().map(|p| p.0).sum::<i64>() as f64 / n;
            let queued = per_step.iter().map(|p| p.1).sum::<i64>() as f64 / n;
            // The share of the step the GPU ran or had work for.
            let pct = 100.0 * (1.0 - waiting / step.max(1.0));
            if pct >= th.warning_below_pct {
                continue;
            }
            let severity = if pct < th.critical_below_pct {
                Severity::Critical
            } else {
                Severity::Warning
            };
            let seen = per_step
                .iter()
                .zip(&facts.steps)
                .filter(|((w, _), s)| {
                    100.0 * (1.0 - *w as f64 / s.dur_ns().max(1) as f64) < th.warning_below_pct
                })
                .count();
            let idle = (1.0 - u) * step;
            let mut evidence = vec![
                format!(
                    "GPU{} ({}): utilization {:.1} % over the steps; idle {:.2} ms of a {:.2} ms \
                     step",
                    g.id,
                    g.name.as_deref().unwrap_or("unknown"),
                    100.0 * u,
                    ms(idle),
                    ms(step)
                ),
                format!(
                    "waiting for the host (nothing running or queued) {:.2} ms per step \
                     ({:.1} %); work queued but not running {:.2} ms (waiting on another \
                     stream, on work outside the trace or on a clock offset: not the host's)",
                    ms(waiting),
                    100.0 - pct,
                    ms(queued)
                ),
            ];
            if let Some(avg) = &facts.overview.average {
                let p = avg.share.map(|v| 100.0 * v);
                evidence.push(format!(
                    "step breakdown: kernel {:.1} %, memcpy {:.1} %, memset {:.1} %, \
                     communication {:.1} %, runtime {:.1} %, DataLoader {:.1} %, CPU exec \
                     {:.1} %, other {:.1} %",
                    p.kernel,
                    p.memcpy,
                    p.memset,
                    p.communication,
                    p.runtime,
                    p.dataloader,
                    p.cpu_exec,
                    p.other
                ));
            }
            evidence.extend(runtime_calls.iter().take(2).map(|r| {
                format!(
                    "runtime call {}: {:.1} calls, {:.2} ms of host time per step \
                             ({:.1} % of the host step)",
                    r.name,
                    r.calls_per_step,
                    ms(r.ns_per_step),
                    100.0 * r.share
                )
            }));
            evidence.extend(graph_line.clone());
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(format!("GPU{}", g.id)),
                    title: format!(
                        "GPU{} waits for the host {:.1} % of step time (utilization {:.1} %)",
                        g.id,
                        100.0 - pct,
                        100.0 * u
                    ),
                    severity,
                    impact_ns: waiting,
                    steps_seen: seen,
                    evidence,
                    fix: format!(
                        "Find what the host does while the GPU waits (breakdown above and the \
                         other findings): load data in workers, remove per-step syncs, {}, \
                         raise the batch size.",
                        match (graphs.is_some(), crate::summary::uses_torch_compile(facts)) {
                            (true, _) =>
                                "fuse small kernels (torch.compile), capture more of \
                                          the step in the CUDA graphs already in use",
                            (false, true) =>
                                "replay the compiled kernels from CUDA graphs \
                                              (torch.compile(mode=\"reduce-overhead\")) and \
                                              compile what stays eager",
                            (false, false) =>
                                "fuse small kernels (torch.compile) or capture \
                                               CUDA graphs",
                        }
                    ),
                    details: format!(
                        "Busy or queued {pct:.1} % < warning {} % (TraceLens Agent) / \
                         critical {} % (TraceML). Impact: the time the GPU waits for the \
                         host, the upper bound for every host-side fix (it overlaps the other \
                         findings' impact).",
                        th.warning_below_pct, th.critical_below_pct
                    ),
                },
            ));
        }
        out
    }
}
