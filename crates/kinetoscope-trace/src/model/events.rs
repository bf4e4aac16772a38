//! The event table: one column per field, one row per duration or instant event, in file
//! order. Times are integer nanoseconds on the epoch clock (the `baseTimeNanoseconds` of
//! PyTorch 2.4+ traces is already added).

use super::{CatId, NarrowColumn, StrId, TrackId};

/// An event's row in its trace's [`EventTable`]; valid only in that trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub u32);

impl EventId {
    /// The row as a `usize` index into the columns.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The Chrome trace phase of an event kept in the event table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// `X`: a span with a duration.
    Complete,
    /// `i` / `I`: an instant.
    Instant,
    /// `C`: a counter sample.
    Counter,
    /// Any other phase (`B`, `E`, async...), kept with its timestamp only.
    Other,
}

/// Columns of all duration, instant and counter events. Metadata (`M`) events become
/// track names and flow events (`s`, `f`) go to the flow table.
#[derive(Debug, Default, Clone)]
pub struct EventTable {
    /// Start, epoch nanoseconds.
    pub ts_ns: Vec<i64>,
    /// Duration in nanoseconds (0 for instants).
    pub dur_ns: NarrowColumn,
    /// Interned name.
    pub name: Vec<StrId>,
    /// Category.
    pub cat: Vec<CatId>,
    /// Phase.
    pub phase: Vec<Phase>,
    /// The (pid, tid) row it is on.
    pub track: Vec<TrackId>,
    /// `External id` (`external id` in old files): links a CPU op to the runtime calls and
    /// GPU activities it launched; 0 when absent.
    pub external_id: NarrowColumn,
    /// CUPTI `correlation`: links a runtime call to the GPU activity; 0 when absent.
    pub correlation: NarrowColumn,
}

impl EventTable {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    /// Whether there are no events.
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    /// End (ts + dur) of an event, ns.
    pub fn end_ns(&self, e: EventId) -> i64 {
        self.ts_ns[e.index()] + self.dur_ns.at(e.index())
    }

    /// All event ids in file order.
    pub fn ids(&self) -> impl Iterator<Item = EventId> + use<> {
        (0..self.len() as u32).map(EventId)
    }

    /// Reserve room for `n` more events.
    pub fn reserve(&mut self, n: usize) {
        self.ts_ns.reserve(n);
        self.dur_ns.reserve(n);
        self.name.reserve(n);
        self.cat.reserve(n);
        self.phase.reserve(n);
        self.track.reserve(n);
        self.external_id.reserve(n);
        self.correlation.reserve(n);
    }
}
