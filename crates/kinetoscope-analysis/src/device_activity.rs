//! What the host launched and what the devices recorded, as data: how many launch calls
//! and GPU activities the trace holds (so that a trace whose device activity was lost is
//! told apart from a CPU-only one), which kernels were replayed from CUDA / HIP graphs
//! (attributed to their graph launch by correlation), and each GPU's timeline of busy
//! and queued time.
//!
//! **Queued** time is time in which no GPU activity runs on a device although work for
//! it has already been launched: from the end of a launch call to the start of the
//! activity it launched. The device is then waiting for something other than the host —
//! an event on another stream, work that is not in the trace, or a host/device clock
//! offset — so idle time that is queued is not time the host made the GPU lose. What is
//! neither busy nor queued is the time the GPU **waits for the host**
//! ([`DeviceTimeline::waiting_for_host`]).

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, EventId, StrId, Trace, TrackKind};

use std::sync::OnceLock;

use crate::overview::intervals::{add_span, merge, subtract, Prefix, Span};

/// Launch, graph-replay and activity counts of one trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceActivity {
    /// Host calls that launch kernels: kernel launches (`cudaLaunchKernel`,
    /// `cuLaunchKernel`, `hipLaunchKernel`, `hipExtModuleLaunchKernel`, …) and graph
    /// launches.
    pub kernel_launch_calls: u64,
    /// Kernels, copies and sets recorded on the devices.
    pub gpu_activities: u64,
    /// Kernels recorded.
    pub kernels: u64,
    /// Σ kernel time, ns.
    pub kernel_ns: i64,
    /// Graph launches (`cudaGraphLaunch`, `cuGraphLaunch`, `hipGraphLaunch`), in time
    /// order, with the kernels each replayed.
    pub graph_launches: Vec<GraphLaunch>,
    /// Kernels replayed from graph launches (their correlation is a graph launch's).
    pub graph_kernels: u64,
    /// Σ their time, ns.
    pub graph_kernel_ns: i64,
}

/// One graph launch and the kernels it replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphLaunch {
    /// The launch call (event index).
    pub event: u32,
    /// Its start, epoch ns.
    pub ts_ns: i64,
    /// Kernels replayed.
    pub kernels: u64,
    /// Σ their time, ns.
    pub kernel_ns: i64,
}

impl DeviceActivity {
    /// Whether the host launched kernels but no device activity was recorded (CUPTI or
    /// roctracer lost it, or the profiler ran without device activities): the trace is
    /// not CPU-only, and nothing about GPU time can be measured from it.
    pub fn missing(&self) -> bool {
        self.gpu_activities == 0 && self.kernel_launch_calls > 0
    }
}

/// Busy and queued time of one device (or of all devices together).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceTimeline {
    /// Device id (the activities' `device` arg, else their stream's device); -1 for all
    /// devices together.
    pub device: i64,
    /// Time with a kernel, copy or set running, merged `[start, end)` epoch ns.
    pub busy: Vec<(i64, i64)>,
    /// Time with nothing running but work already launched (module docs), merged and
    /// disjoint from `busy`.
    pub queued: Vec<(i64, i64)>,
    /// Prefix lengths of `busy` and `queued`, built on first use (a measure in any
    /// window is then O(log n), however many windows overlap).
    #[serde(skip)]
    prefix: OnceLock<(Prefix, Prefix)>,
}

impl PartialEq for DeviceTimeline {
    fn eq(&self, other: &Self) -> bool {
        (self.device, &self.busy, &self.queued) == (other.device, &other.busy, &other.queued)
    }
}

impl DeviceTimeline {
    /// A timeline from its merged busy and queued intervals.
    pub fn new(device: i64, busy: Vec<(i64, i64)>, queued: Vec<(i64, i64)>) -> Self {
        Self {
            device,
            busy,
            queued,
            prefix: OnceLock::new(),
        }
    }

    fn prefix(&self) -> &(Prefix, Prefix) {
        self.prefix
            .get_or_init(|| (Prefix::of(&self.busy), Prefix::of(&self.queued)))
    }

    /// Time the device waits for the host inside `[lo, hi)` (nothing runs and nothing
    /// launched is waiting to run), ns, in O(log n).
    pub fn waiting_ns(&self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return 0;
        }
        let (busy, queued) = self.prefix();
        (hi - lo) - busy.len_in(&self.busy, lo, hi) - queued.len_in(&self.queued, lo, hi)
    }

    /// Queued time inside `[lo, hi)`, ns, in O(log n).
    pub fn queued_in(&self, lo: i64, hi: i64) -> i64 {
        self.prefix().1.len_in(&self.queued, lo, hi)
    }

    /// The last instant of `(lo, hi]` at which the device had work (running or queued),
    /// `None` when it had none there.
    pub fn last_work_in(&self, lo: i64, hi: i64) -> Option<i64> {
        let last = |set: &[(i64, i64)]| {
            let k = set.partition_point(|s| s.0 < hi);
            k.checked_sub(1).map(|k| set[k].1.min(hi))
        };
        last(&self.busy)
            .into_iter()
            .chain(last(&self.queued))
            .max()
            .filter(|&t| t > lo)
    }

    /// Where the wait for the host that is going on at `t` ends (at most `limit`): `t`
    /// itself when the device is busy or has work queued at `t`.
    pub fn waiting_until(&self, t: i64, limit: i64) -> i64 {
        let next = |set: &[(i64, i64)]| {
            let k = set.partition_point(|s| s.1 <= t);
            match set.get(k) {
                Some(&(s, _)) if s <= t => None,
                Some(&(s, _)) => Some(s),
                None => Some(i64::MAX),
            }
        };
        match (next(&self.busy), next(&self.queued)) {
            (Some(b), Some(q)) => b.min(q).min(limit).max(t),
            _ => t,
        }
    }
}

/// Every device's timeline and the timeline of all devices together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuTimeline {
    /// Per device, by id.
    pub devices: Vec<DeviceTimeline>,
    /// All devices as one (busy when any device is busy; queued when none is busy and
    /// one has work queued).
    pub all: DeviceTimeline,
}

impl GpuTimeline {
    /// The timeline of device `id`, when it recorded activity (devices are sorted by id).
    pub fn device(&self, id: i64) -> Option<&DeviceTimeline> {
        let k = self.devices.partition_point(|d| d.device < id);
        self.devices.get(k).filter(|d| d.device == id)
    }
}

/// Whether a host call is a graph launch.
pub fn is_graph_launch(name: &str) -> bool {
    ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Whether a host call launches kernels (a kernel or a graph launch, CUDA runtime or
/// driver, HIP).
pub fn is_kernel_launch(name: &str) -> bool {
    name.contains("LaunchKernel")
        || name.contains("LaunchCooperativeKernel")
        || is_graph_launch(name)
}

/// The device of GPU activity `i`: its `device` argument (`arg`), else its stream's device.
fn device_of(trace: &Trace, i: usize, arg: Option<i64>) -> i64 {
    match (arg, trace.tracks.get(trace.events.track[i]).kind) {
        (Some(d), _) if d >= 0 => d,
        (_, TrackKind::GpuStream { device, .. }) => device,
        _ => -1,
    }
}

/// The `device` argument of GPU activities asked for in increasing event order: a
/// cursor over the kernel table and one over the transfer table (both in event order)
/// instead of a search of either per activity.
struct DeviceArgs<'t> {
    trace: &'t Trace,
    kernel: usize,
    transfer: usize,
}

impl<'t> DeviceArgs<'t> {
    fn new(trace: &'t Trace) -> Self {
        Self {
            trace,
            kernel: 0,
            transfer: 0,
        }
    }

    /// The `device` argument of activity `i` of kind `kind`, if it has one.
    fn of(&mut self, i: usize, kind: CategoryKind) -> Option<i64> {
        let id = EventId(i as u32);
        let args = &self.trace.args;
        if kind == CategoryKind::Kernel {
            let events = args.kernel.events();
            while self.kernel < events.len() && events[self.kernel] < id {
                self.kernel += 1;
            }
            (events.get(self.kernel) == Some(&id))
                .then(|| args.kernel.get(self.kernel))
                .flatten()
                .map(|a| a.launch.device)
        } else {
            let transfers = &args.transfer;
            while self.transfer < transfers.len() && transfers[self.transfer].event < id {
                self.transfer += 1;
            }
            transfers
                .get(self.transfer)
                .filter(|t| t.event == id)
                .map(|t| t.device)
        }
    }
}

/// The launch call of a GPU activity (event index), by correlation.
fn launch_of(trace: &Trace, i: usize) -> Option<usize> {
    let c = trace.events.correlation.at(i);
    trace.correlation_index().launch(c).map(|l| l.index())
}

/// Kernels, copies and sets with their category kind.
fn gpu_activities(trace: &Trace) -> impl Iterator<Item = (usize, CategoryKind)> + '_ {
    let e = &trace.events;
    (0..e.len()).filter_map(move |i| {
        let kind = trace.categories.kind(e.cat[i]);
        matches!(
            kind,
            CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
        )
        .then_some((i, kind))
    })
}

/// The launch counts and graph replays of a trace.
pub fn device_activity(trace: &Trace) -> DeviceActivity {
    let e = &trace.events;
    let mut act = DeviceActivity::default();
    let mut graph_of: rustc_hash::FxHashMap<usize, usize> = Default::default();
    // (kernel launch, graph launch) per name.
    let mut by_name: rustc_hash::FxHashMap<StrId, (bool, bool)> = Default::default();
    for i in 0..e.len() {
        if matches!(
            trace.categories.kind(e.cat[i]),
            CategoryKind::CudaRuntime | CategoryKind::CudaDriver | CategoryKind::OtherRuntime
        ) {
            let (kernel, graph) = *by_name.entry(e.name[i]).or_insert_with(|| {
                let name = trace.strings.get(e.name[i]);
                (is_kernel_launch(name), is_graph_launch(name))
            });
            if kernel {
                act.kernel_launch_calls += 1;
            }
            if graph {
                graph_of.insert(i, act.graph_launches.len());
                act.graph_launches.push(GraphLaunch {
                    event: i as u32,
                    ts_ns: e.ts_ns[i],
                    kernels: 0,
                    kernel_ns: 0,
                });
            }
        }
    }
    for (i, kind) in gpu_activities(trace) {
        act.gpu_activities += 1;
        if kind != CategoryKind::Kernel {
            continue;
        }
        let dur = e.dur_ns.at(i).max(0);
        act.kernels += 1;
        act.kernel_ns += dur;
        if graph_of.is_empty() {
            continue;
        }
        if let Some(&g) = launch_of(trace, i).and_then(|l| graph_of.get(&l)) {
            act.graph_kernels += 1;
            act.graph_kernel_ns += dur;
            act.graph_launches[g].kernels += 1;
            act.graph_launches[g].kernel_ns += dur;
        }
    }
    act.graph_launches.sort_by_key(|g| (g.ts_ns, g.event));
    act
}

/// The busy and queued time of every device of a trace, and of all together.
pub fn gpu_timeline(trace: &Trace) -> GpuTimeline {
    let e = &trace.events;
    // (device, busy, pending) per device.
    let mut per: Vec<(i64, Vec<Span>, Vec<Span>)> = Vec::new();
    let mut slot_of: rustc_hash::FxHashMap<i64, usize> = Default::default();
    let mut device_args = DeviceArgs::new(trace);
    for (i, kind) in gpu_activities(trace) {
        let (ts, dur) = (e.ts_ns[i], e.dur_ns.at(i).max(0));
        let device = device_of(trace, i, device_args.of(i, kind));
        let slot = *slot_of.entry(device).or_insert_with(|| {
            per.push((device, Vec::new(), Vec::new()));
            per.len() - 1
        });
        add_span(&mut per[slot].1, (ts, ts + dur));
        if let Some(l) = launch_of(trace, i) {
            let submitted = e.ts_ns[l] + e.dur_ns.at(l).max(0);
            if submitted < ts {
                add_span(&mut per[slot].2, (submitted, ts));
            }
        }
    }
    // Each device's sets merged, then all devices' from those (a union of unions).
    per.sort_by_key(|p| p.0);
    let per: Vec<(i64, Vec<Span>, Vec<Span>)> = per
        .into_iter()
        .map(|(device, busy, pending)| (device, merge(busy), merge(pending)))
        .collect();
    let all_busy = merge(per.iter().flat_map(|p| p.1.iter().copied()).collect());
    let all_pending = merge(per.iter().flat_map(|p| p.2.iter().copied()).collect());
    let all_queued = subtract(&all_pending, &all_busy);
    let all = DeviceTimeline::new(-1, all_busy, all_queued);
    let devices = per
        .into_iter()
        .map(|(device, busy, pending)| {
            let queued = subtract(&pending, &busy);
            DeviceTimeline::new(device, busy, queued)
        })
        .collect();
    GpuTimeline { devices, all }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_names() {
        assert!(is_kernel_launch("cudaLaunchKernel"));
        assert!(is_kernel_launch("cuLaunchKernelEx"));
        assert!(is_kernel_launch("hipExtModuleLaunchKernel"));
        assert!(is_kernel_launch("hipGraphLaunch"));
        assert!(is_graph_launch("cudaGraphLaunch"));
        assert!(!is_kernel_launch("cudaMemcpyAsync"));
        assert!(!is_graph_launch("cudaGraphInstantiate"));
    }

    #[test]
    fn waiting_leaves_out_busy_and_queued_time() {
        let t = DeviceTimeline::new(0, vec![(10, 20), (50, 60)], vec![(30, 50)]);
        // [0, 100): busy 20, queued 20, waiting [0,10) [20,30) [60,100).
        assert_eq!(t.waiting_ns(0, 100), 10 + 10 + 40);
        assert_eq!(t.queued_in(0, 100), 20);
        assert_eq!(t.queued_in(40, 45), 5);
        assert_eq!(t.waiting_ns(5, 5), 0);
        assert_eq!(t.waiting_ns(9, 9), 0);
        assert_eq!(t.waiting_ns(15, 55), 10);
        assert_eq!(t.waiting_ns(25, 61), 6);
        assert_eq!(t.waiting_ns(60, 61), 1);
        assert_eq!(t.waiting_ns(7, 3), 0);
        // The wait at 20 runs to the queued work at 30; at 15 or 35 there is none.
        assert_eq!(t.waiting_until(20, 100), 30);
        assert_eq!(t.waiting_until(22, 25), 25);
        assert_eq!(t.waiting_until(15, 100), 15);
        assert_eq!(t.waiting_until(35, 100), 35);
        assert_eq!(t.waiting_until(70, 100), 100);
    }
}
