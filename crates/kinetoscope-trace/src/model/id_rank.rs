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
        let span = max as i128 - min as i128 + 1;
        if span > 64 * ids.len() as i128 + 4096 {
            return IdRank::Sorted(ids);
        }
        let words = (span as usize).div_ceil(64);
        let mut bits = vec![0u64; words];
        for &id in &ids {
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
        assert_eq!(IdRank::new(Vec::new()).get(0), None);
        assert_eq!(IdRank::default().get(0), None);
    }
}
