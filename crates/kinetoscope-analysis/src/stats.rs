//! Distribution statistics over nanosecond durations.

use serde::{Deserialize, Serialize};

/// Count, mean, median, p90, min, max and coefficient of variation of a set of
/// durations. Percentiles interpolate linearly between the two nearest ranks (NumPy's
/// default), so the median of an even count is the mean of the middle two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DurationStats {
    /// Number of values.
    pub count: usize,
    /// Arithmetic mean, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub median_ns: f64,
    /// 90th percentile, ns.
    pub p90_ns: f64,
    /// Smallest, ns.
    pub min_ns: i64,
    /// Largest, ns.
    pub max_ns: i64,
    /// Population standard deviation divided by the mean (0 when the mean is 0).
    pub cv: f64,
}

impl DurationStats {
    /// Statistics of `values`; `None` when empty.
    pub fn of(values: &[i64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let n = sorted.len() as f64;
        let mean = sorted.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = sorted
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        Some(Self {
            count: sorted.len(),
            mean_ns: mean,
            median_ns: percentile(&sorted, 0.5),
            p90_ns: percentile(&sorted, 0.9),
            min_ns: sorted[0],
            max_ns: *sorted.last().unwrap(),
            cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
        })
    }
}

/// Linear-interpolation percentile of sorted values, `q` in 0..=1.
pub fn percentile(sorted: &[i64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] as f64 + (sorted[hi] - sorted[lo]) as f64 * frac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let s = DurationStats::of(&[10, 20, 30, 40]).unwrap();
        assert_eq!(s.mean_ns, 25.0);
        assert_eq!(s.median_ns, 25.0);
        assert!((s.p90_ns - 37.0).abs() < 1e-9);
        assert_eq!((s.min_ns, s.max_ns), (10, 40));
        assert!((s.cv - (125f64).sqrt() / 25.0).abs() < 1e-12);
        assert!(DurationStats::of(&[]).is_none());
    }
}
