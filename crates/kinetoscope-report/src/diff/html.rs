//! The diff as one self-contained HTML page: no script, no external resource, so it
//! opens offline and can be attached to a CI run. Base and new bars side by side for
//! the breakdown and the host phases; the top operator and kernel changes as bars of
//! their base and new time per step; then counts, memory, findings and the gate. Every
//! text from the inputs is HTML-escaped.

use std::fmt::Write;

use kinetoscope_analysis::diff::items::ItemDelta;
use kinetoscope_analysis::diff::parts::PartDelta;
use kinetoscope_engine::diff::document::FindingDirection;
use kinetoscope_engine::DiffDocument;

use super::words::{change_line, ellipsis, machine_line, part_name, signed_duration, status};
use super::{gate_lines, side};
use crate::format::{bytes_f, duration};

/// Rows of the operator and kernel charts.
const TOP: usize = 15;

const STYLE: &str =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top}\
td.n{text-align:right;white-space:nowrap}.bar{height:9px;margin:1px 0}\
.b{background:#8a9bb5}.w{background:#d9822b}.up{color:#b3261e}.down{color:#1e7b34}\
.k{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}\
.legend span{display:inline-block;width:12px;height:9px;margin:0 4px 0 12px}\
.fail{color:#b3261e;font-weight:600}.pass{color:#1e7b34}";

/// The page.
pub fn to_html(doc: &DiffDocument) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>kinetoscope diff</title>\
         <style>{STYLE}</style></head><body><h1>kinetoscope diff</h1>\
         <p>base <span class=\"k\">{}</span><br>new <span class=\"k\">{}</span></p>",
        esc(&side(&doc.base)),
        esc(&side(&doc.new))
    );
    let _ = write!(
        o,
        "<p><b>Step time</b>: {}</p>",
        esc(&change_line(&doc.steps))
    );
    if let Some(m) = machine_line(&doc.machine) {
        let _ = write!(o, "<p><b>Machine</b>: {}</p>", esc(&m));
    }
    o.push_str("<p class=\"legend\"><span class=\"b\"></span>base<span class=\"w\"></span>new</p>");
    parts(
        &mut o,
        "Where the time went (per step)",
        &doc.breakdown,
        part_name,
    );
    if !doc.phases.is_empty() {
        parts(&mut o, "Host phases (per step)", &doc.phases, |c| {
            c.to_owned()
        });
    }
    items(&mut o, "Operators: largest changes", &doc.ops, true);
    if !doc.kernels.is_empty() {
        items(&mut o, "Kernels: largest changes", &doc.kernels, false);
    }
    counts(&mut o, doc);
    memory(&mut o, doc);
    findings(&mut o, doc);
    let gate = gate_lines(&doc.gate);
    if !gate.is_empty() {
        o.push_str("<h2>Gate</h2><pre>");
        for line in gate.iter().filter(|l| !l.is_empty()) {
            let class = if line.contains("FAIL") || line.starts_with("gate failed") {
                "fail"
            } else {
                "pass"
            };
            let _ = writeln!(o, "<span class=\"{class}\">{}</span>", esc(line));
        }
        o.push_str("</pre>");
    }
    o.push_str("</body></html>\n");
    o
}

/// Text made safe for HTML.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Two bars, base over new, scaled to `max`.
fn bars(base: f64, new: f64, max: f64) -> String {
    let w = |v: f64| {
        if max > 0.0 {
            (v.max(0.0) / max * 100.0).min(100.0)
        } else {
            0.0
        }
    };
    format!(
        "<div class=\"bar b\" style=\"width:{:.1}%\"></div><div class=\"bar w\" style=\"width:{:.1}%\"></div>",
        w(base),
        w(new)
    )
}

/// `up` or `down` for the sign of a change in time (up is worse).
fn sign_class(d: f64) -> &'static str {
    if d > 0.0 {
        "up"
    } else {
        "down"
    }
}

fn parts(o: &mut String, title: &str, rows: &[PartDelta], name: impl Fn(&str) -> String) {
    let max = rows
        .iter()
        .map(|r| r.base_ns.unwrap_or(0.0).max(r.new_ns.unwrap_or(0.0)))
        .fold(0.0, f64::max);
    let _ = write!(o, "<h2>{}</h2><table><tr><th></th><th>base</th><th>new</th><th>Δ</th><th style=\"width:40%\"></th></tr>", esc(title));
    for r in rows {
        let (b, n) = (r.base_ns.unwrap_or(0.0), r.new_ns.unwrap_or(0.0));
        if b == 0.0 && n == 0.0 {
            continue;
        }
        let noise = if r.significant == Some(false) {
            " (noise)"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {}\">{}{noise}</td><td>{}</td></tr>",
            esc(&name(&r.category)),
            duration(b),
            duration(n),
            sign_class(r.delta_ns),
            signed_duration(r.delta_ns),
            bars(b, n, max)
        );
    }
    o.push_str("</table>");
}

fn items(o: &mut String, title: &str, rows: &[ItemDelta], ops: bool) {
    let top = &rows[..rows.len().min(TOP)];
    let max = top
        .iter()
        .map(|r| r.base_ns.max(r.new_ns))
        .fold(0.0, f64::max);
    let _ = write!(
        o,
        "<h2>{} ({} of {})</h2><table><tr><th>status</th><th>{}</th><th>calls</th><th>Δ per step</th><th style=\"width:30%\"></th></tr>",
        esc(title),
        top.len(),
        rows.len(),
        if ops { "operator" } else { "kernel (launched by)" }
    );
    for r in top {
        let mut key = esc(&ellipsis(&r.key.clone(), 160));
        if let Some(b) = &r.base_key {
            let _ = write!(key, "<br>was {}", esc(&ellipsis(b, 160)));
        }
        if let Some(l) = r.launcher.as_deref().filter(|_| !ops) {
            let _ = write!(key, "<br><small>{}</small>", esc(&ellipsis(l, 160)));
        }
        let calls = |v: Option<f64>| v.map_or("—".to_owned(), |c| format!("{c:.1}"));
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"k\">{key}</td><td class=\"n\">{} → {}</td><td class=\"n {}\">{}</td><td>{}</td></tr>",
            status(r),
            calls(r.calls.base),
            calls(r.calls.new),
            sign_class(r.delta_ns),
            signed_duration(r.delta_ns),
            bars(r.base_ns, r.new_ns, max)
        );
    }
    o.push_str("</table>");
}

fn counts(o: &mut String, doc: &DiffDocument) {
    o.push_str(
        "<h2>Deterministic counts per step</h2><table><tr><th></th><th>base</th><th>new</th></tr>",
    );
    for c in &doc.counts {
        let (b, n) = (c.value.base.unwrap_or(0.0), c.value.new.unwrap_or(0.0));
        if b == 0.0 && n == 0.0 {
            continue;
        }
        let f = |v: f64| {
            if c.metric == "memcpy.bytes" {
                bytes_f(v)
            } else {
                format!("{v:.1}")
            }
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&c.metric),
            f(b),
            f(n)
        );
    }
    o.push_str("</table>");
}

fn memory(o: &mut String, doc: &DiffDocument) {
    if doc.memory.devices.is_empty() {
        return;
    }
    o.push_str("<h2>Memory</h2><table><tr><th>device</th><th>peak allocated</th><th>growth per step</th></tr>");
    let b = |v: Option<f64>| v.map_or("—".to_owned(), bytes_f);
    for d in &doc.memory.devices {
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{} → {}</td><td class=\"n\">{} → {}</td></tr>",
            esc(&d.device),
            b(d.peak_bytes.base.map(|v| v as f64)),
            b(d.peak_bytes.new.map(|v| v as f64)),
            b(d.growth_bytes_per_step.base),
            b(d.growth_bytes_per_step.new)
        );
    }
    o.push_str("</table>");
}

fn findings(o: &mut String, doc: &DiffDocument) {
    let f = &doc.findings;
    o.push_str("<h2>Findings</h2><ul>");
    for (word, list) in [("new", &f.new), ("resolved", &f.resolved)] {
        for x in list {
            let _ = write!(
                o,
                "<li>{word} [{}] {} {}: {}</li>",
                x.severity.as_str(),
                esc(&x.id),
                esc(&x.rule),
                esc(&x.title)
            );
        }
    }
    for c in &f.changed {
        let word = match c.direction {
            FindingDirection::Worse => "worse",
            FindingDirection::Better => "better",
        };
        let _ = write!(
            o,
            "<li>{word} [{} → {}] {}: {}</li>",
            c.base_severity.as_str(),
            c.new_severity.as_str(),
            esc(&c.subject),
            esc(&c.title)
        );
    }
    o.push_str("</ul>");
}
