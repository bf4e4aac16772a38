//! The tracks a timeline shows: host threads and GPU streams that hold spans, with what
//! a front end needs to lay them out.

use kinetoscope_trace::{RawId, Trace, Track, TrackId, TrackKind};
use serde::{Deserialize, Serialize};

/// What runs on a track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrackClass {
    /// A host thread.
    Cpu,
    /// A GPU stream.
    Gpu,
    /// A special row (profiler span, overhead).
    Other,
}

/// A `pid` or `tid` as the trace wrote it: a number or a text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IdValue {
    /// An integer id.
    Int(i64),
    /// A text id.
    Text(String),
}

/// One track of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackInfo {
    /// The track's id (the model's track id; what window queries name).
    pub id: u32,
    /// What runs on it.
    pub kind: TrackClass,
    /// The trace's own name for it: the thread name, else the process label, else the
    /// process name (empty when the trace names it nowhere).
    pub label: String,
    /// `pid` as written.
    pub pid: IdValue,
    /// `tid` as written.
    pub tid: IdValue,
    /// GPU ordinal, for a GPU stream.
    pub device: Option<i64>,
    /// CUDA stream, for a GPU stream.
    pub stream: Option<i64>,
    /// Spans on the track.
    pub events: u64,
    /// Start of its first span, ns after the timeline's `t0_ns`.
    pub first_ns: i64,
    /// End of its last span, ns after `t0_ns`.
    pub last_ns: i64,
    /// Nesting levels (lanes) of its spans.
    pub max_depth: u32,
}

impl TrackInfo {
    /// The description of model track `id`, with its span count, extent (epoch ns, made
    /// relative to `t0`) and depth.
    pub(crate) fn new(trace: &Trace, id: TrackId, counts: (u64, i64, i64, u32), t0: i64) -> Self {
        let t: &Track = trace.tracks.get(id);
        let (kind, device, stream) = match t.kind {
            TrackKind::CpuThread => (TrackClass::Cpu, None, None),
            TrackKind::GpuStream { device, stream } => {
                (TrackClass::Gpu, Some(device), Some(stream))
            }
            TrackKind::Other => (TrackClass::Other, None, None),
        };
        let label = [t.thread_name, t.process_label, t.process_name]
            .into_iter()
            .map(|s| trace.strings.get(s))
            .find(|s| !s.is_empty())
            .unwrap_or_default()
            .to_owned();
        let (events, first, last, max_depth) = counts;
        Self {
            id: id.0,
            kind,
            label,
            pid: id_value(trace, t.pid),
            tid: id_value(trace, t.tid),
            device,
            stream,
            events,
            first_ns: first - t0,
            last_ns: last - t0,
            max_depth,
        }
    }

    /// Display order: host threads, GPU streams by device and stream, then the rest;
    /// by id within a class.
    pub(crate) fn order_key(&self) -> (u8, i64, i64, u32) {
        match self.kind {
            TrackClass::Cpu => (0, 0, 0, self.id),
            TrackClass::Gpu => (
                1,
                self.device.unwrap_or(0),
                self.stream.unwrap_or(0),
                self.id,
            ),
            TrackClass::Other => (2, 0, 0, self.id),
        }
    }
}

fn id_value(trace: &Trace, id: RawId) -> IdValue {
    match id {
        RawId::Int(i) => IdValue::Int(i),
        RawId::Str(s) => IdValue::Text(trace.strings.get(s).to_owned()),
    }
}
