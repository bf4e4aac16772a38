//! The per-trace summary behind `kinetoscope summary`: where the trace came from, the
//! PyTorch era, devices, rank, span, event counts per category, steps and warnings.

use std::collections::BTreeMap;

use kinetoscope_trace::{DeviceInfo, NsysInfo, RankSource, Trace};
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::stats::DurationStats;
use crate::steps::{find_steps, Step, StepSource};

/// Summary of one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceSummary {
    /// The file.
    pub path: String,
    /// Estimated PyTorch release range that wrote it.
    pub era: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// Where the rank came from.
    pub rank_source: Option<RankSource>,
    /// World size from `distributedInfo`.
    pub world_size: Option<i64>,
    /// Distributed backend (`nccl`, `gloo`).
    pub backend: Option<String>,
    /// GPUs from `deviceProperties`.
    pub devices: Vec<DeviceInfo>,
    /// First event start, epoch ns.
    pub start_ns: Option<i64>,
    /// Last event end minus first start, ns.
    pub span_ns: Option<i64>,
    /// Elements of `traceEvents` per normalised category (metadata as `(metadata)`,
    /// uncategorised as `(none)`).
    pub events_by_category: BTreeMap<String, u64>,
    /// All elements of `traceEvents` read.
    pub total_events: u64,
    /// Steps in time order.
    pub steps: Vec<Step>,
    /// Where the steps came from.
    pub step_source: StepSource,
    /// Step-time statistics.
    pub step_stats: Option<DurationStats>,
    /// Profiler options that were on.
    pub profiler_options: Vec<String>,
    /// Bytes of JSON text.
    pub json_bytes: u64,
    /// Bytes on disk.
    pub file_bytes: u64,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
    /// Warnings about the read (defects skipped or repaired) and the content.
    pub warnings: Vec<Note>,
    /// What an Nsight Systems export held (`None`, and absent from the JSON, for a
    /// Kineto trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nsys: Option<NsysInfo>,
}

/// Summarise one trace.
pub fn summarize(trace: &Trace) -> TraceSummary {
    let mut events_by_category = BTreeMap::new();
    for (_, c) in trace.categories.iter() {
        if c.count > 0 {
            *events_by_category
                .entry(c.display_name().to_owned())
                .or_insert(0) += c.count;
        }
    }
    let (steps, step_source) = find_steps(trace);
    let durations: Vec<i64> = steps.iter().map(|s| s.dur_ns).collect();
    let step_stats = if step_source == StepSource::ProfilerStep {
        DurationStats::of(&durations)
    } else {
        None
    };
    let dist = trace.meta.distributed.as_ref();
    let mut warnings: Vec<Note> = Note::from_trace(trace);
    if step_source == StepSource::WholeTrace {
        warnings.push(Note::NoStepMarkers);
    }
    let span = trace.span_ns();
    TraceSummary {
        path: trace.path.display().to_string(),
        era: trace.meta.pytorch_era().to_owned(),
        rank: trace.meta.rank.map(|r| r.value),
        rank_source: trace.meta.rank.map(|r| r.source),
        world_size: dist.and_then(|d| d.world_size),
        backend: dist.and_then(|d| d.backend.clone()),
        devices: trace.meta.devices.clone(),
        start_ns: span.map(|s| s.0),
        span_ns: span.map(|(a, b)| b - a),
        events_by_category,
        total_events: trace.report.elements,
        steps,
        step_source,
        step_stats,
        profiler_options: trace.meta.profiler_options.clone(),
        json_bytes: trace.report.json_bytes,
        file_bytes: trace.report.file_bytes,
        gzip: trace.report.gzip,
        warnings,
        nsys: trace.meta.nsys.clone(),
    }
}
