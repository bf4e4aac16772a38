//! PY005 `LoggingAndCallbacks`.
//!
//! ## What it finds
//! Time in Python's `logging` module (`logging/__init__.py`), in callback code (a file or
//! class whose path contains `callback`) and in functions named `log`, `log_metrics` or
//! `log_dict`, in a cProfile / profile file.
//!
//! ## Why it matters
//! Formatting and emitting log records, and callbacks run every step (metrics, progress,
//! experiment trackers), are host work inside the training loop; with a fast GPU step
//! they can dominate it.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! Log every N steps, not every step; keep callbacks cheap (no `.item()`, no I/O) or run
//! them every N steps; send metrics asynchronously.
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 %, critical ≥ 20 %
//! (`pstats.*_pct`; the advisor's share pair, after the TensorBoard plugin and TraceML).

use kinetoscope_trace::FuncKey;

use super::PstatsRule;
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct LoggingAndCallbacks;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY005",
    name: "LoggingAndCallbacks",
    family: "pstats",
    since: "0.2.0",
    summary: "Logging and callbacks take a share of the loop (cProfile)",
};

impl PstatsRule for LoggingAndCallbacks {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.file.ends_with("logging/__init__.py")
            || f.file.to_ascii_lowercase().contains("callback")
            || matches!(f.name.as_str(), "log" | "log_metrics" | "log_dict")
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("Logging and callbacks take {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "Log every N steps, not every step; keep callbacks cheap (no .item(), no I/O) or run \
         them every N steps; send metrics asynchronously."
    }
}
