//! The compact per-rank summary that `kinetoscope ranks` keeps of each trace: steps with
//! their breakdown and the collectives (process group, identity, times). It is built on
//! the thread that read the trace, so only a few whole traces are ever in memory.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use crate::comm::names::fold_collective;
use crate::comm::{collective_instances, CollectiveInstance};
use crate::note::Note;
use crate::overview::{overview, Parts, TraceOverview};

/// One step of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankStep {
    /// `ProfilerStep#N` or `(whole trace)`.
    pub name: String,
    /// N.
    pub number: Option<i64>,
    /// Start (stretched), epoch ns on the rank's clock.
    pub start_ns: i64,
    /// Duration (stretched), ns.
    pub dur_ns: i64,
    /// The overview's eight-way breakdown, ns.
    pub parts_ns: Parts<i64>,
}

/// One collective call of one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankCollective {
    /// Index into [`RankSummary::groups`] (the process group).
    pub group: u32,
    /// Index into [`RankSummary::names`] (the folded collective name).
    pub name: u32,
    /// `Seq` in its process group, when recorded.
    pub seq: Option<i64>,
    /// `Comms Id`, when recorded.
    pub comms_id: Option<u64>,
    /// `N` of the step its call falls in (the step of its start when the call is not
    /// in the trace); `None` outside numbered steps.
    pub step: Option<i64>,
    /// When the program called it (epoch ns on the rank's clock), else its start: the
    /// order of calls within a process group.
    pub call_ns: i64,
    /// When the rank arrived at it: the start of its work (kernel, backend worker span,
    /// or the call of a host collective), epoch ns on the rank's clock.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}

/// The compact summary of one rank's trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    /// The file.
    pub path: String,
    /// Rank from `distributedInfo`, else from the file name.
    pub rank: Option<i64>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// Kept steps of the overview.
    pub steps: Vec<RankStep>,
    /// Process group names (`""` when the trace does not say).
    pub groups: Vec<String>,
    /// Folded collective names (`allreduce`, `alltoall`).
    pub names: Vec<String>,
    /// Collectives in call order.
    pub collectives: Vec<RankCollective>,
    /// Total communication kernel time, ns.
    pub comm_kernel_ns: i64,
    /// Warnings of the reader and the overview.
    pub warnings: Vec<Note>,
}

/// A table of distinct strings with the index of each, so that adding one is O(1)
/// (collective and group names of a rank, and across ranks).
#[derive(Default)]
pub struct Interner {
    /// The strings, in the order first added.
    pub table: Vec<String>,
    index: rustc_hash::FxHashMap<String, u32>,
}

impl Interner {
    /// The index of `key`, added when missing.
    pub fn intern(&mut self, key: &str) -> u32 {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        let i = self.table.len() as u32;
        self.table.push(key.to_owned());
        self.index.insert(key.to_owned(), i);
        i
    }
}

impl RankSummary {
    /// Reduce one trace.
    pub fn from_trace(trace: &Trace) -> Self {
        Self::from_parts(trace, &overview(trace), &collective_instances(trace))
    }

    /// The summary from analyses already made of `trace`: its overview and its
    /// collectives ([`collective_instances`]).
    pub fn from_parts(trace: &Trace, ov: &TraceOverview, instances: &[CollectiveInstance]) -> Self {
        let steps: Vec<RankStep> = ov
            .steps
            .iter()
            .map(|s| RankStep {
                name: s.name.clone(),
                number: s.number,
                start_ns: s.start_ns,
                dur_ns: s.dur_ns,
                parts_ns: s.breakdown_ns,
            })
            .collect();
        // The numbered step a time falls in: the last step started at or before it,
        // if it has not ended.
        let step_of = |t: i64| {
            let i = steps.partition_point(|s| s.start_ns <= t).checked_sub(1)?;
            let s = &steps[i];
            (t < s.start_ns + s.dur_ns).then_some(s.number).flatten()
        };
        let mut groups = Interner::default();
        let mut names = Interner::default();
        let mut collectives = Vec::new();
        let mut comm_kernel_ns = 0;
        for c in instances {
            if c.on_gpu {
                comm_kernel_ns += c.end_ns - c.start_ns;
            }
            let call_ns = c.call_ns.unwrap_or(c.start_ns);
            collectives.push(RankCollective {
                group: groups.intern(&c.process_group),
                name: names.intern(&fold_collective(&c.collective)),
                seq: c.seq,
                comms_id: c.comms_id,
                step: step_of(call_ns),
                call_ns,
                start_ns: c.start_ns,
                end_ns: c.end_ns,
            });
        }
        collectives.sort_by_key(|c| (c.call_ns, c.start_ns));
        Self {
            path: ov.path.clone(),
            rank: ov.rank,
            world_size: trace.meta.distributed.as_ref().and_then(|d| d.world_size),
            steps,
            groups: groups.table,
            names: names.table,
            collectives,
            comm_kernel_ns,
            warnings: ov.warnings.clone(),
        }
    }

    /// The same summary with every timestamp moved by `delta_ns` (tests of clock
    /// alignment).
    pub fn shifted(mut self, delta_ns: i64) -> Self {
        for s in &mut self.steps {
            s.start_ns += delta_ns;
        }
        for c in &mut self.collectives {
            c.call_ns += delta_ns;
            c.start_ns += delta_ns;
            c.end_ns += delta_ns;
        }
        self
    }
}
