//! GP007 `GemmDimsNotAligned`.
//!
//! ## What it finds
//! FP16/BF16 matrix multiplications (every GEMM-family operator of the advisor's one
//! GEMM recogniser: `aten::mm`, `bmm`, `matmul`, `linear`, `addmm`, `baddbmm`, …)
//! whose M, N or K, read from `Input Dims` (`record_shapes=True`), is not a multiple of
//! 8, and FP8 ones (`aten::_scaled_mm`) not a multiple of 16. A dimension of 1 is a
//! vector (a matrix-vector product, one-token decode), not a tile to pad.
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
//! NVIDIA's performance guide recommends multiples of 64 on A100 and newer (unverified;
//! said on NVIDIA devices only).
//!
//! ## Thresholds and sources
//! Multiples of 8 (FP16/BF16) and 16 (FP8), after NVIDIA's matrix-multiplication
//! performance guide (unverified per dtype). Warning when the misaligned GEMMs take ≥ 1 %
//! of the step (proposal), else info. Impact: 25 % of their time (proposal: the gain
//! depends on the cuBLAS version and GPU). `gemm_alignment.*`. The outermost of nested
//! GEMM operators is counted (`aten::linear` over its `aten::addmm`), once.

use std::collections::BTreeMap;

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

/// The multiple a GEMM's dimensions should be of, from its input types; `None` for
/// precisions the rule does not judge (FP32, integers).
pub(crate) fn required_multiple(types: &[String], config: &Config) -> Option<(i64, &'static str)> {
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
        let th = &config.gemm_alignment;
        let mut rows: BTreeMap<String, Row> = BTreeMap::new();
        let mut seen = vec![false; facts.n_steps()];
        let mut total = 0i64;
        for call in facts.gemms() {
            let i = call.event;
            let Some(s) = facts.step_of_event(i) else {
                continue;
            };
            let Some((multiple, dtype)) = required_multiple(&call.types, config) else {
                continue;
            };
            if multiple <= 1 {
                continue;
            }
            let op = facts.name(i);
            let (m, n, k) = (call.gemm.m, call.gemm.n, call.gemm.k);
            let bad: Vec<String> = [("M", m), ("N", n), ("K", k)]
                .iter()
                .filter(|(_, d)| *d > 1 && d % multiple != 0)
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
                     for FP8{}.",
                    th.multiple_16bit,
                    th.multiple_8bit,
                    if facts.on_amd() {
                        ""
                    } else {
                        "; on A100 and newer, multiples of 64 are better still (NVIDIA \
                         performance guide)"
                    }
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
