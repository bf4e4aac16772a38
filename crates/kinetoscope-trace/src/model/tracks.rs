//! Tracks: the rows of the timeline, one per `(pid, tid)`. A GPU stream is a track whose
//! events are GPU activities; a CPU thread one whose events are host-side.

use super::StrId;

/// A track's id in its trace's [`TrackTable`]; valid only in that trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TrackId(pub u32);

impl TrackId {
    /// The track as a `usize` index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A `pid` or `tid` as written: an integer, or a string in 1.8/1.9 files and for special
/// rows (`"Spans"`, `"stream 7"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RawId {
    /// An integer id.
    Int(i64),
    /// A string id (interned).
    Str(StrId),
}

/// What runs on a track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TrackKind {
    /// A host thread (operators, annotations, runtime calls).
    #[default]
    CpuThread,
    /// A GPU stream: `device` is the GPU ordinal, `stream` the CUDA stream id.
    GpuStream {
        /// GPU ordinal.
        device: i64,
        /// CUDA stream id.
        stream: i64,
    },
    /// A special row (the profiler span, CUPTI overhead, counters).
    Other,
}

/// One timeline row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    /// `pid` as written.
    pub pid: RawId,
    /// `tid` as written.
    pub tid: RawId,
    /// What runs on it (decided from its events once the file is read).
    pub kind: TrackKind,
    /// `thread_name` metadata, if any (`StrId(0)` when none).
    pub thread_name: StrId,
    /// `process_name` metadata of its pid, if any.
    pub process_name: StrId,
    /// `process_labels` metadata of its pid (`"CPU"`, `"GPU 0"`), if any.
    pub process_label: StrId,
}

/// All tracks of a trace.
#[derive(Clone, Debug, Default)]
pub struct TrackTable {
    /// Tracks in id order.
    pub list: Vec<Track>,
}

impl TrackTable {
    /// A track by id.
    pub fn get(&self, id: TrackId) -> &Track {
        &self.list[id.index()]
    }

    /// Number of tracks.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are no tracks.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Tracks with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (TrackId, &Track)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, t)| (TrackId(i as u32), t))
    }
}
