//! Examples of a defect: where to find it, kept for the earliest occurrences only.

use kinetoscope_trace::{EventId, RawId, Trace, TrackId};
use serde::{Deserialize, Serialize};

/// A track as written in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackRef {
    /// `pid` as written.
    pub pid: String,
    /// `tid` as written.
    pub tid: String,
}

impl TrackRef {
    /// The track `id` of `trace`.
    pub fn of(trace: &Trace, id: TrackId) -> Self {
        let raw = |r: RawId| match r {
            RawId::Int(i) => i.to_string(),
            RawId::Str(s) => trace.strings.get(s).to_owned(),
        };
        match trace.tracks.list.get(id.index()) {
            Some(t) => Self {
                pid: raw(t.pid),
                tid: raw(t.tid),
            },
            None => Self {
                pid: String::new(),
                tid: String::new(),
            },
        }
    }
}

/// One occurrence of a defect. Which fields are set depends on the kind
/// (`docs/check.md`, `docs/json.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// Start of the event at fault, epoch ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_ns: Option<i64>,
    /// Its track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track: Option<TrackRef>,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The other event involved: the slice overlapped or crossed, the launch call, the
    /// activity, the step after a gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    /// Its start, epoch ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ts_ns: Option<i64>,
    /// The size of the defect, ns: overlap, overrun, negative latency or duration, clock
    /// offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_ns: Option<i64>,
    /// A number the kind names: a correlation or flow id, a missing rank or step
    /// number, how many steps a gap skips.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<i64>,
    /// The rank (cross-rank checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<i64>,
    /// Byte offset in the (decompressed) JSON (reader defects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u64>,
    /// Index in `traceEvents` (reader defects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
}

impl Example {
    /// An example at event `e`: its start, track and name.
    pub fn at(trace: &Trace, e: EventId) -> Self {
        let i = e.index();
        Self {
            ts_ns: trace.events.ts_ns.get(i).copied(),
            track: trace.events.track.get(i).map(|&t| TrackRef::of(trace, t)),
            name: Some(trace.name(e).to_owned()),
            ..Self::default()
        }
    }

    /// The same with the other event involved.
    pub fn with_other(mut self, trace: &Trace, other: EventId) -> Self {
        self.other = Some(trace.name(other).to_owned());
        self.other_ts_ns = trace.events.ts_ns.get(other.index()).copied();
        self
    }
}

/// The earliest `cap` occurrences by a key (time, then order seen), built lazily: an
/// occurrence is turned into an [`Example`] only while it may still be kept.
#[derive(Clone, Debug)]
pub struct Firsts {
    cap: usize,
    seen: u64,
    kept: Vec<((i64, u64), Example)>,
}

impl Firsts {
    /// Keep at most `cap`.
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            seen: 0,
            kept: Vec::new(),
        }
    }

    /// Offer an occurrence at time `key`; `make` runs only when it is kept.
    pub fn offer(&mut self, key: i64, make: impl FnOnce() -> Example) {
        let k = (key, self.seen);
        self.seen += 1;
        if self.kept.len() < self.cap {
            self.kept.push((k, make()));
            return;
        }
        let Some((worst, _)) = self.kept.iter().enumerate().max_by_key(|(_, (k, _))| *k) else {
            return;
        };
        if k < self.kept[worst].0 {
            self.kept[worst] = (k, make());
        }
    }

    /// The examples, earliest first.
    pub fn into_sorted(mut self) -> Vec<Example> {
        self.kept.sort_by_key(|(k, _)| *k);
        self.kept.into_iter().map(|(_, e)| e).collect()
    }
}
