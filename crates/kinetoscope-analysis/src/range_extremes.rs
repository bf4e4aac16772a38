//! Minimum and maximum of any range of a fixed sequence in O(log n) (a segment tree of
//! 2n values per extreme, n rounded up to a power of two), and searches by value inside
//! a range, so that per-window scans stay O(n log n) however many windows overlap the
//! same values.

/// Range minimum and maximum over a fixed sequence of `i64`.
#[derive(Clone, Debug)]
pub struct RangeExtremes {
    /// Values.
    n: usize,
    /// Leaves (a power of two, at least `n`).
    size: usize,
    /// `min[size + i]` is value `i` (`i64::MAX` past `n`); `min[k]` for `k < size` is
    /// the minimum of its two children.
    min: Vec<i64>,
    /// The same for the maximum (`i64::MIN` past `n`).
    max: Vec<i64>,
}

impl RangeExtremes {
    /// Build over `values`.
    pub fn new(values: impl ExactSizeIterator<Item = i64>) -> Self {
        let n = values.len();
        let size = n.max(1).next_power_of_two();
        let mut min = vec![i64::MAX; 2 * size];
        let mut max = vec![i64::MIN; 2 * size];
        for (i, v) in values.enumerate() {
            min[size + i] = v;
            max[size + i] = v;
        }
        for k in (1..size).rev() {
            min[k] = min[2 * k].min(min[2 * k + 1]);
            max[k] = max[2 * k].max(max[2 * k + 1]);
        }
        Self { n, size, min, max }
    }

    /// `(min, max)` of the values in `[lo, hi)`, `None` when the range is empty.
    pub fn get(&self, lo: usize, hi: usize) -> Option<(i64, i64)> {
        let hi = hi.min(self.n);
        if lo >= hi {
            return None;
        }
        let (mut a, mut b) = (lo + self.size, hi + self.size);
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

    /// The last index below `hi` whose value is at least `x`, in O(log n).
    pub fn last_at_least(&self, hi: usize, x: i64) -> Option<usize> {
        self.last_in(1, 0, self.size, hi.min(self.n), x)
    }

    fn last_in(&self, k: usize, from: usize, to: usize, hi: usize, x: i64) -> Option<usize> {
        if from >= hi || self.max[k] < x {
            return None;
        }
        if k >= self.size {
            return Some(k - self.size);
        }
        let mid = (from + to) / 2;
        self.last_in(2 * k + 1, mid, to, hi, x)
            .or_else(|| self.last_in(2 * k, from, mid, hi, x))
    }

    /// Calls `f` with every index in `[lo, hi)` whose value is at most `x`, in
    /// increasing order: O((1 + found) log n).
    pub fn each_at_most(&self, lo: usize, hi: usize, x: i64, f: &mut impl FnMut(usize)) {
        self.each_in(1, 0, self.size, (lo, hi.min(self.n)), x, f);
    }

    fn each_in(
        &self,
        k: usize,
        from: usize,
        to: usize,
        (lo, hi): (usize, usize),
        x: i64,
        f: &mut impl FnMut(usize),
    ) {
        if to <= lo || from >= hi || self.min[k] > x {
            return;
        }
        if k >= self.size {
            f(k - self.size);
            return;
        }
        let mid = (from + to) / 2;
        self.each_in(2 * k, from, mid, (lo, hi), x, f);
        self.each_in(2 * k + 1, mid, to, (lo, hi), x, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Vec<i64> {
        (0..37).map(|i| (i * 7919 % 101) - 50).collect()
    }

    #[test]
    fn every_range_matches_a_scan() {
        let v = values();
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

    #[test]
    fn searches_match_a_scan() {
        let v = values();
        let t = RangeExtremes::new(v.iter().copied());
        for x in [-60, -50, -3, 0, 17, 50, 51] {
            for hi in 0..=v.len() + 1 {
                let want = (0..hi.min(v.len())).rev().find(|&i| v[i] >= x);
                assert_eq!(t.last_at_least(hi, x), want, "last ≥ {x} below {hi}");
                for lo in 0..=hi {
                    let want: Vec<usize> = (lo..hi.min(v.len())).filter(|&i| v[i] <= x).collect();
                    let mut got = Vec::new();
                    t.each_at_most(lo, hi, x, &mut |i| got.push(i));
                    assert_eq!(got, want, "≤ {x} in [{lo}, {hi})");
                }
            }
        }
    }
}
