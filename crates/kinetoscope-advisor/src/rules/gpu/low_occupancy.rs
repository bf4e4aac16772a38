//! GP008 `LowOccupancy`.
//!
//! ## What it finds
//! Kernels that dominate GPU time but keep few warps resident: their kernel-time-weighted
//! `est. achieved occupancy %` (Kineto's kernel arg) is low, often because the grid has
//! fewer blocks than the GPU has SMs (`blocks per SM` < 1).
//!
//! ## Why it matters
//! A GPU hides memory and instruction latency by switching between resident warps. With
//! few warps per SM (or idle SMs, when the grid is smaller than the SM count) a kernel
//! runs well below the GPU's throughput although the GPU looks busy.
//!
//! ## Evidence
//! Per flagged kernel: GPU time per step, time-weighted occupancy and blocks per SM, and
//! its launch shape (block size, registers per thread, shared memory).
//!
//! ## Fix
//! More parallel work per launch (larger batch, fused or `torch.compile`d kernels);
//! for grids smaller than the SM count, larger problem sizes or split-K; for
//! register- or shared-memory-limited custom kernels, smaller tiles or
//! `__launch_bounds__` / Triton `num_warps` tuning.
//!
//! ## Thresholds and sources
//! The dominant kernels are the names that, longest total first, cover 80 % of the
//! (non-communication) kernel time; a kernel among them is flagged when its time-weighted
//! occupancy is below 25 % (both proposals: advisor-rules.md 3.16 names the signal,
//! "low occupancy / blocks per SM < 1 … weighted by kernel time", without a threshold;
//! the weighting is torch-tb-profiler's, metrics.md A.6). Vendor-tuned GEMM,
//! convolution and attention kernels (tensor-core kernels, `sgemm`, cuDNN, CUTLASS,
//! flash) trade occupancy for registers on purpose: they are flagged only when their
//! time-weighted blocks per SM is below 1 (idle SMs). Communication kernels are not
//! judged. No finding below 1 % of the step; warning from 5 % (proposals), else info.
//! Impact: time × (1 − occupancy / 25 %) — the time saved if run time were inversely
//! proportional to occupancy up to the threshold (optimistic) — or, for a small grid,
//! time × (1 − blocks per SM). `low_occupancy.*`.

use std::collections::BTreeMap;

use kinetoscope_analysis::comm::names::is_comm_kernel;
use kinetoscope_analysis::overview::tensor_cores::uses_tensor_cores;
use kinetoscope_trace::{CategoryKind, EventId};

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct LowOccupancy;

static META: RuleMeta = RuleMeta {
    code: "GP008",
    name: "LowOccupancy",
    family: "gpu",
    since: "0.1.0",
    summary: "The kernels that dominate GPU time run at low achieved occupancy",
};

/// One kernel name's launches inside steps.
#[derive(Default)]
struct Agg {
    calls: u64,
    total_ns: i64,
    /// Σ occupancy % · dur and Σ dur over launches with a known occupancy.
    occ_sum: f64,
    occ_ns: i64,
    /// Σ blocks per SM · dur and Σ dur over launches that record it.
    bpsm_sum: f64,
    bpsm_ns: i64,
    /// First launch's event (for its launch shape).
    example: usize,
    steps: Vec<bool>,
}

/// Vendor-tuned GEMM, convolution and attention kernels (tensor-core kernels, cuBLAS
/// `sgemm`, cuDNN, CUTLASS, FlashAttention) trade occupancy for registers and shared
/// memory on purpose; their efficiency is judged by FLOP/s, not occupancy.
fn is_tuned_library_kernel(name: &str) -> bool {
    if uses_tensor_cores(name) {
        return true;
    }
    let n = name.to_ascii_lowercase();
    [
        "gemm",
        "cudnn",
        "cutlass",
        "flash",
        "fmha",
        "xmma",
        "nvjet",
        "implicit_convolve",
    ]
    .iter()
    .any(|p| n.contains(p))
}

impl Rule for LowOccupancy {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let th = &config.low_occupancy;
        let t = facts.trace;
        let e = &t.events;
        let mut by_name: BTreeMap<&str, Agg> = BTreeMap::new();
        let mut all_ns = 0i64;
        for k in facts.events(&[CategoryKind::Kernel], |n| !is_comm_kernel(n)) {
            let Some(s) = facts.step_of(e.ts_ns[k]) else {
                continue;
            };
            let dur = e.dur_ns[k];
            all_ns += dur;
            let a = by_name.entry(facts.name(k)).or_insert_with(|| Agg {
                example: k,
                steps: vec![false; facts.n_steps()],
                ..Agg::default()
            });
            a.calls += 1;
            a.total_ns += dur;
            a.steps[s] = true;
            if let Some(args) = t.args.kernel_of(EventId(k as u32)) {
                if let Some(o) = args.est_achieved_occupancy_pct {
                    a.occ_sum += f64::from(o) * dur as f64;
                    a.occ_ns += dur;
                }
                if let Some(b) = args.blocks_per_sm {
                    a.bpsm_sum += f64::from(b) * dur as f64;
                    a.bpsm_ns += dur;
                }
            }
        }
        if all_ns == 0 {
            return Vec::new();
        }
        let mut rows: Vec<(&str, Agg)> = by_name.into_iter().collect();
        rows.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(b.0)));
        // The dominant kernels: longest first until they cover the share.
        let mut covered = 0i64;
        let mut dominant = 0;
        for r in &rows {
            if 100.0 * covered as f64 / all_ns as f64 >= th.dominant_share_pct {
                break;
            }
            covered += r.1.total_ns;
            dominant += 1;
        }
        let occ = |a: &Agg| (a.occ_ns > 0).then(|| a.occ_sum / a.occ_ns as f64);
        let bpsm = |a: &Agg| (a.bpsm_ns > 0).then(|| a.bpsm_sum / a.bpsm_ns as f64);
        // Fraction of its time a flagged kernel could save, or `None` when not flagged.
        let gain = |name: &str, a: &Agg| -> Option<f64> {
            if is_tuned_library_kernel(name) {
                // Low occupancy by design; only a grid smaller than the SM count counts.
                bpsm(a).filter(|b| *b < 1.0).map(|b| 1.0 - b)
            } else {
                occ(a)
                    .filter(|o| *o < th.warning_below_pct)
                    .map(|o| 1.0 - o / th.warning_below_pct)
            }
        };
        let flagged: Vec<(&str, &Agg, f64)> = rows[..dominant]
            .iter()
            .filter_map(|(name, a)| gain(name, a).map(|g| (*name, a, g)))
            .collect();
        if flagged.is_empty() {
            return Vec::new();
        }
        let n = facts.n_steps() as f64;
        let flagged_ns: i64 = flagged.iter().map(|r| r.1.total_ns).sum();
        let per_step = flagged_ns as f64 / n;
        let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        if share < th.min_step_share_pct {
            return Vec::new();
        }
        let (w_sum, w_ns) = flagged.iter().fold((0.0, 0i64), |acc, r| {
            (acc.0 + r.1.occ_sum, acc.1 + r.1.occ_ns)
        });
        let mean_occ = w_sum / w_ns.max(1) as f64;
        let impact: f64 = flagged
            .iter()
            .map(|r| r.1.total_ns as f64 * r.2.clamp(0.0, 1.0))
            .sum::<f64>()
            / n;
        let mut steps_seen = vec![false; facts.n_steps()];
        for r in &flagged {
            for (s, v) in r.1.steps.iter().enumerate() {
                steps_seen[s] |= *v;
            }
        }
        let mut evidence = vec![format!(
            "{} of the {dominant} kernel(s) that make up {:.0} % of kernel time run below {} % \
             occupancy (or, for tuned GEMM/convolution/attention kernels, on fewer blocks than \
             SMs): {:.3} ms per step ({share:.1} % of the step), time-weighted occupancy \
             {mean_occ:.1} %",
            flagged.len(),
            100.0 * covered as f64 / all_ns as f64,
            th.warning_below_pct,
            ms(per_step)
        )];
        let mut small_grid = false;
        for (name, a, _) in flagged.iter().take(4) {
            let bpsm = bpsm(a);
            small_grid |= bpsm.is_some_and(|b| b < 1.0);
            let shape = t
                .args
                .kernel_of(EventId(a.example as u32))
                .map(|k| {
                    format!(
                        "; block {}×{}×{}, {} registers/thread, {} B shared memory",
                        k.block[0], k.block[1], k.block[2], k.registers_per_thread, k.shared_memory
                    )
                })
                .unwrap_or_default();
            evidence.push(format!(
                "{}: {:.1} calls, {:.3} ms per step, occupancy {}{}{shape}",
                super::fp32_gemm::shorten(name),
                a.calls as f64 / n,
                ms(a.total_ns as f64 / n),
                occ(a)
                    .map(|o| format!("{o:.1} %"))
                    .unwrap_or_else(|| "unknown".to_owned()),
                bpsm.map(|b| format!(
                    ", {b:.2} blocks per SM{}",
                    if b < 1.0 {
                        " (grid smaller than the SM count)"
                    } else {
                        ""
                    }
                ))
                .unwrap_or_default()
            ));
        }
        let mut fix = String::from(
            "Give each launch more parallel work: larger batches, fused kernels \
             (torch.compile), fewer tiny per-tensor kernels.",
        );
        if small_grid {
            fix.push_str(
                " Grids smaller than the SM count leave SMs idle: larger problem sizes, \
                 split-K or batching independent launches together.",
            );
        }
        fix.push_str(
            " For custom (Triton/CUDA) kernels limited by registers or shared memory: \
             smaller tiles, num_warps / __launch_bounds__ tuning.",
        );
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: if w_ns > 0 {
                    format!(
                        "Dominant kernels run at {mean_occ:.0} % achieved occupancy ({share:.1} \
                         % of step)"
                    )
                } else {
                    format!("Dominant kernels launch fewer blocks than SMs ({share:.1} % of step)")
                },
                severity: if share >= th.warning_step_share_pct {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                impact_ns: impact,
                steps_seen: steps_seen.iter().filter(|s| **s).count(),
                evidence,
                fix,
                details: format!(
                    "Kernels covering {} % of kernel time with time-weighted est. achieved \
                     occupancy < {} % (both proposals; advisor-rules.md 3.16, weighting as \
                     torch-tb-profiler, metrics.md A.6); tuned GEMM/convolution/attention \
                     kernels only when blocks per SM < 1; communication kernels not judged; \
                     warning from {} % of the step (proposal). Impact: time × (1 − occupancy / \
                     {} %), or × (1 − blocks per SM) for small grids; optimistic.",
                    th.dominant_share_pct,
                    th.warning_below_pct,
                    th.warning_step_share_pct,
                    th.warning_below_pct
                ),
            },
        )]
    }
}
