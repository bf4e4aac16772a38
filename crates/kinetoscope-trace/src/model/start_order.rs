//! Putting a track's spans in time order. Kineto writes each thread's spans in start
//! order, but where a parent and its first child start at the same time it often
//! writes the child first: ordered by (start, longest first) the spans come in hundreds
//! of short runs (568 on one thread of HTA's A100 trace, 13,475 spans), which a stable
//! sort merges almost as slowly as it sorts from scratch. Ordered by start alone they
//! come in one run, and the ties are a few spans each.
//!
//! Some exporters write a thread's operators and its runtime calls as two sorted
//! streams, one after the other, for each stretch of time (PARAM's NCCL traces: twenty
//! runs on 22,000 spans). [`sort_runs_by_key`] merges such runs where they overlap and
//! leaves in place the parts that are already in order, where a general stable sort
//! copies every item once per level of merging.

use std::cmp::Ordering;

/// Sort `items` by `start`, then each run of equal starts by `tie`: the order of a
/// stable sort by `start` then `tie` (items alike in both keep their input order), at
/// about one pass when the items come in start order.
pub fn sort_by_start<T: Copy>(
    items: &mut [T],
    start: impl Fn(&T) -> i64,
    mut tie: impl FnMut(&T, &T) -> Ordering,
) {
    // Stable, so that a run of equal starts keeps the input order `tie` may rely on.
    sort_runs_by_key(items, &start);
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

/// A stable sort by `key` for items that come in a few ascending runs: the runs are
/// merged pairwise, and of two runs only the parts that overlap are moved (through a
/// buffer of the smaller part). In order already, it costs one pass; with more than
/// one run per [`MIN_RUN`] items it leaves the work to the standard library's stable
/// sort. Either way the result is that of `items.sort_by_key(key)`.
pub fn sort_runs_by_key<T: Copy, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    let n = items.len();
    // Where each ascending run starts, and the end.
    let mut bounds = vec![0];
    for i in 1..n {
        if key(&items[i]) < key(&items[i - 1]) {
            bounds.push(i);
            if bounds.len() > n / MIN_RUN + 1 {
                items.sort_by_key(key);
                return;
            }
        }
    }
    if bounds.len() == 1 {
        return;
    }
    bounds.push(n);
    let mut buf: Vec<T> = Vec::new();
    while bounds.len() > 2 {
        let mut next = Vec::with_capacity(bounds.len() / 2 + 2);
        let mut k = 0;
        while k + 1 < bounds.len() {
            next.push(bounds[k]);
            if k + 2 < bounds.len() {
                merge_runs(
                    items,
                    bounds[k],
                    bounds[k + 1],
                    bounds[k + 2],
                    &key,
                    &mut buf,
                );
                k += 2;
            } else {
                k += 1;
            }
        }
        next.push(n);
        bounds = next;
    }
}

/// Inputs with more runs than one per this many items are sorted by the standard
/// library instead.
const MIN_RUN: usize = 16;

/// Merge the sorted runs `items[lo..mid]` and `items[mid..hi]` stably (on equal keys the
/// first run's items come first). The first run's prefix that sorts before the second
/// run, and the second run's suffix that sorts after the first, stay where they are.
fn merge_runs<T: Copy, K: Ord>(
    items: &mut [T],
    lo: usize,
    mid: usize,
    hi: usize,
    key: &impl Fn(&T) -> K,
    buf: &mut Vec<T>,
) {
    let first_b = key(&items[mid]);
    let a0 = lo + items[lo..mid].partition_point(|x| key(x) <= first_b);
    if a0 == mid {
        return;
    }
    let last_a = key(&items[mid - 1]);
    let b1 = mid + items[mid..hi].partition_point(|x| key(x) < last_a);
    buf.clear();
    if mid - a0 <= b1 - mid {
        // Front to back, the first run's part held aside.
        buf.extend_from_slice(&items[a0..mid]);
        let (mut i, mut j, mut out) = (0, mid, a0);
        while i < buf.len() && j < b1 {
            if key(&items[j]) < key(&buf[i]) {
                items[out] = items[j];
                j += 1;
            } else {
                items[out] = buf[i];
                i += 1;
            }
            out += 1;
        }
        let rest = buf.len() - i;
        items[out..out + rest].copy_from_slice(&buf[i..]);
    } else {
        // Back to front, the second run's part held aside.
        buf.extend_from_slice(&items[mid..b1]);
        let (mut i, mut j, mut out) = (mid, buf.len(), b1);
        while i > a0 && j > 0 {
            out -= 1;
            if key(&buf[j - 1]) < key(&items[i - 1]) {
                items[out] = items[i - 1];
                i -= 1;
            } else {
                items[out] = buf[j - 1];
                j -= 1;
            }
        }
        items[out - j..out].copy_from_slice(&buf[..j]);
    }
}

#[cfg(test)]
mod tests {
    use super::{sort_by_start, sort_runs_by_key, MIN_RUN};

    /// Draws below `n` from a xorshift generator seeded with `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    #[test]
    fn same_order_as_one_stable_sort_on_both_keys() {
        // (start, end, input position): starts in order with children first on ties,
        // starts out of order, repeated (start, end) pairs, and the empty and one-item
        // cases.
        let mut draw = xorshift(0x853C_49E6_748F_EA9B);
        let mut next = move |n: u64| draw(n) as i64;
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

    #[test]
    fn runs_merge_as_a_stable_sort_does() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        // (key, input position): interleaved sorted streams (operators, then the runtime
        // calls of the same stretch), runs that do not overlap, runs of one item, a
        // reversed list, many equal keys, random order, and the empty list.
        for case in 0..600u64 {
            let len = (next(300) + case % 3) as usize;
            let runs = 1 + next(6) as usize;
            let spread = 1 + next(50) as i64;
            let mut items: Vec<(i64, usize)> = (0..len)
                .map(|k| {
                    let key = match case % 5 {
                        0 => (k % (len / runs + 1)) as i64 * spread / 4,
                        1 => (k / (len / runs + 1) * 1000 + k % 7) as i64,
                        2 => -(k as i64),
                        3 => next(4) as i64,
                        _ => next(1000) as i64,
                    };
                    (key, k)
                })
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|x| x.0);
            sort_runs_by_key(&mut items, |x| x.0);
            assert_eq!(items, want, "case {case}");
        }
    }

    #[test]
    fn a_list_in_order_is_left_and_many_runs_fall_back() {
        let mut sorted: Vec<(i64, usize)> = (0..1000).map(|k| (k as i64 / 3, k)).collect();
        let want = sorted.clone();
        sort_runs_by_key(&mut sorted, |x| x.0);
        assert_eq!(sorted, want);
        // One run per MIN_RUN / 2 items: past the limit, sorted all the same.
        let mut saw: Vec<(i64, usize)> =
            (0..1000).map(|k| ((k % (MIN_RUN / 2)) as i64, k)).collect();
        let mut want = saw.clone();
        want.sort_by_key(|x| x.0);
        sort_runs_by_key(&mut saw, |x| x.0);
        assert_eq!(saw, want);
    }
}
