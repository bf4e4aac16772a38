//! ME002 `MemoryPressure`.
//!
//! ## What it finds
//! A GPU whose peak reserved memory (the caching allocator's footprint; `Total
//! Reserved`, else `Total Allocated`) comes close to the device's memory
//! (`deviceProperties[].totalGlobalMem`).
//!
//! ## Why it matters
//! Near the limit the allocator starts freeing its cache and retrying (`cudaFree`
//! synchronises the device), and a slightly longer sequence or larger batch runs out of
//! memory.
//!
//! ## Evidence
//! Peak allocated and reserved, device memory, percentages.
//!
//! ## Fix
//! Activation checkpointing, mixed precision (AMP / bf16), smaller micro-batches with
//! gradient accumulation, FSDP / ZeRO sharding, `expandable_segments:True`.
//!
//! ## Thresholds and sources
//! Warning above 90 % of device memory (torch-tb-profiler); critical above 95 %
//! (proposal; TraceML uses 97 %). `memory_pressure.*`. Peaks from the memory view
//! (`kinetoscope memory`).

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::{gpu_peaks, mib};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct MemoryPressure;

static META: RuleMeta = RuleMeta {
    code: "ME002",
    name: "MemoryPressure",
    family: "memory",
    since: "0.1.0",
    summary: "GPU memory peak close to device memory",
};

impl Rule for MemoryPressure {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let th = &config.memory_pressure;
        let mut out = Vec::new();
        for g in gpu_peaks(facts) {
            let (id, pct) = (g.id, g.pct);
            if pct <= th.warning_pct {
                continue;
            }
            let severity = if pct > th.critical_pct {
                Severity::Critical
            } else {
                Severity::Warning
            };
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(format!("GPU{id}")),
                    title: format!("GPU{id} memory peak at {pct:.1} % of device memory"),
                    severity,
                    impact_ns: 0.0,
                    steps_seen: facts.n_steps(),
                    evidence: vec![format!(
                        "GPU{id}: peak allocated {:.0} MiB, peak reserved {:.0} MiB, device \
                         memory {:.0} MiB",
                        mib(g.allocated as f64),
                        mib(g.reserved as f64),
                        mib(g.capacity as f64)
                    )],
                    fix: "Lower the peak: activation checkpointing, bf16 autocast, a smaller \
                          micro-batch with gradient accumulation, FSDP/ZeRO sharding; \
                          PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduces waste."
                        .to_owned(),
                    details: format!(
                        "Peak {pct:.1} % > warning {} % (torch-tb-profiler) / critical {} % \
                         (proposal; TraceML 97 %). No time impact is \
                         claimed: the risk is out-of-memory and allocator retries.",
                        th.warning_pct, th.critical_pct
                    ),
                },
            ));
        }
        out
    }
}
