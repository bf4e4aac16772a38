//! The what-if of a straggler: "if rank r computed like the median rank, the step would
//! take X less".
//!
//! **With matched collectives.** A synchronising collective completes once the last
//! rank has arrived, so the step is set by the last arrival at each one. A rank's
//! *compute before a collective* is the time from the end of its previous collective
//! (or the start of the step the call is in, whichever is later) to its arrival. For
//! each matched collective at which rank r arrived last:
//!
//! - `a_r` its arrival, `L'` the latest arrival of the other ranks;
//! - `a_r'` = where r would have arrived with the median compute: its own start of
//!   compute plus the median, over the ranks at that collective, of their compute
//!   before it (the lower middle value for an even count: a rank's own time, the
//!   other rank's of two);
//! - the saving is `a_r − max(L', a_r')` (never negative).
//!
//! It is never more than `a_r − L'`, the wait of the rank that waited least: time the
//! other ranks really spent waiting, never time they computed. The savings of a step
//! add up (every later collective ends that much earlier on every rank); the result is
//! the sum over the steps compared, per step, and that over the median rank's mean
//! step. A collective without a start of compute on rank r (its first call outside any
//! step) counts no saving.
//!
//! **Without matched collectives** (no arrival to compare), the saving per step is
//! rank r's time outside collectives minus the median rank's, at most the median rank's
//! communication time per step (the most the other ranks can have waited for it).

use super::Entry;

/// The time the step would save at one matched collective (`run`, its entries) if its
/// last arriver `last` (rank index, corrected arrival) had computed like the median
/// rank before it; `corr` is the clock correction of a rank's times, `scratch` a buffer
/// reused between calls.
pub(super) fn saving_at(
    run: &[Entry],
    corr: impl Fn(usize, i64) -> i64,
    last: (usize, i64),
    scratch: &mut Vec<i64>,
) -> i64 {
    let (last_r, last_s) = last;
    let Some(lagger) = run.iter().find(|e| e.rank == last_r) else {
        return 0;
    };
    let Some(since) = lagger.since else {
        return 0;
    };
    let others_last = run
        .iter()
        .filter(|e| e.rank != last_r)
        .map(|e| corr(e.rank, e.start))
        .max();
    let Some(others_last) = others_last else {
        return 0;
    };
    scratch.clear();
    scratch.extend(
        run.iter()
            .filter_map(|e| e.since.map(|s| (e.start - s).max(0))),
    );
    scratch.sort_unstable();
    // The median rank's: the lower middle for an even count (a rank's own time; of
    // two ranks, the faster one).
    let Some(&median_compute) = scratch.get(scratch.len().saturating_sub(1) / 2) else {
        return 0;
    };
    let at_median = corr(last_r, since) + median_compute;
    (last_s - others_last.max(at_median)).max(0)
}

/// Without matched collectives: rank r's saving per step from its time outside
/// collectives against the median rank's, at most `median_comm_ns` (the median rank's
/// communication per step).
pub(super) fn saving_outside(outside_ns: f64, median_outside_ns: f64, median_comm_ns: f64) -> f64 {
    (outside_ns - median_outside_ns)
        .min(median_comm_ns)
        .max(0.0)
}
