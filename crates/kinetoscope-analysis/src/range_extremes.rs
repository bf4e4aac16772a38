//! Minimum and maximum of any range of a fixed sequence in O(log n) (a segment tree of
//! 2n values per extreme), so that per-window scans stay O(n log n) however many windows
//! overlap the same values.

/// Range minimum and maximum over a fixed sequence of `i64`.
#[derive(Clone, Debug)]
pub struct RangeExtremes {
    n: usize,
    /// `min[n + i]` is value `i`; `min[k]` for `k < n` is the minimum of its children.
    min: Vec<i64>,
    /// The same for the maximum.
    max: Vec<i64>,
}

impl RangeExtremes {
    /// Build over `values`.
    pub fn new(values: impl ExactSizeIterator<Item = i64>) -> Self {
        let n = values.len();
        let mut min = vec![0; 2 * n];
        min[n..].iter_mut().zip(values).for_each(|(m, v)| *m = v);
        let mut max = min.clone();
        for k in (1..n).rev() {
            min[k] = min[2 * k].min(min[2 * k + 1]);
            max[k] = max[2 * k].max(max[2 * k + 1]);
        }
        Self { n, min, max }
    }

    /// `(min, max)` of the values in `[lo, hi)`, `None` when the range is empty.
    pub fn get(&self, lo: usize, hi: usize) -> Option<(i64, i64)> {
        let hi = hi.min(self.n);
        if lo >= hi {
            return None;
        }
        let (mut a, mut b) = (lo + self.n, hi + self.n);
        let (mut lo_v, mut hi_v) = (i64::MAX, i64::MIN);
        while a < b {
            if a & 1 == 1 {
                lo_v = lo_v.min(self.min[a]);
                hi_v = hi_v.max(self.max[a]);
                a += 1;
            }
            if b & 1 == 1 {
                b -= 1;
                lo_v = lo_v.min(self.min[b]);
                hi_v = hi_v.max(self.max[b]);
            }
            a /= 2;
            b /= 2;
        }
        Some((lo_v, hi_v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_matches_a_scan() {
        let v: Vec<i64> = (0..37).map(|i| (i * 7919 % 101) - 50).collect();
        let t = RangeExtremes::new(v.iter().copied());
        for lo in 0..=v.len() {
            for hi in 0..=v.len() + 2 {
                let want = v
                    .get(lo..hi.min(v.len()))
                    .filter(|s| !s.is_empty())
                    .map(|s| (*s.iter().min().unwrap(), *s.iter().max().unwrap()));
                assert_eq!(t.get(lo, hi), want, "[{lo}, {hi})");
            }
        }
        assert_eq!(RangeExtremes::new(std::iter::empty()).get(0, 1), None);
    }
}
