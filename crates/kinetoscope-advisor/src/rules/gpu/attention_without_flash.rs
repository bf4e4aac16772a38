//! GP004 `AttentionWithoutFlash`.
//!
//! ## What it finds
//! Attention computed without a fused kernel: the SDPA math fallback
//! (`aten::_scaled_dot_product_attention_math`), or a hand-written attention whose
//! softmax runs over an S×S score tensor (`aten::softmax` / `aten::_softmax` with equal
//! last two dimensions ≥ 128) outside any fused SDPA operator.
//!
//! ## Why it matters
//! The unfused path materialises B·H·S² scores in memory (quadratic in sequence length)
//! and runs several memory-bound kernels where FlashAttention / memory-efficient
//! attention run one.
//!
//! ## Evidence
//! The operators, their shapes, calls and time per step, the size of the score tensor.
//!
//! ## Fix
//! `torch.nn.functional.scaled_dot_product_attention` (HF
//! `attn_implementation="sdpa"` or `"flash_attention_2"`), with fp16/bf16 inputs, a
//! supported head dim, and `is_causal=True` instead of a dense mask.
//!
//! ## Thresholds and sources
//! Presence in ≥ 2 steps (step gating from TraceML); warning on
//! GPU traces, info on CPU-only traces.

use kinetoscope_trace::{parse_dims, CategoryKind, EventId};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct AttentionWithoutFlash;

static META: RuleMeta = RuleMeta {
    code: "GP004",
    name: "AttentionWithoutFlash",
    family: "gpu",
    since: "0.1.0",
    summary: "Attention without flash / memory-efficient kernels",
};

const MATH: &str = "aten::_scaled_dot_product_attention_math";

impl Rule for AttentionWithoutFlash {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if facts.n_steps() == 0 {
            return Vec::new();
        }
        let t = facts.trace;
        let mut hits: Vec<(usize, String)> = Vec::new();
        let mut in_attention = facts.named_ancestor_search(|n| n == MATH || n == "aten::softmax");
        for i in facts.events(&[CategoryKind::CpuOp], |n| {
            n == MATH || n == "aten::softmax" || n == "aten::_softmax"
        }) {
            let name = facts.name(i);
            if name == MATH {
                hits.push((i, "SDPA math fallback".to_owned()));
                continue;
            }
            if in_attention.any(i) {
                continue;
            }
            let Some(args) = t.args.op_of(EventId(i as u32)) else {
                continue;
            };
            let dims = parse_dims(t.strings.get(args.input_dims)).unwrap_or_default();
            let Some(x) = dims.first() else { continue };
            if x.len() >= 3 && x[x.len() - 1] == x[x.len() - 2] && x[x.len() - 1] >= 128 {
                hits.push((i, format!("softmax over S×S scores {x:?}")));
            }
        }
        let hits: Vec<(usize, String)> = hits
            .into_iter()
            .filter(|(i, _)| facts.step_of_event(*i).is_some())
            .collect();
        if hits.is_empty() {
            return Vec::new();
        }
        let idx: Vec<usize> = hits.iter().map(|h| h.0).collect();
        let seen = facts
            .per_step_count(&idx)
            .iter()
            .filter(|c| **c > 0)
            .count();
        let n = facts.n_steps() as f64;
        let time: i64 = idx.iter().map(|&i| facts.op_time_ns(i)).sum();
        let per_step = time as f64 / n;
        let mut evidence = vec![format!(
            "{:.1} unfused attention calls per step, {}",
            hits.len() as f64 / n,
            if facts.device_activity_missing() {
                "time unknown (device activity missing from the trace)".to_owned()
            } else {
                format!("{:.3} ms per step", ms(per_step))
            }
        )];
        let mut kinds: Vec<&str> = hits.iter().map(|h| h.1.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        evidence.extend(kinds.iter().take(3).map(|k| (*k).to_owned()));
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: "Attention runs without a fused (flash / memory-efficient) kernel"
                    .to_owned(),
                severity: if facts.has_gpu {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: per_step,
                steps_seen: seen,
                evidence,
                fix: "Use torch.nn.functional.scaled_dot_product_attention (HF: \
                      attn_implementation=\"sdpa\" or \"flash_attention_2\") with fp16/bf16 \
                      inputs and is_causal=True instead of a dense mask."
                    .to_owned(),
                details: "Math SDPA fallback or S×S softmax outside fused attention. \
                          Impact: the time of the unfused softmax / \
                          math operator (upper bound)."
                    .to_owned(),
            },
        )]
    }
}
