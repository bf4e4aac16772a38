//! GP003 `Fp32GemmWithoutTensorCores`.
//!
//! ## What it finds
//! Matrix multiplications (every GEMM call of the advisor's one GEMM recogniser, the
//! outermost of a nest, as FLOPs count them) and convolutions with `float` (FP32)
//! inputs whose kernels — those launched during the call, graph replays included — ran
//! on CUDA cores (no `tf32`, `hmma`, `xmma`, … in the kernel name) on a GPU with
//! tensor cores (compute capability ≥ 7.0); on AMD GPUs, on vector ALUs instead of
//! matrix cores (no MFMA kernel: `Cijk_…_MI16x16x1_…`, CK `xdl`, …), said in AMD's terms.
//!
//! ## Why it matters
//! FP32 on CUDA cores runs at a fraction of the tensor-core rate: A100 19.5 TFLOP/s FP32
//! vs 156 TF32 vs 312 BF16 (8–16× headroom on GEMM time).
//!
//! ## Evidence
//! The operators, their GPU time per step, and example kernels.
//!
//! ## Fix
//! `torch.set_float32_matmul_precision("high")` (TF32), or bf16 autocast
//! (`torch.autocast("cuda", dtype=torch.bfloat16)`); on Volta and Turing (compute
//! capability 7.x), which have no TF32 or BF16 tensor cores, FP16 autocast with a
//! gradient scaler.
//!
//! ## Thresholds and sources
//! torch-tb-profiler: compute capability ≥ 7.0 and tensor-core-eligible time > 0 with
//! no tensor-core use; FP32 and TF32 peaks from vendor datasheets (`flops.rs`). Warning
//! when the time is ≥ 1 % of the step (proposal), else info.

use std::collections::BTreeMap;

use kinetoscope_analysis::overview::tensor_cores::uses_tensor_cores;
use kinetoscope_trace::{CategoryKind, EventId, GpuVendor};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::flops::gpu_peak;
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct Fp32GemmWithoutTensorCores;

static META: RuleMeta = RuleMeta {
    code: "GP003",
    name: "Fp32GemmWithoutTensorCores",
    family: "gpu",
    since: "0.1.0",
    summary: "FP32 GEMMs/convolutions on CUDA cores instead of tensor cores",
};

/// Convolution operators (the GEMMs come from [`Facts::gemms`]).
const CONVS: [&str; 2] = ["aten::convolution", "aten::convolution_backward"];

impl Rule for Fp32GemmWithoutTensorCores {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        let t = facts.trace;
        let Some(dev) = t.meta.devices.iter().find(|d| d.compute_major >= 7) else {
            return Vec::new();
        };
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let e = &t.events;
        // FP32 GEMM calls (first operand `float`) and FP32 convolutions, outermost.
        let gemms = facts
            .gemms()
            .iter()
            .filter(|g| g.dtype(facts) == Some("float"))
            .map(|g| g.event);
        let convs = facts
            .outermost(&facts.events(&[CategoryKind::CpuOp], |n| CONVS.contains(&n)))
            .into_iter()
            .filter(|&i| {
                t.args.op_of(EventId(i as u32)).is_some_and(|a| {
                    serde_json::from_str::<Vec<String>>(t.strings.get(a.input_types))
                        .unwrap_or_default()
                        .iter()
                        .any(|x| x == "float")
                })
            });
        let mut by_op: BTreeMap<&str, (u64, i64, String)> = BTreeMap::new();
        let mut seen = vec![false; facts.n_steps()];
        for i in gemms.chain(convs) {
            let Some(s) = facts.step_of_event(i) else {
                continue;
            };
            let ks: Vec<usize> = facts
                .launched_gpu(i)
                .into_iter()
                .filter(|&k| t.categories.kind(e.cat[k]) == CategoryKind::Kernel)
                .collect();
            if ks.is_empty() {
                continue;
            }
            let names: Vec<&str> = ks.iter().map(|&k| t.strings.get(e.name[k])).collect();
            if names
                .iter()
                .any(|n| uses_tensor_cores(n) || n.contains("tf32"))
            {
                continue;
            }
            let time: i64 = ks.iter().map(|&k| e.dur_ns.at(k)).sum();
            seen[s] = true;
            let entry = by_op.entry(facts.name(i)).or_insert((0, 0, String::new()));
            entry.0 += 1;
            entry.1 += time;
            if entry.2.is_empty() {
                entry.2 = names.first().map(|n| shorten(n)).unwrap_or_default();
            }
        }
        if by_op.is_empty() {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let total: i64 = by_op.values().map(|v| v.1).sum();
        let per_step = total as f64 / n;
        let peak = gpu_peak(&dev.name);
        let speedup = peak
            .as_ref()
            .filter(|p| p.fp32_tflops > 0.0 && p.tf32_tflops > 0.0)
            .map(|p| p.tf32_tflops / p.fp32_tflops)
            .unwrap_or(8.0);
        let impact = per_step * (1.0 - 1.0 / speedup);
        let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        let mut rows: Vec<(&str, (u64, i64, String))> = by_op.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1 .1));
        // AMD's words on AMD: matrix cores, vector ALUs, the gfx architecture.
        let (amd, vendor) = (dev.vendor == GpuVendor::Amd, dev.vendor);
        let arch = if amd {
            dev.arch.clone()
        } else {
            format!(
                "compute capability {}.{}",
                dev.compute_major, dev.compute_minor
            )
        };
        let mut evidence = vec![format!(
            "{} ({arch}): {:.3} ms per step of FP32 GEMM/conv kernels on {} ({share:.1} % of \
             the step)",
            dev.display_name(),
            ms(per_step),
            vendor.vector_units()
        )];
        for (op, (c, time, k)) in rows.iter().take(4) {
            evidence.push(format!(
                "{op}: {:.1} calls, {:.3} ms per step, e.g. kernel {k}",
                *c as f64 / n,
                ms(*time as f64 / n)
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "FP32 GEMMs run without {} ({share:.1} % of step)",
                    vendor.matrix_units()
                ),
                severity: if share >= 1.0 {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: impact,
                steps_seen: seen.iter().filter(|s| **s).count(),
                evidence,
                fix: if amd {
                    "Train in bf16 with torch.autocast(\"cuda\", dtype=torch.bfloat16) so that \
                     the GEMMs run on matrix cores (MFMA)."
                } else if dev.compute_major >= 8 {
                    "Enable TF32 with torch.set_float32_matmul_precision(\"high\") \
                     (and torch.backends.cudnn.allow_tf32 = True), or train in bf16 with \
                     torch.autocast(\"cuda\", dtype=torch.bfloat16)."
                } else {
                    "This GPU has no TF32 or BF16 tensor cores: train in FP16 with \
                     torch.autocast(\"cuda\", dtype=torch.float16) and a \
                     torch.amp.GradScaler."
                }
                .to_owned(),
                details: format!(
                    "FP32 inputs, no {} kernel, {} (torch-tb-profiler). Impact: GEMM time × \
                     (1 − FP32/TF32 peak) = × {:.3}{}.",
                    if amd { "matrix-core" } else { "tensor-core" },
                    if amd {
                        "an AMD GPU with matrix cores"
                    } else {
                        "compute capability ≥ 7.0"
                    },
                    1.0 - 1.0 / speedup,
                    if peak.is_some() {
                        ""
                    } else {
                        " (GPU not in the peak table: 8× assumed)"
                    }
                ),
            },
        )]
    }
}

/// A kernel name cut to 80 characters.
pub(crate) fn shorten(name: &str) -> String {
    if name.chars().count() > 80 {
        let s: String = name.chars().take(77).collect();
        format!("{s}...")
    } else {
        name.to_owned()
    }
}
