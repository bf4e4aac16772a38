//! `kinetoscope kernels`: the kernel table as a terminal report, CSV or a versioned JSON
//! document (`docs/json.md`).
//!
//! Terminal: per trace a title line (with the share of kernel time on tensor cores) and
//! the table, times in µs. CSV: one table for all traces (columns `path` and `rank`
//! first), times in µs. JSON: [`KernelsDocument`], times in ns.

use kinetoscope_analysis::kernels::{KernelGroupBy, KernelRow, KernelsTable};

use crate::format::percent;
use crate::ops::clip;
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::{Document, KernelsOptions};

/// Everything `kinetoscope kernels` shows for one input path: the grouping, sort key and
/// row limit, then one [`KernelsTable`] per trace read, in file-name order.
pub type KernelsDocument = Document<KernelsTable, KernelsOptions>;

fn us(ns: f64) -> f64 {
    ns / 1000.0
}

fn opt(v: Option<f64>, decimals: usize) -> Value {
    v.map_or(Value::Empty, |x| Value::float(x, decimals))
}

fn dims(d: [u32; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

fn yes(b: bool) -> Value {
    (if b { "yes" } else { "no" }).into()
}

/// Render as terminal tables, one per trace.
pub fn to_table(doc: &KernelsDocument) -> String {
    let mut out = String::new();
    for t in &doc.traces {
        let rank = t.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        let by = match t.group_by {
            KernelGroupBy::Name => "name",
            KernelGroupBy::Properties => "name + operator + launch properties",
        };
        let title = format!(
            "{}{rank}: {} of {} kernel rows, by {by}, sorted by {}; kernel time {:.1} µs, \
             {:.1} % on tensor cores",
            t.path,
            t.rows.len(),
            t.total_rows,
            t.sort.as_str(),
            us(t.total_kernel_ns as f64),
            percent(t.tensor_core_share),
        );
        let props = t.group_by == KernelGroupBy::Properties;
        let mut headers = vec!["Kernel"];
        if props {
            headers.extend([
                "Operator",
                "Grid",
                "Block",
                "Regs",
                "Shared mem",
                "Op TC eligible",
            ]);
        }
        headers.extend([
            "Calls",
            "Total µs",
            "Mean µs",
            "Min µs",
            "Max µs",
            "Tensor cores",
            "Blocks/SM",
            "Occupancy %",
        ]);
        let mut table = Tabular::new(headers).titled(title);
        for r in &t.rows {
            let mut row: Vec<Value> = vec![clip(&r.name, 70).into()];
            if let Some(p) = r.properties.as_ref().filter(|_| props) {
                row.extend([
                    clip(&p.operator, 40).into(),
                    dims(p.grid).into(),
                    dims(p.block).into(),
                    Value::from(u64::from(p.registers_per_thread)),
                    Value::from(p.shared_memory_bytes),
                    yes(p.op_tc_eligible),
                ]);
            }
            push_stats(&mut row, r, 1);
            table.push(row);
        }
        out.push_str(&table.to_terminal());
        out.push('\n');
    }
    for e in &doc.errors {
        out.push_str(&format!("error: {}\n", e.error));
    }
    out
}

fn push_stats(row: &mut Vec<Value>, r: &KernelRow, decimals: usize) {
    row.extend([
        Value::from(r.calls),
        Value::float(us(r.total_ns as f64), decimals),
        Value::float(us(r.mean_ns), decimals),
        Value::float(us(r.min_ns as f64), decimals),
        Value::float(us(r.max_ns as f64), decimals),
    ]);
    row.push(if decimals == 1 {
        yes(r.tensor_cores)
    } else {
        r.tensor_cores.to_string().into()
    });
    row.extend([
        opt(r.mean_blocks_per_sm, 2),
        opt(r.mean_est_achieved_occupancy.map(percent), 2),
    ]);
}

/// Render all traces as one CSV table (times in µs).
pub fn to_csv(doc: &KernelsDocument) -> String {
    let props = doc.options.group_by == KernelGroupBy::Properties;
    let mut headers = vec!["path", "rank", "name"];
    if props {
        headers.extend([
            "operator",
            "grid",
            "block",
            "registers_per_thread",
            "shared_memory_bytes",
            "op_tc_eligible",
        ]);
    }
    headers.extend([
        "calls",
        "total_us",
        "mean_us",
        "min_us",
        "max_us",
        "tensor_cores",
        "mean_blocks_per_sm",
        "mean_est_achieved_occupancy_pct",
    ]);
    let mut table = Tabular::new(headers);
    for t in &doc.traces {
        for r in &t.rows {
            let mut row: Vec<Value> = vec![
                t.path.as_str().into(),
                t.rank.map_or(Value::Empty, Value::from),
                r.name.as_str().into(),
            ];
            if let Some(p) = r.properties.as_ref().filter(|_| props) {
                row.extend([
                    p.operator.as_str().into(),
                    dims(p.grid).into(),
                    dims(p.block).into(),
                    Value::from(u64::from(p.registers_per_thread)),
                    Value::from(p.shared_memory_bytes),
                    p.op_tc_eligible.to_string().into(),
                ]);
            }
            push_stats(&mut row, r, 3);
            table.push(row);
        }
    }
    table.to_csv()
}
