//! The overview behind `kinetoscope overview`: the TensorBoard plugin's Overview page
//! (torch-tb-profiler: steps, step-time breakdown, GPU summary, tensor cores), made
//! sound where the plugin is not
//! (docs/tb-plugin-differences.md).
//!
//! * Steps: `ProfilerStep#N` host spans, each stretched to the end of the GPU work it
//!   launched, with trailing steps whose GPU work was probably not captured dropped.
//! * Breakdown: each step's time split into Kernel, Memcpy, Memset, Communication,
//!   Runtime, DataLoader, CPU Exec and Other by priority, so the parts add up to the step.
//! * GPUs: utilization, estimated SM efficiency, estimated achieved occupancy and the
//!   tensor-core share of kernel time, over the window from the first kept step's start
//!   to the last one's end.

mod breakdown;
pub(crate) mod classify;
mod gpu_metrics;
pub(crate) mod intervals;
pub(crate) mod step_ranges;
pub mod tensor_cores;

use kinetoscope_trace::{DeviceInfo, GpuVendor, Trace};
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::steps::StepSource;

/// One value per part of a step, in the plugin's priority order (Other last).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Parts<T> {
    /// GPU kernels, except communication kernels.
    pub kernel: T,
    /// GPU memory copies.
    pub memcpy: T,
    /// GPU memory sets.
    pub memset: T,
    /// Collectives: host-side communication calls and communication kernels.
    pub communication: T,
    /// Host runtime / driver calls (`cudaLaunchKernel`, `cudaMemcpyAsync`, …).
    pub runtime: T,
    /// DataLoader / DataPipe fetches.
    pub dataloader: T,
    /// Other host operators and annotations.
    pub cpu_exec: T,
    /// None of the above.
    pub other: T,
}

impl<T: Copy> Parts<T> {
    /// Display names of the parts, in order.
    pub const NAMES: [&'static str; 8] = [
        "Kernel",
        "Memcpy",
        "Memset",
        "Communication",
        "Runtime",
        "DataLoader",
        "CPU Exec",
        "Other",
    ];
    /// Field names of the parts (as in JSON), in order.
    pub const KEYS: [&'static str; 8] = [
        "kernel",
        "memcpy",
        "memset",
        "communication",
        "runtime",
        "dataloader",
        "cpu_exec",
        "other",
    ];

    /// Parts from an array in priority order.
    pub fn from_array(a: [T; 8]) -> Self {
        let [kernel, memcpy, memset, communication, runtime, dataloader, cpu_exec, other] = a;
        Self {
            kernel,
            memcpy,
            memset,
            communication,
            runtime,
            dataloader,
            cpu_exec,
            other,
        }
    }

    /// The parts as an array in priority order.
    pub fn to_array(&self) -> [T; 8] {
        [
            self.kernel,
            self.memcpy,
            self.memset,
            self.communication,
            self.runtime,
            self.dataloader,
            self.cpu_exec,
            self.other,
        ]
    }

    /// Apply `f` to every part.
    pub fn map<U: Copy>(&self, f: impl Fn(T) -> U) -> Parts<U> {
        Parts::from_array(self.to_array().map(f))
    }
}

/// One step of the breakdown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepBreakdown {
    /// `ProfilerStep#N`, or `(whole trace)` when the trace has no step markers.
    pub name: String,
    /// N, when the name carries it.
    pub number: Option<i64>,
    /// Start after stretching, epoch ns.
    pub start_ns: i64,
    /// Duration after stretching, ns.
    pub dur_ns: i64,
    /// GPU activities launched from inside the host step (used for tail trimming).
    pub device_events: u64,
    /// The parts, ns; they add up to `dur_ns`.
    pub breakdown_ns: Parts<i64>,
}

/// The mean step over the kept steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AverageBreakdown {
    /// Number of steps averaged.
    pub steps: usize,
    /// Mean step duration, ns.
    pub dur_ns: f64,
    /// Mean of each part, ns.
    pub breakdown_ns: Parts<f64>,
    /// Each mean part as a share of the mean step (`part / dur`, 0–1).
    pub share: Parts<f64>,
}

/// Metrics of one GPU over the step window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuMetrics {
    /// Device id (the kernels' `device` arg; on ROCm the `deviceProperties` id the
    /// reader matched the HSA agent to).
    pub id: i64,
    /// Name from `deviceProperties` (the vendor and architecture, `AMD gfx942`, when the
    /// name there is empty), when the device is listed.
    pub name: Option<String>,
    /// Whose GPU it is: renderers say tensor cores and SMs (NVIDIA) or matrix cores and
    /// CUs (AMD).
    #[serde(default)]
    pub vendor: GpuVendor,
    /// Kernels run on this GPU (in the whole trace).
    pub kernels: u64,
    /// Fraction of the window with at least one kernel running (0–1).
    pub utilization: Option<f64>,
    /// Estimated SM efficiency (0–1): time-weighted `min(Σ blocks per SM, 1)`; `None`
    /// without `blocks per SM` args.
    pub sm_efficiency: Option<f64>,
    /// Estimated achieved occupancy (0–1): kernel-time-weighted mean of `est. achieved
    /// occupancy %` / 100; `None` without that arg.
    pub achieved_occupancy: Option<f64>,
    /// Share of kernel time in the window spent in tensor-core (NVIDIA) or matrix-core
    /// (AMD) kernels (0–1), by kernel name ([`tensor_cores::uses_tensor_cores`]).
    pub tensor_core_ratio: Option<f64>,
}

/// The overview of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceOverview {
    /// The file.
    pub path: String,
    /// Worker name from the file name (`worker0` in `worker0.1623143089861.pt.trace.json.gz`).
    pub worker: String,
    /// Span tag from the file name (the `tensorboard_trace_handler` timestamp), if any.
    pub span: Option<String>,
    /// Rank from `distributedInfo`, else from the file name.
    pub rank: Option<i64>,
    /// Where the steps came from.
    pub step_source: StepSource,
    /// Kept steps, in time order.
    pub steps: Vec<StepBreakdown>,
    /// Names of trailing steps dropped because their GPU work looks incompletely captured.
    pub dropped_steps: Vec<String>,
    /// The mean step, when there are steps.
    pub average: Option<AverageBreakdown>,
    /// The window the GPU metrics cover, `[start, end]` epoch ns.
    pub window_ns: Option<[i64; 2]>,
    /// Per-GPU metrics, by device id.
    pub gpus: Vec<GpuMetrics>,
    /// GPUs from `deviceProperties`.
    pub devices: Vec<DeviceInfo>,
    /// What the reader repaired and what the analysis had to assume.
    pub warnings: Vec<Note>,
}

/// Compute and keep the trace's step windows (stretched and trimmed as the overview
/// draws them), which the overview, `comm`, the critical path and the kernel sequences
/// all start from: a handle that keeps its traces prepares them once.
pub fn prepare_steps(trace: &Trace) {
    step_ranges::step_plan(trace);
}

/// Compute the overview of one trace.
pub fn overview(trace: &Trace) -> TraceOverview {
    overview_and_activity(trace).0
}

/// [`overview`], and the trace's launch calls against its recorded device activity
/// ([`crate::device_activity::device_activity`]), which the overview computes for its
/// warnings and the advisor keeps.
pub fn overview_and_activity(
    trace: &Trace,
) -> (TraceOverview, crate::device_activity::DeviceActivity) {
    let classes = classify::Classes::new(trace);
    // Independent passes run on two threads: reading used both cores, and these passes
    // are most of what `overview` adds to it.
    let (plan, sets) = std::thread::scope(|s| {
        let sets = s.spawn(|| breakdown::role_sets(trace, &classes));
        let plan = step_ranges::step_plan(trace);
        (plan, sets.join().expect("role sets"))
    });
    let window = match (plan.steps.first(), plan.steps.last()) {
        (Some(a), Some(b)) => Some((a.start, b.end)),
        _ => None,
    };
    let (parts, gpus) = std::thread::scope(|s| {
        let gpus = s.spawn(|| gpu_metrics::gpu_metrics(trace, &classes, window));
        let parts = breakdown::breakdown(&sets, &plan.steps);
        (parts, gpus.join().expect("gpu metrics"))
    });
    let steps: Vec<StepBreakdown> = plan
        .steps
        .iter()
        .zip(parts)
        .map(|(s, p)| StepBreakdown {
            name: s.name.clone(),
            number: s.number,
            start_ns: s.start,
            dur_ns: s.end - s.start,
            device_events: s.device_events,
            breakdown_ns: p,
        })
        .collect();

    let file_name = trace
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (worker, span) = worker_and_span(&file_name);
    let rank = trace.meta.rank.map(|r| r.value);
    let mut warnings: Vec<Note> = Note::from_trace(trace);
    if plan.source == StepSource::WholeTrace {
        warnings.push(Note::NoStepMarkers);
    }
    let activity = crate::device_activity::device_activity(trace);
    if activity.missing() {
        warnings.push(Note::NoDeviceActivity {
            launch_calls: activity.kernel_launch_calls,
        });
    }
    if !plan.dropped.is_empty() {
        warnings.push(Note::DroppedTailSteps {
            steps: plan.dropped.iter().map(|s| s.name.clone()).collect(),
        });
    }
    let overview = TraceOverview {
        path: trace.path.display().to_string(),
        worker,
        span,
        rank,
        step_source: plan.source,
        average: average(&steps),
        steps,
        dropped_steps: plan.dropped.iter().map(|s| s.name.clone()).collect(),
        window_ns: window.map(|(a, b)| [a, b]),
        gpus,
        devices: trace.meta.devices.clone(),
        warnings,
    };
    (overview, activity)
}

/// The mean of the steps' parts.
fn average(steps: &[StepBreakdown]) -> Option<AverageBreakdown> {
    if steps.is_empty() {
        return None;
    }
    let n = steps.len() as f64;
    let mut sums = [0i64; 8];
    for s in steps {
        for (sum, v) in sums.iter_mut().zip(s.breakdown_ns.to_array()) {
            *sum += v;
        }
    }
    let total: i64 = steps.iter().map(|s| s.dur_ns).sum();
    let dur_ns = total as f64 / n;
    let breakdown_ns = Parts::from_array(sums.map(|v| v as f64 / n));
    let share = breakdown_ns.map(|v| if dur_ns > 0.0 { v / dur_ns } else { 0.0 });
    Some(AverageBreakdown {
        steps: steps.len(),
        dur_ns,
        breakdown_ns,
        share,
    })
}

/// Worker and span from a trace file name, the way `tensorboard_trace_handler` names
/// them: `<worker>[.<span>].pt.trace.json[.gz]`. Other names give the name without its
/// `.json[.gz]` suffix as the worker and no span.
pub fn worker_and_span(file_name: &str) -> (String, Option<String>) {
    let stem = [".pt.trace.json.gz", ".pt.trace.json"]
        .iter()
        .find_map(|s| file_name.strip_suffix(s));
    let Some(stem) = stem else {
        let w = [".json.gz", ".json", ".gz"]
            .iter()
            .find_map(|s| file_name.strip_suffix(s))
            .unwrap_or(file_name);
        return (w.to_owned(), None);
    };
    match stem.rsplit_once('.') {
        Some((w, span))
            if !w.is_empty() && !span.is_empty() && span.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (w.to_owned(), Some(span.to_owned()))
        }
        _ => (stem.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_names() {
        assert_eq!(
            worker_and_span("worker0.1623143089861.pt.trace.json.gz"),
            ("worker0".into(), Some("1623143089861".into()))
        );
        assert_eq!(
            worker_and_span("worker0.pt.trace.json.gz"),
            ("worker0".into(), None)
        );
        assert_eq!(
            worker_and_span("host_123.99.pt.trace.json"),
            ("host_123".into(), Some("99".into()))
        );
        assert_eq!(worker_and_span("rank0.json.gz"), ("rank0".into(), None));
    }
}
