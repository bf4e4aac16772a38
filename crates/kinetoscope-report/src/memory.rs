//! `kinetoscope memory`: a terminal report, CSV tables and a versioned JSON document.
//!
//! Terminal: per trace and device, the peaks, a sparkline of allocated memory, the
//! per-operator statistics and the allocation events (or one table with `--table`).
//! CSV: one table for all traces and devices, sizes in bytes and times in ns since the
//! trace's first event. JSON: every field of [`MemoryView`] (`docs/json.md`).

use kinetoscope_analysis::memory::modules::{ModuleBytes, ModulesAtPeak};
use kinetoscope_analysis::memory::step_pattern::{MemoryPattern, StepPattern};
use kinetoscope_analysis::memory::{
    op_context, Allocation, CurveKind, CurvePoint, DeviceMemory, MemoryView, OpMemoryStats, Peak,
};
use kinetoscope_engine::MemoryDocument;

use crate::format::{bytes_f, count, duration};
use crate::tabular::{Tabular, Value};

/// Which table to write as CSV (or alone on the terminal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryTable {
    /// The down-sampled curves.
    Curve,
    /// The allocation events.
    Events,
    /// The per-operator statistics.
    Operators,
    /// The bytes live at the allocated peak by `nn.Module`.
    Modules,
}

/// Signed bytes in binary units (`-1.5 KiB`).
fn signed_bytes(b: i64) -> String {
    bytes_f(b as f64)
}

/// The per-step pattern in one line.
pub fn step_pattern_line(p: &StepPattern) -> String {
    let n = p.steps.len();
    match (p.verdict, &p.largest_spike) {
        (MemoryPattern::GradualIncrease, _) => format!(
            "gradual increase: the trough rises by {} per step over {n} steps ({} in all): \
             memory is kept across steps (leak signature; `kinetoscope report` says where \
             and what to change)",
            bytes_f(p.growth_per_step_bytes),
            bytes_f(p.trough_growth_bytes as f64)
        ),
        (MemoryPattern::SuddenSpike, Some(s)) => format!(
            "sudden spike: {} peaks at {}, {:.1}× the median step peak ({})",
            s.step,
            bytes_f(s.peak_bytes as f64),
            s.ratio,
            bytes_f(p.median_peak_bytes)
        ),
        _ => format!(
            "stable: troughs move {} over {n} steps, peaks within 1.5× of the median",
            bytes_f(p.trough_growth_bytes as f64)
        ),
    }
}

/// Milliseconds since `origin`, as a float cell.
fn ms_since(ts_ns: i64, origin: i64) -> Value {
    Value::float((ts_ns - origin) as f64 / 1e6, 3)
}

/// Right-align text cells of the given columns by padding them to one width.
fn right_align(t: &mut Tabular, cols: &[usize]) {
    for &c in cols {
        let w = t
            .rows
            .iter()
            .filter_map(|r| match &r[c] {
                Value::Text(s) => Some(s.chars().count()),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            .max(t.headers[c].chars().count());
        for r in &mut t.rows {
            if let Value::Text(s) = &mut r[c] {
                *s = format!("{s:>w$}");
            }
        }
    }
}

/// A one-line sparkline of allocated bytes over time.
fn sparkline(points: &[CurvePoint], width: usize) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return String::new();
    };
    let span = (last.ts_ns - first.ts_ns).max(1) as i128;
    let mut cols: Vec<Option<i64>> = vec![None; width];
    for p in points {
        let c = ((p.ts_ns - first.ts_ns) as i128 * (width as i128 - 1) / span) as usize;
        cols[c] = Some(cols[c].map_or(p.allocated_bytes, |v| v.max(p.allocated_bytes)));
    }
    let mut prev = first.allocated_bytes;
    let values: Vec<i64> = cols
        .into_iter()
        .map(|c| {
            let v = c.unwrap_or(prev);
            prev = v;
            v
        })
        .collect();
    let lo = values.iter().copied().min().unwrap_or(0).min(0);
    let hi = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| {
            if hi <= lo {
                LEVELS[0]
            } else {
                LEVELS[(((v - lo) as f64 / (hi - lo) as f64) * 7.0).round() as usize]
            }
        })
        .collect()
}

fn peak_line(label: &str, p: &Peak, origin: i64, share_of_capacity: Option<f64>) -> String {
    let op =
        p.op.as_deref()
            .map(|o| format!(" in {}", op_context(Some(o), p.parent_op.as_deref())))
            .unwrap_or_else(|| " (outside any operator)".to_owned());
    let of_capacity = share_of_capacity
        .map(|share| format!(" ({:.1} % of capacity)", 100.0 * share))
        .unwrap_or_default();
    format!(
        "  {label:<15} {}{of_capacity} at +{:.3} ms{op}\n",
        signed_bytes(p.bytes),
        (p.ts_ns - origin) as f64 / 1e6
    )
}

fn operators_table(d: &DeviceMemory) -> Tabular {
    let mut t = Tabular::new([
        "Operator",
        "Calls",
        "Size increase",
        "Self increase",
        "Allocs",
        "Self allocs",
        "Alloc size",
        "Self alloc size",
    ]);
    for s in &d.operators {
        t.push(vec![
            s.name.clone().into(),
            s.calls.into(),
            signed_bytes(s.size_increase_bytes).into(),
            signed_bytes(s.self_size_increase_bytes).into(),
            s.allocation_count.into(),
            s.self_allocation_count.into(),
            signed_bytes(s.allocation_size_bytes).into(),
            signed_bytes(s.self_allocation_size_bytes).into(),
        ]);
    }
    right_align(&mut t, &[2, 3, 6, 7]);
    t
}

/// Text of a module row's name.
fn module_label(m: &ModuleBytes) -> String {
    m.module
        .clone()
        .unwrap_or_else(|| "(outside any nn.Module)".to_owned())
}

fn modules_table(m: &ModulesAtPeak) -> Tabular {
    let mut t = Tabular::new(["Module", "Live at peak", "Allocations", "% of peak"]);
    for r in &m.rows {
        t.push(vec![
            module_label(r).into(),
            signed_bytes(r.bytes).into(),
            r.allocations.into(),
            Value::float(100.0 * r.share_of_peak, 1),
        ]);
    }
    right_align(&mut t, &[1]);
    t
}

fn allocations_table(d: &DeviceMemory, origin: i64) -> Tabular {
    let mut t = Tabular::new([
        "Operator",
        "Size",
        "Allocated (ms)",
        "Released (ms)",
        "Lifetime",
        "Released in",
    ]);
    for a in &d.allocations.rows {
        t.push(vec![
            op_context(a.op.as_deref(), a.parent_op.as_deref()).into(),
            signed_bytes(a.bytes).into(),
            a.alloc_ns.map_or(Value::Empty, |v| ms_since(v, origin)),
            a.release_ns.map_or(Value::Empty, |v| ms_since(v, origin)),
            a.lifetime_ns
                .map_or(Value::Empty, |v| duration(v as f64).into()),
            a.release_op.clone().map_or(Value::Empty, Value::from),
        ]);
    }
    right_align(&mut t, &[1, 4]);
    t
}

fn curve_table(d: &DeviceMemory, origin: i64) -> Tabular {
    let mut t = Tabular::new(["Time (ms)", "Allocated", "Reserved"]);
    for p in &d.curve.points {
        t.push(vec![
            ms_since(p.ts_ns, origin),
            signed_bytes(p.allocated_bytes).into(),
            p.reserved_bytes
                .map_or(Value::Empty, |r| signed_bytes(r).into()),
        ]);
    }
    right_align(&mut t, &[1, 2]);
    t
}

fn cut_note(shown: usize, total: usize) -> String {
    if shown < total {
        format!(" (first {shown} of {})", count(total as u64))
    } else {
        String::new()
    }
}

fn device_section(d: &DeviceMemory, origin: i64, only: Option<MemoryTable>) -> String {
    let mut out = String::new();
    let oom = if d.out_of_memory_events > 0 {
        format!(" · {} out-of-memory events", count(d.out_of_memory_events))
    } else {
        String::new()
    };
    let capacity = d
        .capacity_bytes
        .map(|c| format!(" · capacity {}", crate::format::bytes(c)))
        .unwrap_or_default();
    out.push_str(&format!(
        "{} · {} records{capacity}{oom}\n",
        d.device,
        count(d.records)
    ));
    let net = d.curve.kind == CurveKind::NetSinceStart;
    if let Some(p) = &d.peak_allocated {
        let label = if net {
            "peak net alloc"
        } else {
            "peak allocated"
        };
        out.push_str(&peak_line(
            label,
            p,
            origin,
            d.peak_allocated_share_of_capacity,
        ));
    }
    if let Some(p) = &d.peak_reserved {
        out.push_str(&peak_line(
            "peak reserved",
            p,
            origin,
            d.peak_reserved_share_of_capacity,
        ));
    }
    if let (Some(first), Some(last)) = (d.curve.points.first(), d.curve.points.last()) {
        out.push_str(&format!(
            "  {:<15} {}  +{:.1} → +{:.1} ms{}\n",
            if net { "net allocated" } else { "allocated" },
            sparkline(&d.curve.points, 48),
            (first.ts_ns - origin) as f64 / 1e6,
            (last.ts_ns - origin) as f64 / 1e6,
            if net {
                " (Σ Bytes since profiling started; no totals recorded)"
            } else {
                ""
            }
        ));
    }
    let show = |t: MemoryTable| only.is_none_or(|o| o == t);
    if show(MemoryTable::Curve) && only.is_some() {
        out.push('\n');
        let sampled = if d.curve.downsampled {
            format!(
                " ({} of {} points, each bucket's min and max kept)",
                d.curve.points.len(),
                count(d.curve.raw_points as u64)
            )
        } else {
            String::new()
        };
        out.push_str(
            &curve_table(d, origin)
                .titled(format!("{} memory curve{sampled}", d.device))
                .to_terminal(),
        );
    }
    if show(MemoryTable::Operators) && !d.operators.is_empty() {
        out.push('\n');
        out.push_str(
            &operators_table(d)
                .titled(format!(
                    "{} operators (sizes and counts include child operators unless \"Self\"){}",
                    d.device,
                    cut_note(d.operators.len(), d.operators_total)
                ))
                .to_terminal(),
        );
    }
    match (&d.modules_at_peak, only) {
        (Some(m), Some(MemoryTable::Modules)) | (Some(m), None) => {
            out.push('\n');
            let before = m.peak_bytes - m.traced_bytes;
            let before = if before > 0 {
                format!(" · {} allocated before profiling", signed_bytes(before))
            } else {
                String::new()
            };
            out.push_str(
                &modules_table(m)
                    .titled(format!(
                        "{} memory by nn.Module at the peak ({}){before}",
                        d.device,
                        signed_bytes(m.peak_bytes)
                    ))
                    .to_terminal(),
            );
        }
        (None, Some(MemoryTable::Modules)) => out.push_str(&format!(
            "\n{}: no allocation inside an nn.Module frame: record with with_stack=True or \
             with_modules=True (and profile_memory=True)\n",
            d.device
        )),
        _ => {}
    }
    let a = &d.allocations;
    if show(MemoryTable::Events) && !a.rows.is_empty() {
        out.push('\n');
        out.push_str(
            &allocations_table(d, origin)
                .titled(format!(
                    "{} allocations: {} paired, {} not freed while profiling, {} frees of earlier allocations{}",
                    d.device,
                    count(a.paired as u64),
                    count(a.unreleased as u64),
                    count(a.unmatched_frees as u64),
                    cut_note(a.rows.len(), a.total_rows)
                ))
                .to_terminal(),
        );
    }
    out
}

fn trace_section(v: &MemoryView, only: Option<MemoryTable>) -> String {
    let mut out = format!("trace    {}\n", v.path);
    if v.records > 0 {
        let oom = if v.out_of_memory_events > 0 {
            format!(" · {} [OutOfMemory] events", count(v.out_of_memory_events))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "records  {} [memory] events · {} with address · {} outside any operator{oom}\n",
            count(v.records),
            count(v.records_with_addr),
            count(v.unattributed_records)
        ));
    }
    for n in &v.notes {
        out.push_str(&format!("note     {}\n", crate::note::text(n)));
    }
    for d in &v.devices {
        out.push('\n');
        out.push_str(&device_section(d, v.origin_ns, only));
        if let (Some(p), None) = (&d.step_pattern, only) {
            out.push_str(&format!(
                "{} per step: {}\n",
                d.device,
                step_pattern_line(p)
            ));
        }
        if let (Some(c), None) = (&d.categories, only) {
            out.push('\n');
            out.push_str(&crate::memory_timeline::inferred_section(
                &d.device,
                c,
                v.origin_ns,
            ));
        }
        if let (Some(c), Some(MemoryTable::Curve)) = (&d.categories, only) {
            out.push('\n');
            out.push_str(&crate::memory_timeline::series_table(
                &c.series,
                v.origin_ns,
                &format!("{} bytes per inferred category over time", d.device),
            ));
        }
    }
    if let (Some(c), None) = (&v.timeline_comparison, only) {
        out.push('\n');
        out.push_str(&crate::memory_timeline::comparison_section(c, v.origin_ns));
    }
    out
}

/// Render as a terminal report; `only` shows just one table per device.
pub fn to_table(doc: &MemoryDocument, only: Option<MemoryTable>) -> String {
    let mut out = String::new();
    if !doc.phase_memory.is_empty() && only.is_none() {
        out.push_str(&crate::run_folder::phases_section(
            &doc.input,
            &doc.phase_memory,
        ));
        out.push('\n');
    }
    for (i, v) in doc.traces.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&trace_section(v, only));
    }
    for e in &doc.errors {
        out.push_str(&format!("error: {}\n", e.error));
    }
    out
}

fn with_trace(multi: bool, v: &MemoryView, d: &DeviceMemory, mut row: Vec<Value>) -> Vec<Value> {
    let mut front: Vec<Value> = Vec::with_capacity(row.len() + 2);
    if multi {
        front.push(v.path.clone().into());
    }
    front.push(d.device.clone().into());
    front.append(&mut row);
    front
}

fn headers(multi: bool, rest: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = Vec::new();
    if multi {
        h.push("trace".into());
    }
    h.push("device".into());
    h.extend(rest.iter().map(|s| s.to_string()));
    h
}

fn op_row(s: &OpMemoryStats) -> Vec<Value> {
    vec![
        s.name.clone().into(),
        s.calls.into(),
        s.size_increase_bytes.into(),
        s.self_size_increase_bytes.into(),
        s.allocation_count.into(),
        s.self_allocation_count.into(),
        s.allocation_size_bytes.into(),
        s.self_allocation_size_bytes.into(),
    ]
}

fn event_row(a: &Allocation, origin: i64) -> Vec<Value> {
    let opt = |v: Option<i64>| v.map_or(Value::Empty, Value::Int);
    let text = |v: &Option<String>| v.clone().map_or(Value::Empty, Value::Text);
    vec![
        op_context(a.op.as_deref(), a.parent_op.as_deref()).into(),
        text(&a.op),
        text(&a.parent_op),
        text(&a.release_op),
        a.bytes.into(),
        Value::Text(format!("0x{:x}", a.addr)),
        opt(a.alloc_ns.map(|t| t - origin)),
        opt(a.release_ns.map(|t| t - origin)),
        opt(a.lifetime_ns),
    ]
}

/// Render one table as CSV: sizes in bytes, times in ns since the trace's first event.
/// Columns start with `trace` (folders only) and `device`.
pub fn to_csv(doc: &MemoryDocument, table: MemoryTable) -> String {
    let multi = doc.multi();
    let mut t = Tabular::new(match table {
        MemoryTable::Operators => headers(
            multi,
            &[
                "operator",
                "calls",
                "size_increase_bytes",
                "self_size_increase_bytes",
                "allocation_count",
                "self_allocation_count",
                "allocation_size_bytes",
                "self_allocation_size_bytes",
            ],
        ),
        MemoryTable::Events => headers(
            multi,
            &[
                "operator_context",
                "operator",
                "parent_operator",
                "release_operator",
                "size_bytes",
                "addr",
                "alloc_since_start_ns",
                "release_since_start_ns",
                "lifetime_ns",
            ],
        ),
        MemoryTable::Modules => headers(
            multi,
            &[
                "module",
                "live_bytes_at_peak",
                "allocations",
                "share_of_peak",
            ],
        ),
        MemoryTable::Curve => headers(
            multi,
            &[
                "kind",
                "time_since_start_ns",
                "allocated_bytes",
                "reserved_bytes",
            ],
        ),
    });
    for v in &doc.traces {
        for d in &v.devices {
            match table {
                MemoryTable::Operators => {
                    for s in &d.operators {
                        t.push(with_trace(multi, v, d, op_row(s)));
                    }
                }
                MemoryTable::Events => {
                    for a in &d.allocations.rows {
                        t.push(with_trace(multi, v, d, event_row(a, v.origin_ns)));
                    }
                }
                MemoryTable::Modules => {
                    for m in d.modules_at_peak.iter().flat_map(|m| &m.rows) {
                        let row = vec![
                            m.module.clone().map_or(Value::Empty, Value::Text),
                            m.bytes.into(),
                            m.allocations.into(),
                            Value::float(m.share_of_peak, 4),
                        ];
                        t.push(with_trace(multi, v, d, row));
                    }
                }
                MemoryTable::Curve => {
                    let kind = match d.curve.kind {
                        CurveKind::Recorded => "recorded",
                        CurveKind::NetSinceStart => "net_since_start",
                        CurveKind::Empty => "empty",
                    };
                    for p in &d.curve.points {
                        let row = vec![
                            kind.into(),
                            (p.ts_ns - v.origin_ns).into(),
                            p.allocated_bytes.into(),
                            p.reserved_bytes.map_or(Value::Empty, Value::Int),
                        ];
                        t.push(with_trace(multi, v, d, row));
                    }
                }
            }
        }
    }
    t.to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scales_to_the_peak() {
        let p = |t, a| CurvePoint {
            ts_ns: t,
            allocated_bytes: a,
            reserved_bytes: None,
        };
        let s = sparkline(&[p(0, 0), p(50, 100), p(100, 0)], 5);
        assert_eq!(s.chars().count(), 5);
        assert!(s.contains('█'));
        assert!(s.starts_with('▁'));
        assert_eq!(sparkline(&[], 5), "");
    }

    #[test]
    fn signed_sizes() {
        assert_eq!(signed_bytes(-1536), "-1.5 KiB");
        assert_eq!(signed_bytes(512), "512 B");
    }
}
