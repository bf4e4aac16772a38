//! ME005 `AllocatorChurn`.
//!
//! ## What it finds
//! `cudaMalloc` / `cudaFree` (and `cudaMallocAsync`, `cuMemCreate`, `cuMemMap`,
//! `cuMemUnmap`, `hipMalloc`, `hipFree`) runtime calls inside steps after the first.
//!
//! ## Why it matters
//! After warm-up the caching allocator should serve every request from its cache.
//! Device allocations in steady state mean the cache is being flushed or grown;
//! `cudaFree` synchronises the whole device.
//!
//! ## Evidence
//! Calls and time per step, the steps they occur in, the operators that triggered them.
//!
//! ## Fix
//! No `torch.cuda.empty_cache()` in the loop; static shapes; lower the peak
//! (checkpointing, smaller micro-batch); `expandable_segments:True`; warm up before
//! profiling.
//!
//! ## Thresholds and sources
//! Any such call in ≥ 2 steps after the first (step gating from
//! TraceML).

use std::collections::BTreeMap;

use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct AllocatorChurn;

static META: RuleMeta = RuleMeta {
    code: "ME005",
    name: "AllocatorChurn",
    family: "memory",
    since: "0.1.0",
    summary: "cudaMalloc / cudaFree in steady-state steps",
};

const CALLS: [&str; 9] = [
    "cudaMalloc",
    "cudaFree",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cuMemCreate",
    "cuMemMap",
    "cuMemUnmap",
    "hipMalloc",
    "hipFree",
];

impl Rule for AllocatorChurn {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if facts.n_steps() < 2 {
            return Vec::new();
        }
        let ev = facts.events(
            &[
                CategoryKind::CudaRuntime,
                CategoryKind::CudaDriver,
                CategoryKind::OtherRuntime,
            ],
            |n| CALLS.contains(&n),
        );
        let mut per = facts.per_step_ns(&ev);
        let mut counts = facts.per_step_count(&ev);
        per[0] = 0;
        counts[0] = 0;
        let seen = counts.iter().filter(|c| **c > 0).count();
        if seen == 0 {
            return Vec::new();
        }
        let steady = (facts.n_steps() - 1) as f64;
        let mean = per.iter().sum::<i64>() as f64 / steady;
        let mut callers: BTreeMap<String, u64> = BTreeMap::new();
        for &i in &ev {
            if facts
                .step_of(facts.trace.events.ts_ns[i])
                .is_some_and(|s| s > 0)
            {
                let c = facts.caller(i, |n| CALLS.contains(&n));
                *callers
                    .entry(format!("{} ← {c}", facts.name(i)))
                    .or_default() += 1;
            }
        }
        let mut callers: Vec<(String, u64)> = callers.into_iter().collect();
        callers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut evidence = vec![
            format!(
                "{} calls in {seen} of {} steps after the first, {:.3} ms per step",
                counts.iter().sum::<u64>(),
                facts.n_steps() - 1,
                ms(mean)
            ),
            format!("per step (first step excluded): {}", step_list_ms(&per)),
        ];
        evidence.extend(
            callers
                .iter()
                .take(3)
                .map(|(c, n)| format!("{c}: {n} calls")),
        );
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: "Device memory is allocated/freed in steady-state steps".to_owned(),
                severity: Severity::Warning,
                impact_ns: mean,
                steps_seen: seen,
                evidence,
                fix: "Keep the caching allocator warm: no torch.cuda.empty_cache() in the loop, \
                      static shapes (pad or bucket), a lower peak (checkpointing, smaller \
                      micro-batch), PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."
                    .to_owned(),
                details: "Allocator calls after the first step. Impact: \
                          the calls' host time; cudaFree also synchronises the device."
                    .to_owned(),
            },
        )]
    }
}
