//! Command-line spellings of table sort keys (`kinetoscope ops --sort`, `kernels --sort`).

/// The key spelled `text` in `all` (case-insensitive, `-` or `_`).
pub(crate) fn parse<K: Copy>(all: &[(&'static str, K)], text: &str) -> Option<K> {
    let t = text.trim().to_ascii_lowercase().replace('-', "_");
    all.iter().find(|(n, _)| *n == t).map(|&(_, k)| k)
}

/// The spelling of `key` in `all`, else `default`.
pub(crate) fn spelling<K: PartialEq>(
    all: &[(&'static str, K)],
    key: K,
    default: &'static str,
) -> &'static str {
    all.iter()
        .find(|(_, k)| *k == key)
        .map_or(default, |(n, _)| n)
}

/// Sort `rows` stably by `cmp`, moving each row once: the order is computed on indexes (4
/// bytes a row of scratch, not half the table as a stable sort of the rows themselves
/// takes) and then applied by following its cycles.
pub(crate) fn sort_rows_by<T>(rows: &mut [T], mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_by(|&a, &b| cmp(&rows[a as usize], &rows[b as usize]));
    // Position `i` takes the row at `order[i]`; a position is done once visited.
    const DONE: u32 = u32::MAX;
    for i in 0..order.len() {
        let mut j = i;
        while order[j] != DONE {
            let k = order[j] as usize;
            order[j] = DONE;
            if k == i {
                break;
            }
            rows.swap(j, k);
            j = k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_rows_by;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        let rows: Vec<(u32, u32)> = (0..500u32).map(|i| ((i * 7919) % 13, i)).collect();
        let mut want = rows.clone();
        want.sort_by_key(|r| r.0);
        let mut got = rows;
        sort_rows_by(&mut got, |a, b| a.0.cmp(&b.0));
        assert_eq!(got, want);
        let mut empty: Vec<u8> = Vec::new();
        sort_rows_by(&mut empty, |a, b| a.cmp(b));
    }
}
