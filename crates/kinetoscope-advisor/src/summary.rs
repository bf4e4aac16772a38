//! The one-screen summary above the findings: steps, breakdown, host-side phases, GPU
//! metrics, memory peaks against device memory, and communication time (used across
//! ranks).

use kinetoscope_analysis::name_memo::NameMemo;
use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::overview::{GpuMetrics, Parts};
use kinetoscope_analysis::stats::DurationStats;
use kinetoscope_analysis::steps::StepSource;
use kinetoscope_trace::CategoryKind;
use serde::{Deserialize, Serialize};

use crate::facts::Facts;
use crate::rules::input::dataloader_stall::is_dataloader;

/// Host-side phases per step, ns (mean over steps). A phase is `None` when the trace
/// has no span of it (no data loading, no backward pass, ...): there is nothing to say,
/// which is not the same as 0 ns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// DataLoader fetches.
    pub dataloader_ns: Option<f64>,
    /// Host time of the forward pass (see [`ForwardSource`]).
    pub forward_ns: Option<f64>,
    /// How the forward pass was found.
    pub forward_source: Option<ForwardSource>,
    /// Backward: autograd `evaluate_function` spans (any thread).
    pub backward_ns: Option<f64>,
    /// `Optimizer.step#…` and `Optimizer.zero_grad#…`.
    pub optimizer_ns: Option<f64>,
}

/// Where the forward time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForwardSource {
    /// The outermost `nn.Module: …` Python spans outside backward work (traces recorded
    /// `with_stack`: every module call is one, so four forward passes are four spans).
    ModuleSpans,
    /// Without Python stacks: the top-level work of each `ProfilerStep#` before its
    /// first backward span, data loading, optimizer and collectives left out.
    StepChildren,
}

/// Peak memory of one device, as the memory view (`kinetoscope memory`) reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPeak {
    /// `CPU`, `GPU0`, ...
    pub device: String,
    /// Peak `Total Allocated` over the whole trace, bytes.
    pub peak_allocated_bytes: i64,
    /// Peak `Total Reserved`, bytes (0 when not recorded).
    pub peak_reserved_bytes: i64,
    /// Device memory from `deviceProperties`, bytes.
    pub capacity_bytes: Option<u64>,
    /// `max(peak reserved, peak allocated) / capacity` (0–1, above 1 when the trace
    /// claims more than the device has).
    pub peak_share_of_capacity: Option<f64>,
}

/// A runtime or driver call that takes a large share of the host step spans.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeCall {
    /// The call (`cudaFree`, `hipMemcpyWithStream`, `cudaLaunchKernel`).
    pub name: String,
    /// Calls per step.
    pub calls_per_step: f64,
    /// Host time in them per step, ns.
    pub ns_per_step: f64,
    /// That time as a share of the mean host step (0–1).
    pub share: f64,
}

/// Runtime calls named in the summary take at least this share of the host steps.
const DOMINANT_RUNTIME_SHARE: f64 = 0.05;

/// The runtime and driver calls that take at least 5 % of the host step spans, most
/// host time first, at most three: what the host spends its runtime time in, named
/// whatever the rules find (with or without step markers). Host time, not GPU time.
pub fn dominant_runtime_calls(facts: &Facts) -> Vec<RuntimeCall> {
    let n = facts.n_steps().max(1) as f64;
    let host: i64 = facts.host_steps.iter().map(|h| h.1 - h.0).sum();
    let step = host as f64 / n;
    if step <= 0.0 {
        return Vec::new();
    }
    facts
        .runtime_calls()
        .iter()
        .take(3)
        .map(|(name, calls, ns)| RuntimeCall {
            name: name.clone(),
            calls_per_step: *calls as f64 / n,
            ns_per_step: *ns as f64 / n,
            share: (*ns as f64 / n / step).min(1.0),
        })
        .filter(|r| r.share >= DOMINANT_RUNTIME_SHARE)
        .collect()
}

/// CUDA / HIP graph replay in the steps: graph launches whose launch call lies in a
/// step, and the kernels they replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphReplay {
    /// Graph launches in the steps.
    pub launches: u64,
    /// Kernels they replayed.
    pub kernels: u64,
    /// Σ those kernels' time, ns.
    pub kernel_ns: i64,
    /// Their share of the kernel time in the step windows (0–1).
    pub kernel_share: f64,
}

/// Graph replay in the steps, when any graph launch there replayed a kernel
/// ([`kinetoscope_analysis::device_activity`]).
pub fn graph_replay(facts: &Facts) -> Option<GraphReplay> {
    let (mut launches, mut kernels, mut kernel_ns) = (0u64, 0u64, 0i64);
    for g in &facts.device.graph_launches {
        if g.kernels > 0 && facts.host_step_of(g.ts_ns).is_some() {
            launches += 1;
            kernels += g.kernels;
            kernel_ns += g.kernel_ns;
        }
    }
    if launches == 0 {
        return None;
    }
    let all: i64 = facts.step_kernels().rows.iter().map(|r| r.total_ns).sum();
    Some(GraphReplay {
        launches,
        kernels,
        kernel_ns,
        kernel_share: if all > 0 {
            (kernel_ns as f64 / all as f64).min(1.0)
        } else {
            0.0
        },
    })
}

/// Below this share of the steps' kernels (by count) that are Inductor's Triton kernels,
/// and of the steps' host time inside compiled regions, a run is not called compiled: a
/// helper or two compiled beside an eager model (vLLM's eager mode compiles one) leaves
/// the model eager.
const COMPILED_MIN_SHARE: f64 = 0.1;

/// Whether the steps mostly run code compiled by `torch.compile`, so advice does not tell
/// a compiled run to compile: Inductor's Triton kernels (`triton_…`) are at least a tenth
/// of the steps' kernels, or its host-side regions (`Torch-Compiled Region…`,
/// `CompiledFunction`) cover at least a tenth of the host steps' time.
pub fn uses_torch_compile(facts: &Facts) -> bool {
    let rows = &facts.step_kernels().rows;
    let kernels: u64 = rows.iter().map(|r| r.calls).sum();
    let triton: u64 = rows
        .iter()
        .filter(|r| r.name.starts_with("triton_"))
        .map(|r| r.calls)
        .sum();
    if kernels > 0 && triton as f64 >= COMPILED_MIN_SHARE * kernels as f64 {
        return true;
    }
    let regions = facts.outermost(
        &facts.events(&[CategoryKind::UserAnnotation, CategoryKind::CpuOp], |n| {
            n.starts_with("Torch-Compiled Region") || n == "CompiledFunction"
        }),
    );
    if regions.is_empty() {
        return false;
    }
    let host = &facts.host_steps;
    let mean_step = host.iter().map(|&(a, b)| b - a).sum::<i64>() as f64 / host.len().max(1) as f64;
    mean_step > 0.0 && union_per_step(facts, &regions) >= COMPILED_MIN_SHARE * mean_step
}

/// The summary of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Where the steps came from.
    pub step_source: StepSource,
    /// Steps analysed (the overview's kept steps).
    pub steps: usize,
    /// Step-time statistics (ns).
    pub step_stats: Option<DurationStats>,
    /// Mean step breakdown, ns (parts add up to the mean step).
    pub breakdown_ns: Option<Parts<f64>>,
    /// Mean step breakdown, shares of the mean step (0–1).
    pub breakdown_share: Option<Parts<f64>>,
    /// Host-side phases.
    pub phases: Phases,
    /// Per-GPU metrics.
    pub gpus: Vec<GpuMetrics>,
    /// CUDA / HIP graph replay in the steps, when graphs are in use.
    pub graphs: Option<GraphReplay>,
    /// The runtime calls that take at least 5 % of the host steps
    /// ([`dominant_runtime_calls`]).
    pub runtime_calls: Vec<RuntimeCall>,
    /// Memory peaks per device.
    pub memory: Vec<MemoryPeak>,
    /// Host time in collectives per step, ns: the union of the outermost collective
    /// spans of every thread (a call and a backend worker's span of the same collective
    /// overlap and count once).
    pub communication_ns: f64,
    /// Warnings from reading and from the overview.
    pub warnings: Vec<Note>,
}

/// Whether a host span is a collective.
pub fn is_collective(name: &str) -> bool {
    name.starts_with("gloo:")
        || name.starts_with("nccl:")
        || name.starts_with("c10d::")
        || name == "record_param_comms"
        || name.starts_with("ProcessGroup")
}

/// Build the summary.
pub fn summarize(facts: &Facts) -> Summary {
    let n = facts.n_steps().max(1) as f64;
    let durs: Vec<i64> = facts.steps.iter().map(|s| s.dur_ns()).collect();
    let per_step = |ev: &[usize]| facts.per_step_ns(ev).iter().sum::<i64>() as f64 / n;
    let host = [CategoryKind::UserAnnotation, CategoryKind::CpuOp];
    let dl = facts.outermost(&facts.events(&host, is_dataloader));
    let opt = facts.outermost(&facts.events(&host, |n| {
        n.starts_with("Optimizer.step#") || n.starts_with("Optimizer.zero_grad#")
    }));
    let bwd = facts.outermost(&facts.events(&host, is_backward));
    let (forward_ns, forward_source) = forward(facts, &bwd);
    let comm = facts.outermost(&facts.events(&host, is_collective));
    let memory = facts
        .memory()
        .devices
        .iter()
        .filter(|d| crate::rules::memory::has_totals(d))
        .filter_map(|d| {
            let capacity_bytes = d.capacity_bytes.filter(|c| *c > 0);
            Some(MemoryPeak {
                device: d.device.clone(),
                peak_allocated_bytes: d.peak_allocated.as_ref()?.bytes,
                peak_reserved_bytes: d.peak_reserved.as_ref().map_or(0, |p| p.bytes.max(0)),
                capacity_bytes,
                peak_share_of_capacity: capacity_bytes.and(
                    match (
                        d.peak_allocated_share_of_capacity,
                        d.peak_reserved_share_of_capacity,
                    ) {
                        (Some(a), Some(r)) => Some(a.max(r)),
                        (a, r) => a.or(r),
                    },
                ),
            })
        })
        .collect();
    let avg = facts.overview.average.as_ref();
    Summary {
        step_source: facts.overview.step_source,
        steps: facts.n_steps(),
        step_stats: DurationStats::of(&durs),
        breakdown_ns: avg.map(|a| a.breakdown_ns),
        breakdown_share: avg.map(|a| a.share),
        phases: Phases {
            dataloader_ns: (!dl.is_empty()).then(|| per_step(&dl)),
            forward_ns,
            forward_source,
            backward_ns: (!bwd.is_empty()).then(|| per_step(&bwd)),
            optimizer_ns: (!opt.is_empty()).then(|| per_step(&opt)),
        },
        gpus: facts.overview.gpus.clone(),
        graphs: graph_replay(facts),
        runtime_calls: dominant_runtime_calls(facts),
        memory,
        communication_ns: union_per_step(facts, &comm),
        warnings: facts.overview.warnings.clone(),
    }
}

/// The forward pass per step and where it was found: from `nn.Module` spans when the
/// trace has Python stacks (none of them: no forward ran), else from each step's
/// top-level work before its first backward span (`bwd`); `None` when neither applies.
fn forward(facts: &Facts, bwd: &[usize]) -> (Option<f64>, Option<ForwardSource>) {
    let n = facts.n_steps().max(1) as f64;
    let python = [CategoryKind::PythonFunction];
    if facts.has_event(&python, |_| true) {
        let modules = facts.outermost(&facts.events(&python, |n| n.starts_with("nn.Module: ")));
        let mut in_backward = facts.named_ancestor_search(is_backward);
        let fwd: Vec<usize> = modules
            .into_iter()
            .filter(|&i| !in_backward.any(i))
            .collect();
        if fwd.is_empty() {
            return (None, None);
        }
        // The union, not the sum: Python frames and `record_function` spans recorded
        // a little apart can leave a module outside the one around it in the nesting
        // (DDP's `forward` annotation), and the inner one then counts once.
        return (
            Some(union_per_step(facts, &fwd)),
            Some(ForwardSource::ModuleSpans),
        );
    }
    // Direct children of the step span that start before its first backward span and
    // are neither data loading nor optimizer work.
    let e = &facts.trace.events;
    let mut first_bwd = vec![i64::MAX; facts.n_steps()];
    for &b in bwd {
        if let Some(s) = facts.step_of_event(b) {
            first_bwd[s] = first_bwd[s].min(e.ts_ns[b]);
        }
    }
    let host = [CategoryKind::UserAnnotation, CategoryKind::CpuOp];
    let mut fwd_ns = 0i64;
    let mut found = false;
    // The nearest enclosing operator or annotation (Python frames skipped).
    let t = facts.trace;
    let mut enclosing = facts.ancestor_search(|a| {
        matches!(
            t.categories.kind(t.events.cat[a]),
            CategoryKind::CpuOp | CategoryKind::UserAnnotation
        )
    });
    let mut is_step = NameMemo::new(t, |n| n.starts_with("ProfilerStep#"));
    for i in facts.each_event(&host, |n| !n.starts_with("ProfilerStep#")) {
        // The step span's children are few: they are found first, then placed.
        let Some(parent) = enclosing.nearest(i) else {
            continue;
        };
        if !is_step.get(e.name[parent]) {
            continue;
        }
        let Some(s) = facts.step_of_event(i) else {
            continue;
        };
        if e.ts_ns[i] >= first_bwd[s] {
            continue;
        }
        let name = facts.name(i);
        if is_dataloader(name) || name.starts_with("Optimizer.") || is_collective(name) {
            continue;
        }
        found = true;
        fwd_ns += e.dur_ns.at(i).min(first_bwd[s] - e.ts_ns[i]);
    }
    if found {
        (Some(fwd_ns as f64 / n), Some(ForwardSource::StepChildren))
    } else {
        (None, None)
    }
}

/// An autograd backward span.
fn is_backward(name: &str) -> bool {
    name.starts_with("autograd::engine::evaluate_function")
}

/// The mean per step of the time covered by `events` (their union within each step, so
/// spans on several threads at once count once), ns.
fn union_per_step(facts: &Facts, events: &[usize]) -> f64 {
    let e = &facts.trace.events;
    let mut spans: Vec<(usize, i64, i64)> = events
        .iter()
        .filter_map(|&i| {
            let s = facts.step_of_event(i)?;
            let end = (e.ts_ns[i] + e.dur_ns.at(i)).min(facts.host_steps[s].1);
            Some((s, e.ts_ns[i], end))
        })
        .collect();
    spans.sort_unstable();
    let mut total = 0i64;
    let mut cur: Option<(usize, i64, i64)> = None;
    for (s, a, b) in spans {
        cur = match cur {
            Some((cs, ca, cb)) if cs == s && a <= cb => Some((cs, ca, cb.max(b))),
            Some((_, ca, cb)) => {
                total += cb - ca;
                Some((s, a, b))
            }
            None => Some((s, a, b)),
        };
    }
    if let Some((_, a, b)) = cur {
        total += b - a;
    }
    total as f64 / facts.n_steps().max(1) as f64
}
