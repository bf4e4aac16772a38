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

use crate::gemm::{gemm_of, is_gemm_op};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::facts::Facts;

/// The precision an operator ran in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// FP64.
    Fp64,
    /// FP32 on CUDA cores.
    Fp32,
    /// FP32 inputs on TF32 tensor cores (seen in the kernel name).
    Tf32,
    /// BF16 or FP16 on tensor cores.
    Bf16,
    /// FP8.
    Fp8,
}

impl Precision {
    /// From an `Input type` entry (`float`, `c10::BFloat16`, `c10::Half`, ...).
    pub fn from_dtype(t: &str) -> Option<Self> {
        let t = t.trim().trim_matches('"');
        Some(match t {
            "float" => Self::Fp32,
            "double" => Self::Fp64,
            "c10::BFloat16" | "c10::Half" | "BFloat16" | "Half" => Self::Bf16,
            _ if t.contains("Float8") => Self::Fp8,
            _ => return None,
        })
    }
}

/// Operator classes whose FLOPs are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// Matrix multiplications.
    Gemm,
    /// Convolutions (forward and backward).
    Conv,
    /// Scaled dot-product attention (forward and backward).
    Attention,
}

/// FLOPs of one operator call from its name, `Input Dims` and `Concrete Inputs` (JSON
/// texts as recorded): GEMM-family operators by [`crate::gemm`], convolutions and SDPA
/// by the formulas of the module docs. `None` when the operator is not counted or its
/// shapes do not fit the formula.
pub fn op_flops(name: &str, dims: &[Vec<i64>], concrete: &[String]) -> Option<(OpClass, f64)> {
    let f = |v: &[i64]| v.iter().map(|&x| x as f64).product::<f64>();
    let d = |i: usize| dims.get(i).map(Vec::as_slice).unwrap_or(&[]);
    let causal_at = |i: usize| concrete.get(i).is_some_and(|c| c.trim() == "True");
    if is_gemm_op(name) {
        return gemm_of(name, dims).map(|g| (OpClass::Gemm, g.flops()));
    }
    match name {
        "aten::convolution" | "aten::convolution_backward" => {
            let backward = name.ends_with("_backward");
            // convolution(input, weight, bias, stride, padding, dilation, transposed,
            // output_padding, groups); backward(grad_out, input, weight, ...).
            let (x, w) = if backward { (d(1), d(2)) } else { (d(0), d(1)) };
            if x.len() < 3 || w.len() != x.len() {
                return None;
            }
            let fwd = if backward {
                2.0 * f(d(0)) * f(&w[1..])
            } else {
                let transposed = concrete.get(6).is_some_and(|c| c.trim() == "True");
                if transposed {
                    2.0 * f(x) * f(&w[1..])
                } else {
                    let out = conv_out(x, w, concrete)?;
                    2.0 * f(&out) * f(&w[1..])
                }
            };
            Some((OpClass::Conv, if backward { 2.0 * fwd } else { fwd }))
        }
        "aten::_scaled_dot_product_flash_attention"
        | "aten::_scaled_dot_product_flash_attention_for_cpu"
        | "aten::_scaled_dot_product_efficient_attention"
        | "aten::_scaled_dot_product_cudnn_attention" => {
            // is_causal: flash / flash_for_cpu (q, k, v, dropout_p, is_causal, ...);
            // efficient / cudnn (q, k, v, attn_bias, compute_log_sumexp, dropout_p,
            // is_causal, ...).
            let causal = if name.contains("efficient") || name.contains("cudnn") {
                causal_at(6)
            } else {
                causal_at(4)
            };
            sdpa(d(0), d(1), causal).map(|v| (OpClass::Attention, v))
        }
        "aten::_scaled_dot_product_flash_attention_backward"
        | "aten::_scaled_dot_product_flash_attention_for_cpu_backward"
        | "aten::_scaled_dot_product_efficient_attention_backward"
        | "aten::_scaled_dot_product_cudnn_attention_backward" => {
            let causal = if name.contains("for_cpu") {
                causal_at(7)
            } else {
                causal_at(11)
            };
            sdpa(d(1), d(2), causal).map(|v| (OpClass::Attention, 2.5 * v))
        }
        _ => None,
    }
}

/// 4·B·Hq·Sq·Skv·D for q [B, Hq, Sq, D], k [B, Hkv, Skv, D]; × ½ when causal.
fn sdpa(q: &[i64], k: &[i64], causal: bool) -> Option<f64> {
    if q.len() != 4 || k.len() != 4 {
        return None;
    }
    let v = 4.0 * (q[0] * q[1] * q[2]) as f64 * k[2] as f64 * q[3] as f64;
    Some(if causal && q[2] == k[2] { v / 2.0 } else { v })
}

/// Output shape of a convolution from `Concrete Inputs` (stride, padding, dilation at 3,
/// 4, 5; groups at 8). `None` when they were not recorded.
fn conv_out(x: &[i64], w: &[i64], concrete: &[String]) -> Option<Vec<i64>> {
    let spatial = x.len() - 2;
    let list = |i: usize| -> Option<Vec<i64>> {
        let text = concrete.get(i)?;
        let v: Vec<i64> = serde_json::from_str(text.trim()).ok()?;
        Some(if v.len() == 1 { vec![v[0]; spatial] } else { v })
    };
    let (stride, pad, dil) = (list(3)?, list(4)?, list(5)?);
    if stride.len() != spatial || pad.len() != spatial || dil.len() != spatial {
        return None;
    }
    let mut out = vec![x[0], w[0]];
    for i in 0..spatial {
        let o = (x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) / stride[i] + 1;
        if o <= 0 {
            return None;
        }
        out.push(o);
    }
    Some(out)
}

/// Dense peak TFLOP/s of one GPU (vendor datasheets, without 2:4 sparsity).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPeak {
    /// The table row used.
    pub model: String,
    /// FP64 TFLOP/s (tensor/matrix core where available).
    pub fp64_tflops: f64,
    /// FP32 TFLOP/s on CUDA cores.
    pub fp32_tflops: f64,
    /// TF32 tensor-core TFLOP/s.
    pub tf32_tflops: f64,
    /// BF16/FP16 tensor-core TFLOP/s.
    pub bf16_tflops: f64,
    /// FP8 tensor-core TFLOP/s (0 when absent).
    pub fp8_tflops: f64,
}

impl GpuPeak {
    /// Peak TFLOP/s for a precision.
    pub fn for_precision(&self, p: Precision) -> f64 {
        match p {
            Precision::Fp64 => self.fp64_tflops,
            Precision::Fp32 => self.fp32_tflops,
            Precision::Tf32 => self.tf32_tflops,
            Precision::Bf16 => self.bf16_tflops,
            Precision::Fp8 => self.fp8_tflops,
        }
    }
}

/// Rows of the peak table, most specific pattern first: TFLOP/s in FP64, FP32, TF32,
/// BF16/FP16 and FP8, dense, from the vendors' datasheets (0 where the part lacks the
/// precision or its datasheet gives no number).
///
/// Volta and Turing have FP16 tensor cores only (no TF32, no BF16): their BF16/FP16
/// column is the FP16 tensor-core peak, and BF16 work on them runs without tensor cores.
/// - V100: *NVIDIA V100 Tensor Core GPU* datasheet (NVIDIA, January 2020): SXM2 7.8 /
///   15.7 / 125 (FP64 / FP32 / tensor), PCIe 7 / 14 / 112, V100S PCIe 8.2 / 16.4 / 130.
/// - T4: *NVIDIA T4 Tensor Core GPU* datasheet (2019): FP32 8.1, mixed precision
///   (FP16/FP32) 65; no FP64 figure.
/// - GeForce RTX 2080 Ti / 2080 / 2070 and Quadro RTX 6000: *NVIDIA Turing GPU
///   Architecture* whitepaper (WP-09183-001, 2018), its per-board tables, reference-board
///   clocks (Founders Edition boards are about 6 % faster): FP32 13.4 / 10.1 / 7.5 /
///   16.3; FP16 tensor with FP32 accumulate — what PyTorch's half-precision GEMMs use —
///   53.8 / 40.3 / 29.9 (GeForce runs it at half the FP16-accumulate rate) and 130.5 on
///   the Quadro; no FP64 figure.
const PEAKS: &[(&[&str], PeakRow)] = &[
    (
        &["h100", "pcie"],
        row("H100 PCIe", 51.0, 51.0, 378.0, 756.0, 1513.0),
    ),
    (
        &["h100", "nvl"],
        row("H100 NVL", 60.0, 60.0, 418.0, 835.0, 1671.0),
    ),
    (
        &["h100"],
        row("H100 SXM5", 67.0, 67.0, 494.7, 989.4, 1978.9),
    ),
    (
        &["h200", "nvl"],
        row("H200 NVL", 60.0, 60.0, 418.0, 835.0, 1671.0),
    ),
    (&["h200"], row("H200 SXM", 67.0, 67.0, 494.7, 989.4, 1978.9)),
    (&["gb200"], row("GB200", 45.0, 0.0, 1250.0, 2500.0, 5000.0)),
    (&["b200"], row("B200", 37.0, 0.0, 1100.0, 2250.0, 4500.0)),
    (
        &["a100", "pcie"],
        row("A100 PCIe", 19.5, 19.5, 156.0, 312.0, 0.0),
    ),
    (&["a100"], row("A100 SXM4", 19.5, 19.5, 156.0, 312.0, 0.0)),
    (&["v100s"], row("V100S PCIe", 8.2, 16.4, 0.0, 130.0, 0.0)),
    (
        &["v100", "pcie"],
        row("V100 PCIe", 7.0, 14.0, 0.0, 112.0, 0.0),
    ),
    (&["v100"], row("V100 SXM2", 7.8, 15.7, 0.0, 125.0, 0.0)),
    (&["tesla t4"], row("T4", 0.0, 8.1, 0.0, 65.0, 0.0)),
    (&["nvidia t4"], row("T4", 0.0, 8.1, 0.0, 65.0, 0.0)),
    (
        &["rtx 2080 ti"],
        row("GeForce RTX 2080 Ti", 0.0, 13.4, 0.0, 53.8, 0.0),
    ),
    (
        &["rtx 2080"],
        row("GeForce RTX 2080", 0.0, 10.1, 0.0, 40.3, 0.0),
    ),
    (
        &["rtx 2070"],
        row("GeForce RTX 2070", 0.0, 7.5, 0.0, 29.9, 0.0),
    ),
    (
        &["quadro rtx 6000"],
        row("Quadro RTX 6000", 0.0, 16.3, 0.0, 130.5, 0.0),
    ),
    (&["mi355"], row("MI355X", 78.6, 157.3, 0.0, 2517.0, 5033.0)),
    (
        &["mi325"],
        row("MI325X", 163.4, 163.4, 653.7, 1307.4, 2614.9),
    ),
    (
        &["mi300x"],
        row("MI300X", 163.4, 163.4, 653.7, 1307.4, 2614.9),
    ),
];

/// A row of the peak table: the model and its TFLOP/s in [`GpuPeak`] order.
struct PeakRow(&'static str, [f64; 5]);

const fn row(model: &'static str, fp64: f64, fp32: f64, tf32: f64, bf16: f64, fp8: f64) -> PeakRow {
    PeakRow(model, [fp64, fp32, tf32, bf16, fp8])
}

/// The peak-table row for a `deviceProperties` name (`NVIDIA H100 80GB HBM3`).
pub fn gpu_peak(device_name: &str) -> Option<GpuPeak> {
    let l = device_name.to_ascii_lowercase();
    PEAKS
        .iter()
        .find(|(pats, _)| pats.iter().all(|p| l.contains(p)))
        .map(
            |(_, PeakRow(model, [fp64, fp32, tf32, bf16, fp8]))| GpuPeak {
                model: (*model).to_owned(),
                fp64_tflops: *fp64,
                fp32_tflops: *fp32,
                tf32_tflops: *tf32,
                bf16_tflops: *bf16,
                fp8_tflops: *fp8,
            },
        )
}

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
    let t: &Trace = facts.trace;
    let n_steps = facts.n_steps().max(1) as f64;
    let missing = facts.device_activity_missing();
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
    let gpu = facts
        .overview
        .devices
        .iter()
        .find_map(|d| gpu_peak(&d.name));
    let mut notes: Vec<String> = Vec::new();
    // Per class: calls, FLOPs, time, and the least time the FLOPs take at peak.
    let mut classes: FxHashMap<OpClass, (u64, f64, i64, Option<f64>)> = FxHashMap::default();
    let mut by_prec: FxHashMap<Precision, f64> = FxHashMap::default();
    for c in &calls {
        let row = classes.entry(c.class).or_insert((0, 0.0, 0, Some(0.0)));
        row.0 += 1;
        row.1 += c.flops;
        row.2 += c.time_ns;
        row.3 = match (row.3, peak_for(c.precision, peak_override, gpu.as_ref())) {
            (Some(s), Some(p)) => Some(s + c.flops / (p * 1e12)),
            _ => None,
        };
        *by_prec.entry(c.precision).or_default() += c.flops;
    }
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
    let mut by_precision: Vec<(Precision, f64)> =
        by_prec.into_iter().map(|(p, f)| (p, f / n_steps)).collect();
    by_precision.sort_by_key(|p| p.0);
    let flops_per_step: f64 = by_precision.iter().map(|p| p.1).sum();
    let step_s = facts.mean_step_ns() / 1e9;
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
    let tflops_per_s =
        (!missing && step_s > 0.0 && flops_per_step > 0.0).then(|| flops_per_step / step_s / 1e12);
    let (mut mfu, note) = match (peak_override, &gpu) {
        _ if flops_per_step == 0.0 => (
            None,
            Some("no countable GEMM, convolution or attention operators with shapes (record_shapes=True)".to_owned()),
        ),
        _ if missing => (None, None),
        _ if step_s <= 0.0 => (None, Some("no steps".to_owned())),
        (Some(peak), _) if peak > 0.0 => (
            Some(flops_per_step / step_s / (peak * 1e12)),
            Some(format!("against --peak-tflops {peak}")),
        ),
        (_, Some(g)) => {
            let mut secs = 0.0;
            let mut absent = Vec::new();
            for (p, f) in &by_precision {
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
        _ if facts.has_gpu => (
            None,
            Some("GPU not in the peak table: pass --peak-tflops".to_owned()),
        ),
        _ => (
            None,
            Some("no GPU in the trace: pass --peak-tflops to compare with a CPU peak".to_owned()),
        ),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn gemm_flops_by_hand() {
        // [64, 256] x [256, 128]: 2·64·128·256 = 4,194,304.
        let (c, f) = op_flops("aten::mm", &[vec![64, 256], vec![256, 128]], &[]).unwrap();
        assert_eq!(c, OpClass::Gemm);
        assert_eq!(f, 4_194_304.0);
        // addmm(bias [10], [64, 256], [256, 10]): 2·64·10·256 = 327,680.
        let (_, f) = op_flops(
            "aten::addmm",
            &[vec![10], vec![64, 256], vec![256, 10]],
            &[],
        )
        .unwrap();
        assert_eq!(f, 327_680.0);
        // bmm [8, 32, 16] x [8, 16, 64]: 2·8·32·64·16 = 524,288.
        let (_, f) = op_flops("aten::bmm", &[vec![8, 32, 16], vec![8, 16, 64]], &[]).unwrap();
        assert_eq!(f, 524_288.0);
        // Mismatched inner dimension: not counted.
        assert!(op_flops("aten::mm", &[vec![4, 3], vec![5, 6]], &[]).is_none());
        // linear(x [4, 3], weight [5, 3]): 2·4·5·3 = 120 (the outermost call of a nest
        // counts; see crate::gemm).
        let (_, f) = op_flops("aten::linear", &[vec![4, 3], vec![5, 3]], &[]).unwrap();
        assert_eq!(f, 120.0);
    }

    #[test]
    fn conv_flops_by_hand() {
        // x [2, 3, 32, 32], w [16, 3, 3, 3], stride 1, padding 1: out [2, 16, 32, 32].
        // 2 · (2·16·32·32) · (3·3·3) = 2 · 32768 · 27 = 1,769,472.
        let c = s(&[
            "", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        let (cl, f) = op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3], vec![16]],
            &c,
        )
        .unwrap();
        assert_eq!(cl, OpClass::Conv);
        assert_eq!(f, 1_769_472.0);
        // Stride 2, padding 0: out spatial (32 - 3)/2 + 1 = 15 → 2·(2·16·15·15)·27 = 388,800.
        let c = s(&[
            "", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        let (_, f) = op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &c,
        )
        .unwrap();
        assert_eq!(f, 388_800.0);
        // Backward: grad_out [2, 16, 32, 32] → 2 × forward = 3,538,944.
        let (_, f) = op_flops(
            "aten::convolution_backward",
            &[vec![2, 16, 32, 32], vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &[],
        )
        .unwrap();
        assert_eq!(f, 3_538_944.0);
        // Without Concrete Inputs the output shape is unknown.
        assert!(op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &[]
        )
        .is_none());
    }

    #[test]
    fn sdpa_flops_by_hand() {
        // q, k [2, 8, 128, 64]: 4·2·8·128·128·64 = 67,108,864.
        let q = vec![2, 8, 128, 64];
        let (c, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention",
            &[q.clone(), q.clone(), q.clone()],
            &s(&["", "", "", "0.", "False"]),
        )
        .unwrap();
        assert_eq!(c, OpClass::Attention);
        assert_eq!(f, 67_108_864.0);
        // Causal: half.
        let (_, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention",
            &[q.clone(), q.clone(), q.clone()],
            &s(&["", "", "", "0.", "True"]),
        )
        .unwrap();
        assert_eq!(f, 33_554_432.0);
        // Backward: 2.5 × forward = 167,772,160.
        let (_, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention_backward",
            &[q.clone(), q.clone(), q.clone(), q.clone()],
            &[],
        )
        .unwrap();
        assert_eq!(f, 167_772_160.0);
    }

    #[test]
    fn peak_table() {
        assert_eq!(
            gpu_peak("NVIDIA H100 80GB HBM3").unwrap().bf16_tflops,
            989.4
        );
        assert_eq!(gpu_peak("NVIDIA H100 PCIe").unwrap().bf16_tflops, 756.0);
        assert_eq!(
            gpu_peak("NVIDIA A100-SXM4-80GB").unwrap().tf32_tflops,
            156.0
        );
        assert_eq!(gpu_peak("NVIDIA H200").unwrap().model, "H200 SXM");
        let v100 = gpu_peak("Tesla V100-SXM2-32GB").unwrap();
        assert_eq!(
            (v100.model.as_str(), v100.bf16_tflops),
            ("V100 SXM2", 125.0)
        );
        assert_eq!(v100.tf32_tflops, 0.0, "Volta has no TF32");
        assert_eq!(gpu_peak("Tesla V100-PCIE-16GB").unwrap().bf16_tflops, 112.0);
        assert_eq!(
            gpu_peak("Tesla V100S-PCIE-32GB").unwrap().model,
            "V100S PCIe"
        );
        assert_eq!(gpu_peak("Tesla T4").unwrap().bf16_tflops, 65.0);
        assert_eq!(
            gpu_peak("NVIDIA GeForce RTX 2080 Ti").unwrap().model,
            "GeForce RTX 2080 Ti"
        );
        assert_eq!(
            gpu_peak("NVIDIA GeForce RTX 2080").unwrap().fp32_tflops,
            10.1
        );
        assert!(gpu_peak("NVIDIA GeForce GTX 1080").is_none());
        assert_eq!(
            Precision::from_dtype("c10::BFloat16"),
            Some(Precision::Bf16)
        );
        assert_eq!(Precision::from_dtype("float"), Some(Precision::Fp32));
    }
}
