//! Code change or machine change: when nearly every operator (host side) or kernel
//! (device side) that ran the same calls changed its time by about the same factor, the
//! difference is the machine (another CPU or GPU, clocks, thermal state, another
//! tenant), not the code. Host and device are judged apart: a busier host slows every
//! operator's host time and leaves the kernels alone.
//!
//! On each side, over the rows matched by key with the same calls per step
//! ([`ItemDelta::same_calls`]) and time on both sides, each row's ratio `new / base` is
//! weighted by its base time. The **factor** is the weighted median ratio; the side
//! changed **uniformly** when
//! - the factor is at least [`MIN_FACTOR_CHANGE`] away from 1,
//! - rows holding at least [`MIN_WITHIN_SHARE`] of that time lie within
//!   ±[`WITHIN_TOLERANCE`] of the factor, and
//! - those comparable rows hold at least [`MIN_COMPARED_SHARE`] of the side's base time.
//!
//! Then a row's unexplained change is `new − factor · base` per side (what really
//! changed: calls, shapes, kernels added or removed), and a machine-normalised step
//! divides each part of the new step's breakdown by its side's factor (kernel, memcpy,
//! memset and communication by the device's; the rest by the host's).

use serde::{Deserialize, Serialize};

use super::items::{ItemDelta, MatchKind};
use crate::overview::Parts;

/// Smallest |factor − 1| called a uniform change.
pub const MIN_FACTOR_CHANGE: f64 = 0.05;
/// A row is "at the factor" within this relative distance of it.
pub const WITHIN_TOLERANCE: f64 = 0.10;
/// Share of the comparable time that must be at the factor.
pub const MIN_WITHIN_SHARE: f64 = 0.75;
/// Share of the side's base time the comparable rows must hold.
pub const MIN_COMPARED_SHARE: f64 = 0.5;

/// What the factors say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MachineVerdict {
    /// The host or the device (or both) got uniformly slower.
    UniformSlowdown,
    /// The host or the device (or both) got uniformly faster.
    UniformSpeedup,
    /// Not a uniform change (a code change, or no change).
    NotUniform,
}

/// The uniform factor of one side (host or device).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UniformFactor {
    /// Weighted median of `new / base` over comparable rows; `None` without any.
    pub factor: Option<f64>,
    /// Share of the comparable base time within ±10 % of the factor (0–1).
    pub within_share: f64,
    /// Share of the side's base time in comparable rows (0–1).
    pub compared_share: f64,
    /// Comparable rows.
    pub rows: usize,
    /// Whether the side changed uniformly.
    pub uniform: bool,
}

impl UniformFactor {
    /// The factor when the side changed uniformly, else 1.
    pub fn normalising(&self) -> f64 {
        match (self.uniform, self.factor) {
            (true, Some(f)) => f,
            _ => 1.0,
        }
    }
}

/// The uniform part of a change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineChange {
    /// Operators' host self time.
    pub host: UniformFactor,
    /// Kernels' device time.
    pub device: UniformFactor,
    /// The verdict over both.
    pub verdict: MachineVerdict,
}

impl MachineChange {
    /// Divide each part of a step by its side's factor: the step on the base machine.
    pub fn normalise(&self, breakdown: &Parts<i64>) -> f64 {
        let (h, d) = (self.host.normalising(), self.device.normalising());
        let p = breakdown.map(|v| v as f64);
        (p.kernel + p.memcpy + p.memset + p.communication) / d
            + (p.runtime + p.dataloader + p.cpu_exec + p.other) / h
    }
}

/// Decide over the operator and kernel rows of a comparison.
pub fn detect(ops: &[ItemDelta], kernels: &[ItemDelta]) -> MachineChange {
    let host = factor_of(ops.iter().map(|r| (r, r.host_ns.base, r.host_ns.new)));
    let device = factor_of(
        kernels
            .iter()
            .map(|r| (r, r.device_ns.base, r.device_ns.new)),
    );
    let direction = |u: &UniformFactor| match (u.uniform, u.factor) {
        (true, Some(f)) if f > 1.0 => 1,
        (true, Some(_)) => -1,
        _ => 0,
    };
    let verdict = match (direction(&host), direction(&device)) {
        (1, 0 | 1) | (0, 1) => MachineVerdict::UniformSlowdown,
        (-1, 0 | -1) | (0, -1) => MachineVerdict::UniformSpeedup,
        _ => MachineVerdict::NotUniform,
    };
    MachineChange {
        host,
        device,
        verdict,
    }
}

/// The factor over `(row, base, new)` times of one side.
fn factor_of<'a>(
    rows: impl Iterator<Item = (&'a ItemDelta, Option<f64>, Option<f64>)>,
) -> UniformFactor {
    let mut all_base = 0.0;
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for (r, b, n) in rows {
        let b = b.unwrap_or(0.0);
        all_base += b;
        match n {
            Some(n)
                if r.match_kind == Some(MatchKind::Key) && r.same_calls() && b > 0.0 && n > 0.0 =>
            {
                pairs.push((n / b, b));
            }
            _ => {}
        }
    }
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
    UniformFactor {
        uniform: factor.is_some_and(|f| {
            (f - 1.0).abs() >= MIN_FACTOR_CHANGE
                && within_share >= MIN_WITHIN_SHARE
                && compared_share >= MIN_COMPARED_SHARE
        }),
        factor,
        within_share,
        compared_share,
        rows: pairs.len(),
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

/// Fill each row's unexplained change when a side changed uniformly.
pub fn explain(rows: &mut [ItemDelta], machine: &MachineChange) {
    if machine.verdict == MachineVerdict::NotUniform {
        return;
    }
    let (h, d) = (machine.host.normalising(), machine.device.normalising());
    for r in rows {
        let expected = h * r.host_ns.base.unwrap_or(0.0) + d * r.device_ns.base.unwrap_or(0.0);
        r.unexplained_ns = Some(r.new_ns - expected);
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
