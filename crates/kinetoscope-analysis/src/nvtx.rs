//! The NVTX view (`nsys stats --report nvtx_sum`, with the GPU projection of the
//! `nvtx_gpu_proj_sum` recipe): per range name, how many times it ran and how long,
//! and the GPU work launched inside it.
//!
//! Ranges are the host spans a trace names: in an Nsight Systems export every NVTX
//! push/pop and start/end range (`emit_nvtx` operator ranges under their operator's
//! name); in a Kineto trace the `record_function` ranges (`user_annotation`), which
//! are what PyTorch also pushes to NVTX.
//!
//! The GPU time of a range instance is the device time of the kernels, copies and sets
//! whose runtime call lies inside it on its thread (`gpu_time_ns`), and the projected
//! span, first start to last end of that work (`gpu_span_ns`, what `nvtx_gpu_proj_sum`
//! calls the projected duration).

use std::collections::HashMap;

use kinetoscope_trace::{CategoryKind, EventId, Phase, Trace, TrackId};
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::stats::percentile;

/// One range name's statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvtxRange {
    /// The range name.
    pub name: String,
    /// Whether the ranges are operators (`emit_nvtx` ranges, `cpu_op`).
    pub operator: bool,
    /// Instances.
    pub count: u64,
    /// Sum of durations, ns.
    pub total_ns: i64,
    /// Share of the summed duration of every range (0–1).
    pub share: f64,
    /// Mean duration, ns.
    pub avg_ns: f64,
    /// Median duration, ns (the mean of the middle two for an even count).
    pub median_ns: f64,
    /// Shortest, ns.
    pub min_ns: i64,
    /// Longest, ns.
    pub max_ns: i64,
    /// Sample standard deviation (n − 1; 0 for one instance), ns, as `nsys stats`.
    pub stddev_ns: f64,
    /// Device time of the GPU work launched inside the instances, ns.
    pub gpu_time_ns: i64,
    /// Sum over instances of the projected span (first start to last end of the GPU
    /// work launched inside), ns.
    pub gpu_span_ns: i64,
    /// GPU activities launched inside the instances.
    pub gpu_activities: u64,
}

/// The NVTX view of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceNvtx {
    /// The file.
    pub path: String,
    /// Whether the trace is an Nsight Systems export (its NVTX ranges) or a Kineto
    /// trace (its `record_function` ranges).
    pub nsys: bool,
    /// Ranges by total time, longest first (then name).
    pub ranges: Vec<NvtxRange>,
    /// What the reader got past and what the capture lacks.
    pub warnings: Vec<Note>,
}

/// Options of the NVTX view.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvtxOptions {
    /// Keep only range names containing this text.
    pub filter: Option<String>,
    /// Keep the first N rows (all when `None`).
    pub top: Option<usize>,
}

/// Per-name accumulation.
#[derive(Default)]
struct Acc {
    operator: bool,
    durations: Vec<i64>,
    gpu_time_ns: i64,
    gpu_span_ns: i64,
    gpu_activities: u64,
}

/// The NVTX view of `trace`.
pub fn nvtx(trace: &Trace, opts: &NvtxOptions) -> TraceNvtx {
    let nsys = trace.meta.nsys.is_some();
    let e = &trace.events;
    // Launch calls per thread, by start.
    let mut calls: HashMap<TrackId, Vec<(i64, EventId)>> = HashMap::new();
    for id in e.ids() {
        let i = id.index();
        if e.phase[i] == Phase::Complete
            && trace.kind(id).is_launch_call()
            && e.correlation.at(i) != 0
        {
            calls.entry(e.track[i]).or_default().push((e.ts_ns[i], id));
        }
    }
    for v in calls.values_mut() {
        v.sort_unstable();
    }
    let index = trace.correlation_index();
    let mut by_name: HashMap<&str, Acc> = HashMap::new();
    for id in e.ids() {
        let i = id.index();
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = trace.kind(id);
        let is_range = match kind {
            CategoryKind::UserAnnotation => true,
            CategoryKind::CpuOp => nsys,
            _ => false,
        };
        if !is_range {
            continue;
        }
        let name = trace.name(id);
        if opts.filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let acc = by_name.entry(name).or_default();
        acc.operator |= kind == CategoryKind::CpuOp;
        acc.durations.push(e.dur_ns.at(i));
        let (start, end) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i));
        let Some(list) = calls.get(&e.track[i]) else {
            continue;
        };
        let from = list.partition_point(|&(ts, _)| ts < start);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for &(ts, call) in &list[from..] {
            if ts > end {
                break;
            }
            for &g in index.gpu(e.correlation.at(call.index())) {
                if !matches!(
                    trace.kind(g),
                    CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
                ) {
                    continue;
                }
                let gi = g.index();
                acc.gpu_time_ns += e.dur_ns.at(gi);
                acc.gpu_activities += 1;
                lo = lo.min(e.ts_ns[gi]);
                hi = hi.max(e.ts_ns[gi] + e.dur_ns.at(gi));
            }
        }
        if lo <= hi {
            acc.gpu_span_ns += hi - lo;
        }
    }
    let all: i64 = by_name.values().flat_map(|a| &a.durations).sum();
    let mut ranges: Vec<NvtxRange> = by_name
        .into_iter()
        .map(|(name, mut a)| {
            a.durations.sort_unstable();
            let n = a.durations.len();
            let total: i64 = a.durations.iter().sum();
            let avg = total as f64 / n as f64;
            let var = if n > 1 {
                a.durations
                    .iter()
                    .map(|&d| (d as f64 - avg).powi(2))
                    .sum::<f64>()
                    / (n - 1) as f64
            } else {
                0.0
            };
            NvtxRange {
                name: name.to_owned(),
                operator: a.operator,
                count: n as u64,
                total_ns: total,
                share: if all > 0 {
                    total as f64 / all as f64
                } else {
                    0.0
                },
                avg_ns: avg,
                median_ns: percentile(&a.durations, 0.5),
                min_ns: a.durations[0],
                max_ns: a.durations[n - 1],
                stddev_ns: var.sqrt(),
                gpu_time_ns: a.gpu_time_ns,
                gpu_span_ns: a.gpu_span_ns,
                gpu_activities: a.gpu_activities,
            }
        })
        .collect();
    ranges.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    if let Some(top) = opts.top {
        ranges.truncate(top);
    }
    TraceNvtx {
        path: trace.path.display().to_string(),
        nsys,
        ranges,
        warnings: Note::from_trace(trace),
    }
}
