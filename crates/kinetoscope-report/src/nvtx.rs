//! `kinetoscope nvtx`: NVTX ranges by name (the `nsys stats` `nvtx_sum` report) with
//! the GPU time launched inside each. Terminal and CSV: one row per range name; JSON
//! every field of [`TraceNvtx`] (`docs/json.md`).

use kinetoscope_analysis::nvtx::TraceNvtx;
use kinetoscope_engine::Document;

use crate::format::{percent, us};
use crate::tabular::{Tabular, Value};

/// Everything `kinetoscope nvtx` shows for one input path: one [`TraceNvtx`] per trace
/// read, in file order.
pub type NvtxDocument = Document<TraceNvtx>;

fn table(doc: &NvtxDocument, with_trace: bool) -> Tabular {
    let mut headers: Vec<&str> = Vec::new();
    if with_trace {
        headers.push("trace");
    }
    headers.extend([
        "range",
        "operator",
        "count",
        "total_us",
        "share_pct",
        "avg_us",
        "median_us",
        "min_us",
        "max_us",
        "stddev_us",
        "gpu_time_us",
        "gpu_span_us",
        "gpu_activities",
    ]);
    let mut t = Tabular::new(headers);
    for tr in &doc.traces {
        for r in &tr.ranges {
            let mut row: Vec<Value> = Vec::new();
            if with_trace {
                row.push(tr.path.clone().into());
            }
            row.extend([
                r.name.clone().into(),
                Value::Text(if r.operator { "yes" } else { "" }.to_owned()),
                r.count.into(),
                Value::float(us(r.total_ns as f64), 1),
                Value::float(percent(r.share), 2),
                Value::float(us(r.avg_ns), 1),
                Value::float(us(r.median_ns), 1),
                Value::float(us(r.min_ns as f64), 1),
                Value::float(us(r.max_ns as f64), 1),
                Value::float(us(r.stddev_ns), 1),
                Value::float(us(r.gpu_time_ns as f64), 1),
                Value::float(us(r.gpu_span_ns as f64), 1),
                r.gpu_activities.into(),
            ]);
            t.push(row);
        }
    }
    t
}

/// One CSV row per range name (µs).
pub fn to_csv(doc: &NvtxDocument) -> String {
    table(doc, true).to_csv()
}

/// Render as a terminal report.
pub fn to_table(doc: &NvtxDocument) -> String {
    let mut out = String::new();
    for tr in &doc.traces {
        let what = if tr.nsys {
            "NVTX ranges"
        } else {
            "record_function ranges (user_annotation)"
        };
        out.push_str(&format!("{}\n  {what}\n", tr.path));
        if tr.ranges.is_empty() {
            out.push_str("  no ranges\n");
        } else {
            let one = NvtxDocument {
                traces: vec![tr.clone()],
                errors: Vec::new(),
                ..doc.clone()
            };
            out.push_str(
                &table(&one, false)
                    .titled("Ranges by total time")
                    .to_terminal(),
            );
        }
        crate::note::push_warnings(&mut out, &tr.warnings);
        out.push('\n');
    }
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}
