//! GP007 `GemmDimsNotAligned`.
//!
//! ## What it finds
//! FP16/BF16 matrix multiplications (`aten::mm`, `addmm`, `bmm`, `baddbmm`, `matmul`,
//! `linear`) whose M, N or K, read from `Input Dims` (`record_shapes=True`), is not a
//! multiple of 8, and FP8 ones (`aten::_scaled_mm`) not a multiple of 16.
//!
//! ## Why it matters
//! Tensor cores work on tiles of 8 (FP16/BF16) or 16 (FP8) elements. cuBLAS pads or
//! falls back to slower kernels when a dimension does not divide: a vocabulary of 50257
//! or a hidden size of 1000 wastes tensor-core throughput on every call, forward and
//! backward.
//!
//! ## Evidence
//! The misaligned GEMMs' GPU time per step and share of the step, and the shapes that
//! take the most time, with the dimensions at fault.
//!
//! ## Fix
//! Pad the dimensions the model controls (hidden and feed-forward sizes, vocabulary,
//! heads × head dim, batch × sequence) to a multiple of 8 for FP16/BF16 and 16 for FP8;
//! NVIDIA's performance guide recommends multiples of 64 on A100 and newer (unverified).
//!
//! ## Thresholds and sources
//! Multiples of 8 (FP16/BF16) and 16 (FP8), after NVIDIA's matrix-multiplication
//! performance guide (unverified per dtype). Warning when the misaligned GEMMs take ≥ 1 %
//! of the step (proposal), else info. Impact: 25 % of their time (proposal: the gain
//! depends on the cuBLAS version and GPU). `gemm_alignment.*`. The outermost of nested
//! GEMM operators is counted (`aten::linear` over its `aten::addmm`), once.

use std::collections::BTreeMap;

use kinetoscope_trace::{parse_dims, CategoryKind, EventId};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct GemmDimsNotAligned;

static META: RuleMeta = RuleMeta {
    code: "GP007",
    name: "GemmDimsNotAligned",
    family: "gpu",
    since: "0.1.0",
    summary: "FP16/BF16/FP8 GEMMs with dimensions that are not multiples of 8 (16 for FP8)",
};

const GEMMS: [&str; 7] = [
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::matmul",
    "aten::linear",
    "aten::_scaled_mm",
];

/// (M, N, K) of a GEMM operator from its input shapes; `None` when the shapes do not
/// fit the operator.
pub(crate) fn gemm_mnk(op: &str, dims: &[Vec<i64>]) -> Option<(i64, i64, i64)> {
    let two = |a: &[i64], b: &[i64]| -> Option<(i64, i64, i64)> {
        if a.len() < 2 || b.len() < 2 {
            return None;
        }
        Some((a[a.len() - 2], b[b.len() - 1], a[a.len() - 1]))
    };
    match op {
        "aten::mm" | "aten::bmm" | "aten::matmul" | "aten::_scaled_mm" => {
            two(dims.first()?, dims.get(1)?)
        }
        "aten::addmm" | "aten::baddbmm" => two(dims.get(1)?, dims.get(2)?),
        "aten::linear" => {
            // input [..., K], weight [N, K].
            let (x, w) = (dims.first()?, dims.get(1)?);
            if x.is_empty() || w.len() != 2 {
                return None;
            }
            let m: i64 = x[..x.len() - 1].iter().product();
            Some((m, w[0], w[1]))
        }
        _ => None,
    }
}

/// The multiple a GEMM's dimensions should be of, from its input types; `None` for
/// precisions the rule does not judge (FP32, integers).
fn required_multiple(types: &[String], config: &Config) -> Option<(i64, &'static str)> {
    let g = &config.gemm_alignment;
    if types.iter().any(|t| t.contains("Float8")) {
        Some((g.multiple_8bit, "FP8"))
    } else if types.iter().any(|t| t == "c10::Half") {
        Some((g.multiple_16bit, "FP16"))
    } else if types.iter().any(|t| t == "c10::BFloat16") {
        Some((g.multiple_16bit, "BF16"))
    } else {
        None
    }
}

/// Per shape: calls, GPU time, the misaligned dimensions.
type Row = (u64, i64, String);

impl Rule for GemmDimsNotAligned {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let t = facts.trace;
        let e = &t.events;
        let th = &config.gemm_alignment;
        let ops = facts.outermost(&facts.events(&[CategoryKind::CpuOp], |n| GEMMS.contains(&n)));
        let mut rows: BTreeMap<String, Row> = BTreeMap::new();
        let mut seen = vec![false; facts.n_steps()];
        let mut total = 0i64;
        for i in ops {
            let Some(s) = facts.step_of(e.ts_ns[i]) else {
                continue;
            };
            let Some(args) = t.args.op_of(EventId(i as u32)) else {
                continue;
            };
            let types: Vec<String> =
                serde_json::from_str(t.strings.get(args.input_types)).unwrap_or_default();
            let Some((multiple, dtype)) = required_multiple(&types, config) else {
                continue;
            };
            if multiple <= 1 {
                continue;
            }
            let Some(dims) = parse_dims(t.strings.get(args.input_dims)) else {
                continue;
            };
            let op = facts.name(i);
            let Some((m, n, k)) = gemm_mnk(op, &dims) else {
                continue;
            };
            let bad: Vec<String> = [("M", m), ("N", n), ("K", k)]
                .iter()
                .filter(|(_, d)| *d > 0 && d % multiple != 0)
                .map(|(l, d)| format!("{l}={d}"))
                .collect();
            if bad.is_empty() {
                continue;
            }
            let time = facts.launched_device_ns(i);
            if time == 0 {
                continue;
            }
            seen[s] = true;
            total += time;
            let key = format!("{op} {dtype} M={m} N={n} K={k}");
            let row = rows.entry(key).or_default();
            row.0 += 1;
            row.1 += time;
            if row.2.is_empty() {
                row.2 = format!("{} not a multiple of {multiple}", bad.join(", "));
            }
        }
        if rows.is_empty() {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let per_step = total as f64 / n;
        let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        let mut rows: Vec<(String, Row)> = rows.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1 .1));
        let mut evidence = vec![format!(
            "{:.3} ms per step of GPU time in {} GEMM shape(s) with misaligned dimensions \
             ({share:.1} % of the step)",
            ms(per_step),
            rows.len()
        )];
        for (shape, (c, time, bad)) in rows.iter().take(4) {
            evidence.push(format!(
                "{shape}: {bad}; {:.1} calls, {:.3} ms per step",
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
                    "Low-precision GEMMs with dimensions not multiples of {}{} ({share:.1} % \
                     of step)",
                    th.multiple_16bit,
                    if rows.iter().any(|r| r.0.contains(" FP8 ")) {
                        format!(" ({} for FP8)", th.multiple_8bit)
                    } else {
                        String::new()
                    }
                ),
                severity: if share >= th.warning_step_share_pct {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: per_step * th.recoverable_pct / 100.0,
                steps_seen: seen.iter().filter(|s| **s).count(),
                evidence,
                fix: format!(
                    "Pad the dimensions the model controls (hidden / feed-forward sizes, \
                     vocabulary, batch × sequence) to multiples of {} for FP16/BF16 and {} \
                     for FP8; on A100 and newer, multiples of 64 are better still (NVIDIA \
                     performance guide).",
                    th.multiple_16bit, th.multiple_8bit
                ),
                details: format!(
                    "FP16/BF16 dimensions not multiples of {}, FP8 not of {} (after \
                     NVIDIA's matmul performance guide; unverified per dtype); \
                     warning from {} % of the step (proposal). Impact: {} % of the misaligned \
                     GEMMs' time (proposal).",
                    th.multiple_16bit,
                    th.multiple_8bit,
                    th.warning_step_share_pct,
                    th.recoverable_pct
                ),
            },
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnk_per_operator() {
        let d = |v: &[&[i64]]| v.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
        assert_eq!(
            gemm_mnk("aten::mm", &d(&[&[64, 100], &[100, 32]])),
            Some((64, 32, 100))
        );
        assert_eq!(
            gemm_mnk("aten::addmm", &d(&[&[32], &[64, 100], &[100, 32]])),
            Some((64, 32, 100))
        );
        assert_eq!(
            gemm_mnk("aten::bmm", &d(&[&[4, 64, 100], &[4, 100, 32]])),
            Some((64, 32, 100))
        );
        // linear: input [B, S, K], weight [N, K].
        assert_eq!(
            gemm_mnk(
                "aten::linear",
                &d(&[&[2, 6, 1000], &[50257, 1000], &[50257]])
            ),
            Some((12, 50257, 1000))
        );
        assert_eq!(gemm_mnk("aten::mm", &d(&[&[64]])), None);
    }
}
