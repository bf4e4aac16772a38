//! `kinetoscope tables`: key_averages tables for the terminal (PyTorch's columns, times
//! in µs/ms, memory in binary units, shares in %) with the trace comparison beside each,
//! and CSV (one line per cell: file, row, column, value in JSON units). JSON is the
//! document.

use kinetoscope_engine::{ReportTable, TableFile, TablesDocument, TraceComparison};
use kinetoscope_trace::{Cell, CellUnit};

use crate::format::{bytes_f, duration};
use crate::sanitize;
use crate::tabular::{Tabular, Value};

fn terminal_cell(c: &Cell) -> Value {
    match c {
        Cell::Empty => Value::Empty,
        Cell::Text(t) => Value::Text(t.replace('\n', " ← ")),
        Cell::Duration(ns) => Value::Text(duration(*ns as f64)),
        Cell::Share(s) => Value::float(s * 100.0, 2),
        Cell::Bytes(b) => Value::Text(bytes_f(*b as f64)),
        Cell::Count(n) => Value::Int(i64::try_from(*n).unwrap_or(i64::MAX)),
        Cell::Flops(f) => Value::float(*f, 0),
    }
}

fn heading(f: &TableFile) -> String {
    let mut h = sanitize::inline(&f.path).into_owned();
    if let Some(o) = &f.oumi {
        h.push_str(&format!(
            " (rank {}, local rank {}, sorted by {})",
            o.rank,
            o.local_rank,
            sanitize::inline(&o.sort_key)
        ));
    }
    h
}

fn rows_table(f: &TableFile) -> Tabular {
    // FLOPs are shown as counts, whatever prefix PyTorch's header chose.
    let headers = f.table.columns.iter().map(|c| match c.unit {
        CellUnit::Flops => "Total FLOPs".to_owned(),
        _ => c.header.clone(),
    });
    let mut t = Tabular::new(headers);
    for r in &f.table.rows {
        t.push(r.cells.iter().map(terminal_cell).collect());
    }
    t
}

fn opt_duration(ns: Option<i64>) -> Value {
    ns.map_or(Value::Empty, |n| Value::Text(duration(n as f64)))
}

fn opt_count(n: Option<u64>) -> Value {
    n.map_or(Value::Empty, |n| {
        Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
    })
}

fn comparison_table(c: &TraceComparison) -> Tabular {
    let mut t = Tabular::new([
        "Name",
        "calls (table)",
        "calls (trace)",
        "Self CPU (table)",
        "self host (trace)",
        "table − trace",
    ])
    .titled(format!("Compared with the trace {}", c.trace));
    for o in &c.ops {
        t.push(vec![
            Value::Text(o.name.clone()),
            opt_count(o.table_calls),
            opt_count(o.trace_calls),
            opt_duration(o.table_self_cpu_ns),
            opt_duration(o.trace_self_host_ns),
            opt_duration(o.self_diff_ns),
        ]);
    }
    t
}

/// The terminal report: per file its heading, title, rows, totals and the comparison.
pub fn to_table(doc: &TablesDocument) -> String {
    let mut out = String::new();
    for f in &doc.tables {
        out.push_str(&heading(f));
        out.push('\n');
        if let Some(title) = &f.table.title {
            out.push_str(&format!("{}\n", sanitize::inline(title)));
        }
        if f.table.rows.len() < f.total_rows {
            out.push_str(&format!(
                "{} of {} rows\n",
                f.table.rows.len(),
                f.total_rows
            ));
        }
        out.push_str(&rows_table(f).to_terminal());
        for total in &f.table.totals {
            out.push_str(&format!(
                "{}: {}\n",
                sanitize::inline(&total.label),
                duration(total.ns as f64)
            ));
        }
        if f.table.skipped_rows > 0 {
            out.push_str(&format!(
                "{} rows skipped (unreadable cells; first at line {})\n",
                f.table.skipped_rows,
                f.table.first_skipped_line.unwrap_or(0)
            ));
        }
        if let Some(c) = &f.comparison {
            out.push('\n');
            out.push_str(&comparison_table(c).to_terminal());
        }
        out.push('\n');
    }
    out
}

fn csv_value(c: &Cell) -> Value {
    match c {
        Cell::Empty => Value::Empty,
        Cell::Text(t) => Value::Text(t.clone()),
        Cell::Duration(v) | Cell::Bytes(v) => Value::Int(*v),
        Cell::Count(n) => Value::Int(i64::try_from(*n).unwrap_or(i64::MAX)),
        Cell::Share(v) | Cell::Flops(v) => Value::float(*v, 6),
    }
}

/// CSV, one line per cell: file, row (1-based, as shown), name, column, unit and the
/// value in JSON units (ns, bytes, 0–1 shares, FLOPs).
pub fn to_csv(doc: &TablesDocument) -> String {
    let mut t = Tabular::new(["file", "row", "name", "column", "unit", "value"]);
    for f in &doc.tables {
        for (i, r) in f.table.rows.iter().enumerate() {
            for (col, cell) in f.table.columns.iter().zip(&r.cells).skip(1) {
                let unit = serde_json::to_value(col.unit)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                t.push(vec![
                    Value::Text(f.path.clone()),
                    Value::Int(i as i64 + 1),
                    Value::Text(r.name().to_owned()),
                    Value::Text(col.header.clone()),
                    Value::Text(unit),
                    csv_value(cell),
                ]);
            }
        }
    }
    t.to_csv()
}

/// `report`'s section for the key_averages tables of the input, one line per table (by
/// rank, with its sort key) and its first rows.
pub fn report_section(out: &mut String, tables: &[ReportTable]) {
    if tables.is_empty() {
        return;
    }
    out.push_str("key_averages tables\n");
    let mut t = Tabular::new([
        "table",
        "rank",
        "sort key",
        "rows",
        "Self CPU total",
        "first rows (self CPU, calls)",
    ]);
    for r in tables {
        let first: Vec<String> = r
            .top
            .iter()
            .map(|row| {
                let time = row
                    .self_cpu_ns
                    .map_or(String::new(), |ns| duration(ns as f64));
                let calls = row.calls.map_or(String::new(), |c| format!(" ×{c}"));
                format!("{} {time}{calls}", row.name)
            })
            .collect();
        let file = std::path::Path::new(&r.path)
            .file_name()
            .map_or(r.path.clone(), |n| n.to_string_lossy().into_owned());
        t.push(vec![
            Value::Text(file),
            r.oumi.as_ref().map_or(Value::Empty, |o| {
                Value::Text(format!("{} (local {})", o.rank, o.local_rank))
            }),
            r.oumi
                .as_ref()
                .map_or(Value::Empty, |o| Value::Text(o.sort_key.clone())),
            Value::Int(r.rows as i64),
            r.self_cpu_total_ns
                .map_or(Value::Empty, |ns| Value::Text(duration(ns as f64))),
            Value::Text(first.join("\n")),
        ]);
    }
    out.push_str(&t.to_terminal());
    out.push('\n');
}
