//! CM001 `ExposedCommunication`.
//!
//! ## What it finds
//! Communication kernels (NCCL / RCCL / HCCL) that are not overlapped by computation:
//! per step, the part of the communication kernels' union that no computation kernel
//! covers (`kinetoscope comm`'s definition, over the kept steps).
//!
//! ## Why it matters
//! Exposed communication is time in which the GPU only waits for the network; with
//! good bucketing and prefetching most of it hides behind backward / forward compute.
//!
//! ## Evidence
//! Communication, overlapped and exposed time per step; overlap %; the largest
//! collectives.
//!
//! ## Fix
//! DDP: tune `bucket_cap_mb`, `gradient_as_bucket_view=True`, no
//! `find_unused_parameters`; FSDP: `forward_prefetch`, `backward_prefetch=BACKWARD_PRE`,
//! `limit_all_gathers`; gradient accumulation with `no_sync`; larger micro-batches;
//! communication on its own stream; no syncs that serialise it.
//!
//! ## Thresholds and sources
//! Exposed communication ≥ 5 % of step time (TraceLens flags > 5 % of total GPU time;
//! kinetoscope uses the step), with at least 100 µs of communication per step (TraceLens
//! ignores less); the overlap ratio is reported against TraceLens's 70 %.
//! `exposed_communication.*`. The numbers are `kinetoscope comm`'s.

use kinetoscope_analysis::comm::StepComm;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct ExposedCommunication;

static META: RuleMeta = RuleMeta {
    code: "CM001",
    name: "ExposedCommunication",
    family: "comm",
    since: "0.1.0",
    summary: "Communication not overlapped by computation",
};

impl Rule for ExposedCommunication {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let c = facts.comm();
        if c.steps.is_empty() {
            return Vec::new();
        }
        let th = &config.exposed_communication;
        let n = c.steps.len() as f64;
        let mean_us = |f: fn(&StepComm) -> i64| c.steps.iter().map(f).sum::<i64>() as f64 / n / 1e3;
        let exposed_us = mean_us(|s| s.exposed_ns);
        let comm_us = mean_us(|s| s.communication_ns);
        let step_us = mean_us(|s| s.dur_ns);
        let share = 100.0 * exposed_us / step_us.max(1e-9);
        if comm_us < th.min_comm_us || share < th.warning_pct {
            return Vec::new();
        }
        let seen = c
            .steps
            .iter()
            .filter(|s| 100.0 * s.exposed_share >= th.warning_pct)
            .count();
        let mut evidence = vec![
            format!(
                "per step: communication {:.2} ms, exposed {:.2} ms ({share:.1} % of a {:.2} ms \
                 step)",
                comm_us / 1e3,
                exposed_us / 1e3,
                step_us / 1e3
            ),
            format!(
                "overlap {} (TraceLens expects ≥ 70 %)",
                c.overlap
                    .overlap_share
                    .map(|p| format!("{:.1} %", 100.0 * p))
                    .unwrap_or_else(|| "n/a".into())
            ),
            format!(
                "exposed per step: {}",
                c.steps
                    .iter()
                    .take(8)
                    .map(|s| format!("{} {:.2} ms", s.name, s.exposed_ns as f64 / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ];
        // The analysis lists collectives by total latency, largest first.
        for r in c.collectives.iter().take(2) {
            evidence.push(format!(
                "{}: {} calls, {:.2} ms kernel time",
                r.collective,
                r.count,
                r.latency_ns as f64 / 1e6
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("Exposed communication takes {share:.1} % of each step"),
                severity: Severity::Warning,
                impact_ns: exposed_us * 1e3,
                steps_seen: seen,
                evidence,
                fix: "Overlap communication with compute: DDP bucket_cap_mb and \
                      gradient_as_bucket_view=True (no find_unused_parameters); FSDP \
                      forward_prefetch and backward_prefetch=BACKWARD_PRE; no_sync with \
                      gradient accumulation; larger micro-batches."
                    .to_owned(),
                details: format!(
                    "Exposed {share:.1} % ≥ {} % of step (TraceLens: > 5 % of GPU time) with \
                     {comm_us:.0} µs ≥ {} µs of communication per step. \
                     Impact: the exposed time, {:.3} ms per step.",
                    th.warning_pct,
                    th.min_comm_us,
                    ms(exposed_us * 1e3)
                ),
            },
        )]
    }
}
