//! `kinetoscope critical-path`: per trace, the time on the critical path of one step by
//! category and the events with the most time on it. CSV writes the category table of
//! every trace; JSON every field of [`CriticalPath`] (`docs/json.md`).

use kinetoscope_analysis::critical_path::CriticalPath;

use crate::format::{percent, us};
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::Document;

/// Everything `kinetoscope critical-path` shows for one input path: one [`CriticalPath`] per trace read, in file order.
pub type CriticalPathDocument = Document<CriticalPath>;

/// The categories of every trace as CSV (µs).
pub fn to_csv(doc: &CriticalPathDocument) -> String {
    let mut t = Tabular::new(["trace", "step", "category", "time_us", "pct"]);
    for tr in &doc.traces {
        for c in &tr.categories {
            t.push(vec![
                tr.path.clone().into(),
                tr.step.clone().unwrap_or_default().into(),
                c.category.label().into(),
                Value::float(us(c.time_ns as f64), 3),
                Value::float(percent(c.share), 2),
            ]);
        }
    }
    t.to_csv()
}

/// Render as a terminal report.
pub fn to_table(doc: &CriticalPathDocument) -> String {
    let mut out = String::new();
    for tr in &doc.traces {
        out.push_str(&format!(
            "{}\n  critical path of {}: {:.1} µs in {} pieces\n",
            tr.path,
            tr.step.as_deref().unwrap_or("(no step)"),
            us(tr.length_ns as f64),
            tr.pieces
        ));
        if !tr.categories.is_empty() {
            let mut t =
                Tabular::new(["category", "time_us", "%"]).titled("Time on the critical path");
            for c in &tr.categories {
                t.push(vec![
                    c.category.label().into(),
                    Value::float(us(c.time_ns as f64), 1),
                    Value::float(percent(c.share), 1),
                ]);
            }
            out.push_str(&t.to_terminal());
            let mut t = Tabular::new(["event", "category", "time_us", "pieces"])
                .titled("Events with the most time on the critical path");
            for ev in &tr.top_events {
                t.push(vec![
                    crate::sequences::short_name(&ev.name).into(),
                    ev.category.label().into(),
                    Value::float(us(ev.time_ns as f64), 1),
                    ev.pieces.into(),
                ]);
            }
            out.push_str(&t.to_terminal());
        }
        crate::note::push_warnings(&mut out, &tr.warnings);
        out.push('\n');
    }
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}
