//! A map from trace ids (`External id`, `correlation`) to `u32` values. Kineto draws both
//! ids from counters, so they are usually dense: then the map is a plain vector indexed
//! by `id - min` (one array access per lookup) when that takes at most 4 slots per id
//! (16 bytes, what a pair costs). Sparser ids, down to one in 64 of the range (a subset
//! of a counter's ids: the operators among everything that carries an `External id`),
//! get the values by the id's rank ([`IdRank`], a bit per id of the range): built
//! without a sort, at most 12 bytes per id. Sparser still, a sorted vector of (id,
//! value) pairs searched by bisection (16 bytes per id, less than a hash map's table).

use super::id_rank::IdRank;

/// The value a dense slot holds when the id is absent.
const ABSENT: u32 = u32::MAX;

/// Id → value, built once from (id, value) pairs.
#[derive(Clone, Debug)]
pub(crate) enum IdMap {
    /// Ids `min .. min + slots.len()`.
    Dense {
        /// Smallest id.
        min: i64,
        /// Value per id offset, [`ABSENT`] when none.
        slots: Vec<u32>,
    },
    /// Ids at least one in 64 of their range: the value of each id at its rank.
    Ranked {
        /// The ids.
        ids: IdRank,
        /// Value per rank.
        values: Vec<u32>,
    },
    /// Any ids: (id, value) sorted by id, one pair per id.
    Sparse(Vec<(i64, u32)>),
}

impl Default for IdMap {
    /// The empty map.
    fn default() -> Self {
        IdMap::Dense {
            min: 0,
            slots: Vec::new(),
        }
    }
}

impl IdMap {
    /// Build from `pairs` (called twice: once to size, once to fill). Values must not be
    /// `u32::MAX`, and must rise with the order of `pairs` (positions, event indices). With `first_wins` the first value of a repeated id is kept, else the
    /// last.
    pub(crate) fn build<I>(pairs: impl Fn() -> I, first_wins: bool) -> Self
    where
        I: Iterator<Item = (i64, u32)>,
    {
        let (mut min, mut max, mut n) = (i64::MAX, i64::MIN, 0usize);
        for (id, _) in pairs() {
            min = min.min(id);
            max = max.max(id);
            n += 1;
        }
        let span = if n == 0 {
            0
        } else {
            (max as i128 - min as i128 + 1) as u128
        };
        if n > 0 && span <= (4 * n as u128 + 4096) {
            let mut slots = vec![ABSENT; span as usize];
            for (id, v) in pairs() {
                let s = &mut slots[(id - min) as usize];
                if !first_wins || *s == ABSENT {
                    *s = v;
                }
            }
            IdMap::Dense { min, slots }
        } else if n > 0 && IdRank::fits_bits(min, max, n) {
            let ids = IdRank::bits(min, max, pairs().map(|(id, _)| id));
            let mut values = vec![ABSENT; ids.len()];
            for (id, v) in pairs() {
                let s = &mut values[ids.get(id).expect("an id of the set") as usize];
                if !first_wins || *s == ABSENT {
                    *s = v;
                }
            }
            IdMap::Ranked { ids, values }
        } else {
            let mut list: Vec<(i64, u32)> = Vec::with_capacity(n);
            list.extend(pairs());
            // Values rise with input order, so sorting the pairs puts repeated ids in
            // input order without a stable sort's scratch copy: keep the first or the last.
            list.sort_unstable();
            if first_wins {
                list.dedup_by_key(|p| p.0);
            } else {
                list.reverse();
                list.dedup_by_key(|p| p.0);
                list.reverse();
            }
            IdMap::Sparse(list)
        }
    }

    /// The value of `id`, if any.
    #[inline]
    pub(crate) fn get(&self, id: i64) -> Option<u32> {
        match self {
            IdMap::Dense { min, slots } => {
                let off = id.wrapping_sub(*min);
                if off < 0 || off as usize >= slots.len() {
                    return None;
                }
                let v = slots[off as usize];
                (v != ABSENT).then_some(v)
            }
            IdMap::Ranked { ids, values } => ids.get(id).map(|r| values[r as usize]),
            IdMap::Sparse(list) => list
                .binary_search_by_key(&id, |p| p.0)
                .ok()
                .map(|at| list[at].1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;

    #[test]
    fn dense_ranked_and_sparse_agree() {
        let dense = [(10i64, 1u32), (12, 2), (10, 3)];
        // One id in ten of a range too long for slots: ranked.
        let ranked = [(10i64, 1u32), (50_010, 2), (10, 3)];
        let ranked: Vec<(i64, u32)> = ranked
            .into_iter()
            .chain((1..1000).map(|k| (10 + 10 * k, 100 + k as u32)))
            .collect();
        let sparse = [(10i64, 1u32), (1 << 40, 2), (10, 3)];
        for first_wins in [true, false] {
            let d = IdMap::build(|| dense.iter().copied(), first_wins);
            let r = IdMap::build(|| ranked.iter().copied(), first_wins);
            let s = IdMap::build(|| sparse.iter().copied(), first_wins);
            assert!(matches!(d, IdMap::Dense { .. }) && matches!(s, IdMap::Sparse(_)));
            assert!(matches!(r, IdMap::Ranked { .. }));
            let want = if first_wins { 1 } else { 3 };
            assert_eq!(
                (d.get(10), r.get(10), s.get(10)),
                (Some(want), Some(want), Some(want))
            );
            assert_eq!((d.get(11), d.get(9), d.get(13)), (None, None, None));
            assert_eq!(
                (d.get(12), s.get(1 << 40), r.get(50_010)),
                (Some(2), Some(2), Some(2))
            );
            assert_eq!(
                (s.get(11), r.get(11), r.get(9), r.get(50_011)),
                (None, None, None, None)
            );
            for k in 1..1000 {
                assert_eq!(
                    r.get(10 + 10 * k),
                    Some(100 + k as u32),
                    "id {}",
                    10 + 10 * k
                );
            }
        }
        let empty = IdMap::build(std::iter::empty, true);
        assert_eq!(empty.get(0), None);
        assert_eq!(IdMap::default().get(0), None);
    }
}
