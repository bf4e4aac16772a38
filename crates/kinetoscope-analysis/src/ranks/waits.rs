//! What the matched collectives add up to (step 4 of the module documentation): per
//! collective, the ranks' arrivals on the reference clock, its start skew and each
//! rank's wait for the last arriver; per rank, its waits, last arrivals, the wait it
//! caused and its what-if saving; over all, the skews.

use super::clock::Clocks;
use super::{median_f64, p90, skew, what_if, MatchCounts, MatchedBy, Matching, SkewSummary};

/// Per rank index, what the matched collectives add up to.
pub(super) struct RankWaits {
    /// Σ of its waits for the last arriver, ns.
    pub(super) total_wait: Vec<i64>,
    /// Matched collectives it arrived last at.
    pub(super) arrived_last: Vec<usize>,
    /// Matched collectives it has.
    pub(super) matched: Vec<usize>,
    /// The wait it caused: Σ over the collectives it arrived last at of the others'
    /// mean wait, ns.
    pub(super) caused: Vec<f64>,
    /// Its what-if saving at those collectives: ns, and how many of them save.
    pub(super) saving: Vec<(i64, usize)>,
}

/// The start skews of the matched collectives.
pub(super) struct SkewTally {
    /// One per matched run, in run order.
    skews: Vec<i64>,
    /// Per (process group, collective).
    by_kind: skew::SkewByKind,
    /// Matched runs by what identified them.
    matched_by: MatchCounts,
}

/// What the matched collectives add up to.
pub(super) struct Waits {
    /// Per rank index.
    pub(super) per_rank: RankWaits,
    /// Over all.
    pub(super) skew: SkewTally,
    /// (skew, first arrival, matched run) of every matched run: only the runs listed
    /// get a row (a row holds a wait per rank, so one row per run would be runs ×
    /// ranks).
    pub(super) listed: Vec<(i64, i64, usize)>,
}

impl Waits {
    /// Tally the matched runs of `matching` over `n` ranks, arrivals on the reference
    /// clock of `clocks`.
    pub(super) fn of(matching: &Matching, n: usize, clocks: &Clocks) -> Self {
        // Per matched collective: skew and waits.
        let mut total_wait = vec![0i64; n];
        let mut arrived_last = vec![0usize; n];
        let mut matched_count = vec![0usize; n];
        let mut caused = vec![0f64; n];
        let mut saving = vec![(0i64, 0usize); n];
        let mut scratch = Vec::new();
        let mut by_kind_skew = skew::SkewByKind::default();
        let mut skews: Vec<i64> = Vec::with_capacity(matching.matched_runs.len());
        let mut by_kind = MatchCounts::default();
        let mut listed: Vec<(i64, i64, usize)> = Vec::new();
        let corr = |r: usize, t: i64| clocks.corr(r, t);
        for run in matching.matched() {
            let starts: Vec<(usize, i64)> = run
                .iter()
                .map(|e| (e.rank, corr(e.rank, e.start)))
                .collect();
            let (last_r, last_s) = *starts
                .iter()
                .max_by_key(|(r, s)| (*s, std::cmp::Reverse(*r)))
                .expect("non-empty");
            let first_s = starts.iter().map(|x| x.1).min().expect("non-empty");
            let mut others = 0i64;
            for &(r, s) in &starts {
                total_wait[r] += last_s - s;
                matched_count[r] += 1;
                if r != last_r {
                    others += last_s - s;
                }
            }
            arrived_last[last_r] += 1;
            caused[last_r] += others as f64 / (starts.len() - 1) as f64;
            let saved = what_if::saving_at(run, corr, (last_r, last_s), &mut scratch);
            if saved > 0 {
                saving[last_r].0 += saved;
                saving[last_r].1 += 1;
            }
            let skew = last_s - first_s;
            skews.push(skew);
            by_kind_skew.push((run[0].group, run[0].name), skew, last_r);
            *match run[0].key.matched_by() {
                MatchedBy::CommsId => &mut by_kind.comms_id,
                MatchedBy::Seq => &mut by_kind.seq,
                MatchedBy::Order => &mut by_kind.order,
            } += 1;
            listed.push((skew, first_s, listed.len()));
        }
        Self {
            per_rank: RankWaits {
                total_wait,
                arrived_last,
                matched: matched_count,
                caused,
                saving,
            },
            skew: SkewTally {
                skews,
                by_kind: by_kind_skew,
                matched_by: by_kind,
            },
            listed,
        }
    }
}

impl SkewTally {
    /// The skew statistics over every matched collective, with the `top` collective
    /// kinds of largest total skew; `ids` maps rank index to rank.
    pub(super) fn summary(mut self, matching: &Matching, top: usize, ids: &[i64]) -> SkewSummary {
        let (groups, names) = (&matching.groups, &matching.names);
        let (by_collective, kinds) = self.by_kind.finish(
            top,
            |(g, k)| {
                (
                    groups.table[g as usize].clone(),
                    names.table[k as usize].clone(),
                )
            },
            ids,
        );
        let skews = &mut self.skews;
        SkewSummary {
            matched: matching.matched_runs.len(),
            unmatched: matching.unmatched,
            matched_by: self.matched_by,
            mean_skew_ns: if skews.is_empty() {
                0.0
            } else {
                skews.iter().sum::<i64>() as f64 / skews.len() as f64
            },
            median_skew_ns: median_f64(skews.iter().map(|&s| s as f64).collect()),
            p90_skew_ns: p90(skews),
            max_skew_ns: skews.iter().copied().max().unwrap_or(0),
            by_collective,
            kinds,
        }
    }
}
