//! `kinetoscope ops`: the operator table as a terminal report, CSV or a versioned JSON
//! document (`docs/json.md`).
//!
//! Terminal: per trace a title line and the table, times in µs. CSV: one table for all
//! traces (columns `path` and `rank` first), times in µs. JSON: [`OpsDocument`], times in
//! ns.

use kinetoscope_analysis::ops::{OpGroupBy, OpRow, OpsTable};
use kinetoscope_trace::GpuVendor;

use crate::format::percent;
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::{Document, OpsOptions};

/// Everything `kinetoscope ops` shows for one input path: the grouping, sort key and
/// row limit, then one [`OpsTable`] per trace read, in file-name order.
pub type OpsDocument = Document<OpsTable, OpsOptions>;

/// The header of the grouping column, if the grouping has one.
fn group_column(group_by: OpGroupBy) -> Option<&'static str> {
    match group_by {
        OpGroupBy::Name => None,
        OpGroupBy::Shape => Some("input_shape"),
        OpGroupBy::Stack => Some("call_stack"),
        OpGroupBy::Module => Some("module"),
    }
}

fn group_text(row: &OpRow) -> Option<&str> {
    row.input_shape
        .as_deref()
        .or(row.call_stack.as_deref())
        .or(row.module.as_deref())
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// Shorten long text for the terminal (kernel and template names run to hundreds of
/// characters).
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Render as terminal tables, one per trace.
pub fn to_table(doc: &OpsDocument) -> String {
    let mut out = String::new();
    for t in &doc.traces {
        let rank = t.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        let mut title = format!(
            "{}{rank}: {} of {} operator rows, by {}, sorted by {}",
            t.path,
            t.rows.len(),
            t.total_rows,
            group_label(t.group_by),
            t.sort.as_str()
        );
        if !t.has_device_work {
            title.push_str(" (no GPU activity in this trace)");
        }
        let mut headers = vec!["Operator"];
        headers.extend(group_column(t.group_by).map(|_| match t.group_by {
            OpGroupBy::Shape => "Input shape",
            OpGroupBy::Stack => "Call stack",
            _ => "Module",
        }));
        headers.extend([
            "Calls",
            "Launching",
            "Device self µs",
            "Device total µs",
            "Host self µs",
            "Host total µs",
        ]);
        // MC: matrix cores, AMD's word for tensor cores.
        headers.extend(if t.vendor == GpuVendor::Amd {
            ["MC eligible", "MC self %", "MC total %"]
        } else {
            ["TC eligible", "TC self %", "TC total %"]
        });
        let mut table = Tabular::new(headers).titled(title);
        for r in &t.rows {
            let mut row: Vec<Value> = vec![clip(&r.name, 60).into()];
            if group_column(t.group_by).is_some() {
                row.push(clip(group_text(r).unwrap_or("-"), 60).into());
            }
            row.extend([
                Value::from(r.calls),
                Value::from(r.launching_calls),
                Value::float(us(r.device_self_ns), 1),
                Value::float(us(r.device_total_ns), 1),
                Value::float(us(r.host_self_ns), 1),
                Value::float(us(r.host_total_ns), 1),
                (if r.tc_eligible { "yes" } else { "no" }).into(),
                Value::float(percent(r.tc_self_share), 1),
                Value::float(percent(r.tc_total_share), 1),
            ]);
            table.push(row);
        }
        out.push_str(&table.to_terminal());
        for w in &t.warnings {
            out.push_str(&format!("warning: {}\n", crate::note::text(w)));
        }
        out.push('\n');
    }
    for e in &doc.errors {
        out.push_str(&format!("error: {}\n", e.error));
    }
    out
}

fn group_label(g: OpGroupBy) -> &'static str {
    match g {
        OpGroupBy::Name => "name",
        OpGroupBy::Shape => "name + input shape",
        OpGroupBy::Stack => "name + call stack",
        OpGroupBy::Module => "name + module",
    }
}

/// Render all traces as one CSV table (times in µs).
pub fn to_csv(doc: &OpsDocument) -> String {
    let mut headers = vec!["path", "rank", "name"];
    headers.extend(group_column(doc.options.group_by));
    headers.extend([
        "calls",
        "launching_calls",
        "device_self_us",
        "device_total_us",
        "host_self_us",
        "host_total_us",
        "tc_eligible",
        "tc_self_pct",
        "tc_total_pct",
        "has_call_stack",
    ]);
    let mut table = Tabular::new(headers);
    for t in &doc.traces {
        for r in &t.rows {
            let mut row: Vec<Value> = vec![
                t.path.as_str().into(),
                t.rank.map_or(Value::Empty, Value::from),
                r.name.as_str().into(),
            ];
            if group_column(doc.options.group_by).is_some() {
                row.push(group_text(r).map_or(Value::Empty, Value::from));
            }
            row.extend([
                Value::from(r.calls),
                Value::from(r.launching_calls),
                Value::float(us(r.device_self_ns), 3),
                Value::float(us(r.device_total_ns), 3),
                Value::float(us(r.host_self_ns), 3),
                Value::float(us(r.host_total_ns), 3),
                r.tc_eligible.to_string().into(),
                Value::float(percent(r.tc_self_share), 2),
                Value::float(percent(r.tc_total_share), 2),
                r.has_call_stack.to_string().into(),
            ]);
            table.push(row);
        }
    }
    table.to_csv()
}
