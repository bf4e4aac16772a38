//! Same-track slices that cannot be drawn as one stack:
//!
//! - **GPU streams**: a stream runs one activity at a time, so a kernel, copy or set
//!   that starts before the previous one on its stream has ended is a defect (one event
//!   per overlap, measured against the latest end so far). Viewers that lay a track out
//!   as a stack (Perfetto before v57) drop such slices.
//! - **Host threads**: slices must nest. A slice that starts inside another and ends
//!   after it (its duration runs past its parent's end) crosses it. Crossings with a
//!   Python frame (`python_function`, with_stack traces) are counted apart: a
//!   `record_function` range opens inside the frame of its enter call and closes in
//!   another frame, so these are how PyTorch records ranges, not lost data.

use kinetoscope_trace::{CategoryKind, EventId, Phase, Trace, TrackKind};

use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts};

/// Whether a kind is a GPU activity that occupies its stream.
fn occupies_stream(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
    )
}

/// The events of each track to sweep: GPU activities on streams, host spans on
/// threads (durations are never negative in the model: the reader reads them as 0 and
/// counts them).
fn per_track(trace: &Trace) -> Vec<Vec<u32>> {
    let e = &trace.events;
    let mut tracks: Vec<Vec<u32>> = vec![Vec::new(); trace.tracks.len()];
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = trace.categories.kind(e.cat[i]);
        let Some(track) = trace.tracks.list.get(e.track[i].index()) else {
            continue;
        };
        let keep = match track.kind {
            TrackKind::GpuStream { .. } => occupies_stream(kind),
            TrackKind::CpuThread => !kind.is_gpu() && kind != CategoryKind::TraceSpan,
            TrackKind::Other => false,
        };
        if keep {
            tracks[e.track[i].index()].push(i as u32);
        }
    }
    tracks
}

/// Overlaps on GPU streams, crossings on host threads.
pub fn check(trace: &Trace, opts: &CheckOptions) -> Vec<CheckResult> {
    let mut tracks = per_track(trace);
    let mut gpu = (0u64, Firsts::new(opts.examples));
    let mut host = (0u64, Firsts::new(opts.examples));
    let mut python = (0u64, Firsts::new(opts.examples));
    for (t, ids) in tracks.iter_mut().enumerate() {
        if ids.is_empty() {
            continue;
        }
        match trace.tracks.list[t].kind {
            TrackKind::GpuStream { .. } => stream_overlaps(trace, ids, &mut gpu),
            _ => thread_crossings(trace, ids, [&mut host, &mut python]),
        }
    }
    vec![
        CheckResult::new(CheckKind::GpuStreamOverlap, gpu.0, gpu.1),
        CheckResult::new(CheckKind::HostSliceCrossing, host.0, host.1),
        CheckResult::new(CheckKind::PythonFrameCrossing, python.0, python.1),
    ]
}

/// One stream: sorted by start, each activity that starts before the latest end so far
/// overlaps the activity that ends there.
fn stream_overlaps(trace: &Trace, ids: &mut [u32], found: &mut (u64, Firsts)) {
    let e = &trace.events;
    ids.sort_unstable_by_key(|&i| (e.ts_ns[i as usize], e.dur_ns.at(i as usize), i));
    let mut latest: Option<u32> = None;
    for &i in ids.iter() {
        let (start, end) = (e.ts_ns[i as usize], e.end_ns(EventId(i)));
        if let Some(p) = latest {
            let p_end = e.end_ns(EventId(p));
            if start < p_end {
                found.0 += 1;
                found.1.offer(start, || Example {
                    amount_ns: Some(end.min(p_end).saturating_sub(start)),
                    ..Example::at(trace, EventId(i)).with_other(trace, EventId(p))
                });
            }
            if end <= p_end {
                continue;
            }
        }
        latest = Some(i);
    }
}

/// One thread: sorted by start (longest first on ties) and walked with a stack of open
/// slices; a slice that starts inside the top one and ends after it crosses it. Into
/// `found[1]` when either is a Python frame, else into `found[0]`.
fn thread_crossings(trace: &Trace, ids: &mut [u32], found: [&mut (u64, Firsts); 2]) {
    let [host, python] = found;
    let e = &trace.events;
    ids.sort_unstable_by_key(|&i| (e.ts_ns[i as usize], -e.dur_ns.at(i as usize), i));
    let mut stack: Vec<u32> = Vec::new();
    for &i in ids.iter() {
        let (start, end) = (e.ts_ns[i as usize], e.end_ns(EventId(i)));
        while let Some(&top) = stack.last() {
            if start >= e.end_ns(EventId(top)) {
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&top) = stack.last() {
            let top_end = e.end_ns(EventId(top));
            if end > top_end {
                let frame = |x: u32| {
                    trace.categories.kind(e.cat[x as usize]) == CategoryKind::PythonFunction
                };
                let found = if frame(i) || frame(top) {
                    &mut *python
                } else {
                    &mut *host
                };
                found.0 += 1;
                found.1.offer(start, || Example {
                    amount_ns: Some(end.saturating_sub(top_end)),
                    ..Example::at(trace, EventId(i)).with_other(trace, EventId(top))
                });
                // The crossing slice closes with the one it crossed: what follows is
                // measured against the enclosing slices, not against it.
                continue;
            }
        }
        stack.push(i);
    }
}
