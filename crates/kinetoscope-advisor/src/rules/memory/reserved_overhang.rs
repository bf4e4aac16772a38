//! ME004 `ReservedOverhang`.
//!
//! ## What it finds
//! Fragmentation of the CUDA caching allocator: reserved memory far above allocated
//! memory at the reserved peak.
//!
//! ## Why it matters
//! Reserved but unallocated memory is unusable by other tensors of a different size;
//! it causes out-of-memory errors with plenty of "free" memory and allocator retries.
//!
//! ## Evidence
//! Peak reserved, allocated at the same time, ratio, share of device memory.
//!
//! ## Fix
//! `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, `max_split_size_mb`, static
//! shapes (pad or bucket sequence lengths), allocate large long-lived buffers first, no
//! `empty_cache()` in the loop.
//!
//! ## Thresholds and sources
//! Reserved / allocated ≥ 2.0 and reserved ≥ 30 % of device memory (TraceML
//! `GPU_MEMORY_RESERVED_OVERHANG`); `reserved_overhang.*`. Peaks from the memory view
//! (`kinetoscope memory`).

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::{gpu_peaks, mib};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct ReservedOverhang;

static META: RuleMeta = RuleMeta {
    code: "ME004",
    name: "ReservedOverhang",
    family: "memory",
    since: "0.1.0",
    summary: "Reserved memory far above allocated (fragmentation)",
};

impl Rule for ReservedOverhang {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let th = &config.reserved_overhang;
        let mut out = Vec::new();
        for g in gpu_peaks(facts) {
            let (id, alloc, reserved) = (g.id, g.allocated, g.reserved);
            if alloc <= 0 || reserved <= 0 {
                continue;
            }
            let ratio = reserved as f64 / alloc as f64;
            let share = g.reserved_pct;
            if ratio < th.ratio || share < th.min_reserved_pct {
                continue;
            }
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(format!("GPU{id}")),
                    title: format!("GPU{id} reserves {ratio:.1}× the memory it allocates"),
                    severity: Severity::Warning,
                    impact_ns: 0.0,
                    steps_seen: facts.n_steps(),
                    evidence: vec![format!(
                        "GPU{id}: peak reserved {:.0} MiB ({share:.1} % of device), peak \
                         allocated {:.0} MiB",
                        mib(reserved as f64),
                        mib(alloc as f64)
                    )],
                    fix: "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; keep shapes \
                          static (pad or bucket sequence lengths); do not call \
                          torch.cuda.empty_cache() in the loop."
                        .to_owned(),
                    details: format!(
                        "Ratio {ratio:.2} ≥ {} and reserved {share:.1} % ≥ {} % of device \
                         memory (TraceML GPU_MEMORY_RESERVED_OVERHANG). \
                         Ratio from whole-trace peaks.",
                        th.ratio, th.min_reserved_pct
                    ),
                },
            ));
        }
        out
    }
}
