//! ME006 `MemorySpike`.
//!
//! ## What it finds
//! A step whose peak allocated memory is far above the other steps' (median) peak.
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
//! Peak ≥ 1.5× the median step peak and ≥ 64 MiB above it (proposal; no reference tool
//! defines a spike threshold).

use crate::config::Config;
use crate::facts::{median, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::{device_name, mib, per_step_memory};
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
        for (dev, steps) in per_step_memory(facts) {
            let peaks: Vec<(usize, f64)> = steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.map(|s| (i, s.max_allocated as f64)))
                .collect();
            if peaks.len() < 3 {
                continue;
            }
            let med = median(&peaks.iter().map(|p| p.1).collect::<Vec<_>>());
            let Some(&(worst, peak)) = peaks.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            if peak < 1.5 * med || mib(peak - med) < 64.0 {
                continue;
            }
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(device_name(dev)),
                    title: format!(
                        "{}: {} peaks at {:.1}× the median step",
                        device_name(dev),
                        facts.steps[worst].name,
                        peak / med.max(1.0)
                    ),
                    severity: Severity::Info,
                    impact_ns: 0.0,
                    steps_seen: 1,
                    evidence: vec![format!(
                        "{} peak allocated {:.0} MiB vs median step peak {:.0} MiB",
                        facts.steps[worst].name,
                        mib(peak),
                        mib(med)
                    )],
                    fix: "Find what that step does differently (longer sequence, evaluation, \
                          metrics on the full output); cap or bucket input sizes, compute in \
                          chunks, free temporaries early."
                        .to_owned(),
                    details: "Peak ≥ 1.5× median and ≥ 64 MiB above it (proposal).".to_owned(),
                },
            ));
        }
        out
    }
}
