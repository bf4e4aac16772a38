//! A `key_averages()` table as PyTorch prints it (`prof.key_averages(…).table(…)`):
//! its columns by header name, typed cells, and the footer totals.

use serde::{Deserialize, Serialize};

/// One fixed-width key_averages table read from text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyAveragesTable {
    /// The `header=` title printed above the table, if any.
    pub title: Option<String>,
    /// The columns in printed order (the first is `Name`).
    pub columns: Vec<TableColumn>,
    /// The rows in printed order.
    pub rows: Vec<TableRow>,
    /// The footer lines (`Self CPU time total: 12.345ms`).
    pub totals: Vec<TableTotal>,
    /// Rows skipped because a cell could not be read (lenient mode).
    pub skipped_rows: u64,
    /// The line number (1-based) of the first skipped row.
    pub first_skipped_line: Option<u64>,
}

/// One column: its header as printed and what its cells hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableColumn {
    /// The header text (`Self CPU %`, `CPU Mem`, `Total MFLOPs`).
    pub header: String,
    /// What the cells hold, decided from the header.
    pub unit: CellUnit,
}

/// What a column's cells hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellUnit {
    /// Text kept as printed (names, input shapes, source locations, unknown columns).
    Text,
    /// A duration (`12.345us`, `1.2ms`, `3s`), read as nanoseconds.
    Duration,
    /// A percentage (`12.34%`), read as a 0–1 share.
    Percent,
    /// Memory (`1.50 Mb`, `-512 b`), read as bytes (binary units).
    Bytes,
    /// A count (`# of Calls`).
    Count,
    /// Floating-point operations; the header's prefix (`Total MFLOPs`) is applied.
    Flops,
}

/// One cell's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Cell {
    /// Nothing printed (or PyTorch's `--`).
    Empty,
    /// Text as printed.
    Text(String),
    /// Nanoseconds.
    Duration(i64),
    /// A 0–1 share.
    Share(f64),
    /// Bytes (may be negative: memory freed).
    Bytes(i64),
    /// A count.
    Count(u64),
    /// Floating-point operations.
    Flops(f64),
}

/// One row: a cell per column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// The cells, one per column of [`KeyAveragesTable::columns`].
    pub cells: Vec<Cell>,
    /// The 1-based line the row starts on.
    pub line: u64,
}

/// One footer total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableTotal {
    /// The label before the colon (`Self CPU time total`).
    pub label: String,
    /// Nanoseconds.
    pub ns: i64,
}

impl KeyAveragesTable {
    /// The index of the column whose header is `header` (ASCII case ignored).
    pub fn column(&self, header: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.header.eq_ignore_ascii_case(header))
    }
}

impl TableRow {
    /// The row's name (the first column's text).
    pub fn name(&self) -> &str {
        match self.cells.first() {
            Some(Cell::Text(t)) => t,
            _ => "",
        }
    }
}

impl Cell {
    /// The cell as nanoseconds, if it is a duration.
    pub fn duration_ns(&self) -> Option<i64> {
        match self {
            Self::Duration(ns) => Some(*ns),
            _ => None,
        }
    }

    /// The cell as a count, if it is one.
    pub fn count(&self) -> Option<u64> {
        match self {
            Self::Count(n) => Some(*n),
            _ => None,
        }
    }
}
