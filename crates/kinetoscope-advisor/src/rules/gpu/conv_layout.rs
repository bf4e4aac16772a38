//! GP006 `ConvLayoutTransposes`.
//!
//! ## What it finds
//! Convolutions that spend their time converting tensor layouts: kernels such as
//! `nchwToNhwcKernel`, `nhwcToNchwKernel` or `*transpose*` launched under convolution
//! operators (`aten::convolution`, `aten::cudnn_convolution`, their backwards).
//!
//! ## Why it matters
//! cuDNN's tensor-core convolution kernels work on NHWC (channels-last) data. A model in
//! the default NCHW layout has every convolution's input, weight and output transposed to
//! NHWC and back, in forward and backward: memory-bound copies that add nothing.
//!
//! ## Evidence
//! Convolution kernel time per step, the transpose kernels' time and share of it, the
//! transpose kernels and the convolution operators that launched them.
//!
//! ## Fix
//! Channels-last: `model = model.to(memory_format=torch.channels_last)` and
//! `x = x.to(memory_format=torch.channels_last)` for the inputs, so that cuDNN's (or, on
//! AMD, MIOpen's) NHWC kernels read the tensors as they are.
//!
//! ## Thresholds and sources
//! Flagged when the transpose kernels take more than 10 % of the convolutions' kernel
//! time (TraceLens conv analyser); a warning when they also take
//! ≥ 1 % of the step (proposal), else info. `conv_layout.*`. Impact: the transpose
//! kernels' time, which channels-last removes.

use std::collections::BTreeMap;

use kinetoscope_analysis::name_memo::NameMemo;
use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct ConvLayoutTransposes;

static META: RuleMeta = RuleMeta {
    code: "GP006",
    name: "ConvLayoutTransposes",
    family: "gpu",
    since: "0.1.0",
    summary: "Convolutions spend time on NCHW↔NHWC layout transposes",
};

/// Whether an operator is a convolution (forward or backward, any backend).
pub(crate) fn is_conv_op(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "convolution",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose",
        "conv_depthwise",
    ]
    .iter()
    .any(|p| n.contains(p))
}

/// Whether a kernel converts tensor layouts.
pub(crate) fn is_layout_transpose(kernel: &str) -> bool {
    let n = kernel.to_ascii_lowercase();
    n.contains("nchwtonhwc") || n.contains("nhwctonchw") || n.contains("transpose")
}

impl Rule for ConvLayoutTransposes {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        // Without a convolution span, no kernel can run inside one.
        if !facts.has_gpu || facts.n_steps() == 0 || !facts.any_named(is_conv_op) {
            return Vec::new();
        }
        let th = &config.conv_layout;
        let e = &facts.trace.events;
        let (mut conv_ns, mut transpose_ns) = (0i64, 0i64);
        // Transpose kernels by name: (calls, time); launching convolution ops: time.
        let mut kernels: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        let mut ops: BTreeMap<&str, i64> = BTreeMap::new();
        let mut seen = vec![false; facts.n_steps()];
        let mut in_conv = facts.named_ancestor_search(is_conv_op);
        let mut transpose = NameMemo::new(facts.trace, is_layout_transpose);
        for k in facts.each_event(&[CategoryKind::Kernel], |_| true) {
            let Some(s) = facts.step_of_event(k) else {
                continue;
            };
            let Some(launch) = facts.launcher_of(k) else {
                continue;
            };
            let Some(conv) = in_conv.nearest(launch) else {
                continue;
            };
            conv_ns += e.dur_ns.at(k);
            if transpose.get(e.name[k]) {
                let name = facts.name(k);
                transpose_ns += e.dur_ns.at(k);
                seen[s] = true;
                let r = kernels.entry(name).or_default();
                r.0 += 1;
                r.1 += e.dur_ns.at(k);
                *ops.entry(facts.name(conv)).or_default() += e.dur_ns.at(k);
            }
        }
        if conv_ns == 0 || transpose_ns == 0 {
            return Vec::new();
        }
        let share = 100.0 * transpose_ns as f64 / conv_ns as f64;
        if share <= th.max_transpose_share_pct {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let per_step = transpose_ns as f64 / n;
        let step_share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        let mut evidence = vec![format!(
            "{:.3} ms per step of convolution kernels, of which {:.3} ms ({share:.1} %) \
             transpose layouts ({step_share:.1} % of the step)",
            ms(conv_ns as f64 / n),
            ms(per_step)
        )];
        let mut rows: Vec<(&str, (u64, i64))> = kernels.into_iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1 .1));
        for (k, (c, t)) in rows.iter().take(3) {
            evidence.push(format!(
                "kernel {}: {:.1} calls, {:.3} ms per step",
                super::fp32_gemm::shorten(k),
                *c as f64 / n,
                ms(*t as f64 / n)
            ));
        }
        let mut op_rows: Vec<(&str, i64)> = ops.into_iter().collect();
        op_rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        evidence.push(format!(
            "launched under {}",
            op_rows
                .iter()
                .take(3)
                .map(|(o, t)| format!("{o} ({:.3} ms/step)", ms(*t as f64 / n)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "Convolutions spend {share:.0} % of their GPU time transposing layouts \
                     ({step_share:.1} % of step)"
                ),
                severity: if step_share >= th.warning_step_share_pct {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: per_step,
                steps_seen: seen.iter().filter(|s| **s).count(),
                evidence,
                fix: format!(
                    "Use channels-last: model = model.to(memory_format=torch.channels_last) \
                     and inputs x.to(memory_format=torch.channels_last) ({}'s NHWC \
                     convolution kernels then read the tensors as they are).",
                    if facts.on_amd() { "MIOpen" } else { "cuDNN" }
                ),
                details: format!(
                    "Transpose kernels {share:.1} % > {} % of convolution kernel time \
                     (TraceLens conv analyser); warning from {} % of \
                     the step (proposal). Impact: the transpose kernels' time.",
                    th.max_transpose_share_pct, th.warning_step_share_pct
                ),
            },
        )]
    }
}
