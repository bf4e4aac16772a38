//! The performance model (`kinetoscope perf`): per operator + input dims + dtypes +
//! concrete inputs, the family, GFLOP and bytes per call, arithmetic intensity, kernel
//! time, achieved TFLOP/s and TB/s, the peaks they are judged against, the roofline
//! bound, the fraction of the roofline reached and the time lost against it; rows
//! ranked by time lost, with a per-family summary.
//!
//! Which calls are measured and how: [`calls`]; FLOPs and bytes: [`work`]; peaks:
//! [`devices`]; the definitions and TraceLens's: `docs/metrics.md`.

mod calls;
pub mod devices;
pub mod family;
pub mod flops;
pub mod gemm;
mod roofline;
pub mod work;

use kinetoscope_trace::{StrId, Trace};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::note::Note;
use crate::ops::group::canonical_shape;
use crate::ops::tree::NONE;
use crate::ops::OperatorTree;
use devices::{gpu_peak, GpuPeak, Units};
use family::{family_of, formula, Family};
use flops::Precision;
use work::{work, Inputs, Work};

pub use roofline::Bound;

/// Options of the perf view.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerfOptions {
    /// Compute peak in TFLOP/s for every row, instead of the device table's.
    pub peak_tflops: Option<f64>,
    /// Memory bandwidth peak in TB/s, instead of the device table's.
    pub peak_tbps: Option<f64>,
    /// Keep the first `top` rows (0 keeps all).
    pub top: usize,
}

/// One row: the calls of one operator with the same inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerfRow {
    /// The op family.
    pub family: Family,
    /// Operator name.
    pub name: String,
    /// `Input Dims` as Python prints them (`[[8944, 1024], [1024, 2816]]`).
    pub input_dims: String,
    /// `Input type` as recorded (`["c10::BFloat16", "c10::BFloat16"]`).
    pub dtypes: String,
    /// `Concrete Inputs` as recorded (empty when not recorded).
    pub concrete_inputs: String,
    /// Calls.
    pub calls: u64,
    /// The row measures only the GPU work its calls launched themselves, outside every
    /// modelled call (an unmodelled operator, or a modelled wrapper's own kernels beside
    /// the modelled call inside it): no FLOPs or bytes.
    pub direct: bool,
    /// GFLOP per call; `None` for an operator the model does not cover or whose shapes
    /// do not fit it.
    pub gflop_per_call: Option<f64>,
    /// Bytes moved per call; `None` like `gflop_per_call`.
    pub bytes_per_call: Option<f64>,
    /// Arithmetic intensity, FLOP per byte.
    pub flop_per_byte: Option<f64>,
    /// Σ over calls of the busy time of the GPU work under the call, µs.
    pub kernel_us: f64,
    /// `kernel_us / calls`.
    pub kernel_us_mean: f64,
    /// Achieved TFLOP/s over `kernel_us`; `None` without kernel time, or when it would
    /// exceed its peak (`above_peak`).
    pub tflops: Option<f64>,
    /// Achieved TB/s over `kernel_us`; `None` like `tflops`.
    pub tbps: Option<f64>,
    /// Where the arithmetic runs (tensor/matrix cores or vector units).
    pub units: Option<Units>,
    /// The precision of the arithmetic (FP32 on tensor cores is TF32).
    pub precision: Option<Precision>,
    /// The compute peak the row is judged against, TFLOP/s.
    pub peak_tflops: Option<f64>,
    /// The bandwidth peak the row is judged against, TB/s.
    pub peak_tbps: Option<f64>,
    /// Compute- or memory-bound, from the ridge point `peak_tflops / peak_tbps`.
    pub bound: Option<Bound>,
    /// Achieved ÷ attainable (the roofline's time ÷ the kernel time), 0–1.
    pub roofline_fraction: Option<f64>,
    /// Kernel time minus the time the roofline allows, µs.
    pub lost_us: Option<f64>,
    /// The achieved rate would exceed a peak: the trace's device time or shapes are
    /// wrong for this row, so its rates are not shown.
    pub above_peak: bool,
}

/// One family's totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilySummary {
    /// The family.
    pub family: Family,
    /// Rows of the family.
    pub rows: u64,
    /// Calls.
    pub calls: u64,
    /// Σ kernel time, µs.
    pub kernel_us: f64,
    /// Share of all rows' kernel time, 0–1.
    pub kernel_share: f64,
    /// Σ GFLOP of the rows with an achieved rate (modelled, with kernel time).
    pub gflop: f64,
    /// Σ bytes of the rows with an achieved rate.
    pub bytes: f64,
    /// Σ time lost against the roofline, µs (rows with a roofline).
    pub lost_us: f64,
    /// Achieved TFLOP/s of the modelled rows with kernel time.
    pub tflops: Option<f64>,
    /// Achieved TB/s of the modelled rows with kernel time.
    pub tbps: Option<f64>,
}

/// Where the peaks came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeakSource {
    /// The device table (`devices.rs`, `docs/devices.md`).
    Table,
    /// `--peak-tflops` and/or `--peak-tbps` (the rest from the table when known).
    Override,
    /// None: the device is not in the table and nothing was given.
    Unknown,
}

/// The perf model of one trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerfTable {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// The GPU's name from `deviceProperties`, when recorded.
    pub device: Option<String>,
    /// The device table's row for it.
    pub peaks: Option<GpuPeak>,
    /// Where the peaks came from.
    pub peak_source: PeakSource,
    /// Per family, by kernel time (largest first).
    pub families: Vec<FamilySummary>,
    /// Rows before `top` cut the table.
    pub total_rows: usize,
    /// Rows by `lost_us` (largest first; rows without it last, by kernel time).
    pub rows: Vec<PerfRow>,
    /// What the reader should know (no peak for the device, rates above peak, GPU work
    /// without a launch record).
    pub warnings: Vec<Note>,
}

/// The inputs that make a row: name, `Input Dims`, `Input type`, `Concrete Inputs`.
type Key = (StrId, StrId, StrId, StrId);

/// The text of an interned string, or "" for the absent sentinel.
fn text(trace: &Trace, id: StrId) -> &str {
    if id.0 == u32::MAX {
        ""
    } else {
        trace.strings.get(id)
    }
}

/// A JSON list of strings (`Input type`, `Concrete Inputs`) on one line, as
/// `["a", "b"]` whatever the file's layout; other text as written.
fn canonical_list(text: &str) -> String {
    match serde_json::from_str::<Vec<String>>(text) {
        Ok(items) => {
            let quoted: Vec<String> = items
                .iter()
                .map(|s| serde_json::to_string(s).unwrap_or_default())
                .collect();
            format!("[{}]", quoted.join(", "))
        }
        Err(_) => text.to_owned(),
    }
}

/// The work of one call from its recorded inputs.
fn call_work(trace: &Trace, name: &str, key: &Key) -> Option<Work> {
    let f = formula(name)?;
    let dims = kinetoscope_trace::parse_dims(text(trace, key.1))?;
    let types: Vec<String> = serde_json::from_str(text(trace, key.2)).unwrap_or_default();
    let concrete: Vec<String> = serde_json::from_str(text(trace, key.3)).unwrap_or_default();
    work(
        f,
        name,
        &Inputs {
            dims: &dims,
            types: &types,
            concrete: &concrete,
        },
    )
}

/// Build the perf model of a trace.
pub fn analyze_perf(trace: &Trace, opts: &PerfOptions) -> PerfTable {
    let tree = OperatorTree::build(trace);
    analyze_perf_in(trace, &tree, opts, &|_| true, &|_| true)
}

/// The perf model of the calls (operator event indexes) `keep_call` keeps, measured
/// with the GPU activities (event indexes) `keep_gpu` keeps: the advisor leaves out the
/// calls and kernels other findings claim, and the calls outside the steps. `tree` is
/// the trace's operator tree, which the advisor shares with the diff profile.
pub fn analyze_perf_in(
    trace: &Trace,
    tree: &OperatorTree,
    opts: &PerfOptions,
    keep_call: &dyn Fn(usize) -> bool,
    keep_gpu: &dyn Fn(usize) -> bool,
) -> PerfTable {
    let e = &trace.events;
    let tree = &tree.0;
    let m = calls::measure(trace, tree, keep_gpu);
    let absent = StrId(u32::MAX);
    // Row key: name, dims, types, concrete inputs, and whether the calls are units.
    let mut index: FxHashMap<(Key, bool), usize> = FxHashMap::default();
    let mut keys: Vec<(Key, bool)> = Vec::new();
    let mut acc: Vec<(u64, i64, bool)> = Vec::new();
    for idx in 0..tree.len() {
        let ev = tree.event[idx] as usize;
        if (!m.unit[idx] && !m.direct[idx]) || !keep_call(ev) {
            continue;
        }
        let key = match tree.arg[idx] {
            NONE => (e.name[ev], absent, absent, absent),
            a => {
                let a = &trace.args.op[a as usize];
                (e.name[ev], a.input_dims, a.input_types, a.concrete_inputs)
            }
        };
        let key = (key, m.unit[idx]);
        let row = *index.entry(key).or_insert_with(|| {
            keys.push(key);
            acc.push((0, 0, false));
            keys.len() - 1
        });
        acc[row].0 += 1;
        acc[row].1 += m.busy_ns[idx];
        acc[row].2 |= m.tensor_cores[idx];
    }
    drop((index, m));

    let device = trace.meta.devices.first().map(|d| d.name.clone());
    let peaks = device.as_deref().and_then(gpu_peak);
    let amd = trace.meta.gpu_vendor == Some(kinetoscope_trace::GpuVendor::Amd);
    let mut rows: Vec<PerfRow> = keys
        .iter()
        .zip(&acc)
        .map(|((key, unit), &(calls, busy, tc))| {
            let name = trace.strings.get(key.0);
            let fam = family_of(name);
            let w = if *unit {
                call_work(trace, name, key)
            } else {
                None
            };
            let units = w.map(|_| {
                if fam.uses_matrix_units() {
                    Units::Matrix
                } else {
                    Units::Vector
                }
            });
            // FP32 on NVIDIA tensor cores is TF32; AMD's matrix cores run FP32 as FP32
            // (XF32 is opt-in), judged against the FP32 peak.
            let precision = w.map(|w| match (w.precision, units, tc && !amd) {
                (Precision::Fp32, Some(Units::Matrix), true) => Precision::Tf32,
                (p, _, _) => p,
            });
            let mut row = PerfRow {
                family: fam,
                name: name.to_owned(),
                input_dims: canonical_shape(text(trace, key.1)),
                dtypes: canonical_list(text(trace, key.2)),
                concrete_inputs: canonical_list(text(trace, key.3)),
                calls,
                direct: !unit,
                gflop_per_call: w.map(|w| w.flops / 1e9),
                bytes_per_call: w.map(|w| w.bytes),
                flop_per_byte: w.and_then(|w| (w.bytes > 0.0).then(|| w.flops / w.bytes)),
                kernel_us: busy as f64 / 1e3,
                kernel_us_mean: busy as f64 / 1e3 / calls.max(1) as f64,
                tflops: None,
                tbps: None,
                units,
                precision,
                peak_tflops: None,
                peak_tbps: None,
                bound: None,
                roofline_fraction: None,
                lost_us: None,
                above_peak: false,
            };
            roofline::judge(&mut row, peaks.as_ref(), opts);
            row
        })
        .collect();
    roofline::rank(&mut rows);
    let families = roofline::families(&rows);
    let warnings = notes(trace, &rows, device, peaks.as_ref(), opts);
    let total_rows = rows.len();
    if opts.top > 0 {
        rows.truncate(opts.top);
    }
    let peak_source = match (&peaks, opts.peak_tflops.or(opts.peak_tbps)) {
        (_, Some(_)) => PeakSource::Override,
        (Some(_), None) => PeakSource::Table,
        (None, None) => PeakSource::Unknown,
    };
    PerfTable {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        device: trace.meta.devices.first().map(|d| d.name.clone()),
        peaks,
        peak_source,
        families,
        total_rows,
        rows,
        warnings,
    }
}

/// The warnings of a perf table.
fn notes(
    trace: &Trace,
    rows: &[PerfRow],
    device: Option<String>,
    peaks: Option<&GpuPeak>,
    opts: &PerfOptions,
) -> Vec<Note> {
    let mut out: Vec<Note> = Note::from_trace(trace)
        .into_iter()
        .filter(|n| {
            matches!(
                n,
                Note::RepairedLaunchLinks { .. } | Note::GpuWithoutLaunch { .. }
            )
        })
        .collect();
    let modelled = rows.iter().any(|r| r.gflop_per_call.is_some());
    let no_compute = opts.peak_tflops.is_none() && peaks.is_none();
    let no_bandwidth = opts.peak_tbps.is_none() && peaks.and_then(GpuPeak::bandwidth).is_none();
    if modelled && (no_compute || no_bandwidth) {
        out.push(Note::NoDevicePeak {
            device,
            compute: no_compute,
            bandwidth: no_bandwidth,
        });
    }
    let above = rows.iter().filter(|r| r.above_peak).count() as u64;
    if above > 0 {
        out.push(Note::RatesAbovePeak { rows: above });
    }
    out
}
