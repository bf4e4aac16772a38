//! Facts every rule reuses, computed once per trace: the overview (steps stretched to
//! their GPU work, breakdown, GPU metrics), step windows and the host step spans, the
//! device activity (launches against recorded activity, graph replays), the other
//! analyses the rules take their numbers from (memory view, HTA host-wait gaps, launch
//! statistics, the kernel table, the GPU timeline of busy and queued time), each
//! computed on first use, and helpers that assign events to steps and walk host call
//! stacks.
//!
//! Steps have two extents. GPU events belong to the overview's step windows, which
//! stretch each host `ProfilerStep#` span to the end of the GPU work it launched; host
//! events belong to the host spans themselves, so that a host call made after the last
//! step (a profiler-stop synchronize) is in no step even while that step's GPU work is
//! still running ([`Facts::step_of_event`]).

mod host_work;
mod launches;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use host_work::HostWork;
pub use kinetoscope_analysis::ancestry::AncestorSearch;
use launches::Launches;

use kinetoscope_analysis::comm::{
    collective_instances, comm_in_steps, CollectiveInstance, CommOptions, TraceComm,
};
use kinetoscope_analysis::device_activity::{gpu_timeline, DeviceActivity, GpuTimeline};
use kinetoscope_analysis::gpu_time::idle::{device_host_wait_with, Gap};
use kinetoscope_analysis::gpu_time::launches::{launch_stats_of, LaunchOptions, LaunchStats};
use kinetoscope_analysis::gpu_time::{select, Compat, GpuRows, LaunchIndex};
use kinetoscope_analysis::kernels::{analyze_kernels_in, KernelGroupBy, KernelsTable};
use kinetoscope_analysis::memory::{analyze_trace_for_rules, MemoryOptions, MemoryView};
use kinetoscope_analysis::name_memo::NameMemo;
use kinetoscope_analysis::ops::OperatorTree;
use kinetoscope_analysis::overview::{overview_and_activity, TraceOverview};
use kinetoscope_analysis::range_extremes::RangeExtremes;
use kinetoscope_analysis::steps::{find_steps, Step, StepSource};
use kinetoscope_trace::{CategoryKind, EventId, GpuVendor, Phase, StrId, Trace, TrackKind};

/// One step window, `[start_ns, end_ns)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepWindow {
    /// `ProfilerStep#N` or `(whole trace)`.
    pub name: String,
    /// Start, epoch ns.
    pub start_ns: i64,
    /// End, epoch ns.
    pub end_ns: i64,
}

impl StepWindow {
    /// Duration, ns.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// Rows per track id, sorted.
type PerTrack<T> = rustc_hash::FxHashMap<u32, T>;

/// One track's user-code Python frames, sorted by (start, end, event), and their ends.
struct UserFrames {
    frames: Vec<(i64, i64, usize)>,
    ends: RangeExtremes,
}

/// The facts of one trace.
pub struct Facts<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// The overview of the trace.
    pub overview: TraceOverview,
    /// Kept steps (GPU-stretched windows), in time order.
    pub steps: Vec<StepWindow>,
    /// The host span of each kept step, `[start, end)` epoch ns, in the order of
    /// [`Self::steps`]: the `ProfilerStep#` annotation, or the whole trace without step
    /// markers.
    pub host_steps: Vec<(i64, i64)>,
    /// Whether the trace has GPU kernels, copies or sets.
    pub has_gpu: bool,
    /// Whether steps come from `ProfilerStep#` markers.
    pub has_step_markers: bool,
    /// Launch calls against recorded device activity, and graph replays.
    pub device: DeviceActivity,
    /// The step [`Self::step_of`] found last, tried first: callers ask in time order,
    /// mostly (a hint only, shared by the threads that run the rules).
    step_hint: AtomicUsize,
    /// The same for [`Self::host_step_of`].
    host_step_hint: AtomicUsize,
    /// Launch calls per thread, with what they launched.
    launches: OnceLock<Launches>,
    /// User-code Python frames per track, sorted by start: (start, end, event), with
    /// their ends indexed for the search of an enclosing frame.
    user_frames: OnceLock<PerTrack<UserFrames>>,
    /// Operators, annotations (not steps) and user-code Python frames per thread.
    host_work: OnceLock<HostWork>,
    /// The memory view.
    memory: OnceLock<MemoryView>,
    /// GPU-wide host-wait time.
    host_wait: OnceLock<Vec<Gap>>,
    /// Launch statistics.
    launch_stats: OnceLock<LaunchStats>,
    /// [`Self::gpu_rows`].
    gpu_rows: OnceLock<GpuRows>,
    /// [`Self::launch_index`].
    launch_index: OnceLock<LaunchIndex>,
    /// [`Self::operator_tree`].
    operator_tree: OnceLock<OperatorTree>,
    /// The kernel table over the steps, by name.
    step_kernels: OnceLock<KernelsTable>,
    /// Busy and queued time per GPU.
    timeline: OnceLock<GpuTimeline>,
    /// The counted GEMM calls, and the GEMM-family calls that count for nothing.
    gemms: OnceLock<(Vec<crate::gemm::GemmCall>, Vec<usize>)>,
    /// [`Self::window_coverage`].
    coverage: OnceLock<Vec<(i64, u32)>>,
    /// [`Self::runtime_calls`].
    runtime_calls: OnceLock<Vec<(String, u64, i64)>>,
    /// [`Self::comm`].
    comm: OnceLock<TraceComm>,
    /// [`Self::collectives`].
    collectives: OnceLock<Vec<CollectiveInstance>>,
    /// [`Self::events`]' index.
    by_name: OnceLock<ByName>,
    /// Where the memory view comes from when one was given ([`Self::with_memory`]).
    pending_memory: Mutex<Option<PendingMemory<'a>>>,
}

/// A memory view being computed elsewhere (a thread's result to wait for).
type PendingMemory<'a> = Box<dyn FnOnce() -> MemoryView + Send + 'a>;

/// Complete events grouped by name id, each group in file order.
struct ByName {
    /// `ids[starts[n]..starts[n + 1]]` are the events named `n`.
    starts: Vec<u32>,
    /// Event indexes.
    ids: Vec<u32>,
}

impl ByName {
    /// Group the complete events of `trace` by name (a counting sort: two passes).
    fn new(trace: &Trace) -> Self {
        let e = &trace.events;
        let names = trace.strings.len();
        let mut starts = vec![0u32; names + 1];
        for i in 0..e.len() {
            if e.phase[i] == Phase::Complete {
                if let Some(c) = starts.get_mut(e.name[i].0 as usize + 1) {
                    *c += 1;
                }
            }
        }
        for n in 0..names {
            starts[n + 1] += starts[n];
        }
        let mut next = starts.clone();
        let mut ids = vec![0u32; starts[names] as usize];
        for i in 0..e.len() {
            if e.phase[i] == Phase::Complete {
                if let Some(at) = next.get_mut(e.name[i].0 as usize) {
                    ids[*at as usize] = i as u32;
                    *at += 1;
                }
            }
        }
        Self { starts, ids }
    }

    /// Number of names.
    fn names(&self) -> usize {
        self.starts.len() - 1
    }

    /// The events named `n`, in file order.
    fn of(&self, n: usize) -> &[u32] {
        &self.ids[self.starts[n] as usize..self.starts[n + 1] as usize]
    }
}

impl<'a> Facts<'a> {
    /// Compute the facts of `trace`.
    pub fn new(trace: &'a Trace) -> Self {
        let (overview, device) = overview_and_activity(trace);
        let steps: Vec<StepWindow> = overview
            .steps
            .iter()
            .map(|s| StepWindow {
                name: s.name.clone(),
                start_ns: s.start_ns,
                end_ns: s.start_ns + s.dur_ns,
            })
            .collect();
        let e = &trace.events;
        let has_gpu = (0..e.len()).any(|i| {
            matches!(
                trace.categories.kind(e.cat[i]),
                CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
            )
        });
        let has_step_markers = overview.step_source == StepSource::ProfilerStep;
        let host_steps = host_step_spans(trace, &steps, has_step_markers);
        Self {
            trace,
            overview,
            steps,
            host_steps,
            has_gpu,
            has_step_markers,
            device,
            step_hint: AtomicUsize::new(0),
            host_step_hint: AtomicUsize::new(0),
            launches: OnceLock::new(),
            user_frames: OnceLock::new(),
            host_work: OnceLock::new(),
            memory: OnceLock::new(),
            host_wait: OnceLock::new(),
            launch_stats: OnceLock::new(),
            gpu_rows: OnceLock::new(),
            launch_index: OnceLock::new(),
            operator_tree: OnceLock::new(),
            step_kernels: OnceLock::new(),
            timeline: OnceLock::new(),
            gemms: OnceLock::new(),
            coverage: OnceLock::new(),
            runtime_calls: OnceLock::new(),
            comm: OnceLock::new(),
            collectives: OnceLock::new(),
            by_name: OnceLock::new(),
            pending_memory: Mutex::new(None),
        }
    }

    /// Compute the facts that are independent of each other and used by several rules
    /// (communication, the kernel table over the steps, HTA's host-wait gaps, launch
    /// statistics, the GEMM calls, the memory view), heaviest first but the memory view,
    /// which comes last (it is often under way on a thread of its own:
    /// [`Self::with_memory`]): for a second thread while the rules run.
    pub fn prepare(&self) {
        self.comm();
        self.step_kernels();
        self.host_wait();
        self.launch_stats();
        self.gemms();
        self.launches();
        self.memory();
    }

    /// Communication and its overlap with computation per step, as `kinetoscope comm`
    /// shows it.
    pub fn comm(&self) -> &TraceComm {
        self.comm.get_or_init(|| {
            comm_in_steps(
                self.trace,
                CommOptions::default(),
                self.collectives(),
                &self.overview.steps,
            )
        })
    }

    /// Every collective of the trace, in start order
    /// ([`kinetoscope_analysis::comm::collective_instances`]).
    pub fn collectives(&self) -> &[CollectiveInstance] {
        self.collectives
            .get_or_init(|| collective_instances(self.trace))
    }

    /// Busy and queued time of each GPU, and of all together
    /// ([`kinetoscope_analysis::device_activity`]).
    pub fn gpu_timeline(&self) -> &GpuTimeline {
        self.timeline.get_or_init(|| gpu_timeline(self.trace))
    }

    /// The counted GEMM calls with their shapes ([`crate::gemm`]: recognised, outermost
    /// of a nest), in file order.
    pub fn gemms(&self) -> &[crate::gemm::GemmCall] {
        &self.gemms.get_or_init(|| crate::gemm::gemm_calls(self)).0
    }

    /// GEMM-family calls that count for nothing: shapes missing or not fitting, and no
    /// GEMM counted inside or around them.
    pub fn unshaped_gemms(&self) -> &[usize] {
        &self.gemms.get_or_init(|| crate::gemm::gemm_calls(self)).1
    }

    /// Time in `[start, end)` in which the GPUs (all together) wait for the host
    /// (nothing runs and nothing launched is queued), ns, in O(log n).
    pub fn gpu_waiting_ns(&self, start: i64, end: i64) -> i64 {
        self.gpu_timeline().all.waiting_ns(start, end)
    }

    /// Time in which the GPUs (all together) wait for the host inside the union of
    /// `windows` (overlapping windows count once), ns: O(w log n).
    pub fn gpu_waiting_in_union(&self, mut windows: Vec<(i64, i64)>) -> i64 {
        windows.retain(|w| w.1 > w.0);
        windows.sort_unstable();
        let mut total = 0i64;
        let mut cur: Option<(i64, i64)> = None;
        for (a, b) in windows {
            cur = match cur {
                Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
                Some((ca, cb)) => {
                    total += self.gpu_waiting_ns(ca, cb);
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        total + cur.map_or(0, |(a, b)| self.gpu_waiting_ns(a, b))
    }

    /// How many step windows hold each instant, as breakpoints: `(t, n)` says `n`
    /// windows hold `[t, next t)` (none before the first). Windows may overlap on a
    /// hostile trace; a sweep over these costs O(windows), not O(windows²).
    pub fn window_coverage(&self) -> &[(i64, u32)] {
        self.coverage.get_or_init(|| {
            let mut edges: Vec<(i64, i64)> = self
                .steps
                .iter()
                .filter(|s| s.end_ns > s.start_ns)
                .flat_map(|s| [(s.start_ns, 1), (s.end_ns, -1)])
                .collect();
            edges.sort_unstable();
            let mut out: Vec<(i64, u32)> = Vec::new();
            let mut n = 0i64;
            for (t, d) in edges {
                n += d;
                let count = u32::try_from(n).unwrap_or(0);
                match out.last_mut() {
                    Some(last) if last.0 == t => last.1 = count,
                    _ => out.push((t, count)),
                }
            }
            out
        })
    }

    /// Per step window, the time the GPUs (all together) wait for the host, ns.
    pub fn waiting_per_step(&self) -> Vec<i64> {
        self.steps
            .iter()
            .map(|s| self.gpu_waiting_ns(s.start_ns, s.end_ns))
            .collect()
    }

    /// The window in which a blocking host call over `[start, end)` makes the GPUs idle,
    /// up to `limit`: the GPU idle it causes is the time the GPUs wait for the host
    /// inside it ([`Self::gpu_waiting_in_union`]). When the GPUs had work at the start
    /// (running or queued), the call waited for it to drain: the window starts when the
    /// GPUs last had work during the call (gaps before that, between work launched
    /// before the call, are not its doing, even where those launches are missing from
    /// the trace) and goes on until the host queues work again after the call. When
    /// they were already waiting, the host was behind before the call: only the call's
    /// own time counts. O(log n).
    pub fn blocking_window(&self, start: i64, end: i64, limit: i64) -> (i64, i64) {
        let timeline = &self.gpu_timeline().all;
        let limit = limit.max(end);
        if timeline.waiting_ns(start, start + 1) > 0 {
            return (start, end.min(limit));
        }
        let drained = timeline.last_work_in(start, end).unwrap_or(start);
        // The wait that begins when the GPUs drained, to the next work after the call.
        (drained, timeline.waiting_until(end, limit).min(limit))
    }

    /// Runtime and driver calls in the host step spans by name, most host time first:
    /// (name, calls, Σ host time ns). Computed once.
    pub fn runtime_calls(&self) -> &[(String, u64, i64)] {
        self.runtime_calls.get_or_init(|| {
            let e = &self.trace.events;
            let runtime = [
                CategoryKind::CudaRuntime,
                CategoryKind::CudaDriver,
                CategoryKind::OtherRuntime,
            ];
            let kinds: Vec<CategoryKind> =
                self.trace.categories.iter().map(|(_, c)| c.kind).collect();
            // Name by name (no map from names to sums).
            let by_name = self.by_name();
            let mut out: Vec<(String, u64, i64)> = Vec::new();
            for n in 0..by_name.names() {
                let (mut calls, mut ns) = (0u64, 0i64);
                for &i in by_name.of(n) {
                    let i = i as usize;
                    if runtime.contains(&kinds[e.cat[i].0 as usize])
                        && self.host_step_of(e.ts_ns[i]).is_some()
                    {
                        calls += 1;
                        ns += e.dur_ns.at(i);
                    }
                }
                if calls > 0 {
                    let name = self.trace.strings.get(StrId(n as u32)).to_owned();
                    out.push((name, calls, ns));
                }
            }
            out.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            out
        })
    }

    /// Whether the host launched kernels but the trace recorded no device activity.
    pub fn device_activity_missing(&self) -> bool {
        self.device.missing()
    }

    /// The memory view of the trace as the rules read it: `kinetoscope memory`'s peaks,
    /// curves, per-step pattern and the allocations never freed
    /// ([`kinetoscope_analysis::memory::analyze_trace_for_rules`]).
    pub fn memory(&self) -> &MemoryView {
        self.memory.get_or_init(|| {
            let pending = self
                .pending_memory
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            match pending {
                Some(view) => view(),
                None => analyze_trace_for_rules(self.trace, &MemoryOptions::default()),
            }
        })
    }

    /// These facts, with the memory view ([`Self::memory`]) taken from `view` when first
    /// asked for: the view needs nothing but the trace, so a caller can start it on a
    /// thread of its own before [`Self::new`]'s overview, and hand over the wait for it.
    pub fn with_memory(self, view: impl FnOnce() -> MemoryView + Send + 'a) -> Self {
        *self
            .pending_memory
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Box::new(view));
        self
    }

    /// The gaps in which the whole GPU waits for the host: HTA's host-wait
    /// classification (as `kinetoscope idle`) over all streams as one queue, in start
    /// order.
    pub fn host_wait(&self) -> &[Gap] {
        self.host_wait
            .get_or_init(|| device_host_wait_with(self.trace, self.gpu_rows(), self.launch_index()))
    }

    /// CUDA launch statistics, as `kinetoscope launches` shows them (per `ProfilerStep`).
    pub fn launch_stats(&self) -> &LaunchStats {
        self.launch_stats.get_or_init(|| {
            launch_stats_of(
                self.trace,
                self.gpu_rows(),
                self.launch_index(),
                false,
                LaunchOptions::default(),
            )
        })
    }

    /// The GPU rows (kernels, copies, sets, stream syncs) by kinetoscope's definitions,
    /// without HTA's step filter ([`kinetoscope_analysis::gpu_time::select`]): shared by
    /// the host-wait gaps and the launch statistics.
    pub fn gpu_rows(&self) -> &GpuRows {
        self.gpu_rows
            .get_or_init(|| select(self.trace, Compat::Kinetoscope, false))
    }

    /// The launch calls by correlation id, built once for the host-wait gaps and the
    /// launch statistics.
    pub fn launch_index(&self) -> &LaunchIndex {
        self.launch_index
            .get_or_init(|| LaunchIndex::of_correlation(self.trace.correlation_index()))
    }

    /// The operator node tree, built once for the perf model and the diff profile.
    pub fn operator_tree(&self) -> &OperatorTree {
        self.operator_tree
            .get_or_init(|| OperatorTree::build(self.trace))
    }

    /// The kernel table by name (`kinetoscope kernels`) over the kernels that start in
    /// the steps; each row lists the steps (indices into [`Self::steps`]) it ran in.
    pub fn step_kernels(&self) -> &KernelsTable {
        self.step_kernels.get_or_init(|| {
            analyze_kernels_in(self.trace, KernelGroupBy::Name, Some(&self.step_windows()))
        })
    }

    /// The steps as `[start, end)` windows, epoch ns.
    pub fn step_windows(&self) -> Vec<(i64, i64)> {
        self.steps.iter().map(|s| (s.start_ns, s.end_ns)).collect()
    }

    /// The GPU activities a runtime or driver call launched (by CUPTI correlation).
    pub fn launched_by(&self, call: usize) -> impl Iterator<Item = usize> + '_ {
        let c = self.trace.events.correlation.at(call);
        self.trace
            .correlation_index()
            .gpu(c)
            .iter()
            .map(|g| g.index())
    }

    fn launches(&self) -> &Launches {
        self.launches.get_or_init(|| Launches::build(self.trace))
    }

    /// The GPU activities (kernels, copies, sets; graph kernels included) launched by
    /// runtime calls made during a host event on its thread, by CUPTI correlation:
    /// O(log n + found) ([`launches`]).
    pub fn launched_gpu(&self, event: usize) -> Vec<usize> {
        let idx = self.trace.correlation_index();
        self.launches()
            .correlations_inside(self.trace, event)
            .into_iter()
            .flat_map(|c| idx.gpu(c))
            .map(|g| g.index())
            .collect()
    }

    /// GPU time (kernels, copies, sets) launched by runtime calls made during a host
    /// event on its thread, ns: the device time of an operator including its children.
    /// O(log n), however many launches the event holds.
    pub fn launched_device_ns(&self, event: usize) -> i64 {
        self.launches().totals_inside(self.trace, event).device_ns
    }

    /// Whether a kernel launched during a host event on its thread ran on tensor cores
    /// (or says `tf32`), in O(log n).
    pub fn launched_tensor_core_work(&self, event: usize) -> bool {
        self.launches().totals_inside(self.trace, event).tensor_core > 0
    }

    /// Time attributed to an operator: its launched GPU time on a GPU trace, its host
    /// duration on a CPU-only trace, 0 (unknown) when the device activity is missing.
    pub fn op_time_ns(&self, event: usize) -> i64 {
        if self.has_gpu {
            self.launched_device_ns(event)
        } else if self.device_activity_missing() {
            0
        } else {
            self.trace.events.dur_ns.at(event)
        }
    }

    /// Number of steps.
    pub fn n_steps(&self) -> usize {
        self.steps.len()
    }

    /// The perf model (`kinetoscope perf`) of the calls (operator events) `keep_call`
    /// keeps, measured with the GPU activities `keep_gpu` keeps.
    pub fn perf_model(
        &self,
        opts: &kinetoscope_analysis::perf::PerfOptions,
        keep_call: &dyn Fn(usize) -> bool,
        keep_gpu: &dyn Fn(usize) -> bool,
    ) -> kinetoscope_analysis::perf::PerfTable {
        kinetoscope_analysis::perf::analyze_perf_in(
            self.trace,
            self.operator_tree(),
            opts,
            keep_call,
            keep_gpu,
        )
    }

    /// Mean step duration, ns (0 without steps).
    pub fn mean_step_ns(&self) -> f64 {
        if self.steps.is_empty() {
            return 0.0;
        }
        self.steps.iter().map(|s| s.dur_ns() as f64).sum::<f64>() / self.steps.len() as f64
    }

    /// The step whose (GPU-stretched) window contains `ts_ns`: for GPU times.
    pub fn step_of(&self, ts_ns: i64) -> Option<usize> {
        last_starting(&self.steps, &self.step_hint, ts_ns, |s| {
            (s.start_ns, s.end_ns)
        })
    }

    /// The step whose host span contains `ts_ns`: for host times.
    pub fn host_step_of(&self, ts_ns: i64) -> Option<usize> {
        last_starting(&self.host_steps, &self.host_step_hint, ts_ns, |&s| s)
    }

    /// Whether the trace's GPUs are AMD's (every device it describes), so that advice
    /// names AMD's libraries and leaves out NVIDIA-only guidance.
    pub fn on_amd(&self) -> bool {
        let devices = &self.trace.meta.devices;
        !devices.is_empty() && devices.iter().all(|d| d.vendor == GpuVendor::Amd)
    }

    /// The step an event belongs to: a GPU event (on a GPU stream, or of a GPU
    /// category) by its start in the step windows, a host event by its start in the
    /// host step spans.
    pub fn step_of_event(&self, event: usize) -> Option<usize> {
        let t = self.trace;
        let e = &t.events;
        let gpu = t.categories.kind(e.cat[event]).is_gpu()
            || matches!(
                t.tracks.get(e.track[event]).kind,
                TrackKind::GpuStream { .. }
            );
        if gpu {
            self.step_of(e.ts_ns[event])
        } else {
            self.host_step_of(e.ts_ns[event])
        }
    }

    /// Complete events whose category is one of `kinds` and whose name passes `pred`,
    /// in file order: [`Self::each_event`] gathered into a list.
    pub fn events(&self, kinds: &[CategoryKind], pred: impl FnMut(&str) -> bool) -> Vec<usize> {
        let (bits, total) = self.event_bits(kinds, pred);
        let mut out = Vec::with_capacity(total);
        out.extend(set_bits(bits));
        out
    }

    /// Complete events whose category is one of `kinds` and whose name passes `pred`,
    /// in file order, one by one: for a single pass, no list of them is made (on a
    /// large trace, the host operators' list alone is tens of megabytes of fresh
    /// memory).
    ///
    /// `pred` is asked once per distinct name. The events of the names that pass are
    /// gathered from [`ByName`] into a bitmap over the events, read back in order: the
    /// cost is the events gathered plus n / 64 words, never a pass over every event's
    /// columns nor a sort.
    pub fn each_event(
        &self,
        kinds: &[CategoryKind],
        pred: impl FnMut(&str) -> bool,
    ) -> impl Iterator<Item = usize> {
        set_bits(self.event_bits(kinds, pred).0)
    }

    /// Whether some complete event's category is one of `kinds` and its name passes
    /// `pred`: stops at the first.
    pub fn has_event(&self, kinds: &[CategoryKind], mut pred: impl FnMut(&str) -> bool) -> bool {
        let t = self.trace;
        let by_name = self.by_name();
        (0..by_name.names()).any(|n| {
            let ids = by_name.of(n);
            ids.iter()
                .any(|&i| kinds.contains(&t.categories.kind(t.events.cat[i as usize])))
                && pred(t.strings.get(StrId(n as u32)))
        })
    }

    /// The bitmap of [`Self::each_event`], and how many bits are set.
    fn event_bits(
        &self,
        kinds: &[CategoryKind],
        mut pred: impl FnMut(&str) -> bool,
    ) -> (Vec<u64>, usize) {
        let t = self.trace;
        let e = &t.events;
        let by_name = self.by_name();
        // Categories decided once per category id.
        let cat_wanted: Vec<bool> = t
            .categories
            .iter()
            .map(|(_, c)| kinds.contains(&c.kind))
            .collect();
        let mut bits = vec![0u64; e.len().div_ceil(64)];
        let mut total = 0usize;
        for n in 0..by_name.names() {
            let ids = by_name.of(n);
            if ids.is_empty() || !pred(t.strings.get(StrId(n as u32))) {
                continue;
            }
            for &i in ids {
                if cat_wanted.get(e.cat[i as usize].0 as usize) == Some(&true) {
                    bits[i as usize / 64] |= 1 << (i % 64);
                    total += 1;
                }
            }
        }
        (bits, total)
    }

    /// Whether some complete event's name passes `pred` (asked once per distinct name
    /// until one passes): a rule whose subject the trace cannot hold stops before its
    /// passes over the events.
    pub fn any_named(&self, mut pred: impl FnMut(&str) -> bool) -> bool {
        let by_name = self.by_name();
        (0..by_name.names())
            .any(|n| !by_name.of(n).is_empty() && pred(self.trace.strings.get(StrId(n as u32))))
    }

    /// Complete events grouped by name.
    fn by_name(&self) -> &ByName {
        self.by_name.get_or_init(|| ByName::new(self.trace))
    }

    /// Σ duration per step of `events` (by [`Self::step_of_event`]), ns; events outside
    /// every step are ignored.
    pub fn per_step_ns(&self, events: &[usize]) -> Vec<i64> {
        let e = &self.trace.events;
        let mut v = vec![0i64; self.steps.len()];
        for &i in events {
            if let Some(s) = self.step_of_event(i) {
                v[s] += e.dur_ns.at(i);
            }
        }
        v
    }

    /// Number of `events` per step (by [`Self::step_of_event`]).
    pub fn per_step_count(&self, events: &[usize]) -> Vec<u64> {
        let mut v = vec![0u64; self.steps.len()];
        for &i in events {
            if let Some(s) = self.step_of_event(i) {
                v[s] += 1;
            }
        }
        v
    }

    /// Keep only the events not nested inside another event of the same list (so that
    /// sums do not double-count). O(n) however deep the nesting.
    pub fn outermost(&self, events: &[usize]) -> Vec<usize> {
        let set: rustc_hash::FxHashSet<usize> = events.iter().copied().collect();
        let mut inner = self.ancestor_search(|a| set.contains(&a));
        events.iter().copied().filter(|&i| !inner.any(i)).collect()
    }

    /// A search for the nearest host ancestor (by the trace's nesting) that passes
    /// `test`: every event's answer, however deep, costs O(n) in all ([`kinetoscope_analysis::ancestry`]).
    pub fn ancestor_search<P: FnMut(usize) -> bool>(&self, test: P) -> AncestorSearch<'a, P> {
        AncestorSearch::new(self.trace.nesting(), test)
    }

    /// A search for the nearest host ancestor whose name passes `pred` (asked once per
    /// distinct name).
    pub fn named_ancestor_search<P: FnMut(&str) -> bool + 'a>(
        &self,
        pred: P,
    ) -> AncestorSearch<'a, impl FnMut(usize) -> bool + 'a> {
        let trace = self.trace;
        let mut by_name = NameMemo::new(trace, pred);
        self.ancestor_search(move |a| by_name.get(trace.events.name[a]))
    }

    /// The host span an event is directly nested in.
    pub fn parent_of(&self, event: usize) -> Option<usize> {
        let nesting = self.trace.nesting();
        (event < nesting.parent.len())
            .then(|| nesting.parent_of(EventId(event as u32)))
            .flatten()
            .map(|p| p.index())
    }

    /// The host runtime or driver call that launched a GPU event (by CUPTI correlation).
    pub fn launcher_of(&self, gpu_event: usize) -> Option<usize> {
        let c = self.trace.events.correlation.at(gpu_event);
        if c == 0 {
            return None;
        }
        self.trace
            .correlation_index()
            .launch(c)
            .map(|id| id.index())
    }

    /// Name of an event.
    pub fn name(&self, event: usize) -> &str {
        self.trace.name(EventId(event as u32))
    }

    /// Who caused events ([`Callers::of`]), where operators whose name passes `skip`
    /// are not named.
    pub fn callers(&self, skip: impl Fn(&str) -> bool + 'a) -> Callers<'_, 'a> {
        let t = self.trace;
        let kind = move |a: usize| t.categories.kind(t.events.cat[a]);
        let mut user_frame = NameMemo::new(t, is_user_frame);
        let mut named_operator = NameMemo::new(t, move |n: &str| {
            !n.starts_with("ProfilerStep#") && !skip(n)
        });
        Callers {
            facts: self,
            frame: self.ancestor_search(Box::new(move |a| {
                kind(a) == CategoryKind::PythonFunction && user_frame.get(t.events.name[a])
            })),
            operator: self.ancestor_search(Box::new(move |a| {
                matches!(kind(a), CategoryKind::CpuOp | CategoryKind::UserAnnotation)
                    && named_operator.get(t.events.name[a])
            })),
        }
    }
}

/// The last of `items` (sorted by start; `span` gives `[start, end)`) to start at or
/// before `t`, when `t` is before its end: the one at `hint` when it is that one (one
/// comparison or two for a caller asking in time order), else found by bisection and
/// kept as the next hint.
fn last_starting<T>(
    items: &[T],
    hint: &AtomicUsize,
    t: i64,
    span: impl Fn(&T) -> (i64, i64),
) -> Option<usize> {
    let h = hint.load(Ordering::Relaxed);
    if let Some((start, end)) = items.get(h).map(&span) {
        let next_later = items.get(h + 1).is_none_or(|n| span(n).0 > t);
        if start <= t && next_later {
            return (t < end).then_some(h);
        }
    }
    let i = items.partition_point(|x| span(x).0 <= t).checked_sub(1)?;
    hint.store(i, Ordering::Relaxed);
    (t < span(&items[i]).1).then_some(i)
}

/// The positions of the set bits of `bits`, in increasing order.
fn set_bits(bits: Vec<u64>) -> impl Iterator<Item = usize> {
    bits.into_iter().enumerate().flat_map(|(w, mut word)| {
        std::iter::from_fn(move || {
            (word != 0).then(|| {
                let b = word.trailing_zeros() as usize;
                word &= word - 1;
                w * 64 + b
            })
        })
    })
}

/// A search whose test is boxed, so that it can be a field.
type DynSearch<'a> = AncestorSearch<'a, Box<dyn FnMut(usize) -> bool + 'a>>;

/// Who caused events, with the searches up the nesting shared between them (O(n) in all).
pub struct Callers<'f, 'a> {
    facts: &'f Facts<'a>,
    frame: DynSearch<'a>,
    operator: DynSearch<'a>,
}

impl Callers<'_, '_> {
    /// The code that caused an event: the innermost Python frame outside torch (with
    /// `with_stack`), else the `Call stack` arg's first user frame, else the innermost
    /// enclosing operator or annotation that is not itself `skip`ped.
    pub fn of(&mut self, event: usize) -> String {
        let f = self.facts;
        let t = f.trace;
        if let Some(frame) = self.frame.nearest(event) {
            return f.name(frame).to_owned();
        }
        if let Some(frame) = f.enclosing_user_frame(event) {
            return f.name(frame).to_owned();
        }
        if let Some(args) = t.args.op_of(EventId(event as u32)) {
            let stack = t.strings.get(args.call_stack);
            if let Some(frame) = stack.split(';').map(str::trim).find(|f| is_user_frame(f)) {
                return frame.to_owned();
            }
        }
        self.operator
            .nearest(event)
            .map_or_else(|| "(top level)".to_owned(), |a| f.name(a).to_owned())
    }
}

impl Facts<'_> {
    /// What host thread `track` was executing during `[lo, hi)`: for each instant, the
    /// innermost operator, annotation (DataLoader fetches and `record_function` ranges
    /// included, steps not) or user-code Python frame running then; time in none of them
    /// is `None`. `add(span, time)` is called for each stretch, in time order (a span
    /// may have several). O(log n) plus the spans that start or end in the window
    /// ([`host_work`]).
    pub fn host_work_in(&self, track: u32, lo: i64, hi: i64, add: impl FnMut(Option<usize>, i64)) {
        let work = self.host_work.get_or_init(|| {
            let t = self.trace;
            let e = &t.events;
            // Per name: whether an operator or annotation of that name is host work
            // (steps are not), and whether a Python frame of that name is user code.
            let mut by_name = NameMemo::new(t, |n: &str| {
                (!n.starts_with("ProfilerStep#"), is_user_frame(n))
            });
            let is_work = |i: usize| {
                let (operator, user_frame) = by_name.get(e.name[i]);
                match t.categories.kind(e.cat[i]) {
                    CategoryKind::CpuOp | CategoryKind::UserAnnotation => operator,
                    CategoryKind::PythonFunction => user_frame,
                    _ => false,
                }
            };
            HostWork::new(t, is_work)
        });
        work.work_in(track, lo, hi, add)
    }

    /// The innermost user-code Python frame on the event's thread whose span contains
    /// the event (time containment; the profiler's own spans can break the nesting): the
    /// last frame starting at or before the event that ends at or after it, found by a
    /// search on the frames' ends in O(log n).
    pub fn enclosing_user_frame(&self, event: usize) -> Option<usize> {
        let t = self.trace;
        let e = &t.events;
        let map = self.user_frames.get_or_init(|| {
            let mut m: PerTrack<Vec<(i64, i64, usize)>> = Default::default();
            for i in self.each_event(&[CategoryKind::PythonFunction], is_user_frame) {
                m.entry(e.track[i].0).or_default().push((
                    e.ts_ns[i],
                    e.ts_ns[i] + e.dur_ns.at(i),
                    i,
                ));
            }
            m.into_iter()
                .map(|(track, mut frames)| {
                    frames.sort_unstable();
                    let ends = RangeExtremes::new(frames.iter().map(|f| f.1));
                    (track, UserFrames { frames, ends })
                })
                .collect()
        });
        let v = map.get(&e.track[event].0)?;
        let (start, end) = (e.ts_ns[event], e.ts_ns[event] + e.dur_ns.at(event));
        let hi = v.frames.partition_point(|f| f.0 <= start);
        v.ends.last_at_least(hi, end).map(|k| v.frames[k].2)
    }
}

/// The host span of each kept step: the `ProfilerStep#` span of the same name that
/// starts nearest the window (stretching can move a window's start), else the window
/// itself; without step markers, the whole trace.
fn host_step_spans(trace: &Trace, steps: &[StepWindow], markers: bool) -> Vec<(i64, i64)> {
    let (host, _) = find_steps(trace);
    let whole = trace.span_ns();
    // The host steps of each name, in time order.
    let mut by_name: rustc_hash::FxHashMap<&str, Vec<&Step>> = Default::default();
    for h in &host {
        by_name.entry(h.name.as_str()).or_default().push(h);
    }
    steps
        .iter()
        .map(|w| {
            if !markers {
                return whole.map_or((w.start_ns, w.end_ns), |(a, b)| {
                    (a.min(w.start_ns), b.max(w.end_ns))
                });
            }
            by_name
                .get(w.name.as_str())
                .and_then(|same| nearest_start(same, w.start_ns))
                .map_or((w.start_ns, w.end_ns), |h| {
                    (h.start_ns, h.start_ns + h.dur_ns)
                })
        })
        .collect()
}

/// The step of `same` (in time order) that starts nearest `t`, the earliest of equals:
/// two binary searches, however many steps share a name.
fn nearest_start<'s>(same: &[&'s Step], t: i64) -> Option<&'s Step> {
    let k = same.partition_point(|h| h.start_ns <= t);
    let before = k.checked_sub(1).map(|j| {
        // The first of the steps starting at that same time.
        let at = same[j].start_ns;
        same[same[..j].partition_point(|h| h.start_ns < at)]
    });
    let after = same.get(k).copied();
    match (before, after) {
        (Some(b), Some(a)) if a.start_ns.abs_diff(t) < b.start_ns.abs_diff(t) => Some(a),
        (Some(b), _) => Some(b),
        (None, a) => a,
    }
}

/// Whether a Python frame name (`path/file.py(123): function`) is user code rather
/// than PyTorch, the standard library or the profiler.
pub fn is_user_frame(name: &str) -> bool {
    let Some((file, _)) = name.split_once(".py(") else {
        return false;
    };
    !(file.contains("torch/")
        || file.contains("/lib/python")
        || file.contains("site-packages")
        || file.contains("<built-in")
        || name.starts_with("<built-in"))
}

/// Milliseconds from nanoseconds.
pub fn ms(ns: f64) -> f64 {
    ns / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_hint_never_changes_an_answer() {
        // Disjoint, touching and overlapping windows, and one inside another.
        let steps: Vec<(i64, i64)> = vec![(0, 10), (10, 20), (25, 40), (30, 35), (38, 60)];
        let bisect = |t: i64| {
            let i = steps.partition_point(|s| s.0 <= t).checked_sub(1)?;
            (t < steps[i].1).then_some(i)
        };
        let hint = AtomicUsize::new(0);
        // Times rising, falling and jumping, so the hint is right, stale and wrong.
        let times = (-5..70)
            .chain((-5..70).rev())
            .chain([33, 5, 59, 37, 12, 36, 0]);
        for t in times {
            assert_eq!(
                last_starting(&steps, &hint, t, |&s| s),
                bisect(t),
                "t = {t}"
            );
        }
        assert_eq!(last_starting(&[], &hint, 3, |&s: &(i64, i64)| s), None);
    }

    #[test]
    fn user_frames() {
        assert!(is_user_frame("corpus/record.py(97): train_loop"));
        assert!(!is_user_frame(
            "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py(1): _call_impl"
        ));
        assert!(!is_user_frame("<built-in method item of Tensor object>"));
    }
}
