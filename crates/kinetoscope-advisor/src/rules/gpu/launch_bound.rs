//! GP002 `LaunchBound`.
//!
//! ## What it finds
//! Steps made of many tiny kernels while the GPU idles: most kernels run for less than
//! 10 µs, so the host cannot launch them as fast as the GPU finishes them.
//!
//! ## Why it matters
//! A kernel launch costs 5–20 µs of host time (HTA). When kernels are shorter than
//! that, the GPU waits for the CPU between kernels however fast the GPU is.
//!
//! ## Evidence
//! Kernels per step, the share under the threshold and their total time, the mean
//! kernel duration, GPU utilization.
//!
//! ## Fix
//! CUDA graphs (`torch.compile(mode="reduce-overhead")`, `torch.cuda.graphs`), operator
//! fusion (`torch.compile`), larger batches (more work per launch), foreach / fused
//! optimizers, no Python-loop tensor ops.
//!
//! ## Thresholds and sources
//! Short kernel < 10 µs (TraceLens `short_kernel_threshold_us`); flagged when ≥ 50 % of
//! kernels are short (proposal) and utilization is below the `LowGpuUtilization`
//! warning threshold. `launch_bound.*`; advisor-rules.md 3.2.

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct LaunchBound;

static META: RuleMeta = RuleMeta {
    code: "GP002",
    name: "LaunchBound",
    family: "gpu",
    since: "0.1.0",
    summary: "Many tiny kernels: the host cannot launch fast enough",
};

impl Rule for LaunchBound {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let util = facts
            .overview
            .gpus
            .iter()
            .filter_map(|g| g.utilization)
            .fold(f64::NAN, f64::min);
        if util.is_nan() || 100.0 * util >= config.low_gpu_utilization.warning_below_pct {
            return Vec::new();
        }
        let th = &config.launch_bound;
        let kernels = facts.events(&[CategoryKind::Kernel], |_| true);
        let e = &facts.trace.events;
        let short_ns = (th.short_kernel_us * 1e3) as i64;
        let mut seen = vec![(0u64, 0u64); facts.n_steps()];
        let (mut n, mut short, mut short_time, mut total_time) = (0u64, 0u64, 0i64, 0i64);
        for &k in &kernels {
            let Some(s) = facts.step_of(e.ts_ns[k]) else {
                continue;
            };
            n += 1;
            total_time += e.dur_ns[k];
            seen[s].0 += 1;
            if e.dur_ns[k] < short_ns {
                short += 1;
                short_time += e.dur_ns[k];
                seen[s].1 += 1;
            }
        }
        if n == 0 {
            return Vec::new();
        }
        let share = 100.0 * short as f64 / n as f64;
        if share < th.short_share_pct {
            return Vec::new();
        }
        let steps_seen = seen
            .iter()
            .filter(|(a, b)| *a > 0 && 100.0 * *b as f64 / *a as f64 >= th.short_share_pct)
            .count();
        let steps = facts.n_steps() as f64;
        let step = facts.mean_step_ns();
        let idle = (1.0 - util) * step;
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "Launch-bound: {share:.0} % of {:.0} kernels per step run < {} µs",
                    n as f64 / steps,
                    th.short_kernel_us
                ),
                severity: Severity::Warning,
                impact_ns: idle * share / 100.0,
                steps_seen,
                evidence: vec![
                    format!(
                        "{:.0} kernels per step, mean {:.1} µs; {:.0} short kernels per step \
                         take {:.3} ms in total",
                        n as f64 / steps,
                        total_time as f64 / n as f64 / 1e3,
                        short as f64 / steps,
                        ms(short_time as f64 / steps)
                    ),
                    format!(
                        "GPU utilization {:.1} %: {:.2} ms idle per {:.2} ms step",
                        100.0 * util,
                        ms(idle),
                        ms(step)
                    ),
                ],
                fix: "Cut launches: torch.compile (fusion) or CUDA graphs \
                      (torch.compile(mode=\"reduce-overhead\")), larger batches, \
                      foreach/fused optimizers, no per-element Python loops over tensors."
                    .to_owned(),
                details: format!(
                    "{share:.0} % ≥ {} % of kernels shorter than {} µs (TraceLens \
                     short_kernel_threshold_us; share is a proposal) with utilization below {} %; \
                     advisor-rules.md 3.2. Impact: idle time × short-kernel share (overlaps \
                     LowGpuUtilization).",
                    th.short_share_pct,
                    th.short_kernel_us,
                    config.low_gpu_utilization.warning_below_pct
                ),
            },
        )]
    }
}
