//! ME003 `MemoryUnderused`.
//!
//! ## What it finds
//! A GPU whose peak reserved memory stays below half of the device's memory.
//!
//! ## Why it matters
//! Unused memory is unused throughput: a larger batch (or less activation
//! recomputation) usually raises GPU utilisation and tokens per second.
//!
//! ## Evidence
//! Peak reserved and device memory.
//!
//! ## Fix
//! Raise the batch or micro-batch size, turn off activation checkpointing, fewer
//! gradient-accumulation steps.
//!
//! ## Thresholds and sources
//! Info below 50 % (`memory_pressure.underused_pct`; proposal). Peaks from the memory
//! view (`kinetoscope memory`).

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::{gpu_peaks, mib};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct MemoryUnderused;

static META: RuleMeta = RuleMeta {
    code: "ME003",
    name: "MemoryUnderused",
    family: "memory",
    since: "0.1.0",
    summary: "GPU memory peak far below device memory",
};

impl Rule for MemoryUnderused {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let mut out = Vec::new();
        for g in gpu_peaks(facts) {
            let (id, pct) = (g.id, g.pct);
            if pct >= config.memory_pressure.underused_pct {
                continue;
            }
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(format!("GPU{id}")),
                    title: format!("GPU{id} uses only {pct:.1} % of its memory at peak"),
                    severity: Severity::Info,
                    impact_ns: 0.0,
                    steps_seen: facts.n_steps(),
                    evidence: vec![format!(
                        "GPU{id}: peak reserved {:.0} MiB of {:.0} MiB",
                        mib(g.reserved.max(g.allocated) as f64),
                        mib(g.capacity as f64)
                    )],
                    fix: "If GPU utilization is low, raise the batch size (or drop activation \
                          checkpointing) to use the free memory."
                        .to_owned(),
                    details: format!(
                        "Peak {pct:.1} % < {} % (memory_pressure.underused_pct; proposal).",
                        config.memory_pressure.underused_pct
                    ),
                },
            ));
        }
        out
    }
}
