//! Comparisons of two runs (`kinetoscope diff BASE NEW`): pure functions over the
//! per-trace [`profile::TraceProfile`]s of both sides, with no prose.
//!
//! - [`shift`]: the change between two samples of step times, with a confidence
//!   interval (Hodges–Lehmann and Mann–Whitney; `docs/diff.md` says why).
//! - [`steps`]: both step-time distributions, the change and a verdict.
//! - [`parts`]: the breakdown (and any per-step quantities) before, after and Δ, ranked.
//! - [`items`]: operators and kernels matched across the runs (by key, by name, by the
//!   call path that launched them), added, removed, changed.
//! - [`uniform`]: whether nearly everything changed by the same factor (a machine
//!   change rather than a code change).

pub mod items;
pub mod parts;
pub mod profile;
pub mod shift;
pub mod steps;
pub mod uniform;

use serde::{Deserialize, Serialize};

pub use profile::{profile, profile_in, BatchFromShapes, TraceProfile};

/// A value on both sides and its change (`new − base`); a side where the value is
/// unknown is `None`, and so is the change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Change<T> {
    /// The base run's value.
    pub base: Option<T>,
    /// The new run's value.
    pub new: Option<T>,
    /// `new − base`.
    pub delta: Option<T>,
}

/// A value whose change `new − base` can be taken without overflow (integers saturate:
/// saved reports are untrusted input).
pub trait Delta: Copy {
    /// `new − base`.
    fn minus(new: Self, base: Self) -> Self;
}

impl Delta for f64 {
    fn minus(new: Self, base: Self) -> Self {
        new - base
    }
}

impl Delta for i64 {
    fn minus(new: Self, base: Self) -> Self {
        new.saturating_sub(base)
    }
}

impl<T: Delta> Change<T> {
    /// The change from `base` to `new`.
    pub fn of(base: Option<T>, new: Option<T>) -> Self {
        let delta = match (base, new) {
            (Some(b), Some(n)) => Some(T::minus(n, b)),
            _ => None,
        };
        Self { base, new, delta }
    }
}

impl Change<f64> {
    /// `delta / base` (a share; −0.1 is 10 % less); `None` when `base` is 0 or unknown.
    pub fn relative(&self) -> Option<f64> {
        match (self.base, self.delta) {
            (Some(b), Some(d)) if b != 0.0 => Some(d / b.abs()),
            _ => None,
        }
    }
}

/// How the traces of one side combine into one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// One trace.
    #[default]
    Single,
    /// Ranks of one job running at once: a step lasts as long as its slowest rank.
    Ranks,
    /// Phases of a run folder, run one after the other: a step is their sum.
    Sequence,
}

/// One side of a comparison.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// The profiles of its traces.
    pub profiles: &'a [&'a TraceProfile],
    /// How they combine.
    pub combine: Combine,
}

impl Side<'_> {
    /// The step times of the run: each trace's, or per step index the slowest rank's
    /// (ranks) or the sum of the phases' (run folders), up to the shortest trace.
    pub fn step_times(&self) -> Vec<f64> {
        self.step_times_by(|s| s.dur_ns as f64)
    }

    /// [`Side::step_times`] of `f` of each step (a step's time re-computed from its
    /// breakdown, say).
    pub fn step_times_by(&self, f: impl Fn(&profile::StepSample) -> f64) -> Vec<f64> {
        let per = |g: fn(f64, f64) -> f64| {
            let n = self
                .profiles
                .iter()
                .map(|p| p.steps.len())
                .min()
                .unwrap_or(0);
            (0..n)
                .map(|i| {
                    self.profiles
                        .iter()
                        .map(|p| f(&p.steps[i]))
                        .reduce(g)
                        .unwrap_or(0.0)
                })
                .collect()
        };
        match (self.combine, self.profiles) {
            (_, [one]) => one.steps.iter().map(&f).collect(),
            (Combine::Ranks, _) => per(f64::max),
            (Combine::Sequence, _) => per(|a, b| a + b),
            (Combine::Single, _) => self
                .profiles
                .iter()
                .flat_map(|p| p.steps.iter().map(&f))
                .collect(),
        }
    }

    /// The weight of one trace's totals in a per-step figure of the run: 1 / its steps
    /// (at least 1), and 1 / the number of traces unless they are phases run one after
    /// the other (then the phases add up).
    pub fn weight(&self, p: &TraceProfile) -> f64 {
        let traces = match self.combine {
            Combine::Sequence => 1.0,
            _ => self.profiles.len().max(1) as f64,
        };
        1.0 / p.steps.len().max(1) as f64 / traces
    }

    /// A per-step figure of the run: `f` of each trace's profile, weighted
    /// ([`Side::weight`]) and summed.
    pub fn per_step(&self, f: impl Fn(&TraceProfile) -> f64) -> f64 {
        self.profiles.iter().map(|p| f(p) * self.weight(p)).sum()
    }
}
