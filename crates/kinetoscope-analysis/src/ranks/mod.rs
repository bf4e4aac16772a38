//! `kinetoscope ranks`: rank traces of one job side by side.
//!
//! 1. Each trace is reduced on its reader thread to a [`RankSummary`] (steps with the
//!    overview breakdown, collectives), so a folder of many ranks never holds more than a
//!    few whole traces.
//! 2. **Matching**: the k-th collective is matched across ranks by (process group,
//!    `Seq`) when the trace records `Seq`, else by (process group, collective name, k)
//!    — its order among the rank's calls of that collective in that group.
//! 3. **Clocks** ([`ClockMode`]): Kineto stamps events with each host's clock. A
//!    synchronising collective ends at (nearly) the same instant on every rank, so the
//!    offset of rank r is estimated as the median over matched collectives of
//!    `end_r − end_ref` (ref = the lowest rank). In `auto` mode it is applied only when a
//!    constant offset explains the data — the median absolute deviation of the
//!    differences is at most 10 % of the offset (or 5 µs) — i.e. a fixed clock offset,
//!    not ranks that really end at different times; otherwise the clocks are taken as
//!    shared. The offsets and the decision are reported.
//! 4. Per matched collective: start skew (max − min start) and each rank's wait (the
//!    last arriver's start − its own start).
//! 5. **Stragglers**: ranks ranked by the wait they cause (Σ over the collectives they
//!    arrived last at of the others' mean wait); evidence: how often they arrived
//!    last, the steps where they were slowest, and the non-communication phase of the
//!    breakdown that is longer than on the median rank. Without matched collectives the
//!    ranking falls back to mean step time.

mod summary;

pub use summary::{RankCollective, RankStep, RankSummary};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::overview::Parts;

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
    /// The rank with the longest step.
    pub slowest_rank: i64,
    /// Ranks that have the step.
    pub ranks: usize,
}

/// One collective matched across ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedCollective {
    /// Process group (`""` when unknown).
    pub process_group: String,
    /// Collective (folded name).
    pub collective: String,
    /// `Seq` when matched by it, else the order k within (group, collective).
    pub index: i64,
    /// Whether `index` is a `Seq`.
    pub by_seq: bool,
    /// Ranks that have it.
    pub ranks: usize,
    /// Earliest start after clock correction, epoch ns.
    pub first_start_ns: i64,
    /// max − min start, ns: also the longest wait, the first arriver's.
    pub start_skew_ns: i64,
    /// The rank that arrived last.
    pub last_rank: i64,
    /// Each rank's wait (last start − own start), ns, in [`RanksReport::ranks`] order;
    /// `None` where the rank lacks it.
    pub wait_ns: Vec<Option<i64>>,
}

/// What the straggler ranking is based on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StragglerBasis {
    /// The wait each rank caused at matched collectives.
    CausedWait,
    /// Mean step time (no collective could be matched).
    StepTime,
}

/// A rank others wait for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Straggler {
    /// The rank.
    pub rank: i64,
    /// Wait it caused: Σ over collectives it arrived last at of the others' mean wait,
    /// ns (0 in the step-time fallback).
    pub caused_wait_ns: f64,
    /// Collectives it arrived last at.
    pub arrived_last: usize,
    /// Of how many matched.
    pub matched: usize,
    /// `arrived_last / matched` (0–1).
    pub arrived_last_share: f64,
    /// Steps where it had the longest duration.
    pub slowest_steps: Vec<String>,
    /// Steps compared across ranks.
    pub of_steps: usize,
    /// Its mean step time, ns.
    pub mean_step_ns: f64,
    /// The median over ranks of the mean step time, ns.
    pub median_step_ns: f64,
    /// Its mean step time minus the median over ranks, ns.
    pub step_excess_ns: f64,
    /// `step_excess_ns` over the median (a ratio; 0 when the median is 0).
    pub step_excess_ratio: f64,
    /// The breakdown part (not communication) most longer than on the median rank.
    pub slower_phase: Option<String>,
    /// That part's excess per step, ns.
    pub slower_phase_excess_ns: f64,
    /// That excess over the part on the median rank (a ratio); `None` when that is 0.
    pub slower_phase_excess_ratio: Option<f64>,
}

/// How the clocks were treated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockReport {
    /// The mode asked for.
    pub mode: ClockMode,
    /// The reference rank.
    pub reference_rank: Option<i64>,
}

/// Skew statistics over all matched collectives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkewSummary {
    /// Collectives matched on ≥ 2 ranks.
    pub matched: usize,
    /// Collectives seen on one rank only.
    pub unmatched: usize,
    /// Mean start skew, ns.
    pub mean_skew_ns: f64,
    /// Median start skew, ns.
    pub median_skew_ns: f64,
    /// Largest start skew, ns.
    pub max_skew_ns: i64,
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

/// (group, by_seq, index) key, rank index, start, end of one collective call.
type Entry = ((u32, bool, i64), u32, i64, i64);

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

/// Compare the ranks of one job.
pub fn compare_ranks(mut ranks: Vec<RankSummary>, opts: RanksOptions) -> RanksReport {
    let mut warnings = Vec::new();
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
    ranks = order
        .iter()
        .map(|&i| std::mem::replace(&mut ranks[i], empty()))
        .collect();
    let ids: Vec<i64> = order.iter().map(|&i| ids[i]).collect();
    let n = ranks.len();

    // Global collective keys: (group id, index, by_seq) → per rank the collective.
    let mut group_ids: FxHashMap<(String, String), u32> = FxHashMap::default();
    let mut group_names: Vec<(String, String)> = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    for (r, s) in ranks.iter().enumerate() {
        let local: Vec<u32> = s
            .groups
            .iter()
            .map(|g| {
                *group_ids.entry(g.clone()).or_insert_with(|| {
                    group_names.push(g.clone());
                    (group_names.len() - 1) as u32
                })
            })
            .collect();
        let mut k_in_group: FxHashMap<u32, i64> = FxHashMap::default();
        for c in &s.collectives {
            let g = local[c.group as usize];
            let key = if c.seq >= 0 {
                // Seq is per process group, whatever the collective.
                let pg = group_names[g as usize].0.clone();
                let gid = *group_ids
                    .entry((pg.clone(), String::from("(seq)")))
                    .or_insert_with(|| {
                        group_names.push((pg.clone(), String::from("(seq)")));
                        (group_names.len() - 1) as u32
                    });
                (gid, true, c.seq)
            } else {
                let k = k_in_group.entry(g).or_insert(0);
                *k += 1;
                (g, false, *k - 1)
            };
            entries.push((key, r as u32, c.start_ns, c.end_ns));
        }
    }
    entries.sort_unstable_by_key(|e| (e.0, e.1));
    // Runs of equal keys.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        let mut j = i + 1;
        while j < entries.len() && entries[j].0 == entries[i].0 {
            j += 1;
        }
        runs.push((i, j));
        i = j;
    }
    let matched_runs: Vec<(usize, usize)> =
        runs.iter().copied().filter(|(a, b)| b - a >= 2).collect();
    let unmatched = runs.len() - matched_runs.len();

    // Clock offsets from collective ends, relative to rank index 0.
    let mut diffs: Vec<Vec<i64>> = vec![Vec::new(); n];
    for &(a, b) in &matched_runs {
        let run = &entries[a..b];
        if run[0].1 != 0 {
            continue;
        }
        let ref_end = run[0].3;
        for e in &run[1..] {
            diffs[e.1 as usize].push(e.3 - ref_end);
        }
    }
    let mut offsets = vec![0i64; n];
    let mut applied = vec![false; n];
    for r in 1..n {
        if diffs[r].is_empty() {
            continue;
        }
        let med = median_i64(&mut diffs[r]);
        let mut dev: Vec<i64> = diffs[r].iter().map(|d| (d - med).abs()).collect();
        let mad = median_i64(&mut dev);
        offsets[r] = med;
        applied[r] = match opts.clock {
            ClockMode::None => false,
            ClockMode::CollectiveEnd => true,
            ClockMode::Auto => med != 0 && mad <= (med.abs() / 10).max(5_000),
        };
    }

    // Per matched collective: skew and waits.
    let mut total_wait = vec![0i64; n];
    let mut arrived_last = vec![0usize; n];
    let mut matched_count = vec![0usize; n];
    let mut caused = vec![0f64; n];
    let mut skews: Vec<i64> = Vec::with_capacity(matched_runs.len());
    let mut listed: Vec<MatchedCollective> = Vec::new();
    let corr = |r: usize, t: i64| if applied[r] { t - offsets[r] } else { t };
    for &(a, b) in &matched_runs {
        let run = &entries[a..b];
        let starts: Vec<(usize, i64)> = run
            .iter()
            .map(|e| (e.1 as usize, corr(e.1 as usize, e.2)))
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
        let skew = last_s - first_s;
        skews.push(skew);
        let key = run[0].0;
        let (pg, name) = &group_names[key.0 as usize];
        listed.push(MatchedCollective {
            process_group: pg.clone(),
            collective: name.clone(),
            index: key.2,
            by_seq: key.1,
            ranks: starts.len(),
            first_start_ns: first_s,
            start_skew_ns: skew,
            last_rank: ids[last_r],
            wait_ns: {
                let mut w = vec![None; n];
                for &(r, s) in &starts {
                    w[r] = Some(last_s - s);
                }
                w
            },
        });
    }
    listed.sort_by(|a, b| {
        b.start_skew_ns
            .cmp(&a.start_skew_ns)
            .then(a.first_start_ns.cmp(&b.first_start_ns))
    });
    listed.truncate(opts.top_collectives);
    let skew = SkewSummary {
        matched: matched_runs.len(),
        unmatched,
        mean_skew_ns: if skews.is_empty() {
            0.0
        } else {
            skews.iter().sum::<i64>() as f64 / skews.len() as f64
        },
        median_skew_ns: median_f64(skews.iter().map(|&s| s as f64).collect()),
        max_skew_ns: skews.iter().copied().max().unwrap_or(0),
    };
    if n >= 2 && matched_runs.is_empty() {
        warnings.push(Note::NoMatchedCollectives);
    }

    // Steps across ranks, by number (or name).
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
    let mut steps = Vec::new();
    let mut slowest_steps: Vec<Vec<String>> = vec![Vec::new(); n];
    for key in &step_keys {
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
        let name = match key.0 {
            Some(num) => format!("ProfilerStep#{num}"),
            None => key.1.clone(),
        };
        if present.len() >= 2 {
            slowest_steps[slow_r].push(name.clone());
        }
        steps.push(StepAcross {
            name,
            number: key.0,
            dur_ns: durs.clone(),
            min_ns: present.iter().map(|x| x.1).min().unwrap_or(0),
            median_ns: median_f64(present.iter().map(|x| x.1 as f64).collect()),
            max_ns: max,
            slowest_rank: ids[slow_r],
            ranks: present.len(),
        });
    }

    // Rank rows.
    let rows: Vec<RankRow> = ranks
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
            RankRow {
                rank: ids[r],
                path: s.path.clone(),
                steps: s.steps.len(),
                mean_step_ns: s.steps.iter().map(|x| x.dur_ns).sum::<i64>() as f64 / k,
                max_step_ns: s.steps.iter().map(|x| x.dur_ns).max().unwrap_or(0),
                mean_parts_ns: Parts::from_array(sums.map(|v| v as f64 / k)),
                clock_offset_ns: offsets[r],
                clock_offset_applied: applied[r],
                collectives: s.collectives.len(),
                matched: matched_count[r],
                total_wait_ns: total_wait[r],
                arrived_last: arrived_last[r],
                arrived_last_share: if matched_count[r] > 0 {
                    arrived_last[r] as f64 / matched_count[r] as f64
                } else {
                    0.0
                },
                comm_kernel_ns: s.comm_kernel_ns,
            }
        })
        .collect();

    let straggler_basis = if matched_runs.is_empty() {
        StragglerBasis::StepTime
    } else {
        StragglerBasis::CausedWait
    };
    let stragglers = if n >= 2 {
        stragglers(&rows, &caused, &slowest_steps, straggler_basis, steps.len())
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

fn empty() -> RankSummary {
    RankSummary {
        path: String::new(),
        rank: None,
        world_size: None,
        steps: Vec::new(),
        groups: Vec::new(),
        collectives: Vec::new(),
        comm_kernel_ns: 0,
        warnings: Vec::new(),
    }
}

/// Rank the stragglers and gather their evidence.
fn stragglers(
    rows: &[RankRow],
    caused: &[f64],
    slowest_steps: &[Vec<String>],
    basis: StragglerBasis,
    n_steps: usize,
) -> Vec<Straggler> {
    let by_wait = basis == StragglerBasis::CausedWait;
    let n = rows.len();
    let median_step = median_f64(rows.iter().map(|r| r.mean_step_ns).collect());
    let part_medians: Vec<f64> = (0..8)
        .map(|p| median_f64(rows.iter().map(|r| r.mean_parts_ns.to_array()[p]).collect()))
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    if by_wait {
        order.retain(|&r| caused[r] > 0.0);
        order.sort_by(|&a, &b| caused[b].total_cmp(&caused[a]).then(a.cmp(&b)));
    } else {
        order.retain(|&r| rows[r].mean_step_ns > median_step);
        order.sort_by(|&a, &b| {
            rows[b]
                .mean_step_ns
                .total_cmp(&rows[a].mean_step_ns)
                .then(a.cmp(&b))
        });
    }
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
            let step_excess = row.mean_step_ns - median_step;
            let base = phase.map_or(0.0, |p| part_medians[p]);
            Straggler {
                rank: row.rank,
                caused_wait_ns: if by_wait { caused[r] } else { 0.0 },
                arrived_last: row.arrived_last,
                matched: row.matched,
                arrived_last_share: row.arrived_last_share,
                slowest_steps: slowest_steps[r].clone(),
                of_steps: n_steps,
                mean_step_ns: row.mean_step_ns,
                median_step_ns: median_step,
                step_excess_ns: step_excess,
                step_excess_ratio: if median_step > 0.0 {
                    step_excess / median_step
                } else {
                    0.0
                },
                slower_phase: phase.map(|p| Parts::<f64>::NAMES[p].to_owned()),
                slower_phase_excess_ratio: (phase.is_some() && base > 0.0).then(|| excess / base),
                slower_phase_excess_ns: excess,
            }
        })
        .collect()
}
