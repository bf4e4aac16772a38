//! Byte sizes on the command line: `64MiB`, `8GiB`, `500M`, `1048576`.

/// Parse a size: a number with an optional unit (`K`/`M`/`G`/`T` = 10³…, `KiB`/`MiB`/
/// `GiB`/`TiB` = 2¹⁰…, `B` or none = bytes), case-insensitive.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size (examples: 64MiB, 8GiB, 500M)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(format!(
                "unknown size unit `{u}` (use K, M, G, KiB, MiB, GiB)"
            ))
        }
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes as u64)
}

/// A `--max-memory` value: a size, or `None` for no budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget(pub Option<u64>);

/// Parse `--max-memory`: a size, or `none` for no budget.
pub fn parse_budget(text: &str) -> Result<Budget, String> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(Budget(None));
    }
    parse_size(text).map(|b| Budget(Some(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("500M"), Ok(500_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3 parsecs").is_err());
        assert_eq!(parse_budget("none"), Ok(Budget(None)));
        assert_eq!(parse_budget("2GiB"), Ok(Budget(Some(2 << 30))));
    }
}
