//! key_averages tables (`KeyAveragesTable`): sorting by any column, and the comparison
//! of a table with the operator view of the Chrome trace of the same run.

use std::cmp::Ordering;
use std::collections::HashMap;

use kinetoscope_trace::{Cell, KeyAveragesTable};
use serde::{Deserialize, Serialize};

use crate::ops::OpsTable;

/// The order of two cells of one column: numbers largest first, text A→Z, empty last.
fn order(a: &Cell, b: &Cell) -> Ordering {
    fn number(c: &Cell) -> Option<f64> {
        match *c {
            Cell::Duration(v) | Cell::Bytes(v) => Some(v as f64),
            Cell::Count(v) => Some(v as f64),
            Cell::Share(v) | Cell::Flops(v) => Some(v),
            Cell::Empty | Cell::Text(_) => None,
        }
    }
    match (a, b) {
        (Cell::Text(x), Cell::Text(y)) => x.cmp(y),
        (Cell::Empty, Cell::Empty) => Ordering::Equal,
        (Cell::Empty, _) => Ordering::Greater,
        (_, Cell::Empty) => Ordering::Less,
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        },
    }
}

/// Sort the rows by `column` (a stable sort: ties keep the printed order).
pub fn sort_rows(table: &mut KeyAveragesTable, column: usize) {
    table
        .rows
        .sort_by(|a, b| match (a.cells.get(column), b.cells.get(column)) {
            (Some(x), Some(y)) => order(x, y),
            _ => Ordering::Equal,
        });
}

/// One table row next to the trace's operator of the same name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpComparison {
    /// The name as the table prints it (PyTorch cuts long names with `...`).
    pub name: String,
    /// The trace's operator name matched (the full name of a cut one); `None` when the
    /// trace's operator view has no such operator.
    pub trace_name: Option<String>,
    /// `# of Calls` in the table.
    pub table_calls: Option<u64>,
    /// Calls in the trace.
    pub trace_calls: Option<u64>,
    /// `Self CPU` in the table, ns.
    pub table_self_cpu_ns: Option<i64>,
    /// Self host time in the trace, ns.
    pub trace_self_host_ns: Option<i64>,
    /// Table minus trace self time, ns, when both are known.
    pub self_diff_ns: Option<i64>,
}

/// Each row of `table` next to the operator of the same name in `ops` (grouped by name).
/// A name the table cut (`prefix...`) matches the one trace operator with that prefix.
pub fn compare(table: &KeyAveragesTable, ops: &OpsTable) -> Vec<OpComparison> {
    let calls_col = table.column("# of Calls");
    let self_col = table.column("Self CPU");
    let by_name: HashMap<&str, usize> = ops
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let find = |name: &str| -> Option<usize> {
        if let Some(&i) = by_name.get(name) {
            return Some(i);
        }
        let prefix = name.strip_suffix("...")?;
        let mut hits = ops
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.name.starts_with(prefix));
        match (hits.next(), hits.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    };
    table
        .rows
        .iter()
        .map(|row| {
            let op = find(row.name()).map(|i| &ops.rows[i]);
            let table_calls = calls_col.and_then(|c| row.cells.get(c)?.count());
            let table_self_cpu_ns = self_col.and_then(|c| row.cells.get(c)?.duration_ns());
            let trace_self_host_ns = op.map(|o| o.host_self_ns);
            OpComparison {
                name: row.name().to_owned(),
                trace_name: op.map(|o| o.name.clone()),
                table_calls,
                trace_calls: op.map(|o| o.calls),
                table_self_cpu_ns,
                trace_self_host_ns,
                self_diff_ns: table_self_cpu_ns
                    .zip(trace_self_host_ns)
                    .map(|(a, b)| a.saturating_sub(b)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinetoscope_trace::{CellUnit, TableColumn, TableRow};

    #[test]
    fn sorts_numbers_down_and_empty_last() {
        let row = |name: &str, c: Cell| TableRow {
            cells: vec![Cell::Text(name.into()), c],
            line: 1,
        };
        let mut t = KeyAveragesTable {
            columns: vec![
                TableColumn {
                    header: "Name".into(),
                    unit: CellUnit::Text,
                },
                TableColumn {
                    header: "Self CPU".into(),
                    unit: CellUnit::Duration,
                },
            ],
            rows: vec![
                row("a", Cell::Empty),
                row("b", Cell::Duration(5)),
                row("c", Cell::Duration(9)),
            ],
            ..Default::default()
        };
        sort_rows(&mut t, 1);
        let names: Vec<&str> = t.rows.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["c", "b", "a"]);
        sort_rows(&mut t, 0);
        let names: Vec<&str> = t.rows.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }
}
