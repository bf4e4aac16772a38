//! GP009 `RooflineGap`.
//!
//! ## What it finds
//! The operator shapes with the most GPU time lost against the roofline: the rows of the
//! perf model (`kinetoscope perf`, `docs/metrics.md`) over the calls inside the steps
//! that reach less than half of their roofline, ranked by kernel time minus the time
//! their FLOPs and bytes need at the device's peaks. Calls and kernels another finding claims are left out: calls inside
//! `Optimizer.*` spans (OP001, OP002), math attention and softmax (GP004), FP32 GEMMs
//! and convolutions on CUDA cores (GP003), GEMMs with misaligned dimensions (GP007),
//! the kernels LowOccupancy flags (GP008), layout transposes (GP006) and host-device
//! copies (TR001, TR002).
//!
//! ## Why it matters
//! A shape far below its roofline spends time the hardware could give back: a chain of
//! memory-bound element-wise kernels reads and writes every tensor once per op, a small
//! GEMM leaves tensor cores idle, FP32 work runs at a fraction of BF16's peak.
//!
//! ## Evidence
//! The shapes with the most time lost per step: calls, kernel time, achieved TFLOP/s and
//! TB/s, the fraction of the roofline reached and whether compute or memory bounds it.
//!
//! ## Fix
//! Memory-bound element-wise, reduction and normalisation chains: fuse them
//! (`torch.compile`, fused kernels). Memory-bound (small) GEMMs: batch them (`bmm`,
//! grouped GEMM, larger batches). Compute-bound GEMMs: let the library try more kernels
//! (`max-autotune`, TunableOp). No padding advice: the GEMMs named here are aligned
//! (GP007 claims the others). FP32 (or TF32) matrix work: BF16 autocast where the
//! precision allows.
//!
//! ## Thresholds and sources
//! The roofline model (Williams, Waterman and Patterson, CACM 2009) with the device peak
//! table (`docs/devices.md`). Shapes below `roofline_gap.max_roofline_fraction` (0.5,
//! proposal: tuned GEMMs reach 60–80 % of the dense peak) count; the
//! `roofline_gap.top_shapes` (5) with the most time lost are named; no finding below 1 % of the step, warning from 5 % (proposals, as
//! GP008). Impact: the time those shapes lose per step (an upper bound: the roofline is
//! not always reachable).

use std::cell::RefCell;

use kinetoscope_analysis::name_memo::NameMemo;
use kinetoscope_analysis::perf::devices::Units;
use kinetoscope_analysis::perf::family::Family;
use kinetoscope_analysis::perf::flops::Precision;
use kinetoscope_analysis::perf::gemm::gemm_of;
use kinetoscope_analysis::perf::{Bound, PerfOptions, PerfRow};
use kinetoscope_trace::{parse_dims, CategoryKind, Phase};
use rustc_hash::FxHashSet;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::gpu::conv_layout::is_layout_transpose;
use crate::rules::gpu::gemm_alignment::required_multiple;
use crate::rules::gpu::low_occupancy::flagged_kernels;
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct RooflineGap;

static META: RuleMeta = RuleMeta {
    code: "GP009",
    name: "RooflineGap",
    family: "gpu",
    since: "0.1.0",
    summary: "Operator shapes far below the roofline (time lost against the device's peaks)",
};

/// Spans whose calls other rules claim (optimizer steps, math attention, softmax).
fn claimed_span(name: &str) -> bool {
    name.starts_with("Optimizer.")
        || name == "aten::_scaled_dot_product_attention_math"
        || name == "aten::softmax"
        || name == "aten::_softmax"
}

/// Whether GP003 or GP007 claims a row: FP32 matrix work on CUDA cores, or a 16/8-bit
/// GEMM with a misaligned dimension.
fn claimed_row(row: &PerfRow, config: &Config) -> bool {
    if row.units == Some(Units::Matrix) && row.precision == Some(Precision::Fp32) {
        return true;
    }
    if row.family != Family::Gemm {
        return false;
    }
    let types: Vec<String> = serde_json::from_str(&row.dtypes).unwrap_or_default();
    let Some((multiple, _)) = required_multiple(&types, config) else {
        return false;
    };
    let Some(g) = parse_dims(&row.input_dims).and_then(|d| gemm_of(&row.name, &d)) else {
        return false;
    };
    multiple > 1 && [g.m, g.n, g.k].iter().any(|d| *d > 1 && d % multiple != 0)
}

/// The fixes that apply to the shapes named.
fn fixes(rows: &[&PerfRow]) -> String {
    let mut out = Vec::new();
    if rows
        .iter()
        .any(|r| r.bound == Some(Bound::Memory) && !r.family.uses_matrix_units())
    {
        out.push(
            "fuse the memory-bound element-wise / reduction / normalisation chains \
             (torch.compile, or fused kernels) so each tensor is read and written once",
        );
    }
    // Misaligned GEMMs are GP007's (claimed before this rule), so the named ones are
    // aligned: no padding advice here.
    let gemms = |bound: Bound| {
        rows.iter()
            .any(|r| r.family == Family::Gemm && r.bound == Some(bound))
    };
    if gemms(Bound::Memory) {
        out.push(
            "batch the small, memory-bound GEMMs (bmm, grouped GEMM, larger batches) so each \
             weight is read once for more rows",
        );
    }
    if gemms(Bound::Compute) {
        out.push(
            "let the GEMM library try more kernels for these shapes: \
             torch.compile(mode=\"max-autotune\") or PyTorch's TunableOp \
             (PYTORCH_TUNABLEOP_ENABLED=1)",
        );
    }

    if rows
        .iter()
        .any(|r| matches!(r.precision, Some(Precision::Fp32 | Precision::Tf32)))
    {
        out.push("run FP32 work in BF16 (torch.autocast) where the precision allows");
    }
    if out.is_empty() {
        out.push("profile the kernels of these shapes against their roofline");
    }
    let mut text = out.join("; ");
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    text.push('.');
    text
}

impl Rule for RooflineGap {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 || facts.device_activity_missing() {
            return Vec::new();
        }
        let th = &config.roofline_gap;
        let t = facts.trace;
        // A call is claimed when it, or an operator or annotation around it, is one
        // that other findings explain. Asked only of the calls the model measures.
        let inside = RefCell::new(facts.named_ancestor_search(claimed_span));
        let claimed_name = RefCell::new(NameMemo::new(t, claimed_span));
        let claimed = |ev: usize| {
            matches!(
                t.categories.kind(t.events.cat[ev]),
                CategoryKind::CpuOp | CategoryKind::UserAnnotation
            ) && t.events.phase[ev] == Phase::Complete
                && (claimed_name.borrow_mut().get(t.events.name[ev]) || inside.borrow_mut().any(ev))
        };
        let low_occupancy: FxHashSet<String> = flagged_kernels(facts, config)
            .map(|f| f.kernels.iter().map(|(r, _)| r.name.clone()).collect())
            .unwrap_or_default();
        let keep_call = |ev: usize| facts.step_of_event(ev).is_some() && !claimed(ev);
        // Name tests once per distinct name.
        let kept_name = RefCell::new(NameMemo::new(t, |name: &str| {
            !low_occupancy.contains(name) && !is_layout_transpose(name)
        }));
        let host_copy_name = RefCell::new(NameMemo::new(t, |name: &str| {
            name.contains("HtoD") || name.contains("DtoH")
        }));
        let keep_gpu = |ev: usize| {
            let name = t.events.name[ev];
            let host_copy = t.categories.kind(t.events.cat[ev]) == CategoryKind::GpuMemcpy
                && host_copy_name.borrow_mut().get(name);
            kept_name.borrow_mut().get(name) && !host_copy
        };
        let opts = PerfOptions {
            peak_tflops: config.peak_tflops,
            peak_tbps: None,
            top: 0,
        };
        let table = facts.perf_model(&opts, &keep_call, &keep_gpu);
        let rows: Vec<&PerfRow> = table
            .rows
            .iter()
            .filter(|r| {
                r.lost_us.is_some_and(|l| l > 0.0)
                    && r.roofline_fraction
                        .is_some_and(|f| f < th.max_roofline_fraction)
                    && !claimed_row(r, config)
            })
            .take(th.top_shapes)
            .collect();
        if rows.is_empty() {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let lost_ns: f64 = rows.iter().filter_map(|r| r.lost_us).sum::<f64>() * 1e3;
        let per_step = lost_ns / n;
        let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        if share < th.min_step_share_pct {
            return Vec::new();
        }
        let calls: u64 = rows.iter().map(|r| r.calls).sum();
        let peaks = table
            .peaks
            .as_ref()
            .map_or_else(|| "the --peak-tflops given".to_owned(), |p| p.model.clone());
        let mut evidence = vec![format!(
            "{} shape(s) lose {:.3} ms per step against the roofline of {peaks} ({share:.1} % \
             of the step)",
            rows.len(),
            ms(per_step)
        )];
        for r in &rows {
            evidence.push(format!(
                "{} {} ({}): {:.1} calls, {:.3} ms of kernels per step, {:.2} TFLOP/s, {:.3} \
                 TB/s, {:.0} % of the roofline ({}-bound), {:.3} ms lost per step",
                r.name,
                r.input_dims,
                r.dtypes,
                r.calls as f64 / n,
                ms(r.kernel_us * 1e3 / n),
                r.tflops.unwrap_or(0.0),
                r.tbps.unwrap_or(0.0),
                100.0 * r.roofline_fraction.unwrap_or(0.0),
                match r.bound {
                    Some(Bound::Compute) => "compute",
                    _ => "memory",
                },
                ms(r.lost_us.unwrap_or(0.0) * 1e3 / n)
            ));
        }
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: "Operator shapes run far below the roofline".to_owned(),
                severity: if share >= th.warning_step_share_pct {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: per_step,
                steps_seen: (calls as usize).min(facts.n_steps()),
                evidence,
                fix: fixes(&rows),
                details: format!(
                    "Perf model over the calls inside the steps (kinetoscope perf), without \
                     the calls and kernels OP001, OP002, GP003, GP004, GP006, GP007, GP008, \
                     TR001 and TR002 claim. Named: the {} shapes below {} % of their \
                     roofline with the most time lost; no finding below {} % of the step, \
                     warning from {} % (proposals). Impact: their kernel time minus the time the roofline \
                     allows (an upper bound).",
                    th.top_shapes,
                    100.0 * th.max_roofline_fraction,
                    th.min_step_share_pct,
                    th.warning_step_share_pct
                ),
            },
        )]
    }
}
