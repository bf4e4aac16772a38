//! The key_averages reader: the fixed-width text tables PyTorch prints
//! (`prof.key_averages(…).table(…)`, oumi's `prof_<rank>_local_<local_rank>_<key>.txt`)
//! into [`KeyAveragesTable`].
//!
//! A table is an optional title (after a `=` rule), a dashed rule, the header row, a
//! dashed rule, the rows, a dashed rule and footer lines (`Self CPU time total: 1.2ms`).
//! The dashed rule gives the column boundaries (runs of `-` separated by spaces), so
//! names with single spaces are sliced correctly; headers decide the cell types, and
//! unknown columns are kept as text. Untrusted input is bounded ([`limits`]): the file,
//! each line, the rows and the columns are capped; a cell that cannot be read skips its
//! row (counted), or fails in strict mode with the file and line.

use std::path::Path;

use super::{sniff_bytes, sniff_path, ReadOptions};
use crate::model::{
    Cell, CellUnit, Charge, KeyAveragesTable, MemoryError, TableColumn, TableRow, TableTotal,
};
use crate::{TraceError, TraceResult};

/// The caps that keep a hostile table bounded.
pub mod limits {
    /// Largest (decompressed) table file read: 64 MiB, held in memory.
    pub const MAX_INPUT_BYTES: u64 = 64 << 20;
    /// Longest line: 64 KiB (PyTorch's widest column is a few hundred characters).
    pub const MAX_LINE_BYTES: usize = 64 << 10;
    /// Most rows (PyTorch's longest tables, `row_limit=-1`, hold a few thousand).
    pub const MAX_ROWS: usize = 1 << 17;
    /// Most cells (rows × columns): 2 Mi, a 64 MiB model at most.
    pub const MAX_CELLS: usize = 1 << 21;
    /// Most columns.
    pub const MAX_COLUMNS: usize = 64;
    /// Most lines before the first dashed rule (the `header=` title).
    pub const MAX_TITLE_LINES: usize = 8;
    /// Most footer totals kept.
    pub const MAX_TOTALS: usize = 64;
}

/// Read a key_averages table file (plain or gzip), detected by content.
pub fn read_key_averages(path: &Path, opts: &ReadOptions) -> TraceResult<KeyAveragesTable> {
    sniff_path(path)?.read_key_averages(opts)
}

/// Read a key_averages table held in memory; `name` is used in messages.
pub fn key_averages_from_bytes(
    name: &Path,
    bytes: &[u8],
    opts: &ReadOptions,
) -> TraceResult<KeyAveragesTable> {
    sniff_bytes(name, bytes)?.read_key_averages(opts)
}

/// Whether the text's first lines are a key_averages table: a dashed rule followed by a
/// header naming `Name` and a CPU or device time column.
pub(crate) fn looks_like_table(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines().take(8).peekable();
    while let Some(line) = lines.next() {
        if is_rule(line) {
            if let Some(next) = lines.peek() {
                let has_time = ["Self CPU", "CPU total", "Self CUDA", "Self Device"]
                    .iter()
                    .any(|h| next.contains(h));
                if next.contains("Name") && has_time {
                    return true;
                }
            }
        }
    }
    false
}

/// A dashed rule: `-` runs separated by spaces, nothing else.
fn is_rule(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with('-') && t.bytes().all(|b| b == b'-' || b == b' ')
}

/// The byte ranges of the dashed runs of a rule line.
fn boundaries(rule: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, b) in rule.bytes().enumerate() {
        match (b == b'-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, rule.len()));
    }
    out
}

/// The text of one column of a line, trimmed; the last column takes the rest.
fn slice(line: &str, (start, end): (usize, usize), last: bool) -> &str {
    let end = if last {
        line.len()
    } else {
        end.min(line.len())
    };
    let start = start.min(end);
    line.get(start..end)
        .unwrap_or_else(|| char_safe(line, start, end))
        .trim()
}

/// A slice of `line` widened to character boundaries (names may hold any characters).
fn char_safe(line: &str, start: usize, end: usize) -> &str {
    let mut s = start;
    while !line.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = end;
    while !line.is_char_boundary(e) {
        e += 1;
    }
    &line[s..e]
}

/// One line of the text: its 1-based number and the byte offset where it starts.
#[derive(Clone, Copy)]
struct Line<'a> {
    number: usize,
    offset: u64,
    text: &'a str,
}

/// The lines of `text` with their numbers and offsets.
fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let base = text.as_ptr() as usize;
    text.lines().enumerate().map(move |(i, l)| Line {
        number: i + 1,
        offset: (l.as_ptr() as usize - base) as u64,
        text: l,
    })
}

fn malformed(path: &Path, at: Line, message: String) -> TraceError {
    TraceError::malformed(path, at.offset, format!("line {}: {message}", at.number))
}

/// The next line; a line over the cap is an error.
fn next_line<'a>(
    path: &Path,
    lines: &mut impl Iterator<Item = Line<'a>>,
) -> TraceResult<Option<Line<'a>>> {
    match lines.next() {
        Some(l) if l.text.len() > limits::MAX_LINE_BYTES => Err(malformed(
            path,
            l,
            format!("a line longer than {} bytes", limits::MAX_LINE_BYTES),
        )),
        other => Ok(other),
    }
}

/// The memory a row holds, charged to the budget before it is kept.
fn row_bytes(cells: &[Cell]) -> u64 {
    let text: usize = cells
        .iter()
        .map(|c| match c {
            Cell::Text(t) => t.len(),
            _ => 0,
        })
        .sum();
    (std::mem::size_of_val(cells) + std::mem::size_of::<TableRow>() + text) as u64
}

/// Parse a whole table's text, lines streamed (never all held), rows charged to `charge`.
pub(crate) fn parse(
    path: &Path,
    data: &[u8],
    strict: bool,
    charge: &mut Charge,
) -> TraceResult<KeyAveragesTable> {
    let text = String::from_utf8_lossy(data);
    let mut lines = lines(&text);
    let not_table = |why: &str| TraceError::NotA {
        path: path.to_owned(),
        expected: "key_averages table",
        why: why.to_owned(),
    };
    let mut before = Vec::new();
    let rule = loop {
        match next_line(path, &mut lines)? {
            Some(l) if is_rule(l.text) => break l,
            Some(l) if before.len() < limits::MAX_TITLE_LINES => before.push(l.text),
            _ => return Err(not_table("no dashed rule in the first lines")),
        }
    };
    let header_line = next_line(path, &mut lines)?
        .ok_or_else(|| not_table("no header after the dashed rule"))?
        .text;
    let bounds = boundaries(rule.text);
    if bounds.len() > limits::MAX_COLUMNS {
        return Err(malformed(
            path,
            rule,
            format!("more than {} columns", limits::MAX_COLUMNS),
        ));
    }
    let columns = header_columns(header_line, &bounds);
    if columns.first().map(|c| c.header.as_str()) != Some("Name") {
        return Err(not_table("the header does not start with Name"));
    }
    let max_rows = limits::MAX_ROWS.min(limits::MAX_CELLS / columns.len());
    let mut table = KeyAveragesTable {
        title: title(&before),
        columns,
        ..Default::default()
    };
    // The rule under the header, then the rows up to the closing rule, then the footer.
    let mut under_header = true;
    let mut in_rows = true;
    while let Some(at) = next_line(path, &mut lines)? {
        let line = at.text;
        if std::mem::take(&mut under_header) && is_rule(line) {
            continue;
        }
        if in_rows && is_rule(line) {
            in_rows = false;
            continue;
        }
        if !in_rows {
            if table.totals.len() < limits::MAX_TOTALS {
                table.totals.extend(footer(line));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if table.rows.len() >= max_rows {
            return Err(malformed(path, at, format!("more than {max_rows} rows")));
        }
        match row(line, &bounds, &table.columns) {
            Ok(cells) => {
                charge
                    .take(row_bytes(&cells))
                    .map_err(|e| out_of_memory(path, at, e))?;
                push_row(&mut table, cells, at.number as u64);
            }
            Err(why) if strict => return Err(malformed(path, at, why)),
            Err(_) => {
                table.skipped_rows += 1;
                table.first_skipped_line.get_or_insert(at.number as u64);
            }
        }
    }
    Ok(table)
}

fn out_of_memory(path: &Path, at: Line, e: MemoryError) -> TraceError {
    TraceError::OutOfMemory {
        path: path.to_owned(),
        offset: at.offset,
        needed: e.needed,
        in_use: e.in_use,
        limit: e.limit,
    }
}

/// A row, or the continuation of the previous row (a stack's later frames, printed
/// with every other cell empty).
fn push_row(table: &mut KeyAveragesTable, cells: Vec<Cell>, line: u64) {
    let continuation =
        cells[0] == Cell::Empty && cells.iter().filter(|c| **c != Cell::Empty).count() == 1;
    if let (true, Some(prev)) = (continuation, table.rows.last_mut()) {
        for (old, new) in prev.cells.iter_mut().zip(cells) {
            if let (Cell::Text(o), Cell::Text(n)) = (&mut *old, &new) {
                o.push('\n');
                o.push_str(n);
            } else if *old == Cell::Empty {
                *old = new;
            }
        }
        return;
    }
    table.rows.push(TableRow { cells, line });
}

/// The title above the table (`header=`), after PyTorch's `=` rule.
fn title(before: &[&str]) -> Option<String> {
    let text: Vec<&str> = before
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.bytes().all(|b| b == b'='))
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// The header row's columns. PyTorch separates columns by two spaces and right-aligns a
/// header in its column's width, but a header longer than its column (`CUDA time avg` in a
/// 12-wide column, 2.11 with device columns) pushes the ones after it right: then the
/// headers are the row's two-space-separated words, when there is one per column.
fn header_columns(line: &str, bounds: &[(usize, usize)]) -> Vec<TableColumn> {
    let words: Vec<&str> = line
        .split("  ")
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect();
    let sliced = |i: usize, b: &(usize, usize)| slice(line, *b, i + 1 == bounds.len());
    let overflow = bounds
        .iter()
        .enumerate()
        .any(|(i, b)| !words.contains(&sliced(i, b)));
    bounds
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let header = if overflow && words.len() == bounds.len() {
                words[i]
            } else {
                sliced(i, b)
            };
            let header = header.to_owned();
            let unit = unit_of(&header);
            TableColumn { header, unit }
        })
        .collect()
}

/// What a column holds, from its header (any PyTorch version's names).
fn unit_of(header: &str) -> CellUnit {
    let h = header.to_ascii_lowercase();
    if h.ends_with('%') {
        CellUnit::Percent
    } else if h.contains("flops") {
        CellUnit::Flops
    } else if h.contains(" mem") || h == "mem" {
        CellUnit::Bytes
    } else if h.contains("# of calls") || h == "calls" {
        CellUnit::Count
    } else if h.contains("cpu")
        || h.contains("cuda")
        || h.contains("device")
        || h.contains("xpu")
        || h.contains("privateuse")
        || h.contains("mtia")
    {
        CellUnit::Duration
    } else {
        CellUnit::Text
    }
}

fn row(
    line: &str,
    bounds: &[(usize, usize)],
    columns: &[TableColumn],
) -> Result<Vec<Cell>, String> {
    bounds
        .iter()
        .zip(columns)
        .enumerate()
        .map(|(i, (b, column))| {
            let text = slice(line, *b, i + 1 == bounds.len());
            cell(text, column).map_err(|why| format!("column {:?}: {why}", column.header))
        })
        .collect()
}

fn cell(text: &str, column: &TableColumn) -> Result<Cell, String> {
    if text.is_empty() || text == "--" {
        return Ok(Cell::Empty);
    }
    let bad = || format!("cannot read {text:?}");
    Ok(match column.unit {
        CellUnit::Text => Cell::Text(text.to_owned()),
        CellUnit::Duration => Cell::Duration(duration_ns(text).ok_or_else(bad)?),
        CellUnit::Percent => {
            let v = number(text.strip_suffix('%').ok_or_else(bad)?).ok_or_else(bad)?;
            Cell::Share(v / 100.0)
        }
        CellUnit::Bytes => Cell::Bytes(bytes(text).ok_or_else(bad)?),
        CellUnit::Count => Cell::Count(text.parse().map_err(|_| bad())?),
        CellUnit::Flops => Cell::Flops(number(text).ok_or_else(bad)? * flops_scale(&column.header)),
    })
}

/// A finite decimal number.
fn number(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// `12.345us`, `1.2ms`, `3.000s`, `5ns` → nanoseconds (rounded).
fn duration_ns(text: &str) -> Option<i64> {
    let (value, scale) = if let Some(v) = text.strip_suffix("ms") {
        (v, 1e6)
    } else if let Some(v) = text.strip_suffix("us") {
        (v, 1e3)
    } else if let Some(v) = text.strip_suffix("ns") {
        (v, 1.0)
    } else {
        (text.strip_suffix('s')?, 1e9)
    };
    let ns = number(value)? * scale;
    (ns.abs() < 9.0e18).then(|| ns.round() as i64)
}

/// `1.50 Mb`, `-12.00 KB`, `512 b` → bytes (binary units, as PyTorch prints them).
fn bytes(text: &str) -> Option<i64> {
    let (value, unit) = text.rsplit_once(' ')?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "b" => 1.0,
        "kb" => 1024.0,
        "mb" => 1024.0 * 1024.0,
        "gb" => 1024.0 * 1024.0 * 1024.0,
        "tb" => 1024.0_f64.powi(4),
        _ => return None,
    };
    let b = number(value)? * scale;
    (b.abs() < 9.0e18).then(|| b.round() as i64)
}

/// `Total MFLOPs` → 1e6 (PyTorch picks the prefix that fits the largest value).
fn flops_scale(header: &str) -> f64 {
    let prefix = header
        .split_whitespace()
        .find_map(|w| w.strip_suffix("FLOPs").or_else(|| w.strip_suffix("FLOPS")))
        .unwrap_or("");
    match prefix {
        "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        _ => 1.0,
    }
}

/// `Self CPU time total: 106.717ms` → a total.
fn footer(line: &str) -> Option<TableTotal> {
    let (label, value) = line.split_once(':')?;
    Some(TableTotal {
        label: label.trim().to_owned(),
        ns: duration_ns(value.trim())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_as_printed() {
        assert_eq!(duration_ns("106.717ms"), Some(106_717_000));
        assert_eq!(duration_ns("282.501us"), Some(282_501));
        assert_eq!(duration_ns("1.5s"), Some(1_500_000_000));
        assert_eq!(duration_ns("12xs"), None);
        assert_eq!(bytes("-45.38 KB"), Some(-46_469));
        assert_eq!(bytes("0 B"), Some(0));
        assert_eq!(bytes("1.00 Mb"), Some(1 << 20));
        assert_eq!(bytes("3 parsecs"), None);
        assert_eq!(flops_scale("Total KFLOPs"), 1e3);
        assert_eq!(unit_of("Self CPU %"), CellUnit::Percent);
        assert_eq!(unit_of("CPU time avg"), CellUnit::Duration);
        assert_eq!(unit_of("Self CPU Mem"), CellUnit::Bytes);
        assert_eq!(unit_of("Input Shapes"), CellUnit::Text);
    }
}
