//! `kinetoscope diff BASE NEW`: the comparison of two runs as a terminal report
//! ([`to_table`]) or one self-contained HTML page ([`to_html`]); JSON is the document
//! itself. Every number shown is a field of [`DiffDocument`]; this module words the
//! verdicts and converts units.

mod gate;
mod html;
pub mod pstats;
mod words;

use std::fmt::Write;

use kinetoscope_analysis::diff::items::{ItemDelta, MatchCounts};
use kinetoscope_analysis::diff::parts::PartDelta;
use kinetoscope_analysis::diff::Change;
use kinetoscope_engine::diff::document::*;
use kinetoscope_engine::DiffDocument;

pub use gate::gate_lines;
pub use html::to_html;
use words::*;

use crate::format::{bytes_f, duration, percent};
use crate::tabular::{Tabular, Value};

/// The terminal report; `top` rows of the operator and kernel tables (0 = all).
pub fn to_table(doc: &DiffDocument, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kinetoscope diff: base {} → new {}",
        side(&doc.base),
        side(&doc.new)
    );
    out.push('\n');
    steps_section(&mut out, doc);
    parts_table(
        &mut out,
        "Where the time went (per step)",
        &doc.breakdown,
        part_name,
    );
    if !doc.phases.is_empty() {
        parts_table(&mut out, "Host phases (per step)", &doc.phases, |c| {
            c.to_owned()
        });
    }
    items_table(
        &mut out,
        "Operators",
        &doc.ops,
        &doc.matching.ops,
        top,
        true,
    );
    if !doc.kernels.is_empty() || doc.matching.kernels != MatchCounts::default() {
        items_table(
            &mut out,
            "Kernels",
            &doc.kernels,
            &doc.matching.kernels,
            top,
            false,
        );
    }
    counts_table(&mut out, doc);
    gpu_section(&mut out, &doc.gpu);
    memory_section(&mut out, &doc.memory);
    comm_section(&mut out, &doc.communication);
    findings_section(&mut out, &doc.findings);
    if let Some(p) = &doc.pstats {
        out.push('\n');
        pstats::section(&mut out, p, top);
    }
    for n in &doc.notes {
        let _ = writeln!(out, "note: {}", note(n));
    }
    for e in &doc.errors {
        let _ = writeln!(out, "error: {}: {}", e.path, e.error);
    }
    for line in gate_lines(&doc.gate) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `path (3 traces, saved report)`.
fn side(s: &SideInfo) -> String {
    let mut extra = Vec::new();
    if s.traces != 1 {
        extra.push(format!("{} traces", s.traces));
    }
    if s.from == SideFrom::SavedReport {
        extra.push(format!("saved report, schema {}", s.schema_version));
    }
    if extra.is_empty() {
        s.input.clone()
    } else {
        format!("{} ({})", s.input, extra.join(", "))
    }
}

/// Step distributions, the change and its verdict, and the machine.
fn steps_section(out: &mut String, doc: &DiffDocument) {
    let s = &doc.steps;
    let dist = |d: &Option<kinetoscope_analysis::stats::DurationStats>| match d {
        Some(d) => format!(
            "{} steps, median {}, p90 {}, CV {:.1} %",
            d.count,
            duration(d.median_ns),
            duration(d.p90_ns),
            percent(d.cv)
        ),
        None => "no steps".to_owned(),
    };
    let _ = writeln!(out, "Steps     base  {}", dist(&s.base));
    let _ = writeln!(out, "          new   {}", dist(&s.new));
    let _ = writeln!(out, "Change    {}", change_line(s));
    let m = &doc.machine;
    if let Some(line) = machine_line(m) {
        let _ = writeln!(out, "Machine   {line}");
    }
    out.push('\n');
}

/// A breakdown or phase table, ranked by |Δ|.
fn parts_table(out: &mut String, title: &str, rows: &[PartDelta], name: impl Fn(&str) -> String) {
    // Phases keep no per-step values: no significance column for them.
    let tested = rows.iter().any(|r| r.significant.is_some());
    let mut head = vec!["", "base", "new", "Δ", "Δ %"];
    if tested {
        head.push("significant");
    }
    let mut t = Tabular::new(head).titled(title);
    for r in rows {
        if r.base_ns.unwrap_or(0.0) == 0.0 && r.new_ns.unwrap_or(0.0) == 0.0 {
            continue;
        }
        let rel = match r.base_ns {
            Some(b) if b > 0.0 => signed_pct(r.delta_ns / b),
            _ => String::new(),
        };
        let mut row: Vec<Value> = vec![
            name(&r.category).into(),
            opt_duration(r.base_ns).into(),
            opt_duration(r.new_ns).into(),
            signed_duration(r.delta_ns).into(),
            rel.into(),
        ];
        if tested {
            row.push(match r.significant {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => Value::Empty,
            });
        }
        t.push(row);
    }
    out.push_str(&t.to_terminal());
    out.push('\n');
}

/// Operators or kernels, ranked by the size of their change.
fn items_table(
    out: &mut String,
    what: &str,
    rows: &[ItemDelta],
    m: &MatchCounts,
    top: usize,
    ops: bool,
) {
    let shown = if top == 0 {
        rows.len()
    } else {
        rows.len().min(top)
    };
    let title = format!(
        "{what} per step, by change ({shown} of {}): matched {} by {}, {} by name{}, {} added, {} removed, {} with other calls",
        rows.len(),
        m.by_key,
        if ops { "name and shapes" } else { "name and call path" },
        m.by_name,
        if ops { String::new() } else { format!(", {} by launching call (renamed)", m.by_launcher) },
        m.added,
        m.removed,
        m.calls_changed,
    );
    let head = if ops {
        ["status", "operator", "calls", "host", "device", "Δ time"]
    } else {
        [
            "status",
            "kernel",
            "calls",
            "launched by",
            "device",
            "Δ time",
        ]
    };
    let mut t = Tabular::new(head).titled(title);
    for r in rows.iter().take(shown) {
        let name = match (&r.base_key, r.match_kind) {
            (Some(b), Some(_)) => format!(
                "{}\n  was {}",
                ellipsis(&r.key.clone(), 70),
                ellipsis(b, 70)
            ),
            _ => ellipsis(&if ops { r.key.clone() } else { r.name.clone() }, 80),
        };
        let third: Value = if ops {
            change_pair(&r.host_ns, duration).into()
        } else {
            launcher_tail(r.launcher.as_deref().unwrap_or("")).into()
        };
        t.push(vec![
            status(r).into(),
            name.into(),
            calls_pair(&r.calls).into(),
            third,
            change_pair(&r.device_ns, duration).into(),
            signed_duration(r.delta_ns).into(),
        ]);
    }
    out.push_str(&t.to_terminal());
    out.push('\n');
}

/// Deterministic counts per step (those non-zero on either side).
fn counts_table(out: &mut String, doc: &DiffDocument) {
    let mut t = Tabular::new(["count per step", "base", "new", "Δ"])
        .titled("Deterministic counts (noise-free gates)");
    for c in &doc.counts {
        let (b, n) = (c.value.base.unwrap_or(0.0), c.value.new.unwrap_or(0.0));
        if b == 0.0 && n == 0.0 {
            continue;
        }
        let fmt = |v: f64| {
            if c.metric == "memcpy.bytes" {
                bytes_f(v)
            } else {
                format!("{v:.1}")
            }
        };
        let delta = n - b;
        t.push(vec![
            c.metric.clone().into(),
            fmt(b).into(),
            fmt(n).into(),
            format!("{}{}", if delta > 0.0 { "+" } else { "" }, fmt(delta)).into(),
        ]);
    }
    if !t.rows.is_empty() {
        out.push_str(&t.to_terminal());
        out.push('\n');
    }
}

/// GPU metrics, MFU and throughput.
fn gpu_section(out: &mut String, g: &GpuSection) {
    if !g.devices.is_empty() {
        let mut t = Tabular::new([
            "GPU",
            "utilization",
            "SM efficiency",
            "occupancy",
            "tensor cores",
        ])
        .titled("GPU");
        for d in &g.devices {
            t.push(vec![
                d.device.clone().into(),
                change_pair(&d.utilization, share).into(),
                change_pair(&d.sm_efficiency, share).into(),
                change_pair(&d.achieved_occupancy, share).into(),
                change_pair(&d.tensor_core_ratio, share).into(),
            ]);
        }
        out.push_str(&t.to_terminal());
    }
    if g.mfu.base.is_some() || g.mfu.new.is_some() {
        let _ = writeln!(out, "MFU       {}", change_pair(&g.mfu, share));
    }
    if let Some(tp) = &g.throughput {
        let unit = match tp.unit {
            ThroughputUnit::Samples => "samples/s",
            ThroughputUnit::Tokens => "tokens/s",
        };
        let rate = |v: f64| format!("{v:.1} {unit}");
        let rel = tp.value.relative().map(signed_pct).unwrap_or_default();
        let per_step = match tp.per_step_new {
            Some(n) => format!("{} → {n}", tp.per_step),
            None => tp.per_step.to_string(),
        };
        let _ = writeln!(
            out,
            "Throughput {} {rel} (at the median step, {per_step} per step{})",
            change_pair(&tp.value, rate),
            crate::report::items_source(&tp.source)
        );
    }
    if !g.devices.is_empty() || g.mfu.base.is_some() || g.throughput.is_some() {
        out.push('\n');
    }
}

/// Memory per device.
fn memory_section(out: &mut String, m: &MemorySection) {
    if m.devices.is_empty() {
        return;
    }
    let mut t = Tabular::new([
        "device",
        "peak allocated",
        "Δ",
        "peak reserved",
        "growth per step",
        "categories at peak (Δ)",
    ])
    .titled("Memory");
    for d in &m.devices {
        let cats: Vec<String> = d
            .categories
            .iter()
            .filter(|c| c.bytes.delta.unwrap_or(1) != 0)
            .map(|c| {
                format!(
                    "{} {}",
                    c.category,
                    signed_bytes(c.bytes.delta.map(|v| v as f64).unwrap_or(
                        c.bytes.new.unwrap_or(0) as f64 - c.bytes.base.unwrap_or(0) as f64
                    ))
                )
            })
            .collect();
        let to_f = |c: &Change<i64>| Change::of(c.base.map(|v| v as f64), c.new.map(|v| v as f64));
        t.push(vec![
            d.device.clone().into(),
            change_pair(&to_f(&d.peak_bytes), bytes_f).into(),
            d.peak_bytes
                .delta
                .map(|v| signed_bytes(v as f64))
                .unwrap_or_default()
                .into(),
            change_pair(&to_f(&d.reserved_bytes), bytes_f).into(),
            change_pair(&d.growth_bytes_per_step, bytes_f).into(),
            cats.join("\n").into(),
        ]);
    }
    out.push_str(&t.to_terminal());
    out.push('\n');
}

/// Communication, per rank, straggler.
fn comm_section(out: &mut String, c: &CommSection) {
    let some = |x: &Change<f64>| x.base.unwrap_or(0.0) > 0.0 || x.new.unwrap_or(0.0) > 0.0;
    if !some(&c.communication_ns) && !some(&c.exposed_ns) && c.ranks.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Communication  per step: host time in collectives {}, exposed {}",
        change_pair(&c.communication_ns, duration),
        change_pair(&c.exposed_ns, duration)
    );
    if some(&c.kernel_ns) {
        let _ = writeln!(
            out,
            "               communication kernels {}, overlapped with computation {}",
            change_pair(&c.kernel_ns, duration),
            change_pair(&c.overlap_share, share)
        );
    }
    if !c.ranks.is_empty() {
        let mut t = Tabular::new([
            "rank",
            "median step",
            "Δ",
            "collectives per step",
            "exposed per step",
        ]);
        for r in &c.ranks {
            t.push(vec![
                r.rank.into(),
                change_pair(&r.step_median_ns, duration).into(),
                r.step_median_ns
                    .delta
                    .map(signed_duration)
                    .unwrap_or_default()
                    .into(),
                change_pair(&r.communication_ns, duration).into(),
                change_pair(&r.exposed_ns, duration).into(),
            ]);
        }
        out.push_str(&t.to_terminal());
    }
    if c.straggler.base.is_some() || c.straggler.new.is_some() {
        let r = |v: Option<i64>| v.map_or("none".to_owned(), |r| format!("rank {r}"));
        let _ = writeln!(
            out,
            "Straggler  {} → {}",
            r(c.straggler.base),
            r(c.straggler.new)
        );
    }
    out.push('\n');
}

/// New, resolved, worse and better findings.
fn findings_section(out: &mut String, f: &FindingsSection) {
    let _ = writeln!(
        out,
        "Findings  {} new, {} resolved, {} worse, {} better",
        f.new.len(),
        f.resolved.len(),
        f.changed
            .iter()
            .filter(|c| c.direction == FindingDirection::Worse)
            .count(),
        f.changed
            .iter()
            .filter(|c| c.direction == FindingDirection::Better)
            .count()
    );
    for (word, list) in [("new", &f.new), ("resolved", &f.resolved)] {
        for x in list {
            let rank = x.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {word:<9} [{}] {} {}{rank}: {}",
                x.severity.as_str(),
                x.id,
                x.rule,
                x.title
            );
        }
    }
    for c in &f.changed {
        let word = match c.direction {
            FindingDirection::Worse => "worse",
            FindingDirection::Better => "better",
        };
        let _ = writeln!(
            out,
            "  {word:<9} [{} → {}] {}: {} ({} per step)",
            c.base_severity.as_str(),
            c.new_severity.as_str(),
            c.subject,
            c.title,
            change_pair(&c.impact_ns_per_step, duration)
        );
    }
    out.push('\n');
}
