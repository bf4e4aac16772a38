//! `kinetoscope memory TIMELINE`: a profiler memory timeline file (per-category bytes
//! over time, the peak and each category there), and the category sections shared with
//! the trace view: the inferred per-category breakdown and the side-by-side comparison
//! with PyTorch's own timeline.

use kinetoscope_analysis::memory::categories::InferredCategories;
use kinetoscope_analysis::memory::timeline::{CategoryComparison, CategorySeries};
use kinetoscope_engine::TimelineDocument;
use kinetoscope_trace::TimelineFormat;

use crate::format::count;
use crate::tabular::{Tabular, Value};

fn bytes(b: i64) -> String {
    let s = crate::format::bytes(b.unsigned_abs());
    if b < 0 {
        format!("-{s}")
    } else {
        s
    }
}

/// The peak line and the per-category table at the peak.
pub fn peak_breakdown(series: &CategorySeries, origin_ns: i64, title: &str) -> String {
    let Some(peak) = &series.peak else {
        return format!("{title}: no points\n");
    };
    let mut t = Tabular::new(["Category", "At peak", "% of peak", "Own maximum"]);
    let pct = |k: usize| {
        peak.share_by_category
            .as_ref()
            .map_or(Value::Empty, |p| Value::float(100.0 * p[k], 1))
    };
    for (k, name) in series.categories.iter().enumerate() {
        t.push(vec![
            name.clone().into(),
            bytes(peak.by_category[k]).into(),
            pct(k),
            bytes(series.max_by_category[k]).into(),
        ]);
    }
    t.push(vec![
        "total".into(),
        bytes(peak.total_bytes).into(),
        if peak.share_by_category.is_some() {
            Value::float(100.0, 1)
        } else {
            Value::Empty
        },
        Value::Empty,
    ]);
    format!(
        "  peak            {} at +{:.3} ms\n\n{}",
        bytes(peak.total_bytes),
        (peak.ts_ns - origin_ns) as f64 / 1e6,
        t.titled(title.to_owned()).to_terminal()
    )
}

/// Per-category bytes over time, one row per kept point.
pub fn series_table(series: &CategorySeries, origin_ns: i64, title: &str) -> String {
    let mut headers = vec!["Time (ms)".to_owned()];
    headers.extend(series.categories.iter().cloned());
    headers.push("total".to_owned());
    let mut t = Tabular::new(headers);
    for (p, total) in series.points.iter().zip(&series.totals) {
        let mut row: Vec<Value> = vec![Value::float((p.ts_ns - origin_ns) as f64 / 1e6, 3)];
        row.extend(p.bytes.iter().map(|b| Value::Int(*b)));
        row.push(Value::Int(*total));
        t.push(row);
    }
    let sampled = if series.downsampled {
        format!(
            " ({} of {} points, each bucket's lowest and highest total kept)",
            series.points.len(),
            count(series.raw_points as u64)
        )
    } else {
        String::new()
    };
    t.titled(format!("{title}, bytes{sampled}")).to_terminal()
}

/// The terminal report of a timeline file.
pub fn to_table(doc: &TimelineDocument, with_points: bool) -> String {
    let v = &doc.view;
    let form = match v.format {
        TimelineFormat::Coalesced => "coalesced .json",
        TimelineFormat::Raw => "raw .raw.json.gz",
    };
    let mut out = format!(
        "memory timeline {}\n  format          {form} · {} rows{} · {} timestamps\n  span            {:.3} ms\n",
        v.path,
        count(v.rows as u64),
        if v.preexisting_rows > 0 {
            format!(" ({} before profiling)", count(v.preexisting_rows as u64))
        } else {
            String::new()
        },
        count(v.series.raw_points as u64),
        (v.end_ns - v.origin_ns) as f64 / 1e6
    );
    out.push_str(&peak_breakdown(
        &v.series,
        v.origin_ns,
        "bytes per category at the peak (PyTorch's labels)",
    ));
    if with_points {
        out.push('\n');
        out.push_str(&series_table(
            &v.series,
            v.origin_ns,
            "bytes per category over time",
        ));
    } else {
        out.push_str("  (per-category bytes over time: --table curve, or --format json)\n");
    }
    out
}

/// The inferred-categories section of one device in the trace view.
pub fn inferred_section(device: &str, inf: &InferredCategories, origin_ns: i64) -> String {
    let mut out = peak_breakdown(
        &inf.series,
        origin_ns,
        &format!(
            "{device} bytes per category at the peak (inferred: {})",
            inf.method
        ),
    );
    if inf.records_without_totals > 0 {
        out.push_str(&format!(
            "  {} records without Total Allocated: untracked bytes not updated there\n",
            count(inf.records_without_totals)
        ));
    }
    out
}

/// PyTorch's timeline next to kinetoscope's inferred categories.
pub fn comparison_section(c: &CategoryComparison, origin_ns: i64) -> String {
    let mut t = Tabular::new([
        "Category",
        "PyTorch timeline at its peak",
        "kinetoscope at its peak",
        "kinetoscope at the timeline's peak time",
    ]);
    for (k, name) in c.categories.iter().enumerate() {
        t.push(vec![
            name.clone().into(),
            bytes(c.timeline_peak.by_category[k]).into(),
            bytes(c.inferred_peak.by_category[k]).into(),
            bytes(c.inferred_at_timeline_peak[k]).into(),
        ]);
    }
    t.push(vec![
        "total".into(),
        bytes(c.timeline_peak.total_bytes).into(),
        bytes(c.inferred_peak.total_bytes).into(),
        bytes(c.inferred_at_timeline_peak_total).into(),
    ]);
    t.push(vec![
        "peak time (ms)".into(),
        Value::float((c.timeline_peak.ts_ns - origin_ns) as f64 / 1e6, 3),
        Value::float((c.inferred_peak.ts_ns - origin_ns) as f64 / 1e6, 3),
        Value::float((c.timeline_peak.ts_ns - origin_ns) as f64 / 1e6, 3),
    ]);
    let mut out = t
        .titled(format!(
            "{} categories: PyTorch's memory timeline ({}) vs kinetoscope's inference",
            c.device, c.timeline
        ))
        .to_terminal();
    out.push_str(
        "  PyTorch labels tensors by data flow and counts those alive before profiling\n           (parameters, optimizer state, inputs); kinetoscope labels allocations by lifetime\n           and sees memory from before profiling only as `untracked` (Total Allocated minus\n           what it labelled), so totals and labels can differ.\n",
    );
    out
}
