//! `kinetoscope perf`: the performance model as terminal tables (per trace the family
//! summary, then the rows ranked by time lost), CSV (one table of all rows, the JSON
//! keys as columns) or the JSON document (`docs/json.md`).

use kinetoscope_analysis::perf::devices::Units;
use kinetoscope_analysis::perf::family::Family;
use kinetoscope_analysis::perf::flops::Precision;
use kinetoscope_analysis::perf::{Bound, PeakSource, PerfOptions, PerfRow, PerfTable};
use kinetoscope_engine::Document;

use crate::format::percent;
use crate::ops::clip;
use crate::tabular::{Tabular, Value};

/// Everything `kinetoscope perf` shows for one input path.
pub type PerfDocument = Document<PerfTable, PerfOptions>;

/// The family's name as in the JSON.
pub fn family_name(f: Family) -> &'static str {
    match f {
        Family::Gemm => "gemm",
        Family::Attention => "attention",
        Family::Conv => "conv",
        Family::Elementwise => "elementwise",
        Family::Reduction => "reduction",
        Family::Normalization => "normalization",
        Family::Softmax => "softmax",
        Family::EmbeddingIndex => "embedding_index",
        Family::Optimizer => "optimizer",
        Family::Other => "other",
    }
}

/// The bound's name as in the JSON.
pub fn bound_name(b: Bound) -> &'static str {
    match b {
        Bound::Compute => "compute",
        Bound::Memory => "memory",
    }
}

/// `matrix_bf16`, `vector_fp32`, … (TraceLens's "Compute Spec").
pub fn spec(units: Option<Units>, p: Option<Precision>) -> String {
    let (Some(u), Some(p)) = (units, p) else {
        return String::new();
    };
    let u = match u {
        Units::Matrix => "matrix",
        Units::Vector => "vector",
    };
    let p = match p {
        Precision::Fp64 => "fp64",
        Precision::Fp32 => "fp32",
        Precision::Tf32 => "tf32",
        Precision::Bf16 => "bf16",
        Precision::Fp8 => "fp8",
    };
    format!("{u}_{p}")
}

fn opt(v: Option<f64>, decimals: usize) -> Value {
    v.map_or(Value::Empty, |v| Value::float(v, decimals))
}

fn source_words(t: &PerfTable) -> String {
    match (t.peak_source, &t.peaks) {
        (PeakSource::Override, _) => "peaks from --peak-tflops / --peak-tbps".to_owned(),
        (PeakSource::Table, Some(p)) => format!("peaks of {} (docs/devices.md)", p.model),
        _ => "no peaks for this device".to_owned(),
    }
}

/// Render as terminal tables, two per trace.
pub fn to_table(doc: &PerfDocument) -> String {
    let mut out = String::new();
    for t in &doc.traces {
        let rank = t.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        let device = t.device.as_deref().unwrap_or("no GPU recorded");
        let mut fam = Tabular::new([
            "Family",
            "Rows",
            "Calls",
            "Kernel µs",
            "Share %",
            "GFLOP",
            "GB",
            "TFLOP/s",
            "TB/s",
            "Lost µs",
        ])
        .titled(format!(
            "{}{rank}: perf model on {device}, {}",
            t.path,
            source_words(t)
        ));
        for f in &t.families {
            fam.push(vec![
                family_name(f.family).into(),
                Value::from(f.rows),
                Value::from(f.calls),
                Value::float(f.kernel_us, 1),
                Value::float(percent(f.kernel_share), 1),
                Value::float(f.gflop, 2),
                Value::float(f.bytes / 1e9, 3),
                opt(f.tflops, 2),
                opt(f.tbps, 3),
                Value::float(f.lost_us, 1),
            ]);
        }
        out.push_str(&fam.to_terminal());
        let mut rows = Tabular::new([
            "Family",
            "Operator",
            "Input dims",
            "Calls",
            "GFLOP/call",
            "MB/call",
            "FLOP/B",
            "Kernel µs",
            "Mean µs",
            "TFLOP/s",
            "TB/s",
            "Peak",
            "Bound",
            "Roofline %",
            "Lost µs",
        ])
        .titled(format!(
            "{} of {} rows, ranked by time lost against the roofline",
            t.rows.len(),
            t.total_rows
        ));
        for r in &t.rows {
            rows.push(table_row(r));
        }
        out.push_str(&rows.to_terminal());
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

fn table_row(r: &PerfRow) -> Vec<Value> {
    let peak = match (r.peak_tflops, r.peak_tbps) {
        (Some(p), Some(w)) => format!("{p} TF, {w} TB/s"),
        (Some(p), None) => format!("{p} TF"),
        (None, Some(w)) => format!("{w} TB/s"),
        _ => String::new(),
    };
    let (tflops, tbps) = if r.above_peak {
        (Value::from("above peak"), Value::from("above peak"))
    } else {
        (opt(r.tflops, 2), opt(r.tbps, 3))
    };
    vec![
        family_name(r.family).into(),
        clip(&r.name, 40).into(),
        clip(&r.input_dims, 40).into(),
        Value::from(r.calls),
        opt(r.gflop_per_call, 4),
        opt(r.bytes_per_call.map(|b| b / 1e6), 2),
        opt(r.flop_per_byte, 1),
        Value::float(r.kernel_us, 1),
        Value::float(r.kernel_us_mean, 1),
        tflops,
        tbps,
        peak.into(),
        r.bound.map_or(Value::Empty, |b| bound_name(b).into()),
        opt(r.roofline_fraction.map(percent), 1),
        opt(r.lost_us, 1),
    ]
}

/// Render all traces' rows as one CSV table, the JSON row keys as columns.
pub fn to_csv(doc: &PerfDocument) -> String {
    let mut table = Tabular::new([
        "path",
        "rank",
        "family",
        "name",
        "input_dims",
        "dtypes",
        "concrete_inputs",
        "calls",
        "direct",
        "gflop_per_call",
        "bytes_per_call",
        "flop_per_byte",
        "kernel_us",
        "kernel_us_mean",
        "tflops",
        "tbps",
        "compute_spec",
        "peak_tflops",
        "peak_tbps",
        "bound",
        "roofline_fraction",
        "lost_us",
        "above_peak",
    ]);
    for t in &doc.traces {
        for r in &t.rows {
            table.push(vec![
                t.path.as_str().into(),
                t.rank.map_or(Value::Empty, Value::from),
                family_name(r.family).into(),
                r.name.as_str().into(),
                r.input_dims.as_str().into(),
                r.dtypes.as_str().into(),
                r.concrete_inputs.as_str().into(),
                Value::from(r.calls),
                r.direct.to_string().into(),
                opt(r.gflop_per_call, 6),
                opt(r.bytes_per_call, 0),
                opt(r.flop_per_byte, 3),
                Value::float(r.kernel_us, 3),
                Value::float(r.kernel_us_mean, 3),
                opt(r.tflops, 3),
                opt(r.tbps, 3),
                spec(r.units, r.precision).into(),
                opt(r.peak_tflops, 2),
                opt(r.peak_tbps, 3),
                r.bound.map_or(Value::Empty, |b| bound_name(b).into()),
                opt(r.roofline_fraction, 4),
                opt(r.lost_us, 3),
                r.above_peak.to_string().into(),
            ]);
        }
    }
    table.to_csv()
}
