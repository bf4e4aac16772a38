//! A table of rows that renders to the terminal or to CSV, shared by every view command
//! (`overview`, `ops`, `kernels`, `memory`, ...), so each view only builds rows. Every
//! text cell, header and title goes through the sanitiser ([`crate::sanitize`]).

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};

use crate::sanitize;

/// One cell: text, or a number that aligns right and is written unformatted in CSV.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Text, left-aligned.
    Text(String),
    /// An integer.
    Int(i64),
    /// A float shown with `decimals` places on the terminal and full precision in CSV.
    Float {
        /// The value.
        value: f64,
        /// Decimals on the terminal.
        decimals: usize,
    },
    /// Nothing to show.
    Empty,
}

impl Value {
    /// A float with a fixed number of decimals on the terminal.
    pub fn float(value: f64, decimals: usize) -> Self {
        Self::Float { value, decimals }
    }

    fn terminal(&self) -> String {
        match self {
            // Renderers lay some cells out on several lines.
            Self::Text(t) => sanitize::text(t).into_owned(),
            Self::Int(i) if *i < 0 => format!("-{}", crate::format::count(i.unsigned_abs())),
            Self::Int(i) => crate::format::count(*i as u64),
            Self::Float { value, decimals } => format!("{value:.decimals$}"),
            Self::Empty => String::new(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Self::Text(t) => sanitize::csv_cell(t).into_owned(),
            Self::Int(i) => i.to_string(),
            Self::Float { value, .. } => value.to_string(),
            Self::Empty => String::new(),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Self::Int(i)
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Self {
        Self::Int(i as i64)
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Self {
        Self::Int(i as i64)
    }
}

/// Rows under named columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tabular {
    /// Optional title printed above the terminal table (not in CSV).
    pub title: Option<String>,
    /// Column names (CSV header; terminal header).
    pub headers: Vec<String>,
    /// Rows, each as long as `headers`.
    pub rows: Vec<Vec<Value>>,
}

impl Tabular {
    /// An empty table with these columns.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Self {
            title: None,
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Set the title.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Append a row.
    pub fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.headers.len(), "row width");
        self.rows.push(row);
    }

    /// Render for the terminal.
    pub fn to_terminal(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY);
        t.set_header(self.headers.iter().map(|h| Cell::new(sanitize::inline(h))));
        for row in &self.rows {
            t.add_row(row.iter().map(|v| {
                let cell = Cell::new(v.terminal());
                match v {
                    Value::Int(_) | Value::Float { .. } => cell.set_alignment(CellAlignment::Right),
                    _ => cell,
                }
            }));
        }
        let mut out = String::new();
        if let Some(title) = &self.title {
            out.push_str(&sanitize::inline(title));
            out.push('\n');
        }
        out.push_str(&t.to_string());
        out.push('\n');
        out
    }

    /// Render as CSV (RFC 4180 quoting), header first; text cells defused
    /// ([`sanitize::csv_cell`]).
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(
            self.headers
                .iter()
                .map(|h| sanitize::csv_cell(h).into_owned()),
        )
        .expect("in-memory write");
        for row in &self.rows {
            w.write_record(row.iter().map(Value::csv))
                .expect("in-memory write");
        }
        String::from_utf8(w.into_inner().expect("in-memory flush")).expect("CSV of UTF-8 is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_terminal_and_csv() {
        let mut t = Tabular::new(["name", "calls", "total_us"]);
        t.push(vec![
            "aten::mm, fused".into(),
            1234i64.into(),
            Value::float(12.3456, 1),
        ]);
        t.push(vec!["x".into(), (-5i64).into(), Value::Empty]);
        let csv = t.to_csv();
        assert_eq!(
            csv,
            "name,calls,total_us\n\"aten::mm, fused\",1234,12.3456\nx,-5,\n"
        );
        let term = t.to_terminal();
        assert!(term.contains("1,234") && term.contains("12.3") && term.contains("-5"));
    }
}
