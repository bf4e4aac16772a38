//! The longest element of any range of a fixed sequence, from a summary of blocks: level
//! `k` holds the index of the longest element of each block of `BLOCK^(k+1)` elements,
//! so a query looks at fewer than `2 × BLOCK` entries per level and the summary costs
//! about one index per `BLOCK - 1` elements.

/// Elements per block at each level.
const BLOCK: usize = 32;

/// Range "index of the maximum" over a fixed sequence of durations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Longest {
    /// `levels[k][b]`: index of the longest element of block `b` at level `k`.
    levels: Vec<Vec<u32>>,
}

impl Longest {
    /// Build over `values` (one per lane slice).
    pub fn new(values: &[i64]) -> Self {
        let mut levels: Vec<Vec<u32>> = Vec::new();
        let mut below: Vec<u32> = (0..values.len() as u32).collect();
        while below.len() > 1 {
            let level: Vec<u32> = below
                .chunks(BLOCK)
                .map(|c| argmax(c.iter().copied(), values))
                .collect();
            levels.push(level.clone());
            below = level;
        }
        Self { levels }
    }

    /// The index of the longest element in `[lo, hi)` (the first of equals), `None`
    /// when the range is empty.
    pub fn get(&self, values: &[i64], lo: usize, hi: usize) -> Option<usize> {
        let hi = hi.min(values.len());
        if lo >= hi {
            return None;
        }
        let mut best: Option<usize> = None;
        let mut take = |i: usize| {
            if best.is_none_or(|b| {
                (values[i], std::cmp::Reverse(i)) > (values[b], std::cmp::Reverse(b))
            }) {
                best = Some(i);
            }
        };
        // Walk up: elements at the level's unit size, then whole blocks above.
        let (mut lo, mut hi) = (lo, hi);
        let mut unit = 1usize;
        // `None`: the elements themselves; `Some(k)`: the blocks of `levels[k]`.
        let mut level: Option<&Vec<u32>> = None;
        let mut next = 0usize;
        loop {
            let block = unit * BLOCK;
            let first_full = lo.div_ceil(block) * block;
            let last_full = hi / block * block;
            let at = |pos: usize| match level {
                None => pos,
                Some(l) => l[pos / unit] as usize,
            };
            if first_full >= last_full {
                let mut p = lo;
                while p < hi {
                    take(at(p));
                    p += unit;
                }
                return best;
            }
            let mut p = lo;
            while p < first_full {
                take(at(p));
                p += unit;
            }
            let mut p = last_full;
            while p < hi {
                take(at(p));
                p += unit;
            }
            level = self.levels.get(next);
            next += 1;
            if level.is_none() {
                return best;
            }
            lo = first_full;
            hi = last_full;
            unit = block;
        }
    }
}

/// The index (among `indexes`) of the largest value, the first of equals.
fn argmax(indexes: impl Iterator<Item = u32>, values: &[i64]) -> u32 {
    let mut best = u32::MAX;
    for i in indexes {
        if best == u32::MAX || values[i as usize] > values[best as usize] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_scan_on_every_range() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let values: Vec<i64> = (0..2_100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1_000) as i64
            })
            .collect();
        let l = Longest::new(&values);
        for lo in (0..values.len()).step_by(37) {
            for hi in (lo..=values.len()).step_by(53) {
                let want = (lo..hi).reduce(|b, i| if values[i] > values[b] { i } else { b });
                assert_eq!(l.get(&values, lo, hi), want, "[{lo}, {hi})");
            }
        }
    }
}
