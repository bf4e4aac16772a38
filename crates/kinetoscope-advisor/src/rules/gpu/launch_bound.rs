//! GP002 `LaunchBound`.
//!
//! ## What it finds
//! Steps made of many tiny kernels while the GPU idles: most kernels run shorter than
//! the host call that launched them (HTA's "short kernels", from the launch statistics
//! of `kinetoscope launches`), so the host cannot launch them as fast as the GPU
//! finishes them.
//!
//! ## Why it matters
//! A kernel launch costs 5–20 µs of host time (HTA). When kernels are shorter than
//! that, the GPU waits for the CPU between kernels however fast the GPU is.
//!
//! ## Evidence
//! Launches per step, the share of short kernels, the mean GPU time per launch, GPU
//! utilization.
//!
//! ## Fix
//! CUDA graphs (`torch.compile(mode="reduce-overhead")`, `torch.cuda.graphs`), operator
//! fusion (`torch.compile`), larger batches (more work per launch), foreach / fused
//! optimizers, no Python-loop tensor ops.
//!
//! ## Thresholds and sources
//! Short kernel: GPU time shorter than its launch call, the call itself not longer than
//! HTA's 50 µs runtime cutoff (HTA `get_cuda_kernel_launch_stats`); flagged when ≥ 50 %
//! of the launches in the steps are short (proposal) and utilization is below the
//! `LowGpuUtilization` warning threshold. `launch_bound.*`.

use kinetoscope_analysis::gpu_time::launches::{StepLaunches, OUTSIDE_STEPS};

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
        let stats = facts.launch_stats();
        // Per ProfilerStep; a trace without step markers is one step.
        let mut steps: Vec<&StepLaunches> = stats
            .steps
            .iter()
            .filter(|s| s.step != OUTSIDE_STEPS)
            .collect();
        if steps.is_empty() {
            steps = stats.steps.iter().collect();
        }
        let n: u64 = steps.iter().map(|s| s.launches).sum();
        if n == 0 {
            return Vec::new();
        }
        let short: u64 = steps.iter().map(|s| s.short_kernels).sum();
        let gpu_ns: i64 = steps.iter().map(|s| s.gpu_ns).sum();
        let share = 100.0 * short as f64 / n as f64;
        if share < th.short_share_pct {
            return Vec::new();
        }
        let steps_seen = steps
            .iter()
            .filter(|s| {
                s.launches > 0
                    && 100.0 * s.short_kernels as f64 / s.launches as f64 >= th.short_share_pct
            })
            .count();
        let per = steps.len() as f64;
        let step = facts.mean_step_ns();
        let idle = (1.0 - util) * step;
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "Launch-bound: {share:.0} % of the kernels per step ({:.0} launches) run \
                     shorter than their launch call",
                    n as f64 / per
                ),
                severity: Severity::Warning,
                impact_ns: idle * share / 100.0,
                steps_seen,
                evidence: vec![
                    format!(
                        "{:.0} launches per step, mean GPU time {:.1} µs; {:.0} short kernels \
                         per step (GPU time < launch call, as kinetoscope launches)",
                        n as f64 / per,
                        gpu_ns as f64 / n as f64 / 1e3,
                        short as f64 / per
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
                    "{share:.0} % ≥ {} % of launches are short kernels (HTA: GPU time < launch \
                     call; the share is a proposal) with utilization below {} %. Impact: idle \
                     time × short-kernel share (overlaps LowGpuUtilization).",
                    th.short_share_pct, config.low_gpu_utilization.warning_below_pct
                ),
            },
        )]
    }
}
