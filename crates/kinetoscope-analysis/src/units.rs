//! Human-readable quantities for the text that analyses put in verdicts and evidence,
//! shared with the renderers so every output spells sizes the same way.

/// Bytes in binary units: `512 B`, `1.5 KiB`, `31.7 GiB`, `-4.0 MiB`.
pub fn bytes_text(b: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::bytes_text;

    #[test]
    fn binary_units() {
        assert_eq!(bytes_text(512.0), "512 B");
        assert_eq!(bytes_text(1536.0), "1.5 KiB");
        assert_eq!(bytes_text(-4.0 * 1024.0 * 1024.0), "-4.0 MiB");
        assert_eq!(bytes_text(31.7 * (1u64 << 30) as f64), "31.7 GiB");
    }
}
