//! PY004 `DeviceDtypeCopies`.
//!
//! ## What it finds
//! Time in tensor copies and conversions called from Python: `Tensor.to`, `Tensor.copy_`
//! (`<method 'to' of 'torch._C.TensorBase' objects>`, `<method 'copy_' …>`) and
//! functions named `copy_` or `_to_copy`, in a cProfile / profile file.
//!
//! ## Why it matters
//! A `.to(device)` of pageable memory is synchronous, and a dtype conversion per step
//! repeats work that could be done once; both show as own time of `to` / `copy_` on the
//! host.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! `DataLoader(pin_memory=True)` and `.to(device, non_blocking=True)`; convert dtypes
//! once (model and data loading), not per step; create tensors on the device
//! (`torch.zeros(..., device=...)`).
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 %, critical ≥ 20 %
//! (`pstats.*_pct`; the advisor's share pair, after the TensorBoard plugin and TraceML).

use kinetoscope_trace::FuncKey;

use super::{torch_method, PstatsRule};
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct DeviceDtypeCopies;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY004",
    name: "DeviceDtypeCopies",
    family: "pstats",
    since: "0.2.0",
    summary: "Device and dtype copies from Python take a share of the loop (cProfile)",
};

impl PstatsRule for DeviceDtypeCopies {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.name == "copy_"
            || f.name == "_to_copy"
            || torch_method(f, "to")
            || torch_method(f, "copy_")
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("Tensor copies (.to, copy_) take {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "DataLoader(pin_memory=True) and .to(device, non_blocking=True); convert dtypes once, \
         not per step; create tensors on the device."
    }
}
