//! The timeline behind the web UI's Trace page: host threads and GPU streams, answered
//! by window queries with level-of-detail data, so a browser never receives the whole
//! trace.
//!
//! [`TimelineIndex::build`] prepares one trace once: each track's spans split into
//! lanes by nesting depth (sorted starts, prefix sums of busy time, the longest span of
//! any range from a block summary), launch→kernel flows sorted by time, and the events
//! of each name. Then every query is binary searches:
//!
//! - [`TimelineIndex::window`]: per track and lane, spans at least one pixel wide come
//!   as they are; narrower ones starting in the same pixel are merged into one bucket
//!   (count, busy time, the name of the longest), so a window holds at most
//!   `2 × width_px` slices per lane whatever the number of events.
//! - [`TimelineIndex::event`]: one event's details, arguments and flow peers.
//! - [`TimelineIndex::search`]: events whose name contains a text, capped.
//!
//! Times in and out are nanoseconds after the timeline's `t0_ns` (the first span's
//! start), small enough for a browser's doubles.

mod details;
mod flows;
mod lanes;
mod longest;
mod search;
mod tracks;
mod window;

pub use details::{ArgValue, EventDetail};
pub use flows::FlowLink;
pub use search::{SearchMatch, SearchResult, MAX_SEARCH_RESULTS};
pub use tracks::{IdValue, TrackClass, TrackInfo};
pub use window::{
    SliceColumns, TrackSlices, Window, WindowQuery, MAX_LANES, MAX_TRACKS, MAX_WIDTH_PX,
};

use kinetoscope_trace::{EventId, Phase, Trace, TrackId};
use serde::{Deserialize, Serialize};

use flows::FlowIndex;
use lanes::{build_lanes, Lane};
use search::NameIndex;

/// The tracks of a timeline and its extent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineTracks {
    /// Start of the first span (epoch ns): what every other time is relative to.
    pub t0_ns: i64,
    /// End of the last span, ns after `t0_ns`.
    pub t1_ns: i64,
    /// Tracks with at least one span: host threads, GPU streams by device and stream,
    /// then special rows.
    pub tracks: Vec<TrackInfo>,
}

/// Why a timeline query could not be answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueryError {
    /// The window is empty or reversed.
    EmptyWindow {
        /// Start asked.
        start_ns: i64,
        /// End asked.
        end_ns: i64,
    },
    /// No track of the timeline has this id.
    UnknownTrack {
        /// The id asked.
        id: u32,
    },
    /// More tracks asked than one query answers.
    TooManyTracks {
        /// How many were asked.
        asked: usize,
    },
    /// The trace has no event with this id.
    UnknownEvent {
        /// The id asked.
        id: u64,
    },
}

/// One trace prepared for timeline queries.
#[derive(Debug)]
pub struct TimelineIndex {
    /// The tracks and extent.
    tracks: TimelineTracks,
    /// Model track index → its lanes' slot (`u32::MAX`: no spans).
    slot: Vec<u32>,
    /// Lanes by slot, outermost first.
    lanes: Vec<Vec<Lane>>,
    /// Launch→kernel flows.
    flows: FlowIndex,
    /// Events by name.
    names: NameIndex,
}

impl TimelineIndex {
    /// Prepare `trace`: every complete span (`X` events) goes to its track's lanes.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let mut per_track: Vec<Vec<EventId>> = vec![Vec::new(); trace.tracks.len()];
        for id in e.ids() {
            let i = id.index();
            if e.phase[i] == Phase::Complete && e.dur_ns.at(i) >= 0 {
                if let Some(list) = per_track.get_mut(e.track[i].index()) {
                    list.push(id);
                }
            }
        }
        let mut slot = vec![u32::MAX; per_track.len()];
        let mut lanes = Vec::new();
        let mut extents = Vec::new();
        for (t, events) in per_track.into_iter().enumerate() {
            if events.is_empty() {
                continue;
            }
            let n = events.len() as u64;
            let track_lanes = build_lanes(trace, events);
            let first = track_lanes[0].starts[0];
            let last = track_lanes
                .iter()
                .filter_map(|l| (0..l.len()).map(|i| l.end(i)).max())
                .max()
                .unwrap_or(first);
            slot[t] = lanes.len() as u32;
            extents.push((
                TrackId(t as u32),
                (n, first, last, track_lanes.len() as u32),
            ));
            lanes.push(track_lanes);
        }
        let t0 = extents.iter().map(|(_, c)| c.1).min().unwrap_or(0);
        let t1 = extents.iter().map(|(_, c)| c.2).max().unwrap_or(t0);
        let mut infos: Vec<TrackInfo> = extents
            .into_iter()
            .map(|(id, c)| TrackInfo::new(trace, id, c, t0))
            .collect();
        infos.sort_by_key(TrackInfo::order_key);
        let names = NameIndex::build(trace, &lanes);
        let flows = FlowIndex::build(trace, &slot);
        Self {
            tracks: TimelineTracks {
                t0_ns: t0,
                t1_ns: t1 - t0,
                tracks: infos,
            },
            slot,
            flows,
            lanes,
            names,
        }
    }

    /// The tracks and the timeline's extent.
    pub fn tracks(&self) -> &TimelineTracks {
        &self.tracks
    }

    /// The lanes of track `id`, if it has spans.
    fn lanes_of(&self, id: u32) -> Option<&[Lane]> {
        let s = *self.slot.get(id as usize)?;
        self.lanes.get(s as usize).map(Vec::as_slice)
    }

    /// Bytes the index holds (roughly: its columns), for a cache's accounting.
    pub fn heap_bytes(&self) -> u64 {
        let lanes: usize = self
            .lanes
            .iter()
            .flatten()
            .map(|l| l.len() * 28 + l.len() / 8)
            .sum();
        (lanes + self.flows.heap_bytes() + self.names.heap_bytes()) as u64
    }
}
