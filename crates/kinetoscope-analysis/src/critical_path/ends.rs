//! "Which activity ended last before this point, on another stream (or thread)?" — the
//! question the walk asks at every step — answered by binary search over all ends at
//! once instead of a search per stream or thread, so traces with thousands of streams
//! or threads stay O(n log n).

/// No such position.
const NONE: u32 = u32::MAX;

/// Ends of activities, each with its group (a stream or thread index).
#[derive(Clone, Debug, Default)]
pub(super) struct Ends {
    /// `(end, group)`, by end, then by group from the highest: among equal ends the
    /// lowest group comes last (the one a search over groups in order keeps).
    ends: Vec<(i64, u32)>,
    /// Per position, the last earlier position of another group, or [`NONE`].
    other: Vec<u32>,
}

impl Ends {
    /// Index `(end, group)` pairs.
    pub fn new(mut ends: Vec<(i64, u32)>) -> Self {
        ends.sort_unstable_by_key(|&(e, g)| (e, std::cmp::Reverse(g)));
        let mut other = vec![NONE; ends.len()];
        for k in 1..ends.len() {
            other[k] = if ends[k - 1].1 != ends[k].1 {
                (k - 1) as u32
            } else {
                other[k - 1]
            };
        }
        Self { ends, other }
    }

    /// The latest end at or before `t` (the lowest group among equal ends) whose group
    /// is not `skip`: `(end, group)`.
    pub fn latest(&self, t: i64, skip: Option<u32>) -> Option<(i64, u32)> {
        let k = self.ends.partition_point(|e| e.0 <= t).checked_sub(1)?;
        let k = if skip == Some(self.ends[k].1) {
            let o = self.other[k];
            (o != NONE).then_some(o as usize)?
        } else {
            k
        };
        Some(self.ends[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_matches_a_search_per_group() {
        let pairs: Vec<(i64, u32)> = (0..60)
            .map(|i| ((i * 37 % 23) as i64, (i * 7 % 5) as u32))
            .collect();
        let ends = Ends::new(pairs.clone());
        for t in -1..25 {
            for skip in [None, Some(0), Some(2), Some(4), Some(9)] {
                // Per group in order, its latest end ≤ t; the first group with the
                // greatest one wins.
                let mut best: Option<(i64, u32)> = None;
                for g in 0..5u32 {
                    if Some(g) == skip {
                        continue;
                    }
                    let x = pairs
                        .iter()
                        .filter(|p| p.1 == g && p.0 <= t)
                        .map(|p| p.0)
                        .max();
                    if let Some(x) = x {
                        if best.is_none_or(|(b, _)| x > b) {
                            best = Some((x, g));
                        }
                    }
                }
                assert_eq!(ends.latest(t, skip), best, "t {t}, skip {skip:?}");
            }
        }
        assert_eq!(Ends::new(Vec::new()).latest(5, None), None);
    }
}
