//! Code change or machine change: when nearly every operator and kernel that ran the
//! same calls changed its time by about the same factor, the difference is the machine
//! (another GPU or CPU, clocks, thermal state, another tenant), not the code.
//!
//! Over the rows matched by key with the same calls per step ([`ItemDelta::same_calls`])
//! and some time in the base run, each row's ratio `new / base` is weighted by its base
//! time. The **factor** is the weighted median ratio; the change is **uniform** when
//! - the factor is at least [`MIN_FACTOR_CHANGE`] away from 1,
//! - rows holding at least [`MIN_WITHIN_SHARE`] of that time lie within
//!   ±[`WITHIN_TOLERANCE`] of the factor, and
//! - those comparable rows hold at least [`MIN_COMPARED_SHARE`] of all base time.
//!
//! Then each row's unexplained change is `new − factor · base` (what really changed:
//! calls, shapes, kernels added or removed), and a machine-normalised step time is the
//! new step time divided by the factor.

use serde::{Deserialize, Serialize};

use super::items::ItemDelta;

/// Smallest |factor − 1| called a uniform change.
pub const MIN_FACTOR_CHANGE: f64 = 0.05;
/// A row is "at the factor" within this relative distance of it.
pub const WITHIN_TOLERANCE: f64 = 0.10;
/// Share of the comparable time that must be at the factor.
pub const MIN_WITHIN_SHARE: f64 = 0.75;
/// Share of all base time the comparable rows must hold.
pub const MIN_COMPARED_SHARE: f64 = 0.5;

/// What the factor says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MachineVerdict {
    /// Nearly everything got slower by the same factor.
    UniformSlowdown,
    /// Nearly everything got faster by the same factor.
    UniformSpeedup,
    /// Not a uniform change (a code change, or no change).
    NotUniform,
}

/// The uniform part of a change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineChange {
    /// Weighted median of `new / base` over comparable rows; `None` without any.
    pub factor: Option<f64>,
    /// Share of the comparable base time within ±10 % of the factor (0–1).
    pub within_share: f64,
    /// Share of all base time in comparable rows (0–1).
    pub compared_share: f64,
    /// Comparable rows.
    pub rows: usize,
    /// The verdict.
    pub verdict: MachineVerdict,
}

impl MachineChange {
    /// The factor when the change is uniform, else 1.
    pub fn normalising_factor(&self) -> f64 {
        match (self.verdict, self.factor) {
            (MachineVerdict::NotUniform, _) | (_, None) => 1.0,
            (_, Some(f)) => f,
        }
    }
}

/// Decide over the operator and kernel rows of a comparison.
pub fn detect(ops: &[ItemDelta], kernels: &[ItemDelta]) -> MachineChange {
    let all_base: f64 = ops.iter().chain(kernels).map(|r| r.base_ns).sum();
    let mut pairs: Vec<(f64, f64)> = ops
        .iter()
        .chain(kernels)
        .filter(|r| {
            r.match_kind == Some(super::items::MatchKind::Key)
                && r.same_calls()
                && r.base_ns > 0.0
                && r.new_ns > 0.0
        })
        .map(|r| (r.new_ns / r.base_ns, r.base_ns))
        .collect();
    let compared: f64 = pairs.iter().map(|p| p.1).sum();
    let factor = weighted_median(&mut pairs);
    let within: f64 = factor.map_or(0.0, |f| {
        pairs
            .iter()
            .filter(|(r, _)| (r / f - 1.0).abs() <= WITHIN_TOLERANCE)
            .map(|p| p.1)
            .sum()
    });
    let share = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
    let (within_share, compared_share) = (share(within, compared), share(compared, all_base));
    let verdict = match factor {
        Some(f)
            if (f - 1.0).abs() >= MIN_FACTOR_CHANGE
                && within_share >= MIN_WITHIN_SHARE
                && compared_share >= MIN_COMPARED_SHARE =>
        {
            if f > 1.0 {
                MachineVerdict::UniformSlowdown
            } else {
                MachineVerdict::UniformSpeedup
            }
        }
        _ => MachineVerdict::NotUniform,
    };
    MachineChange {
        factor,
        within_share,
        compared_share,
        rows: pairs.len(),
        verdict,
    }
}

/// The value below which half the weight lies (`(value, weight)` pairs).
fn weighted_median(pairs: &mut [(f64, f64)]) -> Option<f64> {
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if total <= 0.0 {
        return None;
    }
    let mut acc = 0.0;
    for &(v, w) in pairs.iter() {
        acc += w;
        if acc >= total / 2.0 {
            return Some(v);
        }
    }
    pairs.last().map(|p| p.0)
}

/// Fill each row's unexplained change when the change is uniform.
pub fn explain(rows: &mut [ItemDelta], machine: &MachineChange) {
    if machine.verdict == MachineVerdict::NotUniform {
        return;
    }
    let f = machine.normalising_factor();
    for r in rows {
        r.unexplained_ns = Some(r.new_ns - f * r.base_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_median_follows_the_weight() {
        let mut v = vec![(1.0, 1.0), (2.0, 10.0), (3.0, 1.0)];
        assert_eq!(weighted_median(&mut v), Some(2.0));
        let mut v = vec![(1.0, 5.0), (9.0, 1.0)];
        assert_eq!(weighted_median(&mut v), Some(1.0));
        assert_eq!(weighted_median(&mut []), None);
    }
}
