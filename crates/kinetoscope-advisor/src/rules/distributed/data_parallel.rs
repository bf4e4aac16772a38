//! DI002 `DataParallelInsteadOfDdp`.
//!
//! ## What it finds
//! `torch.nn.DataParallel` (`DataParallel.forward` spans) in a trace with more than one
//! GPU.
//!
//! ## Why it matters
//! DataParallel runs one Python process for all GPUs: it scatters inputs and replicates
//! the model every step, gathers outputs on GPU 0, and is serialised by the GIL. DDP
//! runs one process per GPU and overlaps the gradient all-reduce with backward.
//!
//! ## Evidence
//! Calls and host time per step, the GPUs in the trace.
//!
//! ## Fix
//! `torch.nn.parallel.DistributedDataParallel` with one process per GPU (`torchrun
//! --nproc-per-node=N`), NCCL backend.
//!
//! ## Thresholds and sources
//! Presence with > 1 GPU (torch-tb-profiler's DataParallel recommendation).

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct DataParallelInsteadOfDdp;

static META: RuleMeta = RuleMeta {
    code: "DI002",
    name: "DataParallelInsteadOfDdp",
    family: "distributed",
    since: "0.1.0",
    summary: "DataParallel used with more than one GPU",
};

impl Rule for DataParallelInsteadOfDdp {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let gpus = facts
            .overview
            .gpus
            .len()
            .max(facts.trace.meta.devices.len());
        if gpus < 2 || facts.n_steps() == 0 {
            return Vec::new();
        }
        let ev = facts.events(&[CategoryKind::CpuOp, CategoryKind::UserAnnotation], |n| {
            n == "DataParallel.forward"
        });
        let ev = facts.outermost(&ev);
        let per = facts.per_step_ns(&ev);
        let seen = per.iter().filter(|v| **v > 0).count();
        if seen == 0 {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let mean = per.iter().sum::<i64>() as f64 / n;
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("DataParallel on {gpus} GPUs: use DistributedDataParallel"),
                severity: Severity::Warning,
                impact_ns: 0.0,
                steps_seen: seen,
                evidence: vec![format!(
                    "DataParallel.forward: {:.1} calls and {:.2} ms of host time per step; {gpus} \
                     GPUs in the trace",
                    ev.len() as f64 / n,
                    ms(mean)
                )],
                fix: "Switch to torch.nn.parallel.DistributedDataParallel with one process per \
                      GPU (torchrun --nproc-per-node=N) and the NCCL backend."
                    .to_owned(),
                details: "DataParallel with > 1 GPU (torch-tb-profiler). \
                          No time impact is claimed: the gain depends on the model."
                    .to_owned(),
            },
        )]
    }
}
