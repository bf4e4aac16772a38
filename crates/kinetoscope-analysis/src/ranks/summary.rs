//! The compact per-rank summary that `kinetoscope ranks` keeps of each trace: steps with
//! their breakdown and the collectives (group, sequence, times). It is built on the
//! thread that read the trace, so only a few whole traces are ever in memory.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::Trace;

use crate::comm::collective_instances;
use crate::comm::names::fold_collective;
use crate::note::Note;
use crate::overview::{overview, Parts};

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
    /// Index into [`RankSummary::groups`].
    pub group: u32,
    /// `Seq` arg, or -1.
    pub seq: i64,
    /// Start, epoch ns on the rank's clock (kernel start, or host op start for
    /// host-only collectives).
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Whether a GPU kernel ran it.
    pub on_gpu: bool,
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
    /// (process group, folded collective name) of each group index.
    pub groups: Vec<(String, String)>,
    /// Collectives in start order.
    pub collectives: Vec<RankCollective>,
    /// Total communication kernel time, ns.
    pub comm_kernel_ns: i64,
    /// Warnings of the reader and the overview.
    pub warnings: Vec<Note>,
}

impl RankSummary {
    /// Reduce one trace.
    pub fn from_trace(trace: &Trace) -> Self {
        let ov = overview(trace);
        let steps = ov
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
        let mut groups: Vec<(String, String)> = Vec::new();
        let mut collectives = Vec::new();
        let mut comm_kernel_ns = 0;
        for c in collective_instances(trace) {
            let key = (c.process_group.clone(), fold_collective(&c.collective));
            let g = match groups.iter().position(|k| *k == key) {
                Some(g) => g,
                None => {
                    groups.push(key);
                    groups.len() - 1
                }
            };
            if c.on_gpu {
                comm_kernel_ns += c.end_ns - c.start_ns;
            }
            collectives.push(RankCollective {
                group: g as u32,
                seq: c.seq,
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                on_gpu: c.on_gpu,
            });
        }
        Self {
            path: ov.path,
            rank: ov.rank,
            world_size: trace.meta.distributed.as_ref().and_then(|d| d.world_size),
            steps,
            groups,
            collectives,
            comm_kernel_ns,
            warnings: ov.warnings,
        }
    }

    /// The same summary with every timestamp moved by `delta_ns` (tests of clock
    /// alignment).
    pub fn shifted(mut self, delta_ns: i64) -> Self {
        for s in &mut self.steps {
            s.start_ns += delta_ns;
        }
        for c in &mut self.collectives {
            c.start_ns += delta_ns;
            c.end_ns += delta_ns;
        }
        self
    }
}
