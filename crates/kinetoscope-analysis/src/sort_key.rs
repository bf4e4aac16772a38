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
