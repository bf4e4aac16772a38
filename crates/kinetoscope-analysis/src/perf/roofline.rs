//! The roofline verdict of each row (achieved rates, peaks, bound, fraction, time
//! lost), the ranking, and the per-family totals.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::devices::GpuPeak;
use super::{FamilySummary, PerfOptions, PerfRow};

/// Which roof limits a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Intensity at or above the ridge point: compute peak.
    Compute,
    /// Intensity below the ridge point: memory bandwidth.
    Memory,
}

/// Fill a row's rates, peaks and roofline verdict. Rates need kernel time and a
/// model; the verdict needs both peaks. A rate above its peak is refused.
pub(crate) fn judge(row: &mut PerfRow, peaks: Option<&GpuPeak>, opts: &PerfOptions) {
    let (Some(gflop), Some(bytes)) = (row.gflop_per_call, row.bytes_per_call) else {
        return;
    };
    let compute = opts.peak_tflops.filter(|p| *p > 0.0).or_else(|| {
        let (units, precision) = (row.units?, row.precision?);
        peaks?.compute(units, precision)
    });
    let bandwidth = opts
        .peak_tbps
        .filter(|p| *p > 0.0)
        .or_else(|| peaks?.bandwidth());
    row.peak_tflops = compute;
    row.peak_tbps = bandwidth;
    let flop = gflop * 1e9 * row.calls as f64;
    let moved = bytes * row.calls as f64;
    let secs = row.kernel_us / 1e6;
    if let (Some(p), Some(w)) = (compute, bandwidth) {
        let intensity = row.flop_per_byte.unwrap_or(0.0);
        row.bound = Some(if intensity >= p / w {
            Bound::Compute
        } else {
            Bound::Memory
        });
    }
    if secs <= 0.0 {
        return;
    }
    let tflops = flop / secs / 1e12;
    let tbps = moved / secs / 1e12;
    if compute.is_some_and(|p| tflops > p) || bandwidth.is_some_and(|w| tbps > w) {
        row.above_peak = true;
        return;
    }
    row.tflops = Some(tflops);
    row.tbps = Some(tbps);
    if let (Some(p), Some(w)) = (compute, bandwidth) {
        let allowed = (flop / (p * 1e12)).max(moved / (w * 1e12));
        row.roofline_fraction = Some(allowed / secs);
        row.lost_us = Some((secs - allowed) * 1e6);
    }
}

/// Rank rows by time lost (largest first), rows without it after them by kernel time,
/// ties by name and dims.
pub(crate) fn rank(rows: &mut [PerfRow]) {
    rows.sort_by(|a, b| {
        let la = a.lost_us.unwrap_or(f64::NEG_INFINITY);
        let lb = b.lost_us.unwrap_or(f64::NEG_INFINITY);
        lb.total_cmp(&la)
            .then(b.kernel_us.total_cmp(&a.kernel_us))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.input_dims.cmp(&b.input_dims))
            .then_with(|| a.dtypes.cmp(&b.dtypes))
            .then_with(|| a.concrete_inputs.cmp(&b.concrete_inputs))
            .then(a.direct.cmp(&b.direct))
    });
}

/// Per-family totals, by kernel time (largest first).
pub(crate) fn families(rows: &[PerfRow]) -> Vec<FamilySummary> {
    let total: f64 = rows.iter().map(|r| r.kernel_us).sum();
    let mut by: FxHashMap<super::Family, (FamilySummary, f64)> = FxHashMap::default();
    for r in rows {
        let (s, rated_us) = by.entry(r.family).or_insert_with(|| {
            (
                FamilySummary {
                    family: r.family,
                    rows: 0,
                    calls: 0,
                    kernel_us: 0.0,
                    kernel_share: 0.0,
                    gflop: 0.0,
                    bytes: 0.0,
                    lost_us: 0.0,
                    tflops: None,
                    tbps: None,
                },
                0.0,
            )
        });
        s.rows += 1;
        s.calls += r.calls;
        s.kernel_us += r.kernel_us;
        s.lost_us += r.lost_us.unwrap_or(0.0);
        if let (Some(g), Some(b), Some(_)) = (r.gflop_per_call, r.bytes_per_call, r.tflops) {
            s.gflop += g * r.calls as f64;
            s.bytes += b * r.calls as f64;
            *rated_us += r.kernel_us;
        }
    }
    let mut out: Vec<FamilySummary> = by
        .into_values()
        .map(|(mut s, rated_us)| {
            s.kernel_share = if total > 0.0 {
                s.kernel_us / total
            } else {
                0.0
            };
            if rated_us > 0.0 {
                s.tflops = Some(s.gflop * 1e9 / (rated_us / 1e6) / 1e12);
                s.tbps = Some(s.bytes / (rated_us / 1e6) / 1e12);
            }
            s
        })
        .collect();
    out.sort_by(|a, b| {
        b.kernel_us
            .total_cmp(&a.kernel_us)
            .then(a.family.cmp(&b.family))
    });
    out
}
