//! Arrival skew per collective kind: for each (process group, collective) the
//! distribution of the start skew over its matched calls and the rank that arrived
//! last most often. Bounded: the kinds with the largest total skew are listed (as many
//! as the collectives listed, `RanksOptions::top_collectives`), with the count of all.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Start skew of one collective kind in one process group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveSkew {
    /// Process group (`""` when unknown or matched by `Comms Id`).
    pub process_group: String,
    /// Collective (folded name).
    pub collective: String,
    /// Its calls matched across ranks.
    pub matched: usize,
    /// Sum of their start skews, ns (what the kinds are ordered by).
    pub total_skew_ns: i64,
    /// Mean start skew, ns.
    pub mean_skew_ns: f64,
    /// Median start skew, ns (the lower middle value for an even count).
    pub median_skew_ns: i64,
    /// 90th percentile (nearest rank), ns.
    pub p90_skew_ns: i64,
    /// Largest, ns.
    pub max_skew_ns: i64,
    /// The rank that arrived last most often (the lowest such rank on a tie).
    pub most_often_last_rank: i64,
    /// How many of the calls it arrived last at.
    pub most_often_last: usize,
}

/// Per (group id, name id): each matched call's (skew, rank index that arrived last).
#[derive(Default)]
pub(super) struct SkewByKind(FxHashMap<(u32, u32), Vec<(i64, usize)>>);

impl SkewByKind {
    /// One matched call.
    pub(super) fn push(&mut self, kind: (u32, u32), skew: i64, last_rank: usize) {
        self.0.entry(kind).or_default().push((skew, last_rank));
    }

    /// The kinds with the largest total skew first, at most `top`, and the number of
    /// kinds; `label` names a (group id, name id), `ids` maps rank index to rank.
    pub(super) fn finish(
        self,
        top: usize,
        label: impl Fn((u32, u32)) -> (String, String),
        ids: &[i64],
    ) -> (Vec<CollectiveSkew>, usize) {
        let kinds = self.0.len();
        let mut rows: Vec<CollectiveSkew> = self
            .0
            .into_iter()
            .map(|(kind, mut calls)| {
                calls.sort_unstable();
                let n = calls.len();
                let total: i64 = calls.iter().map(|c| c.0).sum();
                let mut last_counts: FxHashMap<usize, usize> = FxHashMap::default();
                for c in &calls {
                    *last_counts.entry(c.1).or_default() += 1;
                }
                let (most_r, most) = last_counts
                    .into_iter()
                    .max_by_key(|&(r, k)| (k, std::cmp::Reverse(r)))
                    .unwrap_or((0, 0));
                let (process_group, collective) = label(kind);
                CollectiveSkew {
                    process_group,
                    collective,
                    matched: n,
                    total_skew_ns: total,
                    mean_skew_ns: total as f64 / n.max(1) as f64,
                    median_skew_ns: calls[(n - 1) / 2].0,
                    p90_skew_ns: calls[(n * 9).div_ceil(10).max(1) - 1].0,
                    max_skew_ns: calls[n - 1].0,
                    most_often_last_rank: ids[most_r],
                    most_often_last: most,
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.total_skew_ns
                .cmp(&a.total_skew_ns)
                .then_with(|| a.process_group.cmp(&b.process_group))
                .then_with(|| a.collective.cmp(&b.collective))
        });
        rows.truncate(top);
        (rows, kinds)
    }
}
