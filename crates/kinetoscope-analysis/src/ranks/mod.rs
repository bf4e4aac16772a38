//! `kinetoscope ranks`: rank traces of one job side by side, and the one straggler
//! analysis that `kinetoscope report` (rule DI001) uses too.
//!
//! 1. Each trace is reduced on its reader thread to a [`RankSummary`] (steps with the
//!    overview breakdown, collectives), so a folder of many ranks never holds more than a
//!    few whole traces.
//! 2. **Matching** a collective across ranks, by the best identity the traces record:
//!    `Comms Id` (the same value on every rank for one call), else (process group,
//!    `Seq`), else its order: the k-th call of that collective in that process group,
//!    counted from the start of each numbered step (`ProfilerStep#N`, so traces that start
//!    at different steps still line up), or from the start of the trace without steps.
//! 3. **Clocks** ([`ClockMode`], module `clock`): Kineto stamps events with each host's
//!    clock. A synchronising collective ends at (nearly) the same instant on every rank,
//!    so the offset of rank r is estimated as the median over matched collectives of
//!    `end_r − end_ref` (ref = the lowest rank). In `auto` mode it is applied only when a
//!    constant offset explains the data — the median absolute deviation of the
//!    differences is at most 10 % of the offset (or 5 µs) — i.e. a fixed clock offset,
//!    not ranks that really end at different times; otherwise the clocks are taken as
//!    shared. The offsets and the decision are reported. A pairing by order whose calls
//!    did not run at the same time on the clocks so decided (one rank's call ended more
//!    than 0.1 ms before another's began) joins different calls — traces that keep
//!    different collectives, sampled or cut at different points — and is dropped, with
//!    a note; the offsets are then estimated again without it.
//! 4. Per matched collective (module `waits`): the rank arrives when its work starts
//!    (the kernel, the backend's worker span, or the call of a host collective); start
//!    skew (max − min arrival), each rank's wait (the last arriver's arrival − its own)
//!    and the last arriver's margin over the second-last. Listed: the `top_collectives`
//!    calls with the largest skew (a row holds a wait per rank) and, per (process group,
//!    collective), the skew distribution (mean, median, p90, max) and the rank most
//!    often last, for the kinds with the largest total skew (module `skew`); the summary
//!    statistics cover every matched call. The size of the report is bounded whatever
//!    the number of calls: `top_collectives` × ranks.
//! 5. **Stragglers**: the ranks the others wait for — never the ones that wait. With
//!    matched collectives, ranked by the wait they cause (Σ over the collectives they
//!    arrived last at of the others' mean wait). Without, by their time outside
//!    collectives per step (the step minus its communication part): the rank that
//!    computes longest makes the others wait in the next collective, while a waiting
//!    rank's steps are as long but spent in collectives. Ranks causing less than a
//!    tenth of the top straggler's wait are not listed. Evidence: arrivals, time
//!    outside collectives against the median rank, and the non-communication phase of
//!    the breakdown that is longer than on the median rank.
//! 6. **What-if** per straggler (module `what_if`): how much shorter each step would be
//!    if it computed like the median rank — at each collective it arrived last at, its
//!    compute before the collective is replaced by the median over the ranks there and
//!    the latest arrival recomputed; the saving is never more than the wait of the rank
//!    that waited least. Without matched collectives, its excess time outside
//!    collectives over the median rank, at most the median rank's time in collectives.

mod clock;
mod skew;
mod summary;
mod waits;
mod what_if;

pub use skew::CollectiveSkew;
pub use summary::{Interner, RankCollective, RankStep, RankSummary};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::overview::Parts;
use clock::Clocks;
use waits::{RankWaits, Waits};

/// How clock offsets between ranks are handled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMode {
    /// Estimate from collective ends; apply only where a constant offset fits.
    #[default]
    Auto,
    /// Trust the timestamps (one shared clock).
    None,
    /// Always apply the offsets estimated from collective ends.
    CollectiveEnd,
}

/// Options of [`compare_ranks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RanksOptions {
    /// Clock handling.
    pub clock: ClockMode,
    /// How many collectives (largest skew first) to list.
    pub top_collectives: usize,
}

impl Default for RanksOptions {
    fn default() -> Self {
        Self {
            clock: ClockMode::Auto,
            top_collectives: 20,
        }
    }
}

/// One rank's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    /// Rank (from the trace, else its position in the folder).
    pub rank: i64,
    /// The file.
    pub path: String,
    /// Kept steps.
    pub steps: usize,
    /// Mean step duration, ns.
    pub mean_step_ns: f64,
    /// Longest step, ns.
    pub max_step_ns: i64,
    /// Mean of each breakdown part per step, ns.
    pub mean_parts_ns: Parts<f64>,
    /// Mean time per step outside collectives: the step minus its communication part,
    /// ns.
    pub outside_collectives_ns: f64,
    /// Clock offset estimated for this rank relative to the reference rank, ns (what
    /// is subtracted from its times when applied).
    pub clock_offset_ns: i64,
    /// Whether the offset was applied.
    pub clock_offset_applied: bool,
    /// Collectives in the trace.
    pub collectives: usize,
    /// Of them, matched with at least one other rank.
    pub matched: usize,
    /// Total time this rank waited for the last arriver, ns.
    pub total_wait_ns: i64,
    /// Matched collectives at which this rank arrived last.
    pub arrived_last: usize,
    /// `arrived_last / matched` (0–1; 0 when nothing matched).
    pub arrived_last_share: f64,
    /// Total communication kernel time, ns.
    pub comm_kernel_ns: i64,
}

/// One step number across ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepAcross {
    /// Step name (of the first rank that has it).
    pub name: String,
    /// N.
    pub number: Option<i64>,
    /// Duration per rank (in [`RanksReport::ranks`] order), ns; `None` where missing.
    pub dur_ns: Vec<Option<i64>>,
    /// Shortest, ns.
    pub min_ns: i64,
    /// Median, ns (the mean of the middle two for an even count).
    pub median_ns: f64,
    /// Longest, ns.
    pub max_ns: i64,
    /// The rank with the longest step (in a synchronised job often a rank that waits,
    /// not the straggler).
    pub slowest_rank: i64,
    /// Ranks that have the step.
    pub ranks: usize,
}

/// What identified a collective across ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// `Comms Id`.
    CommsId,
    /// Process group and `Seq`.
    Seq,
    /// Order among the calls of that collective in that process group, per step.
    Order,
}

/// One collective matched across ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedCollective {
    /// Process group (`""` when unknown).
    pub process_group: String,
    /// Collective (folded name, of the lowest rank that has it).
    pub collective: String,
    /// What identified it.
    pub matched_by: MatchedBy,
    /// `Comms Id` when matched by it.
    pub comms_id: Option<u64>,
    /// `Seq` when matched by it, else the order k within (process group, collective,
    /// step); `None` when matched by `Comms Id`.
    pub index: Option<i64>,
    /// The step the order k counts from (`None` outside numbered steps or when not
    /// matched by order).
    pub step: Option<i64>,
    /// Ranks that have it.
    pub ranks: usize,
    /// Earliest arrival after clock correction, epoch ns.
    pub first_start_ns: i64,
    /// max − min arrival, ns: also the longest wait, the first arriver's.
    pub start_skew_ns: i64,
    /// The rank that arrived last.
    pub last_rank: i64,
    /// How long after the second-last rank it arrived, ns: the wait of the rank that
    /// waited least, and the most that making the last arriver faster can save here.
    pub last_margin_ns: i64,
    /// Each rank's wait (last arrival − own arrival), ns, in [`RanksReport::ranks`]
    /// order; `None` where the rank lacks it.
    pub wait_ns: Vec<Option<i64>>,
}

/// What the straggler ranking is based on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StragglerBasis {
    /// The wait each rank caused at matched collectives.
    CausedWait,
    /// Time outside collectives per step (no collective could be matched).
    OutsideCollectives,
}

/// A rank others wait for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    /// The rank.
    pub rank: i64,
    /// Wait it caused over the trace, ns: Σ over the collectives it arrived last at of
    /// the others' mean wait (caused-wait basis), else its excess time outside
    /// collectives over each other rank, averaged over the others, times the steps
    /// compared.
    pub caused_wait_ns: f64,
    /// `caused_wait_ns` per step (over the steps compared), ns.
    pub caused_wait_per_step_ns: f64,
    /// Steps compared: the fewest kept steps of any rank (at least 1).
    pub steps: usize,
    /// Collectives it arrived last at.
    pub arrived_last: usize,
    /// Of how many matched.
    pub matched: usize,
    /// `arrived_last / matched` (0–1).
    pub arrived_last_share: f64,
    /// Its mean time outside collectives per step, ns.
    pub outside_collectives_ns: f64,
    /// The median over ranks of that time, ns.
    pub median_outside_collectives_ns: f64,
    /// `outside_collectives_ns` minus the median, ns.
    pub outside_excess_ns: f64,
    /// That excess over the median (a ratio; 0 when the median is 0).
    pub outside_excess_ratio: f64,
    /// Its mean step time, ns.
    pub mean_step_ns: f64,
    /// The median over ranks of the mean step time, ns.
    pub median_step_ns: f64,
    /// The breakdown part (not communication) most longer than on the median rank.
    pub slower_phase: Option<String>,
    /// That part's excess per step, ns.
    pub slower_phase_excess_ns: f64,
    /// That excess over the part on the median rank (a ratio); `None` when that is 0.
    pub slower_phase_excess_ratio: Option<f64>,
    /// What-if: how much shorter the steps would be, over the steps compared, if this
    /// rank computed like the median rank (module `what_if`: the reduction of the
    /// others' wait at the collectives it arrived last at, never more than they
    /// waited), ns.
    pub what_if_saving_ns: f64,
    /// `what_if_saving_ns` per step, ns.
    pub what_if_saving_per_step_ns: f64,
    /// `what_if_saving_per_step_ns` over the median rank's mean step (0–1).
    pub what_if_step_share: f64,
    /// Matched collectives at which the what-if saves time (0 without matched
    /// collectives).
    pub what_if_collectives: usize,
}

/// How the clocks were treated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockReport {
    /// The mode asked for.
    pub mode: ClockMode,
    /// The reference rank.
    pub reference_rank: Option<i64>,
}

/// Matched collectives by what identified them across ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCounts {
    /// By `Comms Id`.
    pub comms_id: usize,
    /// By process group and `Seq`.
    pub seq: usize,
    /// By order within process group, collective and step.
    pub order: usize,
}

/// Skew statistics over all matched collectives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkewSummary {
    /// Collectives matched on ≥ 2 ranks.
    pub matched: usize,
    /// Collectives seen on one rank only.
    pub unmatched: usize,
    /// Matched collectives by what identified them.
    pub matched_by: MatchCounts,
    /// Mean start skew, ns.
    pub mean_skew_ns: f64,
    /// Median start skew, ns.
    pub median_skew_ns: f64,
    /// 90th percentile (nearest rank) of the start skew, ns.
    pub p90_skew_ns: i64,
    /// Largest start skew, ns.
    pub max_skew_ns: i64,
    /// Per collective kind and process group, the largest total skew first (at most
    /// [`RanksOptions::top_collectives`] of them).
    pub by_collective: Vec<CollectiveSkew>,
    /// Collective kinds (process group, collective) matched, listed or not.
    pub kinds: usize,
}

/// The multi-rank report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanksReport {
    /// One row per rank, by rank.
    pub ranks: Vec<RankRow>,
    /// Step numbers across ranks.
    pub steps: Vec<StepAcross>,
    /// Clock handling.
    pub clock: ClockReport,
    /// Skew over all matched collectives.
    pub skew: SkewSummary,
    /// The matched collectives with the largest start skew.
    pub collectives: Vec<MatchedCollective>,
    /// What the straggler ranking is based on.
    pub straggler_basis: StragglerBasis,
    /// Ranks others wait for, most wait caused first (empty when nobody waits).
    pub stragglers: Vec<Straggler>,
    /// What the analysis had to assume.
    pub warnings: Vec<Note>,
}

/// The identity of a collective call across ranks (group and name ids are global).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// `Comms Id`.
    Id(u64),
    /// (process group, `Seq`).
    Seq(u32, i64),
    /// (process group, collective, step, k).
    Order(u32, u32, Option<i64>, i64),
}

impl Key {
    fn matched_by(self) -> MatchedBy {
        match self {
            Key::Id(_) => MatchedBy::CommsId,
            Key::Seq(..) => MatchedBy::Seq,
            Key::Order(..) => MatchedBy::Order,
        }
    }
}

/// One rank's call of a collective: key, rank index, arrival, end, group and name ids,
/// and when the rank's compute before it began (the end of its previous collective or
/// the start of the call's step, whichever is later; rank clock).
struct Entry {
    key: Key,
    rank: usize,
    start: i64,
    end: i64,
    group: u32,
    name: u32,
    since: Option<i64>,
}

/// The 90th percentile (nearest rank) of `v` (sorted in place), 0 when empty.
fn p90(v: &mut [i64]) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[(v.len() * 9).div_ceil(10).max(1) - 1]
}

fn median_i64(v: &mut [i64]) -> i64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Every rank's collectives with their keys.
fn entries(ranks: &[RankSummary], groups: &mut Interner, names: &mut Interner) -> Vec<Entry> {
    let mut out = Vec::new();
    for (r, s) in ranks.iter().enumerate() {
        let g: Vec<u32> = s.groups.iter().map(|x| groups.intern(x)).collect();
        let n: Vec<u32> = s.names.iter().map(|x| names.intern(x)).collect();
        let mut k: FxHashMap<(u32, u32, Option<i64>), i64> = FxHashMap::default();
        let step_start: FxHashMap<i64, i64> = s
            .steps
            .iter()
            .filter_map(|st| Some((st.number?, st.start_ns)))
            .collect();
        let mut prev_end: Option<i64> = None;
        for c in &s.collectives {
            let step = c.step.and_then(|n| step_start.get(&n).copied());
            let since = match (prev_end, step) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            prev_end = Some(c.end_ns);
            let (group, name) = (g[c.group as usize], n[c.name as usize]);
            let key = match (c.comms_id, c.seq) {
                (Some(id), _) => Key::Id(id),
                (None, Some(seq)) => Key::Seq(group, seq),
                (None, None) => {
                    let k = k.entry((group, name, c.step)).or_insert(0);
                    *k += 1;
                    Key::Order(group, name, c.step, *k - 1)
                }
            };
            out.push(Entry {
                key,
                rank: r,
                start: c.start_ns,
                end: c.end_ns,
                group,
                name,
                since,
            });
        }
    }
    out.sort_unstable_by_key(|e| (e.key, e.rank));
    out
}

/// The listed row of one matched collective: `run` its entries (one key, at least two
/// ranks), `corr` the clock correction, its start skew and first arrival.
fn matched_row(
    run: &[Entry],
    corr: impl Fn(usize, i64) -> i64,
    (groups, names): (&Interner, &Interner),
    ids: &[i64],
    (skew, first_s): (i64, i64),
) -> MatchedCollective {
    let starts: Vec<(usize, i64)> = run
        .iter()
        .map(|e| (e.rank, corr(e.rank, e.start)))
        .collect();
    let (last_r, last_s) = starts
        .iter()
        .copied()
        .max_by_key(|(r, s)| (*s, std::cmp::Reverse(*r)))
        .unwrap_or((0, first_s));
    let key = run[0].key;
    let (group, comms_id, index, step) = match key {
        Key::Id(id) => (None, Some(id), None, None),
        Key::Seq(g, seq) => (Some(g), None, Some(seq), None),
        Key::Order(g, _, step, k) => (Some(g), None, Some(k), step),
    };
    let mut wait_ns = vec![None; ids.len()];
    for &(r, s) in &starts {
        wait_ns[r] = Some(last_s - s);
    }
    let second_last = starts
        .iter()
        .filter(|(r, _)| *r != last_r)
        .map(|x| x.1)
        .max()
        .unwrap_or(last_s);
    MatchedCollective {
        process_group: group.map_or_else(String::new, |g| groups.table[g as usize].clone()),
        collective: names.table[run[0].name as usize].clone(),
        matched_by: key.matched_by(),
        comms_id,
        index,
        step,
        ranks: starts.len(),
        first_start_ns: first_s,
        start_skew_ns: skew,
        last_rank: ids[last_r],
        last_margin_ns: last_s - second_last,
        wait_ns,
    }
}

/// Compare the ranks of one job.
pub fn compare_ranks(ranks: Vec<RankSummary>, opts: RanksOptions) -> RanksReport {
    let mut warnings = Vec::new();
    let (ranks, ids) = by_rank(ranks, &mut warnings);
    let n = ranks.len();
    let mut matching = Matching::of(&ranks);
    let mut clocks = Clocks::estimate(&matching, n, opts.clock);
    let dropped = matching.drop_apart_in_time(&clocks);
    if dropped > 0 {
        // The clock offsets were estimated with the false pairings too.
        clocks = Clocks::estimate(&matching, n, opts.clock);
        warnings.push(Note::CollectivesApartInTime {
            dropped,
            kept: matching.matched_runs.len(),
        });
    }
    let Waits {
        per_rank,
        skew,
        listed,
    } = Waits::of(&matching, n, &clocks);
    let listed = matching.listed_rows(listed, opts.top_collectives, &clocks, &ids);
    let skew = skew.summary(&matching, opts.top_collectives, &ids);
    if n >= 2 && matching.matched_runs.is_empty() {
        warnings.push(Note::NoMatchedCollectives);
    }

    let steps = steps_across(&ranks, &ids);
    let rows = rank_rows(&ranks, &ids, &clocks, &per_rank);

    let straggler_basis = if matching.matched_runs.is_empty() {
        StragglerBasis::OutsideCollectives
    } else {
        StragglerBasis::CausedWait
    };
    let stragglers = if n >= 2 {
        stragglers(&rows, &per_rank.caused, &per_rank.saving, straggler_basis)
    } else {
        warnings.push(Note::OneRank);
        Vec::new()
    };
    for s in &ranks {
        for w in &s.warnings {
            warnings.push(Note::InRank {
                path: s.path.clone(),
                note: Box::new(w.clone()),
            });
        }
    }
    RanksReport {
        ranks: rows,
        steps,
        clock: ClockReport {
            mode: opts.clock,
            reference_rank: ids.first().copied(),
        },
        skew,
        collectives: listed,
        straggler_basis,
        stragglers,
        warnings,
    }
}

/// The ranks sorted by rank, with their rank ids: from the traces, else the position
/// (the position for every rank, with a warning, when two traces give the same rank).
fn by_rank(mut ranks: Vec<RankSummary>, warnings: &mut Vec<Note>) -> (Vec<RankSummary>, Vec<i64>) {
    // Rank ids: from the traces, else the position; sorted by rank.
    let mut ids: Vec<i64> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| r.rank.unwrap_or(i as i64))
        .collect();
    let mut seen = ids.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != ids.len() {
        warnings.push(Note::DuplicateRanks);
        ids = (0..ranks.len() as i64).collect();
    }
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|&i| ids[i]);
    let mut taken: Vec<Option<RankSummary>> = ranks.drain(..).map(Some).collect();
    ranks = order
        .iter()
        .map(|&i| taken[i].take().expect("each rank once"))
        .collect();
    let ids: Vec<i64> = order.iter().map(|&i| ids[i]).collect();
    (ranks, ids)
}

/// How far one rank's call of a collective may start after another rank's call ended
/// (clock jitter between ranks) before the two are taken for different calls.
const APART_TOLERANCE_NS: i64 = 100_000;

/// Every rank's collectives, keyed, and the runs of entries with one key.
struct Matching {
    /// Sorted by key, then rank index.
    entries: Vec<Entry>,
    /// Process group ids.
    groups: Interner,
    /// Collective name ids.
    names: Interner,
    /// The runs (`entries[a..b]`) of a key found on at least two ranks.
    matched_runs: Vec<(usize, usize)>,
    /// Keys found on one rank only.
    unmatched: usize,
}

impl Matching {
    /// Key the collectives of `ranks` and find the runs of equal keys.
    fn of(ranks: &[RankSummary]) -> Self {
        let mut groups = Interner::default();
        let mut names = Interner::default();
        let entries = entries(ranks, &mut groups, &mut names);
        // Runs of equal keys.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < entries.len() {
            let mut j = i + 1;
            while j < entries.len() && entries[j].key == entries[i].key {
                j += 1;
            }
            runs.push((i, j));
            i = j;
        }
        let matched_runs: Vec<(usize, usize)> =
            runs.iter().copied().filter(|(a, b)| b - a >= 2).collect();
        let unmatched = runs.len() - matched_runs.len();
        Self {
            entries,
            groups,
            names,
            matched_runs,
            unmatched,
        }
    }

    /// Drop the runs paired by order ([`Key::Order`]) whose calls did not run at the
    /// same time on the ranks (on the clocks as corrected): a collective cannot end on
    /// one rank before another rank has called it, so such a pairing joins different
    /// calls (traces that keep different collectives). Returns how many were dropped.
    fn drop_apart_in_time(&mut self, clocks: &Clocks) -> usize {
        let entries = &self.entries;
        let before = self.matched_runs.len();
        self.matched_runs.retain(|&(a, b)| {
            let run = &entries[a..b];
            if !matches!(run[0].key, Key::Order(..)) {
                return true;
            }
            let last_start = run.iter().map(|e| clocks.corr(e.rank, e.start)).max();
            let first_end = run.iter().map(|e| clocks.corr(e.rank, e.end)).min();
            last_start <= first_end.map(|t| t + APART_TOLERANCE_NS)
        });
        let dropped = before - self.matched_runs.len();
        self.unmatched += dropped;
        dropped
    }

    /// The entries of each matched run, in key order.
    fn matched(&self) -> impl Iterator<Item = &[Entry]> + '_ {
        self.matched_runs.iter().map(|&(a, b)| &self.entries[a..b])
    }

    /// The rows of the `top` matched collectives of largest skew (the earliest first on
    /// a tie), from `listed`'s (skew, first arrival, matched run).
    fn listed_rows(
        &self,
        mut listed: Vec<(i64, i64, usize)>,
        top: usize,
        clocks: &Clocks,
        ids: &[i64],
    ) -> Vec<MatchedCollective> {
        listed.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        listed.truncate(top);
        listed
            .into_iter()
            .map(|(skew, first_s, k)| {
                let (a, b) = self.matched_runs[k];
                matched_row(
                    &self.entries[a..b],
                    |r, t| clocks.corr(r, t),
                    (&self.groups, &self.names),
                    ids,
                    (skew, first_s),
                )
            })
            .collect()
    }
}

/// One row per rank: its steps and breakdown, its clock offset and what the matched
/// collectives add up to for it.
fn rank_rows(
    ranks: &[RankSummary],
    ids: &[i64],
    clocks: &Clocks,
    waits: &RankWaits,
) -> Vec<RankRow> {
    ranks
        .iter()
        .enumerate()
        .map(|(r, s)| {
            let k = s.steps.len().max(1) as f64;
            let mut sums = [0i64; 8];
            for st in &s.steps {
                for (x, v) in sums.iter_mut().zip(st.parts_ns.to_array()) {
                    *x += v;
                }
            }
            let mean_step_ns = s.steps.iter().map(|x| x.dur_ns).sum::<i64>() as f64 / k;
            let mean_parts_ns = Parts::from_array(sums.map(|v| v as f64 / k));
            RankRow {
                rank: ids[r],
                path: s.path.clone(),
                steps: s.steps.len(),
                mean_step_ns,
                max_step_ns: s.steps.iter().map(|x| x.dur_ns).max().unwrap_or(0),
                outside_collectives_ns: mean_step_ns - mean_parts_ns.communication,
                mean_parts_ns,
                clock_offset_ns: clocks.offsets[r],
                clock_offset_applied: clocks.applied[r],
                collectives: s.collectives.len(),
                matched: waits.matched[r],
                total_wait_ns: waits.total_wait[r],
                arrived_last: waits.arrived_last[r],
                arrived_last_share: if waits.matched[r] > 0 {
                    waits.arrived_last[r] as f64 / waits.matched[r] as f64
                } else {
                    0.0
                },
                comm_kernel_ns: s.comm_kernel_ns,
            }
        })
        .collect()
}

/// Steps across ranks, by number (or name).
fn steps_across(ranks: &[RankSummary], ids: &[i64]) -> Vec<StepAcross> {
    let n = ranks.len();
    let mut step_keys: Vec<(Option<i64>, String)> = Vec::new();
    let mut step_dur: FxHashMap<(Option<i64>, String), Vec<Option<i64>>> = FxHashMap::default();
    for (r, s) in ranks.iter().enumerate() {
        for st in &s.steps {
            let key = (
                st.number,
                if st.number.is_some() {
                    String::new()
                } else {
                    st.name.clone()
                },
            );
            let v = step_dur.entry(key.clone()).or_insert_with(|| {
                step_keys.push(key.clone());
                vec![None; n]
            });
            v[r] = Some(st.dur_ns);
        }
    }
    step_keys.sort();
    step_keys
        .iter()
        .map(|key| {
            let durs = &step_dur[key];
            let present: Vec<(usize, i64)> = durs
                .iter()
                .enumerate()
                .filter_map(|(r, d)| d.map(|d| (r, d)))
                .collect();
            let (slow_r, max) = *present
                .iter()
                .max_by_key(|(r, d)| (*d, std::cmp::Reverse(*r)))
                .expect("present");
            StepAcross {
                name: match key.0 {
                    Some(num) => format!("ProfilerStep#{num}"),
                    None => key.1.clone(),
                },
                number: key.0,
                dur_ns: durs.clone(),
                min_ns: present.iter().map(|x| x.1).min().unwrap_or(0),
                median_ns: median_f64(present.iter().map(|x| x.1 as f64).collect()),
                max_ns: max,
                slowest_rank: ids[slow_r],
                ranks: present.len(),
            }
        })
        .collect()
}

/// A rank is listed as a straggler when the wait it causes is at least this share of
/// the top straggler's.
const MIN_SHARE_OF_TOP: f64 = 0.1;

/// Rank the stragglers and gather their evidence; `saving` is each rank's what-if
/// saving at matched collectives (ns over the trace, collectives that save).
fn stragglers(
    rows: &[RankRow],
    caused: &[f64],
    saving: &[(i64, usize)],
    basis: StragglerBasis,
) -> Vec<Straggler> {
    let n = rows.len();
    let steps = rows.iter().map(|r| r.steps).min().unwrap_or(0).max(1);
    let median_step = median_f64(rows.iter().map(|r| r.mean_step_ns).collect());
    let outside: Vec<f64> = rows.iter().map(|r| r.outside_collectives_ns).collect();
    let median_outside = median_f64(outside.clone());
    let part_medians: Vec<f64> = (0..8)
        .map(|p| median_f64(rows.iter().map(|r| r.mean_parts_ns.to_array()[p]).collect()))
        .collect();
    let median_comm = median_f64(rows.iter().map(|r| r.mean_parts_ns.communication).collect());
    // Wait caused per rank, over the steps compared.
    let caused: Vec<f64> = match basis {
        StragglerBasis::CausedWait => caused.to_vec(),
        StragglerBasis::OutsideCollectives => {
            // Σ over the other ranks of max(0, outside_s − outside_r), from the sorted
            // times and their prefix sums: O(n log n) for a thousand ranks.
            let mut sorted = outside.clone();
            sorted.sort_by(f64::total_cmp);
            let mut prefix = Vec::with_capacity(n + 1);
            prefix.push(0.0);
            for v in &sorted {
                prefix.push(prefix.last().copied().unwrap_or(0.0) + v);
            }
            (0..n)
                .map(|s| {
                    let below = sorted.partition_point(|&v| v < outside[s]);
                    let excess = below as f64 * outside[s] - prefix[below];
                    excess / (n - 1) as f64 * steps as f64
                })
                .collect()
        }
    };
    // Ranks that cause a tenth of the top straggler's wait or more: arriving last now
    // and then by a few µs (as every rank does) does not make a straggler.
    let top = caused.iter().copied().fold(0.0, f64::max);
    let mut order: Vec<usize> = (0..n)
        .filter(|&r| caused[r] > 0.0 && caused[r] >= MIN_SHARE_OF_TOP * top)
        .collect();
    if basis == StragglerBasis::OutsideCollectives {
        order.retain(|&r| outside[r] > median_outside);
    }
    order.sort_by(|&a, &b| caused[b].total_cmp(&caused[a]).then(a.cmp(&b)));
    order.truncate(5);
    order
        .into_iter()
        .map(|r| {
            let row = &rows[r];
            let parts = row.mean_parts_ns.to_array();
            let (mut phase, mut excess) = (None, 0.0);
            for p in 0..8 {
                if p == 3 {
                    continue; // communication is the symptom, not the cause
                }
                let x = parts[p] - part_medians[p];
                if x > excess {
                    excess = x;
                    phase = Some(p);
                }
            }
            let base = phase.map_or(0.0, |p| part_medians[p]);
            let outside_excess = outside[r] - median_outside;
            let per_step = match basis {
                StragglerBasis::CausedWait => saving[r].0 as f64 / steps as f64,
                StragglerBasis::OutsideCollectives => {
                    what_if::saving_outside(outside[r], median_outside, median_comm)
                }
            };
            Straggler {
                rank: row.rank,
                caused_wait_ns: caused[r],
                caused_wait_per_step_ns: caused[r] / steps as f64,
                steps,
                arrived_last: row.arrived_last,
                matched: row.matched,
                arrived_last_share: row.arrived_last_share,
                outside_collectives_ns: outside[r],
                median_outside_collectives_ns: median_outside,
                outside_excess_ns: outside_excess,
                outside_excess_ratio: if median_outside > 0.0 {
                    outside_excess / median_outside
                } else {
                    0.0
                },
                mean_step_ns: row.mean_step_ns,
                median_step_ns: median_step,
                slower_phase: phase.map(|p| Parts::<f64>::NAMES[p].to_owned()),
                slower_phase_excess_ratio: (phase.is_some() && base > 0.0).then(|| excess / base),
                slower_phase_excess_ns: excess,
                what_if_saving_ns: per_step * steps as f64,
                what_if_saving_per_step_ns: per_step,
                what_if_step_share: if median_step > 0.0 {
                    per_step / median_step
                } else {
                    0.0
                },
                what_if_collectives: saving[r].1,
            }
        })
        .collect()
}
