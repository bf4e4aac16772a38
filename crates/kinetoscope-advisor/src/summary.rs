//! The one-screen summary above the findings: steps, breakdown, host-side phases, GPU
//! metrics, memory peaks against device memory, and communication time (used across
//! ranks).

use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::overview::{GpuMetrics, Parts};
use kinetoscope_analysis::stats::DurationStats;
use kinetoscope_analysis::steps::StepSource;
use kinetoscope_trace::{CategoryKind, Phase};
use serde::{Deserialize, Serialize};

use crate::facts::Facts;
use crate::rules::input::dataloader_stall::is_dataloader;

/// Host-side phases per step, ns (mean over steps).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// DataLoader fetches.
    pub dataloader_ns: f64,
    /// Host time of the forward pass: top-level work of the step before its first
    /// backward span.
    pub forward_ns: f64,
    /// Backward: autograd `evaluate_function` spans (any thread).
    pub backward_ns: f64,
    /// `Optimizer.step#…` and `Optimizer.zero_grad#…`.
    pub optimizer_ns: f64,
}

/// Peak memory of one device, as the memory view (`kinetoscope memory`) reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPeak {
    /// `CPU`, `GPU0`, ...
    pub device: String,
    /// Peak `Total Allocated` over the whole trace, bytes.
    pub peak_allocated_bytes: i64,
    /// Peak `Total Reserved`, bytes (0 when not recorded).
    pub peak_reserved_bytes: i64,
    /// Device memory from `deviceProperties`, bytes.
    pub capacity_bytes: Option<u64>,
    /// `max(peak reserved, peak allocated) / capacity` (0–1, above 1 when the trace
    /// claims more than the device has).
    pub peak_share_of_capacity: Option<f64>,
}

/// The summary of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Where the steps came from.
    pub step_source: StepSource,
    /// Steps analysed (the overview's kept steps).
    pub steps: usize,
    /// Step-time statistics (ns).
    pub step_stats: Option<DurationStats>,
    /// Mean step breakdown, ns (parts add up to the mean step).
    pub breakdown_ns: Option<Parts<f64>>,
    /// Mean step breakdown, shares of the mean step (0–1).
    pub breakdown_share: Option<Parts<f64>>,
    /// Host-side phases.
    pub phases: Phases,
    /// Per-GPU metrics.
    pub gpus: Vec<GpuMetrics>,
    /// Memory peaks per device.
    pub memory: Vec<MemoryPeak>,
    /// Host time in collectives per step, ns (outermost communication spans).
    pub communication_ns: f64,
    /// Warnings from reading and from the overview.
    pub warnings: Vec<Note>,
}

/// Whether a host span is a collective.
pub fn is_collective(name: &str) -> bool {
    name.starts_with("gloo:")
        || name.starts_with("nccl:")
        || name.starts_with("c10d::")
        || name == "record_param_comms"
        || name.starts_with("ProcessGroup")
}

/// Build the summary.
pub fn summarize(facts: &Facts) -> Summary {
    let n = facts.n_steps().max(1) as f64;
    let durs: Vec<i64> = facts.steps.iter().map(|s| s.dur_ns()).collect();
    let per_step = |ev: &[usize]| facts.per_step_ns(ev).iter().sum::<i64>() as f64 / n;
    let host = [CategoryKind::UserAnnotation, CategoryKind::CpuOp];
    let dl = facts.outermost(&facts.events(&host, is_dataloader));
    let opt = facts.outermost(&facts.events(&host, |n| {
        n.starts_with("Optimizer.step#") || n.starts_with("Optimizer.zero_grad#")
    }));
    let bwd = facts.outermost(&facts.events(&host, |n| {
        n.starts_with("autograd::engine::evaluate_function")
    }));
    // Forward: direct children of the step span that start before its first backward
    // span and are neither data loading nor optimizer work.
    let e = &facts.trace.events;
    let mut first_bwd = vec![i64::MAX; facts.n_steps()];
    for &b in &bwd {
        if let Some(s) = facts.step_of(e.ts_ns[b]) {
            first_bwd[s] = first_bwd[s].min(e.ts_ns[b]);
        }
    }
    let mut fwd_ns = 0i64;
    for i in facts.events(&host, |n| !n.starts_with("ProfilerStep#")) {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let Some(s) = facts.step_of(e.ts_ns[i]) else {
            continue;
        };
        if e.ts_ns[i] >= first_bwd[s] {
            continue;
        }
        // The nearest enclosing operator or annotation (Python frames skipped).
        let t = facts.trace;
        let Some(parent) = facts.ancestors(i).find(|&a| {
            matches!(
                t.categories.kind(t.events.cat[a]),
                CategoryKind::CpuOp | CategoryKind::UserAnnotation
            )
        }) else {
            continue;
        };
        if !facts.name(parent).starts_with("ProfilerStep#") {
            continue;
        }
        let name = facts.name(i);
        if is_dataloader(name) || name.starts_with("Optimizer.") || is_collective(name) {
            continue;
        }
        fwd_ns += e.dur_ns[i].min(first_bwd[s] - e.ts_ns[i]);
    }
    let comm = facts.outermost(&facts.events(&host, is_collective));
    let memory = facts
        .memory()
        .devices
        .iter()
        .filter(|d| crate::rules::memory::has_totals(d))
        .filter_map(|d| {
            let capacity_bytes = d.capacity_bytes.filter(|c| *c > 0);
            Some(MemoryPeak {
                device: d.device.clone(),
                peak_allocated_bytes: d.peak_allocated.as_ref()?.bytes,
                peak_reserved_bytes: d.peak_reserved.as_ref().map_or(0, |p| p.bytes.max(0)),
                capacity_bytes,
                peak_share_of_capacity: capacity_bytes.and(
                    match (
                        d.peak_allocated_share_of_capacity,
                        d.peak_reserved_share_of_capacity,
                    ) {
                        (Some(a), Some(r)) => Some(a.max(r)),
                        (a, r) => a.or(r),
                    },
                ),
            })
        })
        .collect();
    let avg = facts.overview.average.as_ref();
    Summary {
        step_source: facts.overview.step_source,
        steps: facts.n_steps(),
        step_stats: DurationStats::of(&durs),
        breakdown_ns: avg.map(|a| a.breakdown_ns),
        breakdown_share: avg.map(|a| a.share),
        phases: Phases {
            dataloader_ns: per_step(&dl),
            forward_ns: fwd_ns as f64 / n,
            backward_ns: per_step(&bwd),
            optimizer_ns: per_step(&opt),
        },
        gpus: facts.overview.gpus.clone(),
        memory,
        communication_ns: per_step(&comm),
        warnings: facts.overview.warnings.clone(),
    }
}
