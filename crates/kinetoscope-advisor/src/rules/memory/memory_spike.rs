//! ME006 `MemorySpike`.
//!
//! ## What it finds
//! A step whose peak allocated memory is far above the other steps' (median) peak: the
//! largest of the spike steps of `kinetoscope memory`'s per-step pattern.
//!
//! ## Why it matters
//! The run must fit its worst step: a spike (a long sequence, an evaluation batch, a
//! metric computed on the whole output) sets the memory ceiling and causes sporadic
//! out-of-memory errors.
//!
//! ## Evidence
//! The step, its peak, the median peak.
//!
//! ## Fix
//! Bucket or cap sequence lengths, compute metrics in chunks, free large temporaries
//! early (`del`), run evaluation under `torch.no_grad()`.
//!
//! ## Thresholds and sources
//! Peak > 1.5× the median step peak (the memory view's spike steps) and ≥ 64 MiB above
//! it (proposal; no reference tool defines a spike threshold); at least 3 steps.

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::mib;
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct MemorySpike;

static META: RuleMeta = RuleMeta {
    code: "ME006",
    name: "MemorySpike",
    family: "memory",
    since: "0.1.0",
    summary: "One step's memory peak far above the others",
};

impl Rule for MemorySpike {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let mut out = Vec::new();
        for d in &facts.memory().devices {
            let Some(p) = &d.step_pattern else { continue };
            let Some(spike) = &p.largest_spike else {
                continue;
            };
            let med = p.median_peak_bytes;
            if mib(spike.peak_bytes as f64 - med) < 64.0 {
                continue;
            }
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(d.device.clone()),
                    title: format!(
                        "{}: {} peaks at {:.1}× the median step",
                        d.device, spike.step, spike.ratio
                    ),
                    severity: Severity::Info,
                    impact_ns: 0.0,
                    steps_seen: 1,
                    evidence: vec![format!(
                        "{} peak allocated {:.0} MiB vs median step peak {:.0} MiB",
                        spike.step,
                        mib(spike.peak_bytes as f64),
                        mib(med)
                    )],
                    fix: "Find what that step does differently (longer sequence, evaluation, \
                          metrics on the full output); cap or bucket input sizes, compute in \
                          chunks, free temporaries early."
                        .to_owned(),
                    details: "Peak > 1.5× median (the memory view's spike steps) and ≥ 64 MiB \
                              above it (proposal)."
                        .to_owned(),
                },
            ));
        }
        out
    }
}
