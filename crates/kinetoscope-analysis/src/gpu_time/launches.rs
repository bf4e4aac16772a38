//! CUDA kernel launch statistics (HTA's `get_cuda_kernel_launch_stats`): for each launch
//! call and the GPU row it launched, the call's duration, the row's duration and the launch
//! delay `max(0, row start − call end)`; short kernels (shorter than their launch call,
//! whose call is not itself an outlier), runtime outliers (call longer than a cutoff) and
//! delay outliers; a per-step summary.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{sort_runs_by_key, Phase, Trace};

use super::{cut_of, select, Compat, GpuRows, LaunchIndex, Window};
use crate::stats::DurationStats;
use crate::steps::{find_steps, StepSource};

/// HTA's default `runtime_cutoff`: 50 µs.
pub const DEFAULT_RUNTIME_CUTOFF_NS: i64 = 50_000;
/// HTA's default `launch_delay_cutoff`: 100 µs.
pub const DEFAULT_DELAY_CUTOFF_NS: i64 = 100_000;

/// The step name of the launches outside every `ProfilerStep` ([`StepLaunches::step`]).
pub const OUTSIDE_STEPS: &str = "(outside steps)";

/// Launch calls HTA 0.5.0 counts (with `include_memory_events=True`).
const HTA_LAUNCHES: [&str; 5] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "runFunction",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
];

/// Launch calls kinetoscope counts by default: HTA's plus the driver API and HIP.
const ALL_LAUNCHES: [&str; 11] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "runFunction",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
];

/// Whether a host call name counts as a launch in a mode.
pub fn is_launch_call(name: &str, compat: Compat) -> bool {
    match compat {
        Compat::Hta => HTA_LAUNCHES.contains(&name),
        Compat::Kinetoscope => ALL_LAUNCHES.contains(&name),
    }
}

/// Options of the launch analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchOptions {
    /// A launch call longer than this (ns) is a runtime outlier.
    pub runtime_cutoff_ns: i64,
    /// A launch delay longer than this (ns) is a delay outlier.
    pub delay_cutoff_ns: i64,
    /// Rows kept in each list (0 = all).
    pub top: usize,
    /// Keep every launch in [`LaunchStats::launches`] (for CSV).
    pub all: bool,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            runtime_cutoff_ns: DEFAULT_RUNTIME_CUTOFF_NS,
            delay_cutoff_ns: DEFAULT_DELAY_CUTOFF_NS,
            top: 20,
            all: false,
        }
    }
}

/// One launch call and the GPU row it launched. Times ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// CUPTI correlation id.
    pub correlation: i64,
    /// Launch call name (`cudaLaunchKernel`, ...).
    pub launch: String,
    /// Kernel (or memcpy / memset) name.
    pub kernel: String,
    /// Launch call start, epoch ns.
    pub launch_ts_ns: i64,
    /// Launch call duration.
    pub cpu_dur_ns: i64,
    /// GPU row duration.
    pub gpu_dur_ns: i64,
    /// `max(0, GPU start − launch end)`.
    pub delay_ns: i64,
    /// `ProfilerStep` number the launch call lies in, if any.
    pub step: Option<i64>,
}

/// Launches of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepLaunches {
    /// `ProfilerStep#N`, or [`OUTSIDE_STEPS`].
    pub step: String,
    /// N.
    pub number: Option<i64>,
    /// Launches.
    pub launches: u64,
    /// Σ launch call duration, ns.
    pub cpu_ns: i64,
    /// Σ GPU duration, ns.
    pub gpu_ns: i64,
    /// Σ launch delay, ns.
    pub delay_ns: i64,
    /// Longest launch delay, ns.
    pub max_delay_ns: i64,
    /// Short kernels.
    pub short_kernels: u64,
    /// Runtime outliers.
    pub runtime_outliers: u64,
    /// Delay outliers.
    pub delay_outliers: u64,
}

/// Launch statistics of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// What was looked at.
    pub window: Window,
    /// Options used.
    pub options: LaunchOptions,
    /// Number of (launch call, GPU row) pairs.
    pub count: u64,
    /// Launch call durations.
    pub cpu_dur: Option<DurationStats>,
    /// GPU row durations.
    pub gpu_dur: Option<DurationStats>,
    /// Launch delays.
    pub delay: Option<DurationStats>,
    /// Short kernels: call ≤ runtime cutoff and GPU row shorter than the call.
    pub short_kernels: u64,
    /// Calls longer than the runtime cutoff.
    pub runtime_outliers: u64,
    /// Delays longer than the delay cutoff.
    pub delay_outliers: u64,
    /// Short kernels, largest `call − kernel` first.
    pub short_kernel_list: Vec<Launch>,
    /// Runtime outliers, longest call first.
    pub runtime_outlier_list: Vec<Launch>,
    /// Delay outliers, longest delay first.
    pub delay_outlier_list: Vec<Launch>,
    /// Per step, in time order, then launches outside every step.
    pub steps: Vec<StepLaunches>,
    /// Every launch in correlation order (only with [`LaunchOptions::all`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<Launch>,
}

/// A compact launch pair: (launch event, GPU event).
type Pair = (u32, u32);

/// Launch statistics of a trace (`filter`: apply HTA's step filter, see
/// [`super::PerRank`]).
pub fn launch_stats(
    trace: &Trace,
    compat: Compat,
    filter: bool,
    opts: LaunchOptions,
) -> LaunchStats {
    let rows = select(trace, compat, filter);
    launch_stats_of(trace, &rows, &LaunchIndex::build(trace), filter, opts)
}

/// The (launch call, GPU row) pairs of the rows whose launch call is a kernel launch
/// (by [`is_launch_call`]) and, with a cut, starts before it; by correlation, then row.
fn launch_pairs(
    trace: &Trace,
    rows: &GpuRows,
    launches: &LaunchIndex,
    cut_ns: Option<i64>,
) -> Vec<Pair> {
    let e = &trace.events;
    let compat = rows.window.compat;
    let clock = rows.clock;
    // Launch-call names by interned id, decided once per name.
    let mut is_call = vec![u8::MAX; trace.strings.len()];
    // (launch's correlation, row, launch): the sort key read once per pair, not at
    // every comparison.
    let mut pairs: Vec<(i64, u32, u32)> = Vec::new();
    for (k, &g) in rows.rows.iter().enumerate() {
        if rows.kind[k] == super::RowKind::Sync {
            continue;
        }
        let corr = e.correlation.at(g as usize);
        if corr == 0 {
            continue;
        }
        let Some(l) = launches.get(corr) else {
            continue;
        };
        let li = l as usize;
        if e.phase[li] != Phase::Complete {
            continue;
        }
        if cut_ns.is_some_and(|c| clock.start(e.ts_ns[li]) >= c) {
            continue;
        }
        let slot = &mut is_call[e.name[li].0 as usize];
        if *slot == u8::MAX {
            *slot = u8::from(is_launch_call(trace.strings.get(e.name[li]), compat));
        }
        if *slot == 1 {
            pairs.push((e.correlation.at(li), g, l));
        }
    }
    // Each row is in one pair: the keys are distinct. Rows come in time order per
    // stream, so ids rise in long runs: merged.
    sort_runs_by_key(&mut pairs, |&p| p);
    pairs.into_iter().map(|(_, g, l)| (l, g)).collect()
}

/// [`launch_stats`] of rows already selected (by [`select`], with the `filter` given
/// here) and the trace's launch index, both built once by the caller (the advisor shares
/// them with HTA's host-wait gaps).
pub fn launch_stats_of(
    trace: &Trace,
    rows: &GpuRows,
    launches: &LaunchIndex,
    filter: bool,
    opts: LaunchOptions,
) -> LaunchStats {
    let e = &trace.events;
    let clock = rows.clock;
    let cut_ns = cut_of(trace, filter, clock).map(|c| c.0);
    let pairs = launch_pairs(trace, rows, launches, cut_ns);

    let (steps, source) = find_steps(trace);
    let steps = if source == StepSource::ProfilerStep {
        steps
    } else {
        Vec::new()
    };
    let step_of = |ts: i64| -> Option<usize> {
        let at = steps.partition_point(|s| s.start_ns <= ts);
        (at > 0 && ts < steps[at - 1].start_ns + steps[at - 1].dur_ns).then(|| at - 1)
    };
    let mut per_step: Vec<StepLaunches> = steps
        .iter()
        .map(|s| StepLaunches {
            step: s.name.clone(),
            number: s.number,
            launches: 0,
            cpu_ns: 0,
            gpu_ns: 0,
            delay_ns: 0,
            max_delay_ns: 0,
            short_kernels: 0,
            runtime_outliers: 0,
            delay_outliers: 0,
        })
        .collect();
    per_step.push(StepLaunches {
        step: OUTSIDE_STEPS.into(),
        number: None,
        launches: 0,
        cpu_ns: 0,
        gpu_ns: 0,
        delay_ns: 0,
        max_delay_ns: 0,
        short_kernels: 0,
        runtime_outliers: 0,
        delay_outliers: 0,
    });
    let outside = per_step.len() - 1;

    let n = pairs.len();
    let (mut cpu, mut gpu, mut delay) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut short, mut rt_out, mut dl_out) = (Vec::new(), Vec::new(), Vec::new());
    for (k, &(l, g)) in pairs.iter().enumerate() {
        let (li, gi) = (l as usize, g as usize);
        let (ls, le) = clock.span(trace, li);
        let (gs, ge) = clock.span(trace, gi);
        let (c, d) = (le - ls, ge - gs);
        let dl = (gs - le).max(0);
        cpu.push(c);
        gpu.push(d);
        delay.push(dl);
        let is_short = c <= opts.runtime_cutoff_ns && d < c;
        let is_rt = c > opts.runtime_cutoff_ns;
        let is_dl = dl > opts.delay_cutoff_ns;
        if is_short {
            short.push(k as u32);
        }
        if is_rt {
            rt_out.push(k as u32);
        }
        if is_dl {
            dl_out.push(k as u32);
        }
        let s = &mut per_step[step_of(e.ts_ns[li]).unwrap_or(outside)];
        s.launches += 1;
        s.cpu_ns += c;
        s.gpu_ns += d;
        s.delay_ns += dl;
        s.max_delay_ns = s.max_delay_ns.max(dl);
        s.short_kernels += u64::from(is_short);
        s.runtime_outliers += u64::from(is_rt);
        s.delay_outliers += u64::from(is_dl);
    }
    if per_step[outside].launches == 0 {
        per_step.pop();
    }

    let launch_of = |k: u32| -> Launch {
        let (l, g) = pairs[k as usize];
        let (li, gi) = (l as usize, g as usize);
        Launch {
            correlation: e.correlation.at(li),
            launch: trace.strings.get(e.name[li]).to_owned(),
            kernel: trace.strings.get(e.name[gi]).to_owned(),
            launch_ts_ns: e.ts_ns[li],
            cpu_dur_ns: cpu[k as usize],
            gpu_dur_ns: gpu[k as usize],
            delay_ns: delay[k as usize],
            step: step_of(e.ts_ns[li]).and_then(|s| steps[s].number),
        }
    };
    let list = |mut idx: Vec<u32>, key: &dyn Fn(u32) -> i64| -> Vec<Launch> {
        // The key is unique (ties broken by index): select the first `top`, then sort
        // only those.
        let rank = |&k: &u32| (std::cmp::Reverse(key(k)), k);
        if opts.top > 0 && idx.len() > opts.top {
            idx.select_nth_unstable_by_key(opts.top, rank);
            idx.truncate(opts.top);
        }
        idx.sort_unstable_by_key(rank);
        idx.into_iter().map(launch_of).collect()
    };
    let (n_short, n_rt, n_dl) = (short.len() as u64, rt_out.len() as u64, dl_out.len() as u64);
    let short_kernel_list = list(short, &|k| cpu[k as usize] - gpu[k as usize]);
    let runtime_outlier_list = list(rt_out, &|k| cpu[k as usize]);
    let delay_outlier_list = list(dl_out, &|k| delay[k as usize]);
    let all = if opts.all {
        (0..n as u32).map(launch_of).collect()
    } else {
        Vec::new()
    };
    LaunchStats {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        window: rows.window.clone(),
        options: opts,
        count: n as u64,
        cpu_dur: DurationStats::of(&cpu),
        gpu_dur: DurationStats::of(&gpu),
        delay: DurationStats::of(&delay),
        short_kernels: n_short,
        runtime_outliers: n_rt,
        delay_outliers: n_dl,
        short_kernel_list,
        runtime_outlier_list,
        delay_outlier_list,
        steps: per_step,
        launches: all,
    }
}
