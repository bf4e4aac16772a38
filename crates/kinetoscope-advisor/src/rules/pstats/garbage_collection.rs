//! PY006 `GarbageCollection`.
//!
//! ## What it finds
//! Time in explicit garbage collection, `gc.collect` (`{built-in method gc.collect}`), in
//! a cProfile / profile file.
//!
//! ## Why it matters
//! A full collection walks every tracked Python object; in a training process with many
//! objects (datasets, tokenizers, graphs) one call takes from milliseconds to seconds,
//! and code that calls it every step (or on every evaluation) stalls the loop.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! Remove per-step `gc.collect()` calls (run them every N steps, or between epochs);
//! `gc.freeze()` after start-up moves long-lived objects out of collections.
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 %, critical ≥ 20 %
//! (`pstats.*_pct`; the advisor's share pair, after the TensorBoard plugin and TraceML).

use kinetoscope_trace::FuncKey;

use super::PstatsRule;
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct GarbageCollection;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY006",
    name: "GarbageCollection",
    family: "pstats",
    since: "0.2.0",
    summary: "Explicit garbage collection stalls the loop (cProfile)",
};

impl PstatsRule for GarbageCollection {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.name == "<built-in method gc.collect>" || (f.file == "~" && f.name.contains("gc.collect"))
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("gc.collect() takes {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "Remove per-step gc.collect() calls (every N steps or between epochs); gc.freeze() \
         after start-up moves long-lived objects out of collections."
    }
}
