//! GP001 `LowGpuUtilization`.
//!
//! ## What it finds
//! GPUs idle for a large share of the steps: utilization (the share of the step window
//! with at least one kernel running, from the overview) below 80 %.
//!
//! ## Why it matters
//! Idle GPU time is the upper bound of what any host-side fix can recover. The
//! breakdown says what the host was doing meanwhile (data loading, Python / CPU work,
//! runtime calls), which points at the cause.
//!
//! ## Evidence
//! Utilization per GPU, and the step breakdown (kernel, memcpy, DataLoader, CPU exec,
//! runtime, other) as % of the step.
//!
//! ## Fix
//! Depends on the cause: see the other findings (DataloaderStall, HostDeviceSync,
//! LaunchBound). Generic: larger batch, fewer syncs, CUDA graphs / `torch.compile(mode=
//! "reduce-overhead")`, overlapping data movement.
//!
//! ## Thresholds and sources
//! Warning below 80 % (TraceLens Agent: computation > 80 % is efficient); critical below
//! 30 % (TraceML "low" band). torch-tb-profiler's own hint fires below 50 %.
//! `low_gpu_utilization.*`.

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct LowGpuUtilization;

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
        let mut out = Vec::new();
        for g in &facts.overview.gpus {
            let Some(u) = g.utilization else { continue };
            let pct = 100.0 * u;
            if pct >= th.warning_below_pct {
                continue;
            }
            let severity = if pct < th.critical_below_pct {
                Severity::Critical
            } else {
                Severity::Warning
            };
            let step = facts.mean_step_ns();
            let seen = facts
                .overview
                .steps
                .iter()
                .filter(|s| {
                    let b = s.breakdown_ns;
                    let busy = (b.kernel + b.memcpy + b.memset) as f64;
                    100.0 * busy / (s.dur_ns.max(1) as f64) < th.warning_below_pct
                })
                .count();
            let mut evidence = vec![format!(
                "GPU{} ({}): utilization {pct:.1} % over the steps; idle {:.2} ms of a {:.2} ms step",
                g.id,
                g.name.as_deref().unwrap_or("unknown"),
                ms((1.0 - u) * step),
                ms(step)
            )];
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
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(format!("GPU{}", g.id)),
                    title: format!("GPU{} busy only {pct:.1} % of step time", g.id),
                    severity,
                    impact_ns: (1.0 - u) * step,
                    steps_seen: seen,
                    evidence,
                    fix: "Find what the host does while the GPU waits (breakdown above and the \
                          other findings): load data in workers, remove per-step syncs, fuse \
                          small kernels (torch.compile) or capture CUDA graphs, raise the batch \
                          size."
                        .to_owned(),
                    details: format!(
                        "Utilization {pct:.1} % < warning {} % (TraceLens Agent) / critical {} % \
                         (TraceML). Impact: the idle time, the upper bound \
                         for every host-side fix (it overlaps the other findings' impact).",
                        th.warning_below_pct, th.critical_below_pct
                    ),
                },
            ));
        }
        out
    }
}
