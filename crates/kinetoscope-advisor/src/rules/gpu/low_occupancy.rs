//! GP008 `LowOccupancy`.
//!
//! ## What it finds
//! Kernels that dominate GPU time but keep few warps resident: their kernel-time-weighted
//! `est. achieved occupancy %` (Kineto's kernel arg) is low, often because the grid has
//! fewer blocks than the GPU has SMs (`blocks per SM` < 1). The per-kernel numbers are
//! the rows of `kinetoscope kernels` (by name), over the kernels inside the steps.
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
//! occupancy is below 25 % (both proposals: no reference tool gives a threshold; the
//! kernel-time weighting is the TensorBoard plugin's, as in its GPU Kernel view and
//! `kinetoscope kernels`). Kineto writes an occupancy of 0 both when its occupancy
//! calculator cannot place a block (kernels with more dynamic shared memory than the
//! default limit, such as warp-specialised sm90 GEMMs, and GPUs it does not model,
//! such as Blackwell) and when a grid far smaller than the SM count truncates to 0 %:
//! a 0 % kernel with at least one block per SM is read as unknown, not as 0 %.
//! Vendor-tuned GEMM, convolution and attention kernels (tensor-core kernels, `sgemm`,
//! cuDNN, CUTLASS, flash, block-scaled `bmm_Mx…` GEMMs) trade occupancy for registers
//! on purpose: they are flagged only when their grid is smaller than the GPU
//! (time-weighted blocks per SM below 0.9, so that persistent kernels sized to the SMs
//! in whole clusters count as full), as is a kernel whose occupancy is unknown.
//! Communication kernels (NCCL, RCCL, symmetric-memory collectives) are not judged. No
//! finding below 1 % of the step; warning from 5 % (proposals), else info. Impact:
//! time × (1 − occupancy / 25 %) — the time saved if run time were inversely
//! proportional to occupancy up to the threshold (optimistic) — or, for a small grid,
//! time × (1 − blocks per SM). `low_occupancy.*`.

use kinetoscope_analysis::comm::names::is_comm_kernel;
use kinetoscope_analysis::kernels::{analyze_kernels_in, KernelGroupBy, KernelRow};

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

/// Vendor-tuned GEMM, convolution and attention kernels (tensor-core kernels, cuBLAS
/// `sgemm`, cuDNN, CUTLASS, FlashAttention, hipBLASLt `Cijk_`, block-scaled GEMMs such
/// as `bmm_MxE4m3_…` / `bmm_Bfloat16_MxE2m1…`) trade occupancy for registers and
/// shared memory on purpose; their efficiency is judged by FLOP/s, not occupancy.
fn is_tuned_library_kernel(row: &KernelRow) -> bool {
    if row.tensor_cores || row.name.starts_with("Cijk_") {
        return true;
    }
    let n = row.name.to_ascii_lowercase();
    [
        "gemm",
        "cudnn",
        "cutlass",
        "flash",
        "fmha",
        "xmma",
        "nvjet",
        "implicit_convolve",
        "bmm_",
        "_mxe",
        "nvfp4",
        "blockscaled",
        "block_scaled",
    ]
    .iter()
    .any(|p| n.contains(p))
}

/// The kernels this rule flags (and claims time of): the dominant kernels at low
/// occupancy, with the fraction of their time each could save.
pub(crate) struct Flagged<'a> {
    /// Flagged kernel rows with their recoverable fraction.
    pub kernels: Vec<(&'a KernelRow, f64)>,
    /// How many kernels make up the dominant share.
    pub dominant: usize,
    /// Their time, ns.
    pub covered: i64,
    /// All (non-communication) kernel time in the steps, ns.
    pub all_ns: i64,
}

/// What [`LowOccupancy`] flags; `None` when it reports nothing.
pub(crate) fn flagged_kernels<'a>(facts: &'a Facts, config: &Config) -> Option<Flagged<'a>> {
    if !facts.has_gpu || facts.n_steps() == 0 {
        return None;
    }
    let th = &config.low_occupancy;
    let table = facts.step_kernels();
    // Rows are sorted by total time, longest first.
    let rows: Vec<&KernelRow> = table
        .rows
        .iter()
        .filter(|r| !is_comm_kernel(&r.name))
        .collect();
    let all_ns: i64 = rows.iter().map(|r| r.total_ns).sum();
    if all_ns == 0 {
        return None;
    }
    // The dominant kernels: longest first until they cover the share.
    let mut covered = 0i64;
    let mut dominant = 0;
    for r in &rows {
        if 100.0 * covered as f64 / all_ns as f64 >= th.dominant_share_pct {
            break;
        }
        covered += r.total_ns;
        dominant += 1;
    }
    // Fraction of its time a flagged kernel could save, or `None` when not flagged.
    let small_grid = |r: &KernelRow| {
        r.mean_blocks_per_sm
            .filter(|b| *b < th.small_grid_blocks_per_sm)
            .map(|b| 1.0 - b)
    };
    let gain = |r: &KernelRow| -> Option<f64> {
        match occupancy_pct(r) {
            // Low occupancy by design, or unknown: only a grid smaller than the GPU.
            _ if is_tuned_library_kernel(r) => small_grid(r),
            None => small_grid(r),
            Some(o) => (o < th.warning_below_pct).then(|| 1.0 - o / th.warning_below_pct),
        }
    };
    let flagged: Vec<(&KernelRow, f64)> = rows[..dominant]
        .iter()
        .filter_map(|r| gain(r).map(|g| (*r, g)))
        .collect();
    if flagged.is_empty() {
        return None;
    }
    let n = facts.n_steps() as f64;
    let flagged_ns: i64 = flagged.iter().map(|r| r.0.total_ns).sum();
    let per_step = flagged_ns as f64 / n;
    let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
    if share < th.min_step_share_pct {
        return None;
    }
    Some(Flagged {
        kernels: flagged,
        dominant,
        covered,
        all_ns,
    })
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
        let Some(Flagged {
            kernels: flagged,
            dominant,
            covered,
            all_ns,
        }) = flagged_kernels(facts, config)
        else {
            return Vec::new();
        };
        let n = facts.n_steps() as f64;
        let flagged_ns: i64 = flagged.iter().map(|r| r.0.total_ns).sum();
        let per_step = flagged_ns as f64 / n;
        let share = 100.0 * per_step / facts.mean_step_ns().max(1.0);
        let (mean_occ, w_ns) = time_weighted_occupancy(&flagged);
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
        let (shapes, any_small_grid) = launch_shapes(facts, th, &flagged);
        evidence.extend(shapes);
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
                impact_ns: impact_per_step(&flagged, n),
                steps_seen: steps_seen(&flagged),
                evidence,
                fix: fix(any_small_grid),
                details: details(th),
            },
        )]
    }
}

/// Time-weighted occupancy over the flagged kernels that record it (%), and the
/// kernel time it weighs, ns.
fn time_weighted_occupancy(flagged: &[(&KernelRow, f64)]) -> (f64, i64) {
    let (w_sum, w_ns) = flagged
        .iter()
        .fold((0.0, 0i64), |acc, (r, _)| match occupancy_pct(r) {
            Some(o) => (acc.0 + o * r.total_ns as f64, acc.1 + r.total_ns),
            None => acc,
        });
    (w_sum / w_ns.max(1) as f64, w_ns)
}

/// The time the flagged kernels could save per step (over `n` steps), ns.
fn impact_per_step(flagged: &[(&KernelRow, f64)], n: f64) -> f64 {
    flagged
        .iter()
        .map(|(r, g)| r.total_ns as f64 * g.clamp(0.0, 1.0))
        .sum::<f64>()
        / n
}

/// The number of steps in which a flagged kernel ran.
fn steps_seen(flagged: &[(&KernelRow, f64)]) -> usize {
    let mut steps_seen: Vec<u32> = flagged
        .iter()
        .flat_map(|(r, _)| r.windows.iter().copied())
        .collect();
    steps_seen.sort_unstable();
    steps_seen.dedup();
    steps_seen.len()
}

/// One evidence line per flagged kernel shown (the first four), with its launch shape;
/// and whether any of them has a grid smaller than the SM count.
fn launch_shapes(
    facts: &Facts,
    th: &crate::config::LowOccupancy,
    flagged: &[(&KernelRow, f64)],
) -> (Vec<String>, bool) {
    let n = facts.n_steps() as f64;
    let mut evidence = Vec::new();
    // Launch shapes of the flagged kernels: their longest (name, operator, grid,
    // block, registers, shared memory) row.
    let shown: Vec<&KernelRow> = flagged.iter().take(4).map(|(r, _)| *r).collect();
    let shapes = analyze_kernels_in(
        facts.trace,
        KernelGroupBy::Properties,
        Some(&facts.step_windows()),
    );
    let mut any_small_grid = false;
    for r in shown {
        let bpsm = r.mean_blocks_per_sm;
        let small = bpsm.is_some_and(|b| b < th.small_grid_blocks_per_sm);
        any_small_grid |= small;
        let shape = shapes
            .rows
            .iter()
            .find(|p| p.name == r.name)
            .and_then(|p| p.properties.as_ref())
            .map(|k| {
                format!(
                    "; block {}×{}×{}, {} registers/thread, {} B shared memory",
                    k.block[0],
                    k.block[1],
                    k.block[2],
                    k.registers_per_thread,
                    k.shared_memory_bytes
                )
            })
            .unwrap_or_default();
        evidence.push(format!(
            "{}: {:.1} calls, {:.3} ms per step, occupancy {}{}{shape}",
            super::fp32_gemm::shorten(&r.name),
            r.calls as f64 / n,
            ms(r.total_ns as f64 / n),
            occupancy_pct(r)
                .map(|o| format!("{o:.1} %"))
                .unwrap_or_else(|| "unknown".to_owned()),
            bpsm.map(|b| format!(
                ", {b:.2} blocks per SM{}",
                if small {
                    " (grid smaller than the SM count)"
                } else {
                    ""
                }
            ))
            .unwrap_or_default()
        ));
    }
    (evidence, any_small_grid)
}

/// The fix, with the advice for small grids when a kernel shown has one.
fn fix(any_small_grid: bool) -> String {
    let mut fix = String::from(
        "Give each launch more parallel work: larger batches, fused kernels \
         (torch.compile), fewer tiny per-tensor kernels.",
    );
    if any_small_grid {
        fix.push_str(
            " Grids smaller than the SM count leave SMs idle: larger problem sizes, \
             split-K or batching independent launches together.",
        );
    }
    fix.push_str(
        " For custom (Triton/CUDA) kernels limited by registers or shared memory: \
         smaller tiles, num_warps / __launch_bounds__ tuning.",
    );
    fix
}

/// The thresholds and the impact model, as the finding's details.
fn details(th: &crate::config::LowOccupancy) -> String {
    format!(
        "Kernels covering {} % of kernel time with time-weighted est. achieved \
         occupancy < {} % (both proposals; weighting as the TensorBoard plugin and \
         kinetoscope kernels; a 0 % kernel with a full grid is unknown, as Kineto \
         writes 0 when it cannot compute it); tuned GEMM/convolution/attention \
         kernels and kernels of unknown occupancy only when blocks per SM < {}; \
         communication kernels not judged; \
         warning from {} % of the step (proposal). Impact: time × (1 − occupancy / \
         {} %), or × (1 − blocks per SM) for small grids; optimistic.",
        th.dominant_share_pct,
        th.warning_below_pct,
        th.small_grid_blocks_per_sm,
        th.warning_step_share_pct,
        th.warning_below_pct
    )
}

/// A kernel row's mean achieved occupancy as a percentage (the thresholds' unit);
/// `None` when unknown: not recorded, or 0 % on a grid of at least one block per SM
/// (Kineto's "could not compute"; a real occupancy that low needs a grid far smaller
/// than the SM count).
fn occupancy_pct(r: &KernelRow) -> Option<f64> {
    let o = r.mean_est_achieved_occupancy? * 100.0;
    let unknown = o <= 0.0 && !matches!(r.mean_blocks_per_sm, Some(b) if b < 1.0);
    (!unknown).then_some(o)
}
