//! The change between two small, noisy samples (step times of two runs): the
//! Hodges–Lehmann estimate of the shift, its distribution-free confidence interval
//! (Moses' interval from the Mann–Whitney U distribution) and the two-sided
//! Mann–Whitney p-value. Deterministic: no resampling, so the same two samples always
//! give the same interval.
//!
//! - Shift: the median of every pairwise difference `new_j − base_i`.
//! - Interval: `[D(k), D(N+1−k)]` over the `N = n·m` sorted differences, where `k` is
//!   the largest integer with `P(U ≤ k − 1) ≤ α / 2` under the null hypothesis. `U`'s
//!   distribution is exact (counted) when `n, m ≤ EXACT_MAX` and there are no ties,
//!   else normal with the tie correction.
//! - When even `k = 1` is too wide (too few steps: 3 against 3 can never reach 95 %),
//!   the interval is the full range of differences and [`Shift::resolvable`] is false.
//!
//! Samples larger than [`MAX_SAMPLE`] are thinned to that many evenly spaced order
//! statistics first, which keeps the pairwise differences bounded.

use serde::{Deserialize, Serialize};

/// Largest sample size whose U distribution is counted exactly.
pub const EXACT_MAX: usize = 50;

/// Largest sample size used as is; larger samples are thinned to this many evenly
/// spaced order statistics.
pub const MAX_SAMPLE: usize = 2000;

/// Confidence level of the interval.
pub const CONFIDENCE: f64 = 0.95;

/// The estimated shift from `base` to `new`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shift {
    /// Hodges–Lehmann estimate of `new − base`.
    pub estimate: f64,
    /// Lower end of the 95 % interval.
    pub ci_low: f64,
    /// Upper end of the 95 % interval.
    pub ci_high: f64,
    /// Two-sided Mann–Whitney p-value.
    pub p_value: f64,
    /// Whether the samples are large enough for the interval to exist at all.
    pub resolvable: bool,
    /// Whether the interval excludes 0 (a significant change).
    pub significant: bool,
}

/// The shift from `base` to `new` with a 95 % interval; `None` when either sample is
/// empty.
pub fn shift(base: &[f64], new: &[f64]) -> Option<Shift> {
    if base.is_empty() || new.is_empty() {
        return None;
    }
    let x = thinned(base);
    let y = thinned(new);
    let (n, m) = (x.len(), y.len());
    let mut diffs: Vec<f64> = Vec::with_capacity(n * m);
    for &b in &x {
        for &a in &y {
            diffs.push(a - b);
        }
    }
    diffs.sort_unstable_by(f64::total_cmp);
    let estimate = median_sorted(&diffs);
    let ties = has_ties(&x, &y);
    let u = u_statistic(&x, &y);
    let alpha = 1.0 - CONFIDENCE;
    let (k, p_value) = if n <= EXACT_MAX && m <= EXACT_MAX && !ties {
        let cdf = exact_cdf(n, m);
        let k = (0..=n * m)
            .take_while(|&k| k == 0 || cdf[k - 1] <= alpha / 2.0)
            .last();
        let lo = u.min(n as f64 * m as f64 - u) as usize;
        (k.unwrap_or(0), (2.0 * cdf[lo]).min(1.0))
    } else {
        normal_k_and_p(&x, &y, u, alpha)
    };
    let nm = diffs.len();
    let (ci_low, ci_high, resolvable) = if k >= 1 && k <= nm / 2 + 1 && k <= nm {
        (diffs[k - 1], diffs[nm - k], true)
    } else {
        (diffs[0], diffs[nm - 1], false)
    };
    let significant = resolvable && (ci_low > 0.0 || ci_high < 0.0);
    Some(Shift {
        estimate,
        ci_low,
        ci_high,
        p_value,
        resolvable,
        significant,
    })
}

/// `values` sorted, thinned to at most [`MAX_SAMPLE`] evenly spaced order statistics.
fn thinned(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    if v.len() <= MAX_SAMPLE {
        return v;
    }
    let last = (v.len() - 1) as f64;
    (0..MAX_SAMPLE)
        .map(|i| v[(i as f64 * last / (MAX_SAMPLE - 1) as f64).round() as usize])
        .collect()
}

/// Median of sorted values.
fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Mann–Whitney U of `new` over `base`: pairs with `new > base`, ties counting half.
fn u_statistic(base: &[f64], new: &[f64]) -> f64 {
    let mut u = 0.0;
    for &a in new {
        for &b in base {
            if a > b {
                u += 1.0;
            } else if a == b {
                u += 0.5;
            }
        }
    }
    u
}

/// Whether any value occurs twice in the pooled sample.
fn has_ties(x: &[f64], y: &[f64]) -> bool {
    let mut all: Vec<f64> = x.iter().chain(y).copied().collect();
    all.sort_unstable_by(f64::total_cmp);
    all.windows(2).any(|w| w[0] == w[1])
}

/// `P(U ≤ u)` for `u = 0..=n·m` under the null hypothesis, counted exactly: the number
/// of arrangements with statistic `u` obeys `c(n, m, u) = c(n−1, m, u−m) + c(n, m−1, u)`.
fn exact_cdf(n: usize, m: usize) -> Vec<f64> {
    // counts[j][u] for the current i: arrangements of i base and j new values.
    let mut counts: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        next.push(vec![1.0]);
        for j in 1..=m {
            let mut c = vec![0.0; i * j + 1];
            // A new value above every base value adds i to U... by symmetry the
            // recursion on the largest value: it is a base value (U unchanged, i−1
            // base left) or a new value (U grows by i, j−1 new left).
            for (u, slot) in c.iter_mut().enumerate() {
                let from_base = counts[j].get(u).copied().unwrap_or(0.0);
                let from_new = if u >= i {
                    next[j - 1].get(u - i).copied().unwrap_or(0.0)
                } else {
                    0.0
                };
                *slot = from_base + from_new;
            }
            next.push(c);
        }
        counts = next;
    }
    let dist = &counts[m];
    let total: f64 = dist.iter().sum();
    let mut acc = 0.0;
    dist.iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

/// `k` and the two-sided p-value from the normal approximation of U, with the tie
/// correction of its variance.
fn normal_k_and_p(x: &[f64], y: &[f64], u: f64, alpha: f64) -> (usize, f64) {
    let (n, m) = (x.len() as f64, y.len() as f64);
    let total = n + m;
    let mut pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    pooled.sort_unstable_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j + 1 < pooled.len() && pooled[j + 1] == pooled[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let var = n * m / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)).max(1.0));
    let sd = var.max(0.0).sqrt();
    let z = normal_quantile(1.0 - alpha / 2.0);
    let k = (n * m / 2.0 - z * sd).floor();
    let k = if k >= 1.0 { k as usize } else { 0 };
    let p = if sd > 0.0 {
        let zu = ((u - n * m / 2.0).abs() - 0.5).max(0.0) / sd;
        (2.0 * (1.0 - normal_cdf(zu))).min(1.0)
    } else {
        1.0
    };
    (k, p)
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf; error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Standard normal quantile by bisection on [`normal_cdf`] (only a few values are ever
/// needed).
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0f64, 10.0f64);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_distribution_matches_hand_counts() {
        // n = m = 2: the 6 arrangements give U = 0, 1, 2, 2, 3, 4.
        let cdf = exact_cdf(2, 2);
        let want = [1.0, 2.0, 4.0, 5.0, 6.0].map(|c| c / 6.0);
        for (a, b) in cdf.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{cdf:?}");
        }
        // The smallest two-sided p-value of 3 against 3 is 2 / 20 = 0.1.
        assert!((2.0 * exact_cdf(3, 3)[0] - 0.1).abs() < 1e-12);
    }

    #[test]
    fn clear_shift_is_significant_and_estimated() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let new: Vec<f64> = base.iter().map(|v| v + 20.0).collect();
        let s = shift(&base, &new).unwrap();
        assert!((s.estimate - 20.0).abs() < 1e-9);
        assert!(s.significant && s.ci_low > 0.0 && s.ci_high > s.ci_low);
        assert!(s.p_value < 0.01, "{s:?}");
    }

    #[test]
    fn identical_samples_are_not_significant() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let s = shift(&base, &base).unwrap();
        assert_eq!(s.estimate, 0.0);
        assert!(!s.significant && s.ci_low < 0.0 && s.ci_high > 0.0);
    }

    #[test]
    fn three_against_three_cannot_resolve() {
        let s = shift(&[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]).unwrap();
        assert!(!s.resolvable && !s.significant);
        assert_eq!((s.ci_low, s.ci_high), (7.0, 11.0));
    }

    #[test]
    fn normal_approximation_agrees_with_exact_counting() {
        let base: Vec<f64> = (0..40).map(|i| 1000.0 + (i * 37 % 41) as f64).collect();
        let new: Vec<f64> = (0..40)
            .map(|i| 1010.0 + (i * 29 % 43) as f64 + 0.5)
            .collect();
        let exact = shift(&base, &new).unwrap();
        let u = u_statistic(&thinned(&base), &thinned(&new));
        let (k, p) = normal_k_and_p(&thinned(&base), &thinned(&new), u, 0.05);
        let cdf = exact_cdf(40, 40);
        let k_exact = (1..=1600)
            .take_while(|&k| cdf[k - 1] <= 0.025)
            .last()
            .unwrap();
        assert!((k as i64 - k_exact as i64).abs() <= 2, "{k} vs {k_exact}");
        assert!((p - exact.p_value).abs() < 0.02, "{p} vs {}", exact.p_value);
    }

    #[test]
    fn large_samples_are_thinned_deterministically() {
        let base: Vec<f64> = (0..5000).map(|i| (i % 97) as f64).collect();
        let new: Vec<f64> = (0..5000).map(|i| (i % 97) as f64 + 3.0).collect();
        let a = shift(&base, &new).unwrap();
        let b = shift(&base, &new).unwrap();
        assert_eq!(a, b);
        assert!(a.significant && (a.estimate - 3.0).abs() <= 1.0, "{a:?}");
    }
}
