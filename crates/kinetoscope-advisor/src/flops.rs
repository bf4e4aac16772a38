//! FLOPs from recorded shapes, achieved TFLOP/s per op class, and MFU against the dense
//! peak of the detected GPU.
//!
//! Matrix multiplications are the GEMM calls of [`crate::gemm`] (every GEMM-family
//! operator whose shapes were recorded, the outermost call of a nest counted once, as
//! GP003 and GP007 see them); convolutions are counted at `aten::convolution` /
//! `aten::convolution_backward` (their backend children are not), SDPA at the
//! `aten::_scaled_dot_product_*` kernels' operators (forward 4·B·H·Sq·Skv·D, backward
//! 2.5× forward, ½ when causal). Softmax, bias adds and element-wise work are ignored.
//! Trace FLOPs include activation recompute, so the MFU shown is strictly a hardware
//! FLOPs utilisation when checkpointing is on.
//!
//! Rates are measured against device time: the GPU time each call launched (kernels,
//! graph replays included), or host time on a CPU-only trace. When the host launched
//! kernels but the trace recorded no device activity, there is no time to measure
//! against: FLOPs are counted, rates and MFU are not. A rate above the GPU's dense peak
//! for the precisions involved is impossible, so it is refused (with a note) rather
//! than shown.

use kinetoscope_trace::{parse_dims, CategoryKind, EventId, Trace};

pub use kinetoscope_analysis::perf::devices::{gpu_peak, GpuPeak};
pub use kinetoscope_analysis::perf::flops::{op_flops, OpClass, Precision};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::facts::Facts;

/// FLOPs and achieved rate of one op class, per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassFlops {
    /// The class.
    pub class: OpClass,
    /// Calls counted inside steps.
    pub calls: u64,
    /// FLOPs per step (mean over steps).
    pub flops_per_step: f64,
    /// Time those calls took per step, ns: the GPU time they launched when the trace
    /// has device activity, host time on a CPU-only trace, 0 when the device activity
    /// is missing.
    pub time_ns_per_step: f64,
    /// Achieved TFLOP/s over that time; `None` without time, or when the rate would
    /// exceed the dense peak (refused, with a note).
    pub achieved_tflops: Option<f64>,
}

/// FLOPs, throughput and MFU of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlopsSummary {
    /// Per class, in [`OpClass`] order (classes with no counted call are absent).
    pub classes: Vec<ClassFlops>,
    /// Σ counted FLOPs per step.
    pub flops_per_step: f64,
    /// Counted FLOPs per second of step time, TFLOP/s; `None` when the device activity
    /// is missing (the step time is then host time only).
    pub tflops_per_s: Option<f64>,
    /// FLOPs per step by precision.
    pub by_precision: Vec<(Precision, f64)>,
    /// The peak-table row matched from `deviceProperties`.
    pub gpu: Option<GpuPeak>,
    /// The `--peak-tflops` override, when given.
    pub peak_override_tflops: Option<f64>,
    /// Model FLOPs utilisation (0–1): Σ over precisions of FLOPs / peak, over step time.
    pub mfu: Option<f64>,
    /// Why MFU or a rate is missing or refused, or what MFU assumes (`; `-separated).
    pub note: Option<String>,
    /// Calls of counted operators in the steps whose shapes were missing or did not fit
    /// (GEMM-family calls only when no GEMM inside or around them was counted).
    pub unshaped_calls: u64,
}

/// One counted call: its class, FLOPs, precision and the time it took.
struct Call {
    class: OpClass,
    flops: f64,
    precision: Precision,
    time_ns: i64,
}

/// The counted convolution and attention calls in the steps, and the calls of those
/// operators whose shapes were missing or did not fit.
fn conv_and_attention(facts: &Facts) -> (Vec<(usize, OpClass, f64, usize)>, u64) {
    let t: &Trace = facts.trace;
    let mut out = Vec::new();
    let mut unshaped = 0u64;
    let candidates = facts.events(&[CategoryKind::CpuOp], |n| {
        n == "aten::convolution"
            || n == "aten::convolution_backward"
            || n.starts_with("aten::_scaled_dot_product_")
    });
    for i in candidates {
        if facts.step_of_event(i).is_none() {
            continue;
        }
        let name = facts.name(i);
        // Same-name nesting (a merged wrapper) counts once.
        if facts.parent_of(i).is_some_and(|p| facts.name(p) == name) {
            continue;
        }
        let Some(args) = t.args.op_of(EventId(i as u32)) else {
            unshaped += 1;
            continue;
        };
        let dims = parse_dims(t.strings.get(args.input_dims)).unwrap_or_default();
        let concrete: Vec<String> =
            serde_json::from_str(t.strings.get(args.concrete_inputs)).unwrap_or_default();
        let Some((class, fl)) = op_flops(name, &dims, &concrete) else {
            unshaped += 1;
            continue;
        };
        // The dtype that decides the precision: the input (forward), the input after
        // grad_output (backward).
        let dtype_at = usize::from(name.ends_with("_backward"));
        out.push((i, class, fl, dtype_at));
    }
    (out, unshaped)
}

/// The precision a call ran in: its dtype, FP32 promoted to TF32 when a kernel it
/// launched used tensor cores (or says `tf32`).
fn precision_of(facts: &Facts, event: usize, dtype: Option<&str>) -> Precision {
    let p = dtype
        .and_then(Precision::from_dtype)
        .unwrap_or(Precision::Fp32);
    if p != Precision::Fp32 || !facts.has_gpu {
        return p;
    }
    if facts.launched_tensor_core_work(event) {
        Precision::Tf32
    } else {
        p
    }
}

/// The peak TFLOP/s for a precision: the `--peak-tflops` override, else the table row;
/// `None` when neither gives one.
fn peak_for(p: Precision, peak_override: Option<f64>, gpu: Option<&GpuPeak>) -> Option<f64> {
    match (peak_override, gpu) {
        (Some(o), _) if o > 0.0 => Some(o),
        (_, Some(g)) => Some(g.for_precision(p)).filter(|v| *v > 0.0),
        _ => None,
    }
}

/// Count FLOPs in the steps of a trace and estimate MFU.
pub fn estimate(facts: &Facts, peak_override: Option<f64>) -> FlopsSummary {
    let n_steps = facts.n_steps().max(1) as f64;
    let missing = facts.device_activity_missing();
    let (calls, unshaped) = counted_calls(facts);
    let gpu = facts
        .overview
        .devices
        .iter()
        .find_map(|d| gpu_peak(&d.name));
    let (classes, by_prec) = totals(&calls, peak_override, gpu.as_ref());
    let (class_rows, refused) = class_rows(classes, n_steps);
    let mut by_precision: Vec<(Precision, f64)> =
        by_prec.into_iter().map(|(p, f)| (p, f / n_steps)).collect();
    by_precision.sort_by_key(|p| p.0);
    let flops_per_step: f64 = by_precision.iter().map(|p| p.1).sum();
    let step_s = facts.mean_step_ns() / 1e9;
    let mut notes = rate_notes(missing, flops_per_step, &refused);
    let tflops_per_s =
        (!missing && step_s > 0.0 && flops_per_step > 0.0).then(|| flops_per_step / step_s / 1e12);
    let basis = MfuBasis {
        flops_per_step,
        step_s,
        missing,
        has_gpu: facts.has_gpu,
        peak_override,
        gpu: gpu.as_ref(),
    };
    let (mut mfu, note) = basis.mfu(&by_precision);
    notes.extend(note);
    if mfu.is_some_and(|m| m > 1.0) {
        mfu = None;
        notes.push(
            "MFU refused: the counted FLOPs would exceed the peak over the step time".to_owned(),
        );
    }
    FlopsSummary {
        classes: class_rows,
        flops_per_step,
        tflops_per_s,
        by_precision,
        gpu,
        peak_override_tflops: peak_override,
        mfu,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        unshaped_calls: unshaped,
    }
}

/// The counted calls in the steps (GEMMs, then convolutions and attention), and the
/// calls of counted operators whose shapes were missing or did not fit.
fn counted_calls(facts: &Facts) -> (Vec<Call>, u64) {
    let t: &Trace = facts.trace;
    let mut calls: Vec<Call> = Vec::new();
    for g in facts.gemms() {
        if facts.step_of_event(g.event).is_none() {
            continue;
        }
        calls.push(Call {
            class: OpClass::Gemm,
            flops: g.gemm.flops(),
            precision: precision_of(facts, g.event, g.dtype(facts)),
            time_ns: facts.op_time_ns(g.event),
        });
    }
    let (others, mut unshaped) = conv_and_attention(facts);
    for (i, class, flops, dtype_at) in others {
        let types: Vec<String> = t
            .args
            .op_of(EventId(i as u32))
            .map(|a| serde_json::from_str(t.strings.get(a.input_types)).unwrap_or_default())
            .unwrap_or_default();
        calls.push(Call {
            class,
            flops,
            precision: precision_of(facts, i, types.get(dtype_at).map(String::as_str)),
            time_ns: facts.op_time_ns(i),
        });
    }
    unshaped += facts
        .unshaped_gemms()
        .iter()
        .filter(|&&i| facts.step_of_event(i).is_some())
        .count() as u64;
    (calls, unshaped)
}

/// Per class: calls, FLOPs, time, and the least time the FLOPs take at peak (`None`
/// when a call's precision has no peak).
type ClassTotals = (u64, f64, i64, Option<f64>);

/// The calls summed per class, and their FLOPs per precision.
fn totals(
    calls: &[Call],
    peak_override: Option<f64>,
    gpu: Option<&GpuPeak>,
) -> (FxHashMap<OpClass, ClassTotals>, FxHashMap<Precision, f64>) {
    let mut classes: FxHashMap<OpClass, ClassTotals> = FxHashMap::default();
    let mut by_prec: FxHashMap<Precision, f64> = FxHashMap::default();
    for c in calls {
        let row = classes.entry(c.class).or_insert((0, 0.0, 0, Some(0.0)));
        row.0 += 1;
        row.1 += c.flops;
        row.2 += c.time_ns;
        row.3 = match (row.3, peak_for(c.precision, peak_override, gpu)) {
            (Some(s), Some(p)) => Some(s + c.flops / (p * 1e12)),
            _ => None,
        };
        *by_prec.entry(c.precision).or_default() += c.flops;
    }
    (classes, by_prec)
}

/// The per-class rows over `n_steps`, in [`OpClass`] order, and the classes whose rate
/// was refused (above the dense peak), sorted.
fn class_rows(
    classes: FxHashMap<OpClass, ClassTotals>,
    n_steps: f64,
) -> (Vec<ClassFlops>, Vec<OpClass>) {
    let mut refused: Vec<OpClass> = Vec::new();
    let mut class_rows: Vec<ClassFlops> = classes
        .into_iter()
        .map(|(class, (calls, fl, time, least_s))| {
            let secs = time as f64 / 1e9;
            let above_peak = least_s.is_some_and(|l| time > 0 && secs < l);
            if above_peak {
                refused.push(class);
            }
            ClassFlops {
                class,
                calls,
                flops_per_step: fl / n_steps,
                time_ns_per_step: time as f64 / n_steps,
                achieved_tflops: (time > 0 && !above_peak).then(|| fl / secs / 1e12),
            }
        })
        .collect();
    class_rows.sort_by_key(|c| c.class);
    refused.sort();
    (class_rows, refused)
}

/// The notes on rates: none measured (device activity missing), or some refused.
fn rate_notes(missing: bool, flops_per_step: f64, refused: &[OpClass]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    if missing && flops_per_step > 0.0 {
        notes.push(
            "device activity is missing from the trace: FLOPs are counted from the shapes, \
             but there is no device time to measure a rate or MFU against"
                .to_owned(),
        );
    }
    if !refused.is_empty() {
        notes.push(format!(
            "{} rate refused: it would exceed the dense peak (the time launched from the \
             operators is shorter than their FLOPs need at peak, so their device time was \
             not all recorded)",
            refused
                .iter()
                .map(|c| format!("{c:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    notes
}

/// What MFU is measured against: the counted FLOPs, the step time and the peaks.
struct MfuBasis<'g> {
    /// Σ counted FLOPs per step.
    flops_per_step: f64,
    /// Mean step time, s.
    step_s: f64,
    /// Whether the trace's device activity is missing.
    missing: bool,
    /// Whether the trace has a GPU.
    has_gpu: bool,
    /// The `--peak-tflops` override.
    peak_override: Option<f64>,
    /// The peak-table row of the trace's GPU.
    gpu: Option<&'g GpuPeak>,
}

impl MfuBasis<'_> {
    /// MFU (before the check against 1), and the note that says what it assumes or
    /// why it is missing.
    fn mfu(&self, by_precision: &[(Precision, f64)]) -> (Option<f64>, Option<String>) {
        let (flops_per_step, step_s) = (self.flops_per_step, self.step_s);
        match (self.peak_override, self.gpu) {
            _ if flops_per_step == 0.0 => (
                None,
                Some("no countable GEMM, convolution or attention operators with shapes (record_shapes=True)".to_owned()),
            ),
            _ if self.missing => (None, None),
            _ if step_s <= 0.0 => (None, Some("no steps".to_owned())),
            (Some(peak), _) if peak > 0.0 => (
                Some(flops_per_step / step_s / (peak * 1e12)),
                Some(format!("against --peak-tflops {peak}")),
            ),
            (_, Some(g)) => {
                let mut secs = 0.0;
                let mut absent = Vec::new();
                for (p, f) in by_precision {
                    let peak = g.for_precision(*p);
                    if peak > 0.0 {
                        secs += f / (peak * 1e12);
                    } else {
                        absent.push(format!("{p:?}"));
                    }
                }
                if absent.is_empty() {
                    (
                        Some(secs / step_s),
                        Some(format!("dense datasheet peak of {} per precision", g.model)),
                    )
                } else {
                    (None, Some(format!("no {} peak for {} in the table", absent.join(", "), g.model)))
                }
            }
            _ if self.has_gpu => (
                None,
                Some("GPU not in the peak table: pass --peak-tflops".to_owned()),
            ),
            _ => (
                None,
                Some("no GPU in the trace: pass --peak-tflops to compare with a CPU peak".to_owned()),
            ),
        }
    }
}
