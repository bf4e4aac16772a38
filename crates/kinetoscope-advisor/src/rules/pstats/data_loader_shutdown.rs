//! PY001 `DataLoaderWorkerShutdown`.
//!
//! ## What it finds
//! Time in the DataLoader's worker shutdown, `_shutdown_workers`
//! (`torch/utils/data/dataloader.py`), and in `poll` (the worker pipes'
//! `multiprocessing.connection` poll and `select.poll`), in a cProfile / profile file.
//!
//! ## Why it matters
//! Without persistent workers every epoch (and every evaluation loop) starts worker
//! processes and joins them at the end: the training loop blocks while they shut down,
//! often seconds per epoch, visible in cProfile as `_shutdown_workers` waiting in
//! `poll`. oumi's performance guide shows exactly this pattern.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! `DataLoader(..., persistent_workers=True)` (with `num_workers > 0`), and create the
//! evaluation DataLoader once instead of per evaluation.
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 % (the TensorBoard
//! plugin's DataLoader recommendation threshold), critical ≥ 20 % (TraceML's
//! `INPUT_BOUND`); `pstats.info_pct`, `pstats.warning_pct`, `pstats.critical_pct`.

use kinetoscope_trace::FuncKey;

use super::PstatsRule;
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct DataLoaderWorkerShutdown;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY001",
    name: "DataLoaderWorkerShutdown",
    family: "pstats",
    since: "0.2.0",
    summary: "DataLoader workers are shut down and restarted (cProfile)",
};

impl PstatsRule for DataLoaderWorkerShutdown {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.name == "_shutdown_workers" || f.name == "poll" || f.name.starts_with("<method 'poll' of")
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("DataLoader worker shutdown takes {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "Keep the workers alive: DataLoader(num_workers>0, persistent_workers=True), and build \
         evaluation DataLoaders once, not per evaluation."
    }
}
