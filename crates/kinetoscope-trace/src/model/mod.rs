//! The columnar model of one Kineto trace, shared by every analysis.
//!
//! Events live in [`EventTable`] (one column per field, indexed by [`EventId`]); names and
//! other repeated strings in [`StringTable`]; rows of the timeline in [`TrackTable`];
//! the arguments analyses need in sparse side tables ([`ArgTables`]); flow arrows in
//! [`FlowTable`]. Which operator launched each runtime call is decided once by the reader
//! ([`Trace::launch_links`], checked against time); links that cost time to build
//! (nesting, correlation lookups) are computed on first use by [`Trace::nesting`] and
//! [`Trace::correlation_index`].
//!
//! Beside the trace: the memory timeline ([`MemoryTimeline`]), and the files of a run
//! ([`ArtifactKind`], [`RunPhase`]). The CUDA memory snapshot model is
//! [`crate::snapshot`].

mod args;
mod artifact;
mod budget;
mod category;
mod derived;
mod events;
mod flows;
mod groups;
mod id_rank;
mod idmap;
mod index;
mod kernel_table;
mod key_averages;
mod links;
mod meta;
mod narrow;
mod nsys;
mod pstats;
mod read_report;
mod start_order;
mod strings;
mod timeline;
mod tracks;

pub use args::*;
pub use artifact::*;
pub use budget::{default_limit, MemoryBudget, MemoryError};
pub(crate) use budget::{grow, Charge};
pub use category::*;
pub use derived::Derived;
pub use events::*;
pub use flows::*;
pub use groups::Groups;
pub use id_rank::IdRank;
pub use index::*;
pub use key_averages::*;
pub use links::*;
pub use meta::*;
pub use narrow::NarrowColumn;
pub use nsys::*;
pub use pstats::*;
pub use read_report::*;
pub use start_order::{sort_by_start, sort_runs_by_key};
pub use strings::StrId;
pub use strings::StringTable;
pub(crate) use strings::{TextArena, TextIndex};
pub use timeline::*;
pub use tracks::*;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// One Kineto Chrome trace, read into columns.
#[derive(Debug, Default)]
pub struct Trace {
    /// The file it was read from.
    pub path: PathBuf,
    /// Top-level metadata: devices, distributed info, profiler options, time base.
    pub meta: TraceMeta,
    /// Interned strings (event names, raw categories, argument texts).
    pub strings: StringTable,
    /// Categories seen in the file, each with its normalised kind.
    pub categories: CategoryTable,
    /// Timeline rows: one per (pid, tid), with kind and name.
    pub tracks: TrackTable,
    /// Every duration and instant event, in file order.
    pub events: EventTable,
    /// Arguments analyses need, by event.
    pub args: ArgTables,
    /// Flow arrows (`ac2g`, `fwdbwd`, ...), keyed by category and id.
    pub flows: FlowTable,
    /// What the reader skipped, repaired or could not understand.
    pub report: ReadReport,
    /// The launcher of every runtime call, decided by the reader.
    pub(crate) links: LaunchLinks,
    pub(crate) nesting: OnceLock<Nesting>,
    pub(crate) correlation: OnceLock<CorrelationIndex>,
    pub(crate) derived: Derived,
    /// What the model took from the reader's memory budget; given back on drop.
    pub(crate) charge: Charge,
}

impl Trace {
    /// The name of an event.
    pub fn name(&self, event: EventId) -> &str {
        self.strings.get(self.events.name[event.index()])
    }

    /// The normalised kind of an event's category.
    pub fn kind(&self, event: EventId) -> CategoryKind {
        self.categories.kind(self.events.cat[event.index()])
    }

    /// Which operator launched each runtime call (and, through the CUPTI correlation,
    /// each GPU activity): the `External id` link where the call lies inside that
    /// operator on its thread, else the innermost operator enclosing it. Every analysis
    /// that attributes launches or device time to operators uses this link.
    pub fn launch_links(&self) -> &LaunchLinks {
        &self.links
    }

    /// Parent/child nesting of events on each track, built on first use.
    pub fn nesting(&self) -> &Nesting {
        self.nesting.get_or_init(|| Nesting::build(self))
    }

    /// Lookup from CUPTI correlation id to the runtime call and the GPU activities that
    /// share it, built on first use.
    pub fn correlation_index(&self) -> &CorrelationIndex {
        self.correlation
            .get_or_init(|| CorrelationIndex::build(self))
    }

    /// A value later stages derive from this trace (`make(..)` on first use, then the
    /// kept one): what several analyses start from is computed once per trace.
    pub fn derived<T: std::any::Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        self.derived.get_or_make(make)
    }

    /// The bytes the model took from the reader's memory accounting (its columns,
    /// strings and tables): what a cache of loaded traces counts.
    pub fn model_bytes(&self) -> u64 {
        self.charge.bytes()
    }

    /// Start and end (ns) of all duration events, or `None` for an empty trace: a pass
    /// over the events on first use, then kept.
    pub fn span_ns(&self) -> Option<(i64, i64)> {
        /// The kept span.
        struct Span(Option<(i64, i64)>);
        self.derived(|| {
            let e = &self.events;
            let mut lo = i64::MAX;
            let mut hi = i64::MIN;
            for i in 0..e.len() {
                if e.phase[i] == Phase::Complete {
                    lo = lo.min(e.ts_ns[i]);
                    hi = hi.max(e.ts_ns[i] + e.dur_ns.at(i));
                }
            }
            Span((lo <= hi).then_some((lo, hi)))
        })
        .0
    }
}
