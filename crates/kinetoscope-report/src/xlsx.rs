//! `kinetoscope report --xlsx OUT`: the workbook of a [`WorkbookDocument`], one sheet
//! per view (`docs/xlsx.md`). Each sheet is one table over every trace of the input
//! (a `trace` column first), headers in row 1 frozen, column widths set, numbers as
//! numbers (µs to the nanosecond, bytes and counts as integers, shares as
//! percentages). Text is written as text cells, never as formulas, through the
//! sanitiser ([`crate::sanitize`]). It formats the documents; it computes nothing.

mod sheets;

use rust_xlsxwriter::{Format, FormatAlign, Workbook, Worksheet, XlsxError};

use kinetoscope_engine::WorkbookDocument;

use crate::sanitize;

/// What a column holds, which sets its number format and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A name or path (wide).
    Name,
    /// Short text (a family, a severity, an id).
    Text,
    /// Several lines of text (evidence, a fix), wrapped.
    Lines,
    /// Microseconds, `0.000`.
    Us,
    /// Bytes, an integer.
    Bytes,
    /// A count, an integer.
    Count,
    /// A share (0–1) shown as a percentage, `0.00%`.
    Share,
    /// Another number (GFLOP, TFLOP/s, FLOP per byte), `0.000`.
    Num,
    /// True or false.
    Bool,
}

impl Kind {
    /// Column width in characters.
    fn width(self) -> f64 {
        match self {
            Self::Name => 48.0,
            Self::Lines => 60.0,
            Self::Text => 16.0,
            _ => 14.0,
        }
    }
}

/// One cell's value.
#[derive(Clone, Debug, PartialEq)]
enum V {
    /// Text (sanitised when written).
    S(String),
    /// A number.
    N(f64),
    /// A flag.
    B(bool),
    /// Nothing (an unknown or absent value).
    E,
}

impl From<&str> for V {
    fn from(s: &str) -> Self {
        Self::S(s.to_owned())
    }
}

impl From<String> for V {
    fn from(s: String) -> Self {
        Self::S(s)
    }
}

impl From<f64> for V {
    fn from(v: f64) -> Self {
        Self::N(v)
    }
}

impl From<u64> for V {
    fn from(v: u64) -> Self {
        Self::N(v as f64)
    }
}

impl From<i64> for V {
    fn from(v: i64) -> Self {
        Self::N(v as f64)
    }
}

impl From<usize> for V {
    fn from(v: usize) -> Self {
        Self::N(v as f64)
    }
}

impl From<bool> for V {
    fn from(v: bool) -> Self {
        Self::B(v)
    }
}

impl<T: Into<V>> From<Option<T>> for V {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::E, Into::into)
    }
}

/// One sheet: its name, its columns and its rows.
#[derive(Debug)]
struct Sheet {
    /// The sheet's name (also what the tests and `docs/xlsx.md` call it).
    name: &'static str,
    /// Header and kind of each column.
    columns: Vec<(&'static str, Kind)>,
    /// Rows, each as long as `columns`.
    rows: Vec<Vec<V>>,
}

impl Sheet {
    /// An empty sheet with `columns`.
    fn new(name: &'static str, columns: Vec<(&'static str, Kind)>) -> Self {
        Self {
            name,
            columns,
            rows: Vec::new(),
        }
    }

    /// Append a row.
    fn push(&mut self, row: Vec<V>) {
        debug_assert_eq!(row.len(), self.columns.len(), "sheet {}", self.name);
        self.rows.push(row);
    }
}

/// Rows a sheet holds at most: the format's 1,048,576 rows, less the header and the
/// line saying how many rows were left out.
const MAX_ROWS: usize = 1_048_574;

/// Characters a cell holds at most (the format's limit).
const MAX_CELL_CHARS: usize = 32_767;

/// The workbook of `doc`, as the bytes of an `.xlsx` file.
pub fn to_xlsx(doc: &WorkbookDocument) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let formats = Formats::new();
    for make in sheets::all(doc) {
        write_sheet(
            wb.add_worksheet_with_constant_memory(),
            &make(doc),
            &formats,
        )?;
    }
    wb.save_to_buffer()
}

/// The cell formats, one per column kind, and the header's.
struct Formats {
    header: Format,
    text: Format,
    lines: Format,
    us: Format,
    integer: Format,
    share: Format,
}

impl Formats {
    fn new() -> Self {
        Self {
            header: Format::new().set_bold().set_align(FormatAlign::Center),
            text: Format::new(),
            lines: Format::new().set_text_wrap(),
            us: Format::new().set_num_format("0.000"),
            integer: Format::new().set_num_format("0"),
            share: Format::new().set_num_format("0.00%"),
        }
    }

    /// The format of a column of `kind`.
    fn of(&self, kind: Kind) -> &Format {
        match kind {
            Kind::Name | Kind::Text | Kind::Bool => &self.text,
            Kind::Lines => &self.lines,
            Kind::Us | Kind::Num => &self.us,
            Kind::Bytes | Kind::Count => &self.integer,
            Kind::Share => &self.share,
        }
    }
}

/// Write `sheet` into `ws`: headers (frozen), widths, then the rows; rows past the
/// format's limit are left out and counted in a last row.
fn write_sheet(ws: &mut Worksheet, sheet: &Sheet, f: &Formats) -> Result<(), XlsxError> {
    ws.set_name(sheet.name)?;
    for (c, (header, kind)) in sheet.columns.iter().enumerate() {
        let c = col(c);
        ws.write_string_with_format(0, c, *header, &f.header)?;
        ws.set_column_width(c, kind.width())?;
    }
    ws.set_freeze_panes(1, 0)?;
    for (r, row) in sheet.rows.iter().take(MAX_ROWS).enumerate() {
        let r = r as u32 + 1;
        for (c, (v, (_, kind))) in row.iter().zip(&sheet.columns).enumerate() {
            write_cell(ws, r, col(c), v, *kind, f)?;
        }
    }
    if sheet.rows.len() > MAX_ROWS {
        let left_out = format!(
            "{} more rows left out (a sheet holds at most {MAX_ROWS} rows); the JSON \
             document has them all",
            sheet.rows.len() - MAX_ROWS
        );
        ws.write_string(MAX_ROWS as u32 + 1, 0, left_out)?;
    }
    Ok(())
}

/// A column index (sheets have a few dozen columns at most).
fn col(c: usize) -> u16 {
    u16::try_from(c).unwrap_or(u16::MAX)
}

/// Write one cell: text as a string cell (never a formula), sanitised and cut to the
/// format's limit; numbers with the column's format (a non-finite number is left empty).
fn write_cell(
    ws: &mut Worksheet,
    r: u32,
    c: u16,
    v: &V,
    kind: Kind,
    f: &Formats,
) -> Result<(), XlsxError> {
    match v {
        V::S(s) => {
            let clean = if kind == Kind::Lines {
                sanitize::text(s)
            } else {
                sanitize::inline(s)
            };
            ws.write_string_with_format(r, c, cut(&clean), f.of(kind))?;
        }
        V::N(n) if n.is_finite() => {
            ws.write_number_with_format(r, c, *n, f.of(kind))?;
        }
        V::B(b) => {
            ws.write_boolean(r, c, *b)?;
        }
        V::N(_) | V::E => {}
    }
    Ok(())
}

/// `s`, cut to the characters a cell holds.
fn cut(s: &str) -> &str {
    match s.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_cuts_long_text_on_a_char_boundary() {
        assert_eq!(cut("aten::mm"), "aten::mm");
        let long = "é".repeat(MAX_CELL_CHARS + 5);
        assert_eq!(cut(&long).chars().count(), MAX_CELL_CHARS);
    }
}
