//! Plain-text tables: the first column left-aligned, the others right-aligned.

use std::io::{self, Write};

/// Writes `header`, a rule and `rows`, each column as wide as its widest cell.
pub fn write_grid(out: &mut impl Write, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, s) in widths.iter_mut().zip(row) {
            *w = (*w).max(s.chars().count());
        }
    }
    let line = |out: &mut dyn Write, cells: &[&str]| -> io::Result<()> {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                s.push_str(&format!("{cell:<w$}"));
            } else {
                s.push_str(&format!("{cell:>w$}"));
            }
        }
        writeln!(out, "{}", s.trim_end())
    };
    line(out, header)?;
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(out, &rule.iter().map(String::as_str).collect::<Vec<_>>())?;
    for row in rows {
        line(out, &row.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_aligned_to_the_widest_cell() {
        let mut out = Vec::new();
        let rows = vec![vec!["long name".to_string(), "1".to_string()]];
        write_grid(&mut out, &["a", "value"], &rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "a          value\n---------  -----\nlong name      1\n"
        );
    }
}
