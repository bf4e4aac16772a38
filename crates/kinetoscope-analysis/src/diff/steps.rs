//! Step times of two runs: both distributions, the shift with its interval, and a
//! verdict.

use serde::{Deserialize, Serialize};

use super::shift::{shift, Shift};
use crate::stats::DurationStats;

/// Whether the new run's steps are faster, slower or not significantly different.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval of the change lies below 0.
    Faster,
    /// The interval of the change lies above 0.
    Slower,
    /// The interval contains 0, or the samples are too small to tell.
    Unchanged,
}

/// Step times of both runs and their change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepsDiff {
    /// The base run's step times.
    pub base: Option<DurationStats>,
    /// The new run's step times.
    pub new: Option<DurationStats>,
    /// The change of the typical step, ns: the Hodges–Lehmann estimate (median of all
    /// pairwise differences `new − base`).
    pub delta_median_ns: Option<f64>,
    /// Lower end of its 95 % interval, ns.
    pub ci_low_ns: Option<f64>,
    /// Upper end of its 95 % interval, ns.
    pub ci_high_ns: Option<f64>,
    /// `delta_median_ns` over the base median (a share).
    pub relative: Option<f64>,
    /// Two-sided Mann–Whitney p-value.
    pub p_value: Option<f64>,
    /// Whether the step counts allow a 95 % interval at all (at least 4 against 4,
    /// or 3 against 5).
    pub resolvable: bool,
    /// The verdict.
    pub verdict: Verdict,
}

/// Step times are clamped to `0..=MAX_STEP_NS` first (2^53 ns, about 104 days): a
/// saved report is untrusted input, and nothing longer is a step.
pub const MAX_STEP_NS: f64 = 9_007_199_254_740_992.0;

impl StepsDiff {
    /// Compare two samples of step times, ns.
    pub fn of(base: &[f64], new: &[f64]) -> Self {
        let clamp =
            |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x.clamp(0.0, MAX_STEP_NS)).collect() };
        let (base, new) = (&clamp(base)[..], &clamp(new)[..]);
        let stats = |v: &[f64]| DurationStats::of(&v.iter().map(|&x| x as i64).collect::<Vec<_>>());
        let (b, n) = (stats(base), stats(new));
        let s: Option<Shift> = shift(base, new);
        let verdict = match &s {
            Some(s) if s.significant && s.ci_low > 0.0 => Verdict::Slower,
            Some(s) if s.significant && s.ci_high < 0.0 => Verdict::Faster,
            _ => Verdict::Unchanged,
        };
        let relative = match (&s, &b) {
            (Some(s), Some(b)) if b.median_ns > 0.0 => Some(s.estimate / b.median_ns),
            _ => None,
        };
        Self {
            base: b,
            new: n,
            delta_median_ns: s.as_ref().map(|s| s.estimate),
            ci_low_ns: s.as_ref().map(|s| s.ci_low),
            ci_high_ns: s.as_ref().map(|s| s.ci_high),
            relative,
            p_value: s.as_ref().map(|s| s.p_value),
            resolvable: s.as_ref().is_some_and(|s| s.resolvable),
            verdict,
        }
    }

    /// Whether the change is significant.
    pub fn significant(&self) -> bool {
        self.verdict != Verdict::Unchanged
    }
}
