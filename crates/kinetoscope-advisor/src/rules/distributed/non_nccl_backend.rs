//! DI003 `NonNcclBackend`.
//!
//! ## What it finds
//! A distributed job on NVIDIA GPUs (compute capability ≥ 3.5) whose process group uses
//! another backend than NCCL (`distributedInfo.backend`, e.g. `gloo`).
//!
//! ## Why it matters
//! Gloo runs collectives through host memory and TCP: GPU tensors are copied to the
//! host and back, and the reduction runs on the CPU. NCCL reduces on the GPUs over
//! NVLink / InfiniBand (GPUDirect), usually an order of magnitude faster.
//!
//! ## Evidence
//! The backend and world size, the GPU, and the host time per step of the backend's
//! collectives (`gloo:*` operators), when the trace has them.
//!
//! ## Fix
//! `torch.distributed.init_process_group(backend="nccl")` (or `"cpu:gloo,cuda:nccl"`
//! when CPU tensors must be reduced too).
//!
//! ## Thresholds and sources
//! Presence: a non-NCCL backend with GPUs of compute capability ≥ 3.5 and a world size
//! above 1 (or unknown) (torch-tb-profiler's distributed recommendation). Impact: the
//! host time of the backend's collective operators (0 when the trace has none: no time
//! is claimed then).

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct NonNcclBackend;

static META: RuleMeta = RuleMeta {
    code: "DI003",
    name: "NonNcclBackend",
    family: "distributed",
    since: "0.1.0",
    summary: "Distributed GPU job on a non-NCCL backend (gloo)",
};

impl Rule for NonNcclBackend {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let t = facts.trace;
        let Some(dist) = t.meta.distributed.as_ref() else {
            return Vec::new();
        };
        let Some(backend) = dist.backend.as_deref().map(str::trim) else {
            return Vec::new();
        };
        let b = backend.to_ascii_lowercase();
        if b.is_empty() || b.contains("nccl") || dist.world_size.is_some_and(|w| w < 2) {
            return Vec::new();
        }
        let Some(dev) = t
            .meta
            .devices
            .iter()
            .find(|d| d.compute_major * 10 + d.compute_minor.min(9) >= 35)
        else {
            return Vec::new();
        };
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let prefix = format!("{b}:");
        let ops = facts.events(&[CategoryKind::CpuOp, CategoryKind::UserAnnotation], |n| {
            n.to_ascii_lowercase().starts_with(&prefix)
        });
        let ops = facts.outermost(&ops);
        let per = facts.per_step_ns(&ops);
        let n = facts.n_steps() as f64;
        let mean = per.iter().sum::<i64>() as f64 / n;
        let mut evidence = vec![format!(
            "backend {backend:?}, world size {}, on {} (compute capability {}.{})",
            dist.world_size
                .map(|w| w.to_string())
                .unwrap_or_else(|| "unknown".to_owned()),
            dev.name,
            dev.compute_major,
            dev.compute_minor
        )];
        if !ops.is_empty() {
            evidence.push(format!(
                "{b}:* collectives: {:.1} calls and {:.3} ms of host time per step",
                ops.len() as f64 / n,
                ms(mean)
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!("Distributed GPU job on the {backend} backend: use NCCL"),
                severity: Severity::Warning,
                impact_ns: mean,
                steps_seen: facts.n_steps(),
                evidence,
                fix: "Initialise the process group with NCCL: \
                      torch.distributed.init_process_group(backend=\"nccl\") (or \
                      \"cpu:gloo,cuda:nccl\" when CPU tensors are reduced too)."
                    .to_owned(),
                details: "Non-NCCL backend on GPUs with compute capability ≥ 3.5 \
                          (torch-tb-profiler). Impact: the host time of \
                          the backend's collective operators, when recorded."
                    .to_owned(),
            },
        )]
    }
}
