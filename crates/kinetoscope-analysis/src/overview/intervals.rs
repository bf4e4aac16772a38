//! Interval sets: sorted, disjoint, non-empty half-open ranges `[start, end)` in
//! nanoseconds, with the union / intersection / difference the plugin's `range_utils`
//! performs. Ranges that touch are merged; empty ranges are dropped (they add nothing
//! to any length).

use kinetoscope_trace::sort_runs_by_key;

/// A half-open range `[start, end)`, ns.
pub(crate) type Span = (i64, i64);

/// Sort and merge into an interval set.
pub(crate) fn merge(mut v: Vec<Span>) -> Vec<Span> {
    v.retain(|&(s, e)| e > s);
    // By start alone: spans come from events in start order, but for ties (a parent
    // and its first child) and streams written one after the other, so this is about
    // one pass where sorting on (start, end) would meet hundreds of short runs. The
    // order of equal starts does not change the union.
    sort_runs_by_key(&mut v, |&(start, _)| start);
    // In place: the union's intervals are written over the spans already read, so no
    // second list of fresh memory is made.
    let mut kept = 0;
    for k in 0..v.len() {
        let (s, e) = v[k];
        if kept > 0 && s <= v[kept - 1].1 {
            v[kept - 1].1 = v[kept - 1].1.max(e);
        } else {
            v[kept] = (s, e);
            kept += 1;
        }
    }
    v.truncate(kept);
    // The pages past the union go back (they were all written).
    v.shrink_to_fit();
    v
}

/// Add `span` to spans on their way to [`merge`], into the last one when it starts
/// inside it (a child inside its parent, work back to back, launches queued behind
/// each other): the union is the same, in a fraction of the memory.
pub(crate) fn add_span(spans: &mut Vec<Span>, span: Span) {
    match spans.last_mut() {
        Some(last) if last.0 <= span.0 && span.0 <= last.1 => last.1 = last.1.max(span.1),
        _ => spans.push(span),
    }
}

/// `a ∩ b` of two interval sets.
pub(crate) fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if s < e {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `a ∖ b` of two interval sets.
pub(crate) fn subtract(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            if cur >= e {
                break;
            }
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

/// Total length of an interval set.
pub(crate) fn total(a: &[Span]) -> i64 {
    a.iter().map(|&(s, e)| e - s).sum()
}

/// The length of everything before each interval of an interval set, so that the
/// length of the set's part inside any window is two binary searches, however many
/// windows overlap the same intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prefix(Vec<i64>);

impl Prefix {
    /// Index an interval set.
    pub(crate) fn of(set: &[Span]) -> Self {
        let mut before = Vec::with_capacity(set.len() + 1);
        let mut sum = 0i64;
        before.push(0);
        for &(s, e) in set {
            sum += e - s;
            before.push(sum);
        }
        Self(before)
    }

    /// `|set ∩ [lo, hi)|`, `set` being the interval set this was built from.
    pub(crate) fn len_in(&self, set: &[Span], lo: i64, hi: i64) -> i64 {
        if hi <= lo || self.0.len() != set.len() + 1 {
            return 0;
        }
        let a = set.partition_point(|&(_, e)| e <= lo);
        let b = set.partition_point(|&(s, _)| s < hi);
        if a >= b {
            return 0;
        }
        let whole = self.0[b] - self.0[a];
        whole - (lo - set[a].0).max(0) - (set[b - 1].1 - hi).max(0)
    }
}

/// An interval set (sorted, disjoint) indexed for the length of its part inside any
/// window in O(log n).
#[derive(Clone, Debug)]
pub struct Measure<'a> {
    set: &'a [Span],
    prefix: Prefix,
}

impl<'a> Measure<'a> {
    /// Index an interval set (sorted, disjoint `[start, end)` ranges).
    pub fn new(set: &'a [Span]) -> Self {
        Self {
            set,
            prefix: Prefix::of(set),
        }
    }

    /// `|set ∩ [lo, hi)|`.
    pub fn len_in(&self, lo: i64, hi: i64) -> i64 {
        self.prefix.len_in(self.set, lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = merge(vec![(5, 10), (0, 3), (3, 4), (8, 12), (20, 20)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        let b = merge(vec![(2, 6), (11, 30)]);
        assert_eq!(intersect(&a, &b), vec![(2, 4), (5, 6), (11, 12)]);
        assert_eq!(subtract(&a, &b), vec![(0, 2), (6, 11)]);
        assert_eq!(subtract(&b, &a), vec![(4, 5), (12, 30)]);
        assert_eq!(total(&a), 11);
        let m = Measure::new(&a);
        assert_eq!(m.len_in(3, 9), 1 + 4);
        assert_eq!(m.len_in(12, 20), 0);
        assert_eq!(m.len_in(6, 8), 2);
        assert_eq!(m.len_in(-5, 50), 11);
        assert_eq!(m.len_in(9, 3), 0);
        assert!(subtract(&[], &a).is_empty());
        assert_eq!(subtract(&a, &[]), a);
    }

    /// The plugin's `test_ranges.py` cases, in tenths (1.1 µs → 11).
    #[test]
    fn plugin_range_cases() {
        let m = merge(vec![
            (11, 22),
            (15, 23),
            (33, 39),
            (35, 36),
            (37, 38),
            (41, 42),
        ]);
        assert_eq!(m, vec![(11, 23), (33, 39), (41, 42)]);
        let a = vec![(11, 22), (33, 44), (55, 66)];
        let b = vec![(0, 1), (10, 14), (15, 16), (19, 34), (43, 46)];
        assert_eq!(
            subtract(&a, &b),
            vec![(14, 15), (16, 19), (34, 43), (55, 66)]
        );
        assert_eq!(
            intersect(&a, &b),
            vec![(11, 14), (15, 16), (19, 22), (33, 34), (43, 44)]
        );
        assert_eq!(total(&a), 33);
    }
}
