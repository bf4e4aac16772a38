//! Window queries: the slices of a time range at a pixel width, with spans narrower
//! than a pixel merged per pixel, so the answer's size depends on the width, the lanes
//! and the tracks, never on the number of events.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{StrId, Trace};

use super::flows::FlowLink;
use super::lanes::Lane;
use super::{QueryError, TimelineIndex};

/// The widest window answered, in pixels (wider asks are clamped).
pub const MAX_WIDTH_PX: u32 = 8192;
/// Tracks answered per query (the first ones in display order when none are named).
pub const MAX_TRACKS: usize = 4096;
/// Lanes (nesting levels) answered per track; deeper ones are left out and the track
/// says so (`depth_truncated`).
pub const MAX_LANES: usize = 256;

/// A window query: a time range (ns after `t0_ns`), the pixels it is drawn on and the
/// tracks wanted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowQuery {
    /// Start, ns after `t0_ns`.
    pub start_ns: i64,
    /// End (exclusive), ns after `t0_ns`.
    pub end_ns: i64,
    /// Width in pixels (1 to [`MAX_WIDTH_PX`]).
    pub width_px: u32,
    /// Track ids wanted (at most [`MAX_TRACKS`]); `None`: every track, up to
    /// [`MAX_TRACKS`].
    pub tracks: Option<Vec<u32>>,
}

/// Slices of one track as columns: row `i` of every column is one slice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SliceColumns {
    /// Start, ns after `t0_ns` (of the first span merged, for a bucket).
    pub start_ns: Vec<i64>,
    /// Duration (for a bucket: from its first span's start to its last span's end).
    pub dur_ns: Vec<i64>,
    /// Nesting level, 0 outermost.
    pub depth: Vec<u32>,
    /// Index into the window's `names` (for a bucket: the name of its longest span).
    pub name: Vec<u32>,
    /// The event id, or -1 for a bucket.
    pub event: Vec<i64>,
    /// Spans in the slice: 1, or how many a bucket merged.
    pub count: Vec<u32>,
    /// Time the spans of the slice cover: its duration, or the sum of a bucket's.
    pub busy_ns: Vec<i64>,
}

/// One track's slices in a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackSlices {
    /// The track's id.
    pub id: u32,
    /// Whether lanes deeper than [`MAX_LANES`] were left out.
    pub depth_truncated: bool,
    /// The slices.
    pub slices: SliceColumns,
}

/// The answer to a window query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Start, ns after `t0_ns`.
    pub start_ns: i64,
    /// End, ns after `t0_ns`.
    pub end_ns: i64,
    /// The width used (after clamping).
    pub width_px: u32,
    /// Names the slices use, by index.
    pub names: Vec<String>,
    /// Tracks in the order asked.
    pub tracks: Vec<TrackSlices>,
    /// Launch→kernel flows with an end in the window, on the tracks asked.
    pub flows: Vec<FlowLink>,
    /// Whether the flows were left out: more than `width_px` flow ends fall in the
    /// window (zoom in to see them).
    pub flows_truncated: bool,
}

impl TimelineIndex {
    /// Answer a window query (see [`WindowQuery`]).
    pub fn window(&self, trace: &Trace, q: &WindowQuery) -> Result<Window, QueryError> {
        if q.end_ns <= q.start_ns {
            return Err(QueryError::EmptyWindow {
                start_ns: q.start_ns,
                end_ns: q.end_ns,
            });
        }
        let ids: Vec<u32> = match &q.tracks {
            Some(ids) if ids.len() > MAX_TRACKS => {
                return Err(QueryError::TooManyTracks { asked: ids.len() })
            }
            Some(ids) => ids.clone(),
            None => self
                .tracks
                .tracks
                .iter()
                .take(MAX_TRACKS)
                .map(|t| t.id)
                .collect(),
        };
        let t0 = self.tracks.t0_ns;
        let px = Pixels {
            start: t0.saturating_add(q.start_ns),
            end: t0.saturating_add(q.end_ns),
            width: q.width_px.clamp(1, MAX_WIDTH_PX),
        };
        let mut names = NameTable::default();
        let mut tracks = Vec::with_capacity(ids.len());
        for &id in &ids {
            let lanes = self.lanes_of(id).ok_or(QueryError::UnknownTrack { id })?;
            let mut slices = SliceColumns::default();
            for (depth, lane) in lanes.iter().take(MAX_LANES).enumerate() {
                let mut out = Emit {
                    trace,
                    lane,
                    depth: depth as u32,
                    t0,
                    names: &mut names,
                    cols: &mut slices,
                };
                out.lane_window(&px);
            }
            tracks.push(TrackSlices {
                id,
                depth_truncated: lanes.len() > MAX_LANES,
                slices,
            });
        }
        let (flows, flows_truncated) = self.flows.in_window(px.start, px.end, &ids, px.width, t0);
        Ok(Window {
            start_ns: q.start_ns,
            end_ns: q.end_ns,
            width_px: px.width,
            names: names.list,
            tracks,
            flows,
            flows_truncated,
        })
    }
}

/// A window's time range (epoch ns) over its pixels.
struct Pixels {
    start: i64,
    end: i64,
    width: u32,
}

impl Pixels {
    /// The pixel a time falls in (times before the window in pixel 0).
    fn of(&self, t: i64) -> i128 {
        let span = i128::from(self.end) - i128::from(self.start);
        ((i128::from(t) - i128::from(self.start)) * i128::from(self.width) / span).max(0)
    }

    /// Whether a span of `dur` ns is narrower than one pixel.
    fn narrow(&self, dur: i64) -> bool {
        i128::from(dur) * i128::from(self.width) < i128::from(self.end) - i128::from(self.start)
    }
}

/// Names of a window, each once.
#[derive(Default)]
struct NameTable {
    index: FxHashMap<StrId, u32>,
    list: Vec<String>,
}

/// Where one lane's slices go.
struct Emit<'a> {
    trace: &'a Trace,
    lane: &'a Lane,
    depth: u32,
    t0: i64,
    names: &'a mut NameTable,
    cols: &'a mut SliceColumns,
}

impl Emit<'_> {
    /// The lane's slices in the window: per pixel holding starts, the narrow spans
    /// merged into one bucket and each wide span as it is.
    fn lane_window(&mut self, px: &Pixels) {
        let lane = self.lane;
        let mut i = lane.first_from(px.start);
        let stop = lane.first_at_or_after(px.end);
        while i < stop {
            let pixel = px.of(lane.starts[i]);
            let j = i + lane.starts[i..stop].partition_point(|&s| px.of(s) <= pixel);
            self.pixel_run(px, i, j);
            i = j;
        }
    }

    /// Slices `[i, j)`, which start in one pixel: runs of narrow spans merged, wide spans
    /// kept (at most two per pixel: lanes never overlap).
    fn pixel_run(&mut self, px: &Pixels, mut i: usize, j: usize) {
        while i < j {
            let longest = self.lane.longest(i, j).unwrap_or(i);
            if px.narrow(self.lane.durs[longest]) {
                self.merged(i, j);
                return;
            }
            // The first wide span of the run, and the narrow ones before it.
            // (by binary search: the longest of `[i, k]` is wide from it on).
            let narrow_before = |k: usize| {
                let l = self.lane.longest(i, k + 1).unwrap_or(k);
                px.narrow(self.lane.durs[l])
            };
            let (mut lo, mut hi) = (i, longest);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if narrow_before(mid) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let wide = lo;
            self.merged(i, wide);
            self.merged(wide, wide + 1);
            i = wide + 1;
        }
    }

    /// Spans `[i, j)` as one slice: the span itself when alone, else a bucket.
    fn merged(&mut self, i: usize, j: usize) {
        if i >= j {
            return;
        }
        let lane = self.lane;
        let named = if j - i == 1 {
            i
        } else {
            lane.longest(i, j).unwrap_or(i)
        };
        let event = lane.events[named];
        let name = self.name_index(self.trace.events.name[event.index()]);
        let c = &mut *self.cols;
        c.start_ns.push(lane.starts[i] - self.t0);
        c.dur_ns.push(lane.end(j - 1) - lane.starts[i]);
        c.depth.push(self.depth);
        c.name.push(name);
        c.event
            .push(if j - i == 1 { i64::from(event.0) } else { -1 });
        c.count.push((j - i) as u32);
        c.busy_ns.push(lane.busy_between(i, j));
    }

    fn name_index(&mut self, s: StrId) -> u32 {
        let names = &mut *self.names;
        *names.index.entry(s).or_insert_with(|| {
            names.list.push(self.trace.strings.get(s).to_owned());
            (names.list.len() - 1) as u32
        })
    }
}
