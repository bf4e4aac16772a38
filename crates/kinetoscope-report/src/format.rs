//! Number formatting shared by the terminal renderers.

/// Nanoseconds as a short human duration (`812 ns`, `3.25 µs`, `41.7 ms`, `2.31 s`).
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// Nanoseconds as microseconds, the unit of terminal and CSV time columns (JSON keeps
/// nanoseconds).
pub fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// Nanoseconds as milliseconds.
pub fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// A 0–1 share as a percentage (JSON keeps shares; tables show %).
pub fn percent(share: f64) -> f64 {
    100.0 * share
}

/// Bytes in binary units (`512 B`, `1.5 KiB`, `31.7 GiB`).
pub fn bytes(b: u64) -> String {
    bytes_f(b as f64)
}

/// Signed or fractional bytes in binary units (`-4.0 MiB`, `20.0 KiB` for a rate).
pub fn bytes_f(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b.abs();
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    let sign = if b < 0.0 { "-" } else { "" };
    if u == 0 {
        format!("{sign}{v:.0} B")
    } else {
        format!("{sign}{v:.1} {}", UNITS[u])
    }
}

/// An integer with thousands separators (`1,234,567`).
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(duration(812.0), "812 ns");
        assert_eq!((us(1500.0), ms(2.5e6), percent(0.25)), (1.5, 2.5, 25.0));
        assert_eq!(duration(41_700_000.0), "41.70 ms");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes_f(-4.0 * 1024.0 * 1024.0), "-4.0 MiB");
        assert_eq!(bytes_f(31.7 * (1u64 << 30) as f64), "31.7 GiB");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(12), "12");
    }
}
