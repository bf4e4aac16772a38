//! ME005 `AllocatorChurn`.
//!
//! ## What it finds
//! `cudaMalloc` / `cudaFree` (and `cudaMallocAsync`, `cuMemCreate`, `cuMemMap`,
//! `cuMemUnmap`, `cuMemAlloc`, `cuMemFree`, `hipMalloc`, `hipFree`, pinned host
//! allocations) runtime calls inside steps after the first. Without step markers, where
//! warm-up cannot be told from steady state, the calls when they take a large share of
//! the trace.
//!
//! ## Why it matters
//! After warm-up the caching allocator should serve every request from its cache.
//! Device allocations in steady state mean the cache is being flushed or grown;
//! `cudaFree` synchronises the whole device.
//!
//! ## Evidence
//! Calls and host time per step, the GPU idle during them, the steps they occur in, the
//! calls by name and the operators that triggered them.
//!
//! ## Fix
//! No `torch.cuda.empty_cache()` in the loop; static shapes; lower the peak
//! (checkpointing, smaller micro-batch); `expandable_segments:True`; warm up before
//! profiling.
//!
//! ## Thresholds and sources
//! Any such call in ≥ 2 steps after the first (step gating from TraceML). Without
//! `ProfilerStep#` markers (the whole trace is one step, which includes warm-up): the
//! calls take ≥ `allocator_churn.whole_trace_min_share_pct` (5 %, proposal) of the
//! trace's host time, reported with the confidence of one step (info). Impact: the
//! time the GPU waits for the host during the calls (a device free also drains the
//! queue: HostDeviceSync counts the idle after it); on a trace whose device activity is
//! missing, unknown (0).

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

const CALLS: [&str; 18] = [
    "cudaMalloc",
    "cudaFree",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaFreeHost",
    "cuMemCreate",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemAlloc",
    "cuMemFree",
    "hipMalloc",
    "hipFree",
    "hipMallocAsync",
    "hipFreeAsync",
    "hipHostMalloc",
    "hipHostFree",
];

/// Whether a runtime or driver call allocates or frees memory (driver calls carry a
/// version suffix: `cuMemAlloc_v2`).
fn is_allocator_call(name: &str) -> bool {
    CALLS.contains(&name.strip_suffix("_v2").unwrap_or(name))
}

impl Rule for AllocatorChurn {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let whole_trace = !facts.has_step_markers;
        if facts.n_steps() == 0 || (!whole_trace && facts.n_steps() < 2) {
            return Vec::new();
        }
        let Some(churn) = Churn::measure(facts, whole_trace) else {
            return Vec::new();
        };
        if whole_trace && churn.share < config.allocator_churn.whole_trace_min_share_pct {
            return Vec::new();
        }
        vec![churn.finding(facts, config)]
    }
}

/// Calls by name: count and host time, ns.
type ByName<'f> = Vec<(&'f str, (u64, i64))>;
/// Calls by `name ← caller`: count.
type ByCaller = Vec<(String, u64)>;

/// The allocator calls of the steady-state steps and what they cost.
struct Churn {
    /// No step markers: the whole trace is one step, warm-up included.
    whole_trace: bool,
    /// The allocator calls, in event order.
    calls: Vec<usize>,
    /// Steps skipped as warm-up (the first, with step markers).
    skip: usize,
    /// Steady-state steps.
    steady: f64,
    /// Host time in the calls, per step (0 for the skipped steps).
    per_step_ns: Vec<i64>,
    /// Calls per step (0 for the skipped steps).
    counts: Vec<u64>,
    /// Steady-state steps with a call.
    seen: usize,
    /// Mean host time in the calls per steady-state step.
    mean_ns: f64,
    /// The calls' share of the steps' host time, %.
    share: f64,
}

impl Churn {
    /// The allocator calls after warm-up; `None` when there are none.
    fn measure(facts: &Facts, whole_trace: bool) -> Option<Self> {
        let calls = facts.events(
            &[
                CategoryKind::CudaRuntime,
                CategoryKind::CudaDriver,
                CategoryKind::OtherRuntime,
            ],
            is_allocator_call,
        );
        // Steady state: every step after the first; without markers, the whole trace.
        let skip = usize::from(!whole_trace);
        let steady = (facts.n_steps() - skip) as f64;
        let mut per_step_ns = facts.per_step_ns(&calls);
        let mut counts = facts.per_step_count(&calls);
        for s in 0..skip {
            per_step_ns[s] = 0;
            counts[s] = 0;
        }
        let seen = counts.iter().filter(|c| **c > 0).count();
        if seen == 0 {
            return None;
        }
        let mean_ns = per_step_ns.iter().sum::<i64>() as f64 / steady;
        let host_ns: i64 = facts.host_steps.iter().map(|h| h.1 - h.0).sum();
        let share = 100.0 * mean_ns * steady / host_ns.max(1) as f64;
        Some(Self {
            whole_trace,
            calls,
            skip,
            steady,
            per_step_ns,
            counts,
            seen,
            mean_ns,
            share,
        })
    }

    /// The time the GPU waits for the host during the steady-state calls, per step
    /// (overlaps counted once).
    fn gpu_idle_per_step(&self, facts: &Facts) -> f64 {
        let e = &facts.trace.events;
        let mut windows = vec![Vec::new(); facts.n_steps()];
        if facts.has_gpu {
            for &i in &self.calls {
                if let Some(s) = facts.step_of_event(i).filter(|s| *s >= self.skip) {
                    windows[s].push((e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i)));
                }
            }
        }
        let idle_ns: i64 = windows
            .into_iter()
            .map(|w| facts.gpu_waiting_in_union(w))
            .sum();
        idle_ns as f64 / self.steady
    }

    /// The steady-state calls by name (count and host time, the most time first) and by
    /// name and calling operator (the most calls first).
    fn by_name_and_caller<'f>(&self, facts: &'f Facts) -> (ByName<'f>, ByCaller) {
        let e = &facts.trace.events;
        let in_steady = |i: usize| facts.step_of_event(i).is_some_and(|s| s >= self.skip);
        let mut by_name: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        let mut callers: BTreeMap<String, u64> = BTreeMap::new();
        let mut caller = facts.callers(is_allocator_call);
        for &i in self.calls.iter().filter(|&&i| in_steady(i)) {
            let name = facts.name(i);
            let v = by_name.entry(name).or_default();
            v.0 += 1;
            v.1 += e.dur_ns.at(i);
            let c = caller.of(i);
            *callers.entry(format!("{name} ← {c}")).or_default() += 1;
        }
        let mut by_name: Vec<(&str, (u64, i64))> = by_name.into_iter().collect();
        by_name.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(b.0)));
        let mut callers: Vec<(String, u64)> = callers.into_iter().collect();
        callers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        (by_name, callers)
    }

    /// The finding: title, evidence, fix and details.
    fn finding(&self, facts: &Facts, config: &Config) -> Finding {
        let impact = self.gpu_idle_per_step(facts);
        let (by_name, callers) = self.by_name_and_caller(facts);
        let evidence = self.evidence(facts, impact, &by_name, &callers);
        let title = if self.whole_trace {
            format!(
                "Device memory allocation calls take {:.1} % of the trace ({}, {} calls)",
                self.share,
                by_name.first().map_or("", |b| b.0),
                by_name.first().map_or(0, |b| b.1 .0)
            )
        } else {
            "Device memory is allocated/freed in steady-state steps".to_owned()
        };
        finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title,
                severity: Severity::Warning,
                impact_ns: impact,
                steps_seen: self.seen,
                evidence,
                fix: "Keep the caching allocator warm: no torch.cuda.empty_cache() in the loop, \
                      static shapes (pad or bucket), a lower peak (checkpointing, smaller \
                      micro-batch), PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; warm \
                      up before profiling."
                    .to_owned(),
                details: self.details(config),
            },
        )
    }

    /// The evidence lines: calls and host time, per step, GPU idle, the top names and
    /// callers.
    fn evidence(
        &self,
        facts: &Facts,
        impact: f64,
        by_name: &[(&str, (u64, i64))],
        callers: &[(String, u64)],
    ) -> Vec<String> {
        let calls: u64 = self.counts.iter().sum();
        let (share, mean, steady) = (self.share, self.mean_ns, self.steady);
        let mut evidence = vec![if self.whole_trace {
            format!(
                "{calls} calls in the trace (no step markers: warm-up included), {:.3} ms of \
                 host time ({share:.1} % of the trace)",
                ms(mean)
            )
        } else {
            format!(
                "{calls} calls in {} of {} steps after the first, {:.3} ms of host time \
                 per step",
                self.seen,
                facts.n_steps() - 1,
                ms(mean)
            )
        }];
        if !self.whole_trace {
            evidence.push(format!(
                "per step (first step excluded): {}",
                step_list_ms(&self.per_step_ns)
            ));
        }
        evidence.push(if facts.device_activity_missing() {
            "GPU idle during the calls unknown: device activity is missing from the trace"
                .to_owned()
        } else {
            format!(
                "the GPU waits for the host {:.3} ms per step during the calls",
                ms(impact)
            )
        });
        evidence.extend(by_name.iter().take(3).map(|(name, (c, d))| {
            format!(
                "{name}: {:.1} calls, {:.3} ms per step",
                *c as f64 / steady,
                ms(*d as f64 / steady)
            )
        }));
        evidence.extend(
            callers
                .iter()
                .take(3)
                .map(|(c, n)| format!("{c}: {n} calls")),
        );
        evidence
    }

    /// The thresholds and what the impact counts.
    fn details(&self, config: &Config) -> String {
        if self.whole_trace {
            format!(
                "No ProfilerStep# markers: the whole trace is one step, warm-up \
                 included, so steady state cannot be told apart; allocator calls \
                 {:.1} % ≥ {} % of the trace's host time \
                 (allocator_churn.whole_trace_min_share_pct, proposal). Impact: the \
                 time the GPU waits for the host during the calls.",
                self.share, config.allocator_churn.whole_trace_min_share_pct
            )
        } else {
            "Allocator calls after the first step. Impact: the time the GPU waits \
             for the host during the calls; cudaFree also synchronises the device \
             (HostDeviceSync counts the idle after it)."
                .to_owned()
        }
    }
}
