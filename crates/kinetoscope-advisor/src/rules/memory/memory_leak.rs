//! ME001 `MemoryLeak`.
//!
//! ## What it finds
//! Memory that grows from step to step: the per-step minimum of allocated memory (the
//! trough after the optimizer has freed the step's temporaries) rises in almost every
//! step, per device — the `gradual_increase` pattern of `kinetoscope memory`, whose
//! numbers (troughs, leak rate) the finding quotes.
//!
//! ## Why it matters
//! A rising trough means every step keeps something alive: the run will eventually hit
//! out-of-memory, and before that the allocator has to grow (`cudaMalloc`, cache
//! flushes), which slows steps down.
//!
//! ## Evidence
//! Troughs per step, growth per step (the least-squares slope of the troughs), and the
//! operators whose allocations inside the steps were never freed while profiling.
//!
//! ## Fix
//! Do not keep tensors that hold autograd history across steps: `total_loss +=
//! loss.item()` (or `loss.detach()`), clear lists of outputs kept for metrics, no
//! `retain_graph=True`, `torch.no_grad()` for evaluation.
//!
//! ## Thresholds and sources
//! The memory view's `gradual_increase` verdict (troughs rise in ≥ half of the step
//! changes, fall in < a fifth, and grow by ≥ 0.1 % of the highest peak and ≥ 64 KiB),
//! with at least `memory_leak.min_steps` (3) steps; ≥ 80 % of step-to-step changes of
//! the trough are rises (`memory_leak.rising_fraction`); growth ≥ 1 MiB per step
//! (`memory_leak.min_mib_per_step`). These are proposals: TraceML's creep rule
//! (baseline / mid / recent windows of ≥ 50 steps, confirmed at ≥ 1 GiB) needs longer
//! runs than a profile holds.

use std::collections::BTreeMap;

use kinetoscope_analysis::memory::step_pattern::MemoryPattern;
use kinetoscope_analysis::memory::{op_context, DeviceMemory};

use crate::config::Config;
use crate::facts::Facts;
use crate::finding::{About, Finding, Severity};
use crate::rules::memory::mib;
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct MemoryLeak;

static META: RuleMeta = RuleMeta {
    code: "ME001",
    name: "MemoryLeak",
    family: "memory",
    since: "0.1.0",
    summary: "Allocated memory grows from step to step",
};

impl Rule for MemoryLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let th = &config.memory_leak;
        let mut out = Vec::new();
        for d in &facts.memory().devices {
            let Some(p) = &d.step_pattern else { continue };
            let n = p.steps.len();
            if p.verdict != MemoryPattern::GradualIncrease || n < th.min_steps.max(2) {
                continue;
            }
            let frac = p.trough_rises as f64 / (n - 1) as f64;
            let per_step = p.growth_per_step_bytes;
            if frac < th.rising_fraction || mib(per_step) < th.min_mib_per_step {
                continue;
            }
            let list: Vec<String> = p
                .steps
                .iter()
                .take(10)
                .map(|s| format!("{:.1}", mib(s.trough_bytes as f64)))
                .collect();
            let mut evidence = vec![
                format!(
                    "{}: allocated trough rose in {} of {} steps, {:.2} MiB per step \
                     ({:.1} MiB over the profile)",
                    d.device,
                    p.trough_rises,
                    n - 1,
                    mib(per_step),
                    mib(p.trough_growth_bytes as f64)
                ),
                format!("per-step minimum allocated: {} MiB", list.join(", ")),
            ];
            evidence.extend(unfreed_by_operator(facts, d));
            out.push(finish(
                &META,
                facts,
                config,
                Draft {
                    about: About::Device(d.device.clone()),
                    title: format!(
                        "{} memory grows by {:.1} MiB every step (leak)",
                        d.device,
                        mib(per_step)
                    ),
                    severity: Severity::Warning,
                    impact_ns: 0.0,
                    steps_seen: p.trough_rises,
                    evidence,
                    fix: "Find what keeps tensors alive across steps: accumulate `loss.item()` \
                          or `loss.detach()` instead of `loss`, clear lists of outputs or \
                          activations kept for metrics, avoid retain_graph=True, evaluate under \
                          torch.no_grad(). The operators above allocated the memory that was \
                          never freed."
                        .to_owned(),
                    details: format!(
                        "Trough rises in {:.0} % ≥ {:.0} % of steps and grows {:.2} ≥ {} MiB \
                         per step (least-squares slope, as kinetoscope memory; memory_leak.*, \
                         proposals after TraceML's creep rule). No time impact is claimed: \
                         the cost is the eventual out-of-memory.",
                        100.0 * frac,
                        100.0 * th.rising_fraction,
                        mib(per_step),
                        th.min_mib_per_step
                    ),
                },
            ));
        }
        out
    }
}

/// Operators whose allocations inside the steps were never freed, largest first.
fn unfreed_by_operator(facts: &Facts, d: &DeviceMemory) -> Vec<String> {
    let mut by_op: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for a in &d.allocations.rows {
        let (Some(t), None) = (a.alloc_ns, a.release_ns) else {
            continue;
        };
        if facts.host_step_of(t).is_none() {
            continue;
        }
        let e = by_op
            .entry(op_context(a.op.as_deref(), a.parent_op.as_deref()))
            .or_default();
        e.0 += 1;
        e.1 += a.bytes;
    }
    let mut v: Vec<(String, (u64, i64))> = by_op.into_iter().collect();
    v.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    v.into_iter()
        .take(3)
        .map(|(op, (n, b))| {
            format!(
                "never freed: {op}: {n} allocations, {:.1} MiB ({:.2} MiB per step)",
                mib(b as f64),
                mib(b as f64) / facts.n_steps().max(1) as f64
            )
        })
        .collect()
}
