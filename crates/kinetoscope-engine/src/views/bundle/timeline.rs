//! The timeline part of the offline bundle: per trace, its tracks and a pyramid of
//! windows (the whole range, then halves, quarters, … overlapping by half a window, all
//! at [`WINDOW_PX`] pixels), level after level while the trace's share of the budget
//! lasts and until a level merges nothing (every span is then shown as it is). A zoom of the offline page is answered by the finest embedded window that
//! covers it: any range up to half a level's window width lies inside one window of
//! that level.

use kinetoscope_analysis::timeline::{TimelineIndex, TimelineTracks, Window, WindowQuery};
use kinetoscope_trace::Trace;

/// The width the embedded windows are computed for.
pub const WINDOW_PX: u32 = 2000;

/// Deepest level tried (2^(k+1) − 1 windows at level k).
const MAX_LEVEL: u32 = 12;

/// What one trace contributes: its tracks and the windows that fit.
#[derive(Debug)]
pub struct TraceTimeline {
    /// The tracks and extent.
    pub tracks: TimelineTracks,
    /// The windows, coarsest first.
    pub windows: Vec<Window>,
    /// Levels embedded (0: not even the whole range fitted).
    pub levels: u32,
    /// Bytes of JSON the windows take.
    pub bytes: usize,
}

/// The tracks of `trace` and as many levels of windows as fit in `budget` bytes.
pub fn trace_timeline(trace: &Trace, budget: usize) -> TraceTimeline {
    let index = TimelineIndex::build(trace);
    let tracks = index.tracks().clone();
    let mut out = TraceTimeline {
        tracks,
        windows: Vec::new(),
        levels: 0,
        bytes: 0,
    };
    let extent = out.tracks.t1_ns.max(1);
    for level in 0..=MAX_LEVEL {
        let width = extent >> level;
        if width < i64::from(WINDOW_PX) {
            break;
        }
        let Some((windows, bytes)) =
            level_windows(&index, trace, extent, width, budget - out.bytes)
        else {
            break;
        };
        // A level whose windows merged nothing shows every span: finer ones add nothing.
        let complete = windows.iter().all(is_full_detail);
        out.windows.extend(windows);
        out.bytes += bytes;
        out.levels = level + 1;
        if complete {
            break;
        }
    }
    out
}

/// Whether a window holds every span as it is (no merged bucket).
fn is_full_detail(w: &Window) -> bool {
    w.tracks
        .iter()
        .all(|t| t.slices.count.iter().all(|&c| c == 1))
}

/// The windows of one level (`width` ns each, stepping by half of it over `[0,
/// extent]`), or `None` when they do not fit in `room` bytes.
fn level_windows(
    index: &TimelineIndex,
    trace: &Trace,
    extent: i64,
    width: i64,
    room: usize,
) -> Option<(Vec<Window>, usize)> {
    let step = (width / 2).max(1);
    let mut windows = Vec::new();
    let mut bytes = 0usize;
    let mut start = 0i64;
    loop {
        let end = (start + width).min(extent).max(start + 1);
        let q = WindowQuery {
            start_ns: start,
            end_ns: end,
            width_px: WINDOW_PX,
            tracks: None,
        };
        let w = index.window(trace, &q).ok()?;
        bytes += serde_json::to_string(&w).map_or(usize::MAX / 2, |s| s.len());
        if bytes > room {
            return None;
        }
        windows.push(w);
        if end >= extent {
            return Some((windows, bytes));
        }
        start += step;
    }
}
