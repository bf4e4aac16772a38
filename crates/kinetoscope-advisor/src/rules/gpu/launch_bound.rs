//! GP002 `LaunchBound`.
//!
//! ## What it finds
//! Steps made of many tiny kernels while the GPU waits for the host: most kernels run
//! shorter than the host call that launched them (HTA's "short kernels", from the
//! launch statistics of `kinetoscope launches`), so the host cannot launch them as fast
//! as the GPU finishes them. Kernels replayed from CUDA / HIP graphs are launched by
//! the graph, not one call each: they count among the kernels, never as short ones.
//!
//! ## Why it matters
//! A kernel launch costs 5–20 µs of host time (HTA). When kernels are shorter than
//! that, the GPU waits for the CPU between kernels however fast the GPU is.
//!
//! ## Evidence
//! Launches per step, the share of short kernels, the mean GPU time per launch, the
//! time the GPU waits for the host, graph replay when graphs are in use.
//!
//! ## Fix
//! CUDA graphs (`torch.compile(mode="reduce-overhead")`, `torch.cuda.graphs`) — or,
//! when graphs already replay part of the step, a larger captured region — operator
//! fusion (`torch.compile`), larger batches (more work per launch), foreach / fused
//! optimizers, no Python-loop tensor ops. What the trace shows is already done is not
//! advised: a run whose steps hold `torch.compile`'s Triton kernels or compiled regions
//! is told to replay them from CUDA graphs (`mode="reduce-overhead"`) rather than to
//! compile, and a run whose optimizer already runs `_fused_` or `_foreach_` ops is not
//! told to use them.
//!
//! ## Thresholds and sources
//! Short kernel: GPU time shorter than its launch call, the call itself not longer than
//! HTA's 50 µs runtime cutoff (HTA `get_cuda_kernel_launch_stats`); flagged when ≥ 50 %
//! of the kernels in the steps (launched one by one or replayed from graphs) are short
//! (proposal) and the GPU waits for the host more than the `LowGpuUtilization` warning
//! threshold allows, and at least 10 % of that wait falls while the host launches
//! (below it, the host was busy with something else: GP005). The host launches inside
//! the outermost operators around the launch calls of the steps' kernels (and in the
//! launch calls outside any operator), outside the blocking calls within them
//! (synchronize, blocking copies, frees: SY001's): the dispatch and launch work that
//! graphs and fusion remove. Impact: the time the GPU waits for the host × the short
//! share, at most the wait while the host launches. `launch_bound.*`.

use kinetoscope_analysis::gpu_time::launches::{StepLaunches, OUTSIDE_STEPS};
use kinetoscope_trace::CategoryKind;

use crate::config::Config;
use crate::facts::{ms, Facts};
use crate::finding::{About, Finding, Severity};
use crate::rules::sync::host_device_sync::is_blocking_call;
use crate::rules::{finish, Draft, Rule, RuleMeta};

/// See the module documentation.
pub struct LaunchBound;

/// Below this share of the GPU's wait for the host, launching
/// ([`waiting_while_launching_ns`]) does not explain the wait: the host was busy with something else (GP005
/// `HostBoundGaps` names it).
const MIN_LAUNCH_SHARE_OF_WAIT: f64 = 0.1;

static META: RuleMeta = RuleMeta {
    code: "GP002",
    name: "LaunchBound",
    family: "gpu",
    since: "0.1.0",
    summary: "Many tiny kernels: the host cannot launch fast enough",
};

impl Rule for LaunchBound {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, facts: &Facts, config: &Config) -> Vec<Finding> {
        if !facts.has_gpu || facts.n_steps() == 0 {
            return Vec::new();
        }
        let step = facts.mean_step_ns();
        let waiting_per_step = facts.waiting_per_step();
        let waiting = waiting_per_step.iter().sum::<i64>() as f64 / facts.n_steps() as f64;
        let busy_pct = 100.0 * (1.0 - waiting / step.max(1.0));
        if busy_pct >= config.low_gpu_utilization.warning_below_pct {
            return Vec::new();
        }
        let th = &config.launch_bound;
        let stats = facts.launch_stats();
        // Per ProfilerStep; a trace without step markers is one step.
        let mut steps: Vec<&StepLaunches> = stats
            .steps
            .iter()
            .filter(|s| s.step != OUTSIDE_STEPS)
            .collect();
        if steps.is_empty() {
            steps = stats.steps.iter().collect();
        }
        let launches: u64 = steps.iter().map(|s| s.launches).sum();
        let graphs = crate::summary::graph_replay(facts);
        let replayed = graphs.as_ref().map_or(0, |g| g.kernels);
        let n = launches + replayed;
        if launches == 0 {
            return Vec::new();
        }
        let short: u64 = steps.iter().map(|s| s.short_kernels).sum();
        let gpu_ns: i64 = steps.iter().map(|s| s.gpu_ns).sum();
        let share = 100.0 * short as f64 / n as f64;
        if share < th.short_share_pct {
            return Vec::new();
        }
        let per = steps.len() as f64;
        // The wait while the host dispatched and launched kernels: what graphs and
        // fusion remove, and so the most that fewer launches can give back.
        let launching = waiting_while_launching_ns(facts);
        if launching < waiting * MIN_LAUNCH_SHARE_OF_WAIT {
            // The host was doing something else while the GPU waited (GP005).
            return Vec::new();
        }
        let steps_seen = steps
            .iter()
            .filter(|s| {
                s.launches > 0
                    && 100.0 * s.short_kernels as f64 / s.launches as f64 >= th.short_share_pct
            })
            .count();
        let mut evidence = vec![
            format!(
                "{:.0} launches per step, mean GPU time {:.1} µs; {:.0} short kernels per \
                 step (GPU time < launch call, as kinetoscope launches)",
                launches as f64 / per,
                gpu_ns as f64 / launches as f64 / 1e3,
                short as f64 / per
            ),
            format!(
                "the GPU waits for the host {:.2} ms of a {:.2} ms step (nothing running or \
                 queued), {:.2} ms of it while the host runs the operators that launch \
                 kernels",
                ms(waiting),
                ms(step),
                ms(launching)
            ),
        ];
        evidence.extend(super::graph_replay_line(facts));
        vec![finish(
            &META,
            facts,
            config,
            Draft {
                about: About::Trace,
                title: format!(
                    "Launch-bound: {share:.0} % of the {:.0} kernels per step run shorter \
                     than their launch call",
                    n as f64 / per
                ),
                severity: Severity::Warning,
                impact_ns: (waiting * share / 100.0).min(launching),
                steps_seen,
                evidence,
                fix: launch_fix(
                    graphs.is_some(),
                    crate::summary::uses_torch_compile(facts),
                    crate::rules::optimizer::already_batched(facts),
                ),
                details: format!(
                    "{share:.0} % ≥ {} % of the kernels are short (HTA: GPU time < launch \
                     call; graph-replayed kernels count as not short; the share is a \
                     proposal) while the GPU is busy or has work queued {busy_pct:.1} % < {} \
                     % of the step. Impact: time the GPU waits for the host × short share, \
                     at most the wait while the host runs the operators that launch kernels \
                     (overlaps LowGpuUtilization).",
                    th.short_share_pct, config.low_gpu_utilization.warning_below_pct
                ),
            },
        )]
    }
}

/// The GPU's wait for the host per step (the mean over the steps) while the host was
/// launching kernels: inside the outermost operators around the launch calls of the
/// steps' kernels (or the launch calls made outside any operator), not inside a blocking
/// call (a synchronize, a blocking copy, a free: SY001's) within them.
fn waiting_while_launching_ns(facts: &Facts) -> f64 {
    let t = facts.trace;
    let e = &t.events;
    let mut in_op = facts.ancestor_search(|a| t.categories.kind(e.cat[a]) == CategoryKind::CpuOp);
    let mut spans: Vec<usize> = facts
        .each_event(&[CategoryKind::Kernel], |_| true)
        .filter(|&k| facts.step_of_event(k).is_some())
        .filter_map(|k| facts.launcher_of(k))
        .map(|call| in_op.nearest(call).unwrap_or(call))
        .collect();
    spans.sort_unstable();
    spans.dedup();
    let spans = facts.outermost(&spans);
    let set: rustc_hash::FxHashSet<usize> = spans.iter().copied().collect();
    let mut in_span = facts.ancestor_search(|a| set.contains(&a));
    let blocking: Vec<usize> = facts
        .events(
            &[
                CategoryKind::CudaRuntime,
                CategoryKind::CudaDriver,
                CategoryKind::OtherRuntime,
            ],
            is_blocking_call,
        )
        .into_iter()
        .filter(|&i| in_span.any(i))
        .collect();
    // Unions: spans on two threads at once count once.
    let waiting = |v: &[usize]| {
        facts.gpu_waiting_in_union(
            v.iter()
                .map(|&i| (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i)))
                .collect(),
        )
    };
    (waiting(&spans) - waiting(&facts.outermost(&blocking))).max(0) as f64
        / facts.n_steps().max(1) as f64
}

/// The fix, by what the trace shows is already in use: CUDA graphs replaying part of the
/// step, `torch.compile`, a fused or foreach optimizer.
fn launch_fix(graphs: bool, compiled: bool, fused_optimizer: bool) -> String {
    let fix = match (graphs, compiled) {
        (true, _) => "Cut the eager launches: CUDA graphs already replay part of the step, so \
                      capture the rest too (fewer graph breaks, torch.compile \
                      mode=\"reduce-overhead\" on more of the model), fuse what stays eager \
                      (torch.compile), use foreach/fused optimizers, no per-element Python \
                      loops over tensors."
            .to_owned(),
        (false, true) => "The model is already compiled (Triton kernels in the steps), but \
                          each kernel is still launched one by one: replay them from CUDA \
                          graphs with torch.compile(mode=\"reduce-overhead\"), compile what \
                          stays eager (graph breaks, the optimizer), raise the batch size, \
                          use foreach/fused optimizers."
            .to_owned(),
        (false, false) => "Cut launches: torch.compile (fusion) or CUDA graphs \
                           (torch.compile(mode=\"reduce-overhead\")), larger batches, \
                           foreach/fused optimizers, no per-element Python loops over tensors."
            .to_owned(),
    };
    if fused_optimizer {
        fix.replace(", use foreach/fused optimizers", "")
            .replace(" foreach/fused optimizers,", "")
    } else {
        fix
    }
}
