//! PY002 `TokenCounting`.
//!
//! ## What it finds
//! Time in functions named `num_tokens` (token counting in the training loop, e.g. for
//! throughput logging), in a cProfile / profile file.
//!
//! ## Why it matters
//! Counting tokens on the host every step (often by moving a mask to the CPU or
//! iterating over a batch in Python) serialises the loop; oumi's guide asks "what does
//! `num_tokens` call?" for this reason.
//!
//! ## Evidence
//! The matched functions with calls, cumulative and own time, and share of the profile.
//!
//! ## Fix
//! Count tokens once per batch in the collator or dataset (or on the device, reading the
//! number back rarely), cache counts for fixed-length data, and log them every N steps.
//!
//! ## Thresholds and sources
//! Share of the profile's total own time: info ≥ 1 %, warning ≥ 5 %, critical ≥ 20 %
//! (the pair the advisor uses for input stalls: the TensorBoard plugin's 5 %, TraceML's
//! 20 %); `pstats.*_pct`.

use kinetoscope_trace::FuncKey;

use super::PstatsRule;
use crate::rules::RuleMeta;

/// See the module documentation.
pub struct TokenCounting;

/// Its identity.
pub static META: RuleMeta = RuleMeta {
    code: "PY002",
    name: "TokenCounting",
    family: "pstats",
    since: "0.2.0",
    summary: "Token counting on the host takes a share of the loop (cProfile)",
};

impl PstatsRule for TokenCounting {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn matches(&self, f: &FuncKey) -> bool {
        f.name == "num_tokens"
    }

    fn title(&self, pct: f64, secs: f64, calls: i64) -> String {
        format!("Token counting (num_tokens) takes {pct:.1} % of the profile ({secs:.3} s, {calls} calls)")
    }

    fn fix(&self) -> &'static str {
        "Count tokens once per batch in the collator or dataset (or on the device, read \
         back rarely), cache counts for fixed-length data, and log them every N steps."
    }
}
