//! The rank of an id among a set of ids (its position in increasing order), for maps whose
//! values are those ranks (the correlation index numbers its links so). CUPTI draws
//! correlation ids from a counter shared with runtime calls the trace does not record, so
//! a CUDA trace holds one id in 6 to 11 of its range: a bit per id of the range, with the
//! count of ids before each 64-bit word, answers in one array access and a popcount in at
//! most 12 bytes per id present (16 bytes a pair in a sorted list of (id, value)). Ids
//! sparser than one in 64 are kept as a sorted list, searched by bisection.

/// The ids of a set, each answering its rank.
#[derive(Clone, Debug)]
pub enum IdRank {
    /// Ids `min ..`: bit `id - min` of `bits` set for each id of the set; `before[w]` is
    /// how many ids lie in the words before `w`.
    Bits {
        /// Smallest id.
        min: i64,
        /// One bit per id of the range.
        bits: Vec<u64>,
        /// Per word of `bits`, the ids before it.
        before: Vec<u32>,
    },
    /// The ids, sorted: the rank is the position.
    Sorted(Vec<i64>),
}

impl Default for IdRank {
    /// The empty set.
    fn default() -> Self {
        IdRank::Sorted(Vec::new())
    }
}

impl IdRank {
    /// The set of `ids`, which must be strictly increasing.
    pub fn new(ids: Vec<i64>) -> Self {
        let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else {
            return Self::default();
        };
        if !Self::fits_bits(min, max, ids.len()) {
            return IdRank::Sorted(ids);
        }
        Self::bits(min, max, ids.into_iter())
    }

    /// Whether `n` ids from `min` to `max` are dense enough for a bit per id of their
    /// range (at most 64 bits per id, beyond a floor of 4096).
    pub fn fits_bits(min: i64, max: i64, n: usize) -> bool {
        (max as i128 - min as i128) < 64 * n as i128 + 4096
    }

    /// The set of `ids`, in any order and repeated or not, all within `min ..= max`, as
    /// a bit per id of that range (check [`IdRank::fits_bits`] first): no sort.
    pub fn bits(min: i64, max: i64, ids: impl Iterator<Item = i64>) -> Self {
        let span = (max as i128 - min as i128 + 1) as usize;
        let words = span.div_ceil(64);
        let mut bits = vec![0u64; words];
        for id in ids {
            let off = (id - min) as usize;
            bits[off / 64] |= 1 << (off % 64);
        }
        let mut before = Vec::with_capacity(words);
        let mut n = 0u32;
        for w in &bits {
            before.push(n);
            n += w.count_ones();
        }
        IdRank::Bits { min, bits, before }
    }

    /// How many ids the set holds.
    pub fn len(&self) -> usize {
        match self {
            IdRank::Bits { bits, before, .. } => match (bits.last(), before.last()) {
                (Some(w), Some(&b)) => b as usize + w.count_ones() as usize,
                _ => 0,
            },
            IdRank::Sorted(ids) => ids.len(),
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rank of `id` in the set, if it is in it.
    #[inline]
    pub fn get(&self, id: i64) -> Option<u32> {
        match self {
            IdRank::Bits { min, bits, before } => {
                let off = id.checked_sub(*min)?;
                if off < 0 {
                    return None;
                }
                let (w, b) = ((off / 64) as usize, (off % 64) as u32);
                let word = *bits.get(w)?;
                (word >> b & 1 == 1).then(|| before[w] + (word & ((1u64 << b) - 1)).count_ones())
            }
            IdRank::Sorted(ids) => ids.binary_search(&id).ok().map(|p| p as u32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdRank;

    #[test]
    fn bits_and_sorted_answer_the_same_ranks() {
        // Dense enough for bits (with ids at both ends of 64-bit words), and sparse.
        let dense: Vec<i64> = vec![-5, -4, 0, 58, 59, 63, 64, 127, 128, 500, 501];
        let sparse: Vec<i64> = vec![-(1 << 40), 3, 1 << 40];
        for (ids, bits) in [(dense, true), (sparse, false)] {
            let set = IdRank::new(ids.clone());
            assert_eq!(matches!(set, IdRank::Bits { .. }), bits, "{ids:?}");
            for (rank, &id) in ids.iter().enumerate() {
                assert_eq!(set.get(id), Some(rank as u32), "id {id}");
            }
            for id in [-6, -3, 1, 57, 60, 126, 129, 499, 502, i64::MIN, i64::MAX, 4] {
                assert_eq!(set.get(id), None, "id {id}");
            }
        }
        // Built from the ids unsorted and repeated, the bits answer the same.
        let mut shuffled = vec![501i64, -5, 64, 58, 128, -4, 63, 0, 127, 59, 500, -5, 64];
        let set = IdRank::bits(-5, 501, shuffled.drain(..));
        assert_eq!(set.len(), 11);
        assert_eq!(
            (set.get(-5), set.get(501), set.get(64)),
            (Some(0), Some(10), Some(6))
        );
        assert_eq!(IdRank::new(Vec::new()).get(0), None);
        assert!(IdRank::new(Vec::new()).is_empty());
        assert_eq!(IdRank::default().get(0), None);
    }
}
