//! SY001 `HostDeviceSync`.
//!
//! ## What it finds
//! Host calls inside training steps that block until the device has finished queued
//! work: scalar reads that synchronise (`aten::item` / `aten::_local_scalar_dense`:
//! `.item()`, `.tolist()`, `if tensor:`), explicit synchronisations
//! (`cudaStreamSynchronize`, `cudaDeviceSynchronize`, `cudaEventSynchronize`, their
//! driver and HIP equivalents), blocking copies (`cudaMemcpy`, `hipMemcpy`,
//! `hipMemcpyWithStream`, the driver's `cuMemcpy*`, and `cudaMemcpyAsync` /
//! `hipMemcpyAsync` into pageable host memory, which waits for the stream's queued
//! work), synchronous memsets of pinned or managed memory (`cudaMemset`,
//! `cuMemsetD32`, `hipMemset`…: on device memory they return at once, on host-visible
//! memory they block; nsys's `cuda_memset_sync`) and device frees (`cudaFree`,
//! `hipFree`, `cuMemFree`, which synchronise the device), with the code that caused
//! them.
//!
//! ## Why it matters
//! A sync drains the GPU queue: the host stops launching work until every queued kernel
//! has finished, and the GPU then idles while the host catches up. Repeated every step
//! (logging a loss, per-sample metrics), it serialises host and device. A sync under
//! which the GPU keeps running costs nothing: the host only waits for work that had to
//! finish anyway.
//!
//! ## Evidence
//! Sync points per step by kind, the host time blocked in them, the GPU idle they
//! caused and how busy the GPU was meanwhile; the callers (Python frames with
//! `with_stack=True`, else the enclosing operator), with counts, host time and GPU idle.
//!
//! ## Fix
//! Keep scalars on the device (accumulate losses as tensors, log every N steps),
//! vectorise per-sample metrics, avoid data-dependent Python control flow on device
//! tensors; copy with `non_blocking=True` from pinned memory; keep the caching
//! allocator warm instead of freeing device memory in the loop;
//! `torch.cuda.set_sync_debug_mode("warn")` finds the offenders.
//!
//! ## Thresholds and sources
//! A call belongs to the step whose host span (`ProfilerStep#`) it starts in, so a
//! synchronize after the last step (stopping the profiler) is in none. Impact: the GPU
//! idle the sync points cause — the time, from a call's start, in which no GPU work
//! runs or is queued, until the host queues work again after the call (only the call's
//! own time when the GPU was already waiting for the host when it began); overlapping
//! idle is counted once. On a trace whose device activity is missing the impact is
//! unknown (0); on a CPU-only trace it is the calls' host time, and a scalar read is
//! counted as a potential sync. On a GPU trace a scalar read counts only when a
//! synchronising call runs inside it (a read of a CPU tensor does not sync). Syncs in
//! ≥ 2 steps (TraceML step gating); a warning when the GPU idle they cause reaches
//! `host_device_sync.min_share_pct` (1 %) of the step (proposal), or, on a CPU-only
//! trace, from `host_device_sync.min_per_step` (10) calls per step; else info. Scalar
//! reads inside `Optimizer.step` are skipped: `torch.optim` reads its host-side step
//! counters.

use std::collections::BTreeMap;

use kinetoscope_analysis::gpu_time::union_sorted;
use kinetoscope_trace::CategoryKind;
use rustc_hash::FxHashSet;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::{finish, step_list_ms, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct HostDeviceSync;

static META: RuleMeta = RuleMeta {
    code: "SY001",
    name: "HostDeviceSync",
    family: "sync",
    since: "0.1.0",
    summary:
        "Host-device synchronisation inside steps (.item(), synchronize, blocking copies, frees)",
};

const SCALAR_READS: [&str; 2] = ["aten::item", "aten::_local_scalar_dense"];

/// What a sync point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A synchronising scalar read (`.item()`).
    ScalarRead,
    /// An explicit synchronize.
    Synchronize,
    /// A blocking copy.
    BlockingCopy,
    /// A synchronous memset of pinned or managed memory.
    BlockingMemset,
    /// A device free.
    Free,
}

/// The kind of a host runtime or driver call that blocks until the device is done.
fn sync_call(name: &str) -> Option<Kind> {
    const SYNCHRONIZE: [&str; 11] = [
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaThreadSynchronize",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
        "hipStreamSynchronize",
        "hipDeviceSynchronize",
        "hipEventSynchronize",
        "hipCtxSynchronize",
    ];
    const COPIES: [&str; 14] = [
        "cudaMemcpy",
        "cudaMemcpy2D",
        "cudaMemcpy3D",
        "cudaMemcpyToSymbol",
        "cudaMemcpyFromSymbol",
        "cuMemcpy",
        "cuMemcpyDtoH",
        "cuMemcpyHtoD",
        "cuMemcpyDtoD",
        "hipMemcpy",
        "hipMemcpyWithStream",
        "hipMemcpyDtoH",
        "hipMemcpyHtoD",
        "hipMemcpy2D",
    ];
    const FREES: [&str; 6] = [
        "cudaFree",
        "cudaFreeHost",
        "cuMemFree",
        "hipFree",
        "hipHostFree",
        "hipFreeHost",
    ];
    // Driver calls carry a version suffix (`cuMemcpyDtoH_v2`).
    let base = name.strip_suffix("_v2").unwrap_or(name);
    if SYNCHRONIZE.contains(&base) {
        Some(Kind::Synchronize)
    } else if COPIES.contains(&base) {
        Some(Kind::BlockingCopy)
    } else if FREES.contains(&base) {
        Some(Kind::Free)
    } else {
        None
    }
}

/// Whether a runtime or driver call blocks the host on the device: a synchronize, a
/// blocking copy, a free.
pub(crate) fn is_blocking_call(name: &str) -> bool {
    sync_call(name).is_some()
}

/// The kind of a blocking host call: by name, else a synchronous memset, else an
/// asynchronous copy that blocked (to pageable memory).
fn blocking_kind(name: &str) -> Kind {
    sync_call(name)
        .or_else(|| sync_memset(name).then_some(Kind::BlockingMemset))
        .unwrap_or(Kind::BlockingCopy)
}

/// Whether a runtime or driver call is a synchronous (not `…Async`) memset.
fn sync_memset(name: &str) -> bool {
    const MEMSETS: [&str; 10] = [
        "cudaMemset",
        "cudaMemset2D",
        "cudaMemset3D",
        "cuMemsetD8",
        "cuMemsetD16",
        "cuMemsetD32",
        "hipMemset",
        "hipMemsetD8",
        "hipMemsetD16",
        "hipMemsetD32",
    ];
    MEMSETS.contains(&name.strip_suffix("_v2").unwrap_or(name))
}

/// Whether a memset's name (`Memset (Pinned)`, as Kineto and the nsys reader name it)
/// says it wrote host-visible memory: pinned or managed.
fn host_visible(memset: &str) -> bool {
    memset.starts_with("Memset") && (memset.contains("(Pinned)") || memset.contains("(Managed"))
}

/// Per caller: sync points, host time blocked, windows of the GPU idle caused.
type CallerAcc = (u64, i64, Vec<(i64, i64)>);

/// One sync point: its host event, its kind and its step.
struct Point {
    event: usize,
    kind: Kind,
    step: usize,
}

impl Rule for HostDeviceSync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if facts.n_steps() == 0 {
            return Vec::new();
        }
        let cpu_only = !facts.has_gpu && facts.device.kernel_launch_calls == 0;
        let points = sync_points(facts, cpu_only);
        if points.is_empty() {
            return Vec::new();
        }
        vec![Syncs::measure(facts, cpu_only, points).finding(config)]
    }
}

/// The host runtime and driver calls that block until the device is done, in event
/// order.
fn blocking_calls(facts: &Facts) -> Vec<usize> {
    let runtime = [
        CategoryKind::CudaRuntime,
        CategoryKind::CudaDriver,
        CategoryKind::OtherRuntime,
    ];
    // Blocking by name, and asynchronous copies that block: to pageable host memory
    // the copy must wait for the stream's queued work.
    let mut calls = facts.events(&runtime, |n| sync_call(n).is_some());
    calls.extend(
        facts
            .events(&runtime, |n| n.ends_with("MemcpyAsync"))
            .into_iter()
            .filter(|&i| {
                facts
                    .launched_by(i)
                    .any(|g| facts.name(g).contains("-> Pageable"))
            }),
    );
    calls.extend(
        facts
            .events(&runtime, sync_memset)
            .into_iter()
            .filter(|&i| facts.launched_by(i).any(|g| host_visible(facts.name(g)))),
    );
    calls.sort_unstable();
    calls
}

/// The outermost scalar reads, those inside `Optimizer.step` left out.
fn scalar_reads(facts: &Facts) -> FxHashSet<usize> {
    let reads =
        facts.outermost(&facts.events(&[CategoryKind::CpuOp], |n| SCALAR_READS.contains(&n)));
    let mut in_optimizer = facts.named_ancestor_search(|n| n.starts_with("Optimizer.step#"));
    reads
        .into_iter()
        .filter(|&i| !in_optimizer.any(i))
        .collect()
}

/// The sync points inside steps, in time order: the blocking calls outside scalar
/// reads, and the scalar reads that synchronised.
fn sync_points(facts: &Facts, cpu_only: bool) -> Vec<Point> {
    let e = &facts.trace.events;
    let calls = blocking_calls(facts);
    let reads = scalar_reads(facts);
    // A sync call inside a scalar read is that read; on a trace with runtime calls
    // a read without one did not synchronise.
    let mut syncing_reads: FxHashSet<usize> = Default::default();
    let mut points: Vec<Point> = Vec::new();
    let mut in_read = facts.ancestor_search(|a| reads.contains(&a));
    for &i in &calls {
        match in_read.nearest(i) {
            Some(r) => {
                syncing_reads.insert(r);
            }
            None => points.extend(facts.step_of_event(i).map(|step| Point {
                event: i,
                kind: blocking_kind(facts.name(i)),
                step,
            })),
        }
    }
    let mut reads: Vec<usize> = reads.iter().copied().collect();
    reads.sort_unstable();
    for r in reads {
        if cpu_only || syncing_reads.contains(&r) {
            points.extend(facts.step_of_event(r).map(|step| Point {
                event: r,
                kind: Kind::ScalarRead,
                step,
            }));
        }
    }
    points.sort_by_key(|p| (e.ts_ns[p.event], p.event));
    points
}

/// The sync points of a trace with the host time they blocked and the GPU idle they
/// caused.
struct Syncs<'f, 'a> {
    facts: &'f Facts<'a>,
    idle: Idle<'f, 'a>,
    /// In time order.
    points: Vec<Point>,
    /// Per point, the window in which it makes the GPU idle.
    own: Vec<Option<(i64, i64)>>,
    /// GPU idle caused per step (the union of its points' windows), ns.
    per_step_idle: Vec<i64>,
    /// Host time blocked in the points, ns.
    blocked: i64,
    /// Of it, the time the GPU had work (running or queued), ns.
    busy_under: i64,
    /// GPU idle caused, mean per step, ns.
    mean_idle: f64,
    /// Whether the trace's device activity is missing (the GPU idle is unknown).
    missing: bool,
}

impl<'f, 'a> Syncs<'f, 'a> {
    /// Measure what `points` (not empty) cost.
    fn measure(facts: &'f Facts<'a>, cpu_only: bool, points: Vec<Point>) -> Self {
        let e = &facts.trace.events;
        let n_steps = facts.n_steps();
        let n = n_steps as f64;
        let missing = facts.device_activity_missing();
        // The window in which each point makes the GPU idle (its own, possibly
        // overlapping the next one's), and the idle in their union per step.
        let idle = Idle { facts, cpu_only };
        let mut step_windows: Vec<Vec<(i64, i64)>> = vec![Vec::new(); n_steps];
        let mut own: Vec<Option<(i64, i64)>> = Vec::with_capacity(points.len());
        let (mut blocked, mut busy_under) = (0i64, 0i64);
        for p in &points {
            let (s, end) = (e.ts_ns[p.event], e.ts_ns[p.event] + e.dur_ns.at(p.event));
            blocked += end - s;
            let window = if cpu_only {
                Some((s, end))
            } else if facts.has_gpu {
                busy_under += (end - s) - facts.gpu_waiting_ns(s, end);
                Some(facts.blocking_window(s, end, facts.steps[p.step].end_ns))
            } else {
                None
            };
            step_windows[p.step].extend(window);
            own.push(window);
        }
        let per_step_idle: Vec<i64> = step_windows.into_iter().map(|w| idle.in_union(w)).collect();
        let mean_idle = per_step_idle.iter().sum::<i64>() as f64 / n;
        Self {
            facts,
            idle,
            points,
            own,
            per_step_idle,
            blocked,
            busy_under,
            mean_idle,
            missing,
        }
    }

    /// The finding: severity by the GPU idle's share of the step (or, on a CPU-only
    /// trace, the calls per step).
    fn finding(&self, config: &Config) -> Finding {
        let facts = self.facts;
        let n_steps = facts.n_steps();
        let n = n_steps as f64;
        let mut counts = vec![0u64; n_steps];
        for p in &self.points {
            counts[p.step] += 1;
        }
        let seen = counts.iter().filter(|c| **c > 0).count();
        let per_step_calls = self.points.len() as f64 / n;
        let th = &config.host_device_sync;
        let share = 100.0 * self.mean_idle / facts.mean_step_ns().max(1.0);
        let severity = if share >= th.min_share_pct
            || (self.idle.cpu_only && per_step_calls >= th.min_per_step)
        {
            Severity::Warning
        } else {
            Severity::Info
        };
        finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: self.title(per_step_calls),
                severity,
                impact_ns: self.mean_idle,
                steps_seen: seen,
                evidence: self.evidence(),
                fix: self.fix(),
                details: format!(
                    "Sync points in {seen} of {n_steps} steps (host step spans); warning \
                     when the GPU idle they cause reaches {} % of the step, or on a \
                     CPU-only trace from {} calls per step (host_device_sync.*, proposals), \
                     else info. Impact: the GPU idle the sync points cause, from each \
                     call's start until the host queues work again (the call's own time \
                     when the GPU was already waiting), counted once; on a CPU-only trace \
                     the calls' host time.",
                    th.min_share_pct, th.min_per_step
                ),
            },
        )
    }

    /// How many sync points are of kind `k`.
    fn count(&self, k: Kind) -> usize {
        self.points.iter().filter(|p| p.kind == k).count()
    }

    /// Callers, the costliest first: (count, host time, GPU idle in the union of their
    /// windows).
    fn callers(&self) -> Vec<(String, (u64, i64, i64))> {
        let (facts, e) = (self.facts, &self.facts.trace.events);
        let mut by_caller: BTreeMap<String, CallerAcc> = BTreeMap::new();
        let mut caller = facts.callers(|n| SCALAR_READS.contains(&n) || sync_call(n).is_some());
        for (p, window) in self.points.iter().zip(&self.own) {
            let c = caller.of(p.event);
            let entry = by_caller
                .entry(format!("{} ← {c}", facts.name(p.event)))
                .or_default();
            entry.0 += 1;
            entry.1 += e.dur_ns.at(p.event);
            entry.2.extend(*window);
        }
        let mut callers: Vec<(String, (u64, i64, i64))> = by_caller
            .into_iter()
            .map(|(k, (c, d, windows))| (k, (c, d, self.idle.in_union(windows))))
            .collect();
        callers.sort_by(|a, b| {
            b.1 .2
                .cmp(&a.1 .2)
                .then(b.1 .0.cmp(&a.1 .0))
                .then(a.0.cmp(&b.0))
        });
        callers
    }

    /// The evidence: sync points by kind with their cost, the GPU idle per step, the
    /// top five callers, and what the trace cannot tell.
    fn evidence(&self) -> Vec<String> {
        let facts = self.facts;
        let n_steps = facts.n_steps();
        let n = n_steps as f64;
        let (missing, blocked) = (self.missing, self.blocked);
        let mut evidence = vec![format!(
            "{} sync point(s) in {n_steps} step(s) ({} scalar reads, {} synchronize calls, {} \
             blocking copies, {}{} device frees): host blocked {:.3} ms per step, GPU idle \
             caused {}",
            self.points.len(),
            self.count(Kind::ScalarRead),
            self.count(Kind::Synchronize),
            self.count(Kind::BlockingCopy),
            match self.count(Kind::BlockingMemset) {
                0 => String::new(),
                n => format!("{n} blocking memsets of host-visible memory, "),
            },
            self.count(Kind::Free),
            ms(blocked as f64 / n),
            if missing {
                "unknown".to_owned()
            } else {
                format!("{:.3} ms per step", ms(self.mean_idle))
            }
        )];
        if facts.has_gpu && blocked > 0 {
            evidence.push(format!(
                "the GPU had work (running or queued) {:.1} % of the time the host was \
                 blocked in them",
                100.0 * self.busy_under as f64 / blocked as f64
            ));
        }
        if !missing {
            evidence.push(format!(
                "GPU idle caused per step: {}",
                step_list_ms(&self.per_step_idle)
            ));
        }
        for (who, (c, d, idle)) in self.callers().iter().take(5) {
            evidence.push(format!(
                "{who}: {:.1} per step, host {:.3} ms, GPU idle {} per step",
                *c as f64 / n,
                ms(*d as f64 / n),
                if missing {
                    "unknown".to_owned()
                } else {
                    format!("{:.3} ms", ms(*idle as f64 / n))
                }
            ));
        }
        if self.idle.cpu_only {
            evidence.push(
                "CPU-only trace: these calls are cheap here, but each one drains the GPU \
                 queue when the same code runs on a GPU"
                    .to_owned(),
            );
        }
        if missing {
            evidence.push(
                "device activity is missing from the trace: the GPU idle these calls \
                 caused cannot be measured"
                    .to_owned(),
            );
        }
        evidence
    }

    /// The kinds present with their GPU idle and count, the costliest first.
    fn cost_by_kind(&self) -> Vec<(Kind, i64, usize)> {
        let mut cost_by_kind: Vec<(Kind, i64, usize)> = Vec::new();
        for (p, window) in self.points.iter().zip(&self.own) {
            let idle = window.map_or(0, |w| self.idle.in_union(vec![w]));
            match cost_by_kind.iter_mut().find(|c| c.0 == p.kind) {
                Some(c) => {
                    c.1 += idle;
                    c.2 += 1;
                }
                None => cost_by_kind.push((p.kind, idle, 1)),
            }
        }
        cost_by_kind.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        cost_by_kind
    }

    /// The fix: for the kinds present, the costliest kind first.
    fn fix(&self) -> String {
        let mut fix = String::new();
        for (kind, ..) in &self.cost_by_kind() {
            fix.push_str(match kind {
                Kind::ScalarRead | Kind::Synchronize
                    if fix.contains("Keep values on the device") =>
                {
                    ""
                }
                Kind::ScalarRead | Kind::Synchronize => {
                    "Keep values on the device: accumulate the loss and metrics as tensors \
                     and call .item() every N steps; vectorise per-sample metrics (one \
                     tensor op, one transfer); avoid Python `if` on device tensors; drop \
                     explicit synchronize calls outside timing code. "
                }
                Kind::BlockingCopy => {
                    "Copy asynchronously: pinned host buffers and .to(device, \
                     non_blocking=True) (or copy_(…, non_blocking=True)), reading the result \
                     only when needed. "
                }
                Kind::BlockingMemset => {
                    "Set host-visible memory asynchronously: cudaMemsetAsync on a stream \
                     (torch fills device tensors that way), or fill the tensor on the device \
                     and copy it with non_blocking=True. "
                }
                Kind::Free => {
                    "Stop freeing device memory in the loop: no torch.cuda.empty_cache() in \
                     the step, static shapes, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
                     (see AllocatorChurn). "
                }
            });
        }
        fix.push_str("torch.cuda.set_sync_debug_mode(\"warn\") lists every sync.");
        fix
    }

    /// The title: sync points per step (or in all, below one per step) and the GPU
    /// idle they leave.
    fn title(&self, per_step_calls: f64) -> String {
        let facts = self.facts;
        let total = self.points.len();
        let (title, one) = if per_step_calls >= 1.0 {
            let one = per_step_calls.round() == 1.0;
            let s = if one { "" } else { "s" };
            (
                format!("{per_step_calls:.0} host-device sync point{s} per step"),
                one,
            )
        } else {
            (
                format!(
                    "{total} host-device sync point(s) in {} steps",
                    facts.n_steps()
                ),
                total == 1,
            )
        };
        if self.missing {
            format!("{title} (GPU idle unknown: device activity missing)")
        } else if facts.has_gpu {
            format!(
                "{title} {} the GPU idle {:.2} ms per step",
                if one { "leaves" } else { "leave" },
                ms(self.mean_idle)
            )
        } else {
            format!("{title} (.item() / synchronize)")
        }
    }
}

/// The GPU idle sync points cause inside windows: the time the GPUs wait for the host
/// in them, or on a CPU-only trace the windows themselves (the calls' host time).
struct Idle<'f, 'a> {
    facts: &'f Facts<'a>,
    cpu_only: bool,
}

impl Idle<'_, '_> {
    /// The idle inside the union of `windows` (overlaps count once), ns.
    fn in_union(&self, windows: Vec<(i64, i64)>) -> i64 {
        if self.cpu_only {
            union_len(windows)
        } else {
            self.facts.gpu_waiting_in_union(windows)
        }
    }
}

/// Length of the union of intervals.
fn union_len(mut v: Vec<(i64, i64)>) -> i64 {
    v.sort_unstable();
    union_sorted(v).map_or(0, |u| u.2)
}
