//! The one clock decision between ranks: `check` reports the skew it finds and `merge`
//! applies the offsets, both from [`rank_clocks`] (the rank comparison's estimate from
//! collective end times, `kinetoscope_analysis::ranks`).

use kinetoscope_analysis::ranks::{
    compare_ranks, ClockMode, RankSummary, RanksOptions, RanksReport,
};

/// The clock handling `check` uses, and `merge`'s default: offsets estimated from
/// collective ends, applied only where one constant offset explains them.
pub(crate) const DEFAULT_CLOCK: ClockMode = ClockMode::Auto;

/// Compare the ranks' summaries with clock handling `clock`: each rank's offset from the
/// reference (lowest) rank and whether it is applied.
pub(crate) fn rank_clocks(summaries: Vec<RankSummary>, clock: ClockMode) -> RanksReport {
    compare_ranks(
        summaries,
        RanksOptions {
            clock,
            ..RanksOptions::default()
        },
    )
}
