//! What the timeline writers share: each rank becomes one process (`pid` = rank + 1,
//! named `rank N`, labelled with the original process names), each of its tracks that
//! holds a written event one thread (CPU threads first, then GPU streams by device and
//! stream, then special rows), numbered across all ranks so no two tracks share a
//! `tid`. Written events are spans (`X`) and instants; counters and other phases are
//! not. Launch → GPU flows come from the CUPTI correlation of the model.

use kinetoscope_trace::{EventId, Phase, RawId, Trace, TrackId, TrackKind};
use rustc_hash::FxHashMap;

/// One rank to write: its model, its rank and the clock offset to subtract.
#[derive(Clone, Copy)]
pub struct MergeInput<'a> {
    /// The rank (the process is `rank + 1`: some viewers treat pid 0 as the idle
    /// process).
    pub rank: i64,
    /// The model.
    pub trace: &'a Trace,
    /// Subtracted from every time of this rank, ns.
    pub offset_ns: i64,
}

/// One track of the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackOut {
    /// The model's track.
    pub track: TrackId,
    /// The output thread id (unique across ranks, from 1).
    pub tid: i64,
    /// Its name: the thread name, `GPU d stream s`, or the ids as written.
    pub name: String,
    /// Whether it is a GPU stream.
    pub gpu: bool,
}

/// One rank of the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankOut {
    /// The output process id (`rank + 1`).
    pub pid: i64,
    /// `rank N`.
    pub name: String,
    /// The original process names and ids.
    pub label: String,
    /// Its tracks in display order.
    pub tracks: Vec<TrackOut>,
    /// The output track index (into `tracks`) of each model track; `None` for a track
    /// without written events.
    pub by_track: Vec<Option<usize>>,
}

/// Whether an event is written: a span or an instant.
pub fn is_written(trace: &Trace, e: EventId) -> bool {
    matches!(
        trace.events.phase[e.index()],
        Phase::Complete | Phase::Instant
    )
}

/// The processes and threads of `inputs`, in input order.
pub fn layout(inputs: &[MergeInput<'_>]) -> Vec<RankOut> {
    let mut next_tid = 1;
    inputs
        .iter()
        .map(|input| rank_out(input, &mut next_tid))
        .collect()
}

fn rank_out(input: &MergeInput<'_>, next_tid: &mut i64) -> RankOut {
    let trace = input.trace;
    let mut used = vec![false; trace.tracks.len()];
    for e in trace.events.ids() {
        if is_written(trace, e) {
            used[trace.events.track[e.index()].index()] = true;
        }
    }
    let mut ids: Vec<TrackId> = trace
        .tracks
        .iter()
        .filter(|(id, _)| used[id.index()])
        .map(|(id, _)| id)
        .collect();
    ids.sort_by_key(|&id| sort_key(trace, id));
    let mut by_track = vec![None; trace.tracks.len()];
    let tracks = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| {
            by_track[id.index()] = Some(i);
            let tid = *next_tid;
            *next_tid += 1;
            let t = trace.tracks.get(id);
            TrackOut {
                track: id,
                tid,
                name: track_name(trace, id),
                gpu: matches!(t.kind, TrackKind::GpuStream { .. }),
            }
        })
        .collect();
    RankOut {
        pid: input.rank + 1,
        name: format!("rank {}", input.rank),
        label: process_label(trace),
        tracks,
        by_track,
    }
}

/// CPU threads (in model order), then GPU streams by device and stream, then the rest.
fn sort_key(trace: &Trace, id: TrackId) -> (u8, i64, i64, u32) {
    match trace.tracks.get(id).kind {
        TrackKind::CpuThread => (0, 0, 0, id.0),
        TrackKind::GpuStream { device, stream } => (1, device, stream, id.0),
        TrackKind::Other => (2, 0, 0, id.0),
    }
}

fn raw(trace: &Trace, id: RawId) -> String {
    match id {
        RawId::Int(i) => i.to_string(),
        RawId::Str(s) => trace.strings.get(s).to_owned(),
    }
}

/// A track's name: `GPU d stream s`, else its thread name, else `thread TID`.
pub fn track_name(trace: &Trace, id: TrackId) -> String {
    let t = trace.tracks.get(id);
    if let TrackKind::GpuStream { device, stream } = t.kind {
        return format!("GPU {device} stream {stream}");
    }
    let name = trace.strings.get(t.thread_name);
    if name.is_empty() {
        format!("thread {}", raw(trace, t.tid))
    } else {
        name.to_owned()
    }
}

/// The original processes of the host threads (all tracks when none is one): `name
/// (pid P)` each, distinct, in order, at most four then a count.
fn process_label(trace: &Trace) -> String {
    let host = trace
        .tracks
        .iter()
        .any(|(_, t)| t.kind == TrackKind::CpuThread);
    let mut seen: Vec<String> = Vec::new();
    for (_, t) in trace.tracks.iter() {
        if host && t.kind != TrackKind::CpuThread {
            continue;
        }
        let name = trace.strings.get(t.process_name);
        let pid = raw(trace, t.pid);
        let text = if name.is_empty() {
            format!("pid {pid}")
        } else {
            format!("{name} (pid {pid})")
        };
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    let more = seen.len().saturating_sub(4);
    seen.truncate(4);
    let mut label = seen.join(", ");
    if more > 0 {
        label.push_str(&format!(" and {more} more"));
    }
    label
}

/// Launch → GPU flows of one trace: each GPU activity whose runtime call is in the
/// trace, with that call, in the order of the GPU activities.
pub fn launch_flows(trace: &Trace) -> Vec<(EventId, EventId)> {
    let index = trace.correlation_index();
    let mut flows: Vec<(EventId, EventId)> = index
        .iter()
        .filter_map(|(l, gpus)| l.map(|l| (l, gpus)))
        .flat_map(|(l, gpus)| gpus.iter().map(move |&g| (l, g)))
        .filter(|&(l, g)| is_written(trace, l) && is_written(trace, g))
        .collect();
    flows.sort_unstable_by_key(|&(l, g)| (g, l));
    flows
}

/// The flows of [`launch_flows`] by event: the ids each launch starts and the id each
/// GPU activity ends, numbered from `first`.
pub struct FlowIds {
    /// Flow ids starting at a launch call.
    pub starts: FxHashMap<u32, Vec<u64>>,
    /// The flow id ending at a GPU activity.
    pub ends: FxHashMap<u32, u64>,
}

impl FlowIds {
    /// Number the flows of `trace` from `*next` (advanced past them).
    pub fn of(trace: &Trace, next: &mut u64) -> Self {
        let mut ids = Self {
            starts: FxHashMap::default(),
            ends: FxHashMap::default(),
        };
        for (l, g) in launch_flows(trace) {
            let id = *next;
            *next += 1;
            ids.starts.entry(l.0).or_default().push(id);
            ids.ends.insert(g.0, id);
        }
        ids
    }
}
