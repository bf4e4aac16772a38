//! Interval sets: sorted, disjoint, non-empty half-open ranges `[start, end)` in
//! nanoseconds, with the union / intersection / difference the plugin's `range_utils`
//! performs. Ranges that touch are merged; empty ranges are dropped (they add nothing
//! to any length).

/// A half-open range `[start, end)`, ns.
pub(crate) type Span = (i64, i64);

/// Sort and merge into an interval set.
pub(crate) fn merge(mut v: Vec<Span>) -> Vec<Span> {
    v.retain(|&(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
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

/// `|a ∩ [lo, hi)|` for an interval set `a`.
pub(crate) fn overlap(a: &[Span], lo: i64, hi: i64) -> i64 {
    let first = a.partition_point(|&(_, e)| e <= lo);
    a[first..]
        .iter()
        .take_while(|&&(s, _)| s < hi)
        .map(|&(s, e)| e.min(hi) - s.max(lo))
        .filter(|&d| d > 0)
        .sum()
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
        assert_eq!(overlap(&a, 3, 9), 1 + 4);
        assert_eq!(overlap(&a, 12, 20), 0);
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
