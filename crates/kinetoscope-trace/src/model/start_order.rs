//! Putting a track's spans in time order. Kineto writes each thread's spans in start
//! order, but where a parent and its first child start at the same time it often
//! writes the child first: ordered by (start, longest first) the spans come in hundreds
//! of short runs (568 on one thread of HTA's A100 trace, 13,475 spans), which a stable
//! sort merges almost as slowly as it sorts from scratch. Ordered by start alone they
//! come in one run, and the ties are a few spans each.

use std::cmp::Ordering;

/// Sort `items` by `start`, then each run of equal starts by `tie`: the order of a
/// stable sort by `start` then `tie` (items alike in both keep their input order), at
/// about one pass when the items come in start order.
pub fn sort_by_start<T>(
    items: &mut [T],
    start: impl Fn(&T) -> i64,
    mut tie: impl FnMut(&T, &T) -> Ordering,
) {
    // Stable, so that a run of equal starts keeps the input order `tie` may rely on.
    items.sort_by_key(&start);
    let mut from = 0;
    while from < items.len() {
        let s = start(&items[from]);
        let to = from
            + 1
            + items[from + 1..]
                .iter()
                .take_while(|x| start(x) == s)
                .count();
        if to - from > 1 {
            items[from..to].sort_by(&mut tie);
        }
        from = to;
    }
}

#[cfg(test)]
mod tests {
    use super::sort_by_start;

    #[test]
    fn same_order_as_one_stable_sort_on_both_keys() {
        // (start, end, input position): starts in order with children first on ties,
        // starts out of order, repeated (start, end) pairs, and the empty and one-item
        // cases.
        let mut seed = 0x853C_49E6_748F_EA9Bu64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n) as i64
        };
        for case in 0..400 {
            let len = (case % 40) as usize;
            let mut items: Vec<(i64, i64, usize)> = (0..len)
                .map(|k| {
                    let start = if case % 3 == 0 { next(8) } else { k as i64 / 3 };
                    (start, start + next(4), k)
                })
                .collect();
            let mut want = items.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            sort_by_start(&mut items, |x| x.0, |a, b| b.1.cmp(&a.1));
            assert_eq!(items, want, "case {case}");
        }
    }
}
