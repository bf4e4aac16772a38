//! Flow arrows (`ph: "s"` / `"f"`): CPU launch → GPU activity (`ac2g` and its older
//! names) and forward → backward (`fwdbwd`). Ids are unique only within a category, so
//! a flow is keyed by `(category, id)`.

use super::{CatId, NarrowColumn, TrackId};

/// Which end of an arrow a flow event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowEnd {
    /// `s`: the arrow starts on the enclosing slice.
    Start,
    /// `f`: the arrow ends on the enclosing (or next) slice.
    Finish,
    /// `t`: an intermediate step.
    Step,
}

/// Columns of all flow events, in file order.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    /// Category (normalised kind via the trace's category table).
    pub cat: Vec<CatId>,
    /// `id` (a CUPTI correlation id for launch flows): the `u64`'s bits, so read it back
    /// with `id.at(i) as u64`.
    pub id: NarrowColumn,
    /// Which end.
    pub end: Vec<FlowEnd>,
    /// Timestamp, epoch ns (equals the slice it binds to).
    pub ts_ns: Vec<i64>,
    /// Track of the slice it binds to.
    pub track: Vec<TrackId>,
}

impl FlowTable {
    /// Number of flow events.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}
