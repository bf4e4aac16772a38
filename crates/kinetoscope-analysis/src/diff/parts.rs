//! Per-step quantities before and after, ranked by the size of their change: the
//! step-time breakdown, the host phases, anything with one number per run.

use serde::{Deserialize, Serialize};

use super::shift::shift;
use super::Side;
use crate::overview::Parts;

/// One quantity per step in both runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartDelta {
    /// What (`kernel`, `dataloader`, `forward`, ...).
    pub category: String,
    /// Mean per step in the base run, ns (`None`: the run has none of it).
    pub base_ns: Option<f64>,
    /// Mean per step in the new run, ns.
    pub new_ns: Option<f64>,
    /// `new − base`, ns (an absent side counts as 0).
    pub delta_ns: f64,
    /// Whether the per-step values differ significantly (Mann–Whitney, 95 %, each part
    /// on its own: with 8 parts, noise marks one now and then); `None` where per-step
    /// values are not kept.
    pub significant: Option<bool>,
}

impl PartDelta {
    /// A quantity from its per-step means; significance unknown.
    pub fn of(category: &str, base_ns: Option<f64>, new_ns: Option<f64>) -> Self {
        Self {
            category: category.to_owned(),
            base_ns,
            new_ns,
            delta_ns: new_ns.unwrap_or(0.0) - base_ns.unwrap_or(0.0),
            significant: None,
        }
    }
}

/// Rank by |Δ|, largest first (ties by category, so the order is stable).
pub fn rank(rows: &mut [PartDelta]) {
    rows.sort_by(|a, b| {
        b.delta_ns
            .abs()
            .total_cmp(&a.delta_ns.abs())
            .then_with(|| a.category.cmp(&b.category))
    });
}

/// The step-time breakdown of both runs (per step, as [`Side::per_step`] combines
/// traces), each part with the significance of its per-step change, ranked by |Δ|.
pub fn breakdown(base: &Side, new: &Side) -> Vec<PartDelta> {
    let samples = |side: &Side| -> Vec<[f64; 8]> {
        side.profiles
            .iter()
            .flat_map(|p| {
                p.steps
                    .iter()
                    .map(|s| s.breakdown_ns.to_array().map(|v| v as f64))
            })
            .collect()
    };
    let (b, n) = (samples(base), samples(new));
    let mean = |side: &Side, v: &[[f64; 8]], k: usize| {
        (!v.is_empty()).then(|| {
            side.per_step(|p| {
                p.steps
                    .iter()
                    .map(|s| s.breakdown_ns.to_array()[k] as f64)
                    .sum()
            })
        })
    };
    let mut rows: Vec<PartDelta> = Parts::<f64>::KEYS
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let col = |v: &[[f64; 8]]| v.iter().map(|a| a[k]).collect::<Vec<_>>();
            let mut row = PartDelta::of(name, mean(base, &b, k), mean(new, &n, k));
            row.significant = shift(&col(&b), &col(&n)).map(|s| s.significant);
            row
        })
        .collect();
    rank(&mut rows);
    rows
}
