//! A column of `i64` values kept in 32 bits each: durations, `External id`s, CUPTI
//! correlations, flow ids and autograd sequence numbers nearly always lie in
//! `-1 ..= 2³² − 3` (Kineto draws the ids from counters, -1 means absent, and a span
//! longer than 4.29 s is rare), so each value is a `u32` and the few that do not fit are
//! kept beside the column, by row. Half the memory of a `Vec<i64>` for the same reads;
//! one predictable branch per read. A hostile file whose values mostly do not fit costs
//! 20 bytes a row instead of 8: the reader's memory budget counts both parts.

use super::budget::{grow, Charge, MemoryError};

/// The stored value that means "look in the wide rows".
const WIDE: u32 = u32::MAX - 1;
/// The stored value of -1.
const MINUS_ONE: u32 = u32::MAX;

/// A column of `i64` values stored in 32 bits where they fit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NarrowColumn {
    /// One value per row; [`WIDE`] when the value is in `wide`.
    narrow: Vec<u32>,
    /// (row, value) of the values that do not fit, ordered by row.
    wide: Vec<(u32, i64)>,
}

impl NarrowColumn {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.narrow.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.narrow.is_empty()
    }

    /// The value of row `i`; panics past the end, as indexing a `Vec` does.
    #[inline]
    pub fn at(&self, i: usize) -> i64 {
        match self.narrow[i] {
            v if v < WIDE => v as i64,
            v => self.unusual_at(i, v),
        }
    }

    /// The value of row `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        (i < self.narrow.len()).then(|| self.at(i))
    }

    #[cold]
    fn unusual_at(&self, i: usize, stored: u32) -> i64 {
        if stored == MINUS_ONE {
            return -1;
        }
        let at = self
            .wide
            .binary_search_by_key(&(i as u32), |w| w.0)
            .expect("a wide row is listed");
        self.wide[at].1
    }

    /// Every value in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.narrow.len()).map(|i| self.at(i))
    }

    /// Every value, in a vector.
    pub fn to_vec(&self) -> Vec<i64> {
        self.iter().collect()
    }

    /// Append a value.
    #[inline]
    pub fn push(&mut self, v: i64) {
        match fits(v) {
            Some(n) => self.narrow.push(n),
            None => {
                self.wide.push((self.narrow.len() as u32, v));
                self.narrow.push(WIDE);
            }
        }
    }

    /// Set row `i` (which must exist) to `v`.
    pub fn set(&mut self, i: usize, v: i64) {
        // A row is listed in `wide` exactly when its stored value is `WIDE`.
        let listed = self.wide.binary_search_by_key(&(i as u32), |w| w.0);
        match (fits(v), listed) {
            (Some(n), Ok(at)) => {
                self.wide.remove(at);
                self.narrow[i] = n;
            }
            (Some(n), Err(_)) => self.narrow[i] = n,
            (None, Ok(at)) => self.wide[at].1 = v,
            (None, Err(at)) => {
                self.wide.insert(at, (i as u32, v));
                self.narrow[i] = WIDE;
            }
        }
    }

    /// Append the rows of `other`.
    pub fn extend_from(&mut self, other: &NarrowColumn) {
        let base = self.narrow.len() as u32;
        self.narrow.extend_from_slice(&other.narrow);
        self.wide
            .extend(other.wide.iter().map(|&(row, v)| (row + base, v)));
    }

    /// Remove every row, keeping the allocations.
    pub fn clear(&mut self) {
        self.narrow.clear();
        self.wide.clear();
    }

    /// Reserve room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.narrow.reserve(n);
    }

    /// A column of `n` zeros, allocated zeroed (its pages stay untouched until written).
    pub fn zeros(n: usize) -> Self {
        Self {
            narrow: vec![0; n],
            wide: Vec::new(),
        }
    }

    /// Make room for `add` more rows, the growth taken from `charge` (see the budget).
    pub(crate) fn grow_by(&mut self, add: usize, charge: &mut Charge) -> Result<(), MemoryError> {
        grow(&mut self.narrow, add, charge)
    }

    /// Make room for `other`'s rows, the growth taken from `charge` (see the budget).
    pub(crate) fn grow_for(
        &mut self,
        other: &NarrowColumn,
        charge: &mut Charge,
    ) -> Result<(), MemoryError> {
        grow(&mut self.narrow, other.narrow.len(), charge)?;
        grow(&mut self.wide, other.wide.len(), charge)
    }

    /// Bytes its rows take.
    pub fn bytes(&self) -> u64 {
        (std::mem::size_of_val(self.narrow.as_slice())
            + std::mem::size_of_val(self.wide.as_slice())) as u64
    }
}

impl FromIterator<i64> for NarrowColumn {
    fn from_iter<I: IntoIterator<Item = i64>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut c = Self {
            narrow: Vec::with_capacity(iter.size_hint().0),
            wide: Vec::new(),
        };
        for v in iter {
            c.push(v);
        }
        c
    }
}

/// `v` as a narrow value, when it fits.
#[inline]
fn fits(v: i64) -> Option<u32> {
    match v {
        -1 => Some(MINUS_ONE),
        0..=0xFFFF_FFFD => Some(v as u32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::NarrowColumn;

    #[test]
    fn every_value_reads_back() {
        let values = [
            0i64,
            1,
            -1,
            4_294_967_293,
            4_294_967_294,
            -2,
            i64::MIN,
            i64::MAX,
            7,
        ];
        let c: NarrowColumn = values.iter().copied().collect();
        assert_eq!(c.iter().collect::<Vec<_>>(), values);
        assert_eq!(
            c.wide.len(),
            4,
            "2³² − 2, -2, i64::MIN and i64::MAX are wide"
        );
        assert_eq!((c.get(8), c.get(9)), (Some(7), None));

        let mut joined = c.clone();
        joined.extend_from(&c);
        let twice: Vec<i64> = values.iter().chain(&values).copied().collect();
        assert_eq!(joined.iter().collect::<Vec<_>>(), twice);
    }

    #[test]
    fn set_moves_values_between_narrow_and_wide() {
        let mut c: NarrowColumn = [5i64, 6, 7, 8].into_iter().collect();
        c.set(2, -3);
        c.set(0, 1 << 40);
        assert_eq!(c.iter().collect::<Vec<_>>(), [1 << 40, 6, -3, 8]);
        assert_eq!(c.wide, [(0, 1 << 40), (2, -3)], "kept in row order");
        c.set(2, 9);
        c.set(0, -(1 << 40));
        assert_eq!(c.iter().collect::<Vec<_>>(), [-(1 << 40), 6, 9, 8]);
        assert_eq!(c.wide.len(), 1);
        c.clear();
        assert!(c.is_empty());
    }
}
