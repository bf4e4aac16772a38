//! PY003 `SyncItem`.
//!
//! ## What it finds
//! Time in `Tensor.item()` and its dispatcher call `_local_scalar_dense`, in a cProfile /
//! profile file (`<method 'item' of 'torch._C.TensorBase' objects>`, and Python-level
//! functions named `_local_scalar_dense`).
//!
//! ## Why it matters
//! `.item()` on a CUDA tensor waits for every queued kernel to finish and copies the
//! value to the host: the GPU drains and the host blocks. In cProfile the wait shows as
//! the own time of `item`.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! Keep losses and metrics on the device and read them every N steps (or accumulate with
//! `torch.stack` / in-place adds and read once); avoid `.item()` in conditions of the
//! hot loop.
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 %, critical ≥ 20 %
//! (`pstats.*_pct`; the advisor's share pair, after the TensorBoard plugin and TraceML).

use kinetoscope_trace::FuncKey;

use super::{torch_method, PstatsRule};
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct SyncItem;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY003",
    name: "SyncItem",
    family: "pstats",
    since: "0.2.0",
    summary: "Synchronous .item() calls block the loop (cProfile)",
};

impl PstatsRule for SyncItem {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.name == "_local_scalar_dense"
            || f.name.contains("_local_scalar_dense")
            || torch_method(f, "item")
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("Synchronous .item() takes {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "Keep losses and metrics on the device and read them every N steps (accumulate \
         in place, read once); avoid .item() in conditions of the hot loop."
    }
}
