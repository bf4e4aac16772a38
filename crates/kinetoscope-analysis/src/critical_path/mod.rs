//! The critical path of one step (after HTA's `critical_path_analysis`), found by walking
//! back from the end of the step and asking at each point what the current activity waited
//! for:
//!
//! * a GPU activity waited for the latest-finishing of its prerequisites: the previous
//!   activity on its stream (stream order), its launch call (host → device edge; the
//!   launch counts as issued at the earlier of the call's end and the kernel's start), or
//!   — when it starts within 5 µs of an activity on another stream of the same device
//!   ending, later than both — that activity (a `cudaStreamWaitEvent` dependency between
//!   streams);
//! * host time is walked on its thread leaf by leaf (an operator's self time, then its
//!   last child before that point), so the path covers the thread's work;
//! * a host span that sits in its own (self) time for more than 50 µs while another
//!   thread works is taken to wait for that thread (autograd's backward thread, a
//!   worker): the path continues on the other thread from its work that ended last;
//! * a synchronising call (`…Synchronize`, synchronous `cudaMemcpy`) ends when the GPU
//!   work it waits for ends: the path jumps to the last GPU activity that ended inside
//!   the call.
//!
//! Every piece of the path gets a category; the result is the time per category and the
//! events with the most time on the path. Cross-thread dependencies on the host
//! (autograd's backward thread, DataLoader workers) are not followed.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, Phase, Trace, TrackId, TrackKind};

use crate::comm::names::is_comm_kernel;
use crate::note::Note;
use crate::overview::classify::Classes;
use crate::overview::step_ranges::plan_steps;

/// Options of [`critical_path`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CriticalPathOptions {
    /// The step number N of `ProfilerStep#N`; `None`: the last kept step.
    pub step: Option<i64>,
    /// Events to list.
    pub top: usize,
}

/// What a piece of the path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathCategory {
    /// A computation kernel running.
    GpuCompute,
    /// A communication kernel running.
    GpuCommunication,
    /// A memcpy or memset running.
    GpuMemory,
    /// Between two activities on one stream (kernel-to-kernel overhead).
    GpuKernelGap,
    /// From the launch call to the kernel start (stream was empty: launch-bound).
    KernelLaunchDelay,
    /// Waiting for an activity on another stream.
    StreamWait,
    /// Host operators and annotations (self time).
    Cpu,
    /// Host runtime / driver calls (launches, allocations, ...).
    CudaRuntime,
    /// The host blocked in a synchronising call after the GPU work ended.
    Sync,
    /// DataLoader fetches.
    DataLoading,
    /// Host time with no traced event on the thread.
    CpuUntraced,
    /// A host thread blocked while another thread worked.
    ThreadWait,
    /// GPU stream with nothing running while on the path.
    GpuIdle,
}

impl PathCategory {
    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            Self::GpuCompute => "GPU compute",
            Self::GpuCommunication => "GPU communication",
            Self::GpuMemory => "GPU memcpy, memset",
            Self::GpuKernelGap => "GPU kernel-to-kernel gap",
            Self::KernelLaunchDelay => "kernel launch delay",
            Self::StreamWait => "wait on another stream",
            Self::Cpu => "CPU operators",
            Self::CudaRuntime => "CUDA runtime calls",
            Self::Sync => "synchronisation",
            Self::DataLoading => "data loading",
            Self::CpuUntraced => "CPU, untraced",
            Self::ThreadWait => "wait on another thread",
            Self::GpuIdle => "GPU idle",
        }
    }
}

/// Time on the path in one category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryTime {
    /// The category.
    pub category: PathCategory,
    /// Time, ns.
    pub time_ns: i64,
    /// Share of the path (0–1).
    pub share: f64,
}

/// An event (by name) with time on the path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEvent {
    /// Event name (or the gap's kind).
    pub name: String,
    /// Its category.
    pub category: PathCategory,
    /// Time on the path, ns.
    pub time_ns: i64,
    /// Pieces of the path it contributed.
    pub pieces: u64,
}

/// The critical path of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// The file.
    pub path: String,
    /// The step analysed.
    pub step: Option<String>,
    /// Steps available (names).
    pub steps: Vec<String>,
    /// `[start, end]` epoch ns: the host step start to the stretched step end.
    pub window_ns: Option<[i64; 2]>,
    /// Time covered by the path, ns (≈ the window).
    pub length_ns: i64,
    /// Time per category, largest first.
    pub categories: Vec<CategoryTime>,
    /// Events with the most time on the path.
    pub top_events: Vec<PathEvent>,
    /// Pieces (edges) on the path.
    pub pieces: u64,
    /// What the analysis had to assume.
    pub warnings: Vec<Note>,
}

#[derive(Clone, Copy)]
struct Ev {
    id: u32,
    start: i64,
    end: i64,
}

/// Host events of one thread in the window, nested.
struct Thread {
    evs: Vec<Ev>,
    parent: Vec<u32>,
    children: Vec<Vec<u32>>,
}

impl Thread {
    fn build(mut evs: Vec<Ev>) -> Self {
        evs.sort_unstable_by_key(|e| (e.start, -(e.end - e.start), e.id));
        let mut parent = vec![u32::MAX; evs.len()];
        let mut children = vec![Vec::new(); evs.len()];
        let mut stack: Vec<u32> = Vec::new();
        for i in 0..evs.len() {
            while let Some(&top) = stack.last() {
                if evs[i].start >= evs[top as usize].end {
                    stack.pop();
                } else {
                    break;
                }
            }
            if let Some(&top) = stack.last() {
                if evs[i].end <= evs[top as usize].end {
                    parent[i] = top;
                    children[top as usize].push(i as u32);
                }
            }
            stack.push(i as u32);
        }
        Self {
            evs,
            parent,
            children,
        }
    }

    /// The deepest event with start < t ≤ end, else the latest root ending before t.
    fn at(&self, t: i64) -> Option<(usize, bool)> {
        let k = self.evs.partition_point(|e| e.start < t);
        if k == 0 {
            return None;
        }
        let mut i = k - 1;
        loop {
            if self.evs[i].end >= t {
                return Some((i, true));
            }
            match self.parent[i] {
                u32::MAX => return Some((i, false)),
                p => i = p as usize,
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Cpu(u32),
    Gpu(u32),
}

/// Find the critical path of one step.
pub fn critical_path(trace: &Trace, opts: CriticalPathOptions) -> CriticalPath {
    let e = &trace.events;
    let classes = Classes::new(trace);
    let plan = plan_steps(trace, &classes);
    let names: Vec<String> = plan.steps.iter().map(|s| s.name.clone()).collect();
    let mut out = CriticalPath {
        path: trace.path.display().to_string(),
        step: None,
        steps: names,
        window_ns: None,
        length_ns: 0,
        categories: Vec::new(),
        top_events: Vec::new(),
        pieces: 0,
        warnings: Vec::new(),
    };
    let step = match opts.step {
        Some(n) => plan.steps.iter().find(|s| s.number == Some(n)),
        None => plan.steps.last(),
    };
    let Some(step) = step else {
        out.warnings.push(Note::NoSuchStep { step: opts.step });
        return out;
    };
    out.step = Some(step.name.clone());
    // The host span of the step and its thread.
    let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
    let mut host_start = step.start;
    let mut step_track = None;
    for i in 0..e.len() {
        if e.phase[i] == Phase::Complete
            && matches!(
                kinds[e.cat[i].0 as usize],
                CategoryKind::UserAnnotation | CategoryKind::CpuOp
            )
            && trace.strings.get(e.name[i]) == step.name
        {
            host_start = e.ts_ns[i];
            step_track = Some(e.track[i]);
            break;
        }
    }
    let (w0, w1) = (host_start.min(step.start), step.end);
    out.window_ns = Some([w0, w1]);

    // Events of the window.
    let mut cpu: FxHashMap<TrackId, Vec<Ev>> = FxHashMap::default();
    let mut gpu: FxHashMap<TrackId, Vec<Ev>> = FxHashMap::default();
    let mut launch_of: FxHashMap<i64, (TrackId, Ev)> = FxHashMap::default();
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let (s, t) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns[i]);
        if t <= w0 - 1_000_000_000 || s >= w1 {
            continue;
        }
        let ev = Ev {
            id: i as u32,
            start: s,
            end: t,
        };
        match kinds[e.cat[i].0 as usize] {
            CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset if s >= w0 => {
                gpu.entry(e.track[i]).or_default().push(ev);
            }
            CategoryKind::CudaRuntime | CategoryKind::CudaDriver | CategoryKind::OtherRuntime => {
                if e.correlation[i] != 0 {
                    launch_of.insert(e.correlation[i], (e.track[i], ev));
                }
                if t > w0 {
                    cpu.entry(e.track[i]).or_default().push(ev);
                }
            }
            CategoryKind::CpuOp | CategoryKind::UserAnnotation if t > w0 => {
                cpu.entry(e.track[i]).or_default().push(ev);
            }
            _ => {}
        }
    }
    let mut threads: Vec<Thread> = Vec::new();
    let mut thread_ix: FxHashMap<TrackId, u32> = FxHashMap::default();
    for (tr, evs) in cpu {
        thread_ix.insert(tr, threads.len() as u32);
        threads.push(Thread::build(evs));
    }
    let mut streams: Vec<(TrackId, Vec<Ev>)> = gpu.into_iter().collect();
    streams.sort_by_key(|(t, _)| *t);
    for (_, v) in &mut streams {
        v.sort_unstable_by_key(|e| (e.start, e.end));
    }
    let device_of = |tr: TrackId| match trace.tracks.get(tr).kind {
        TrackKind::GpuStream { device, .. } => device,
        _ => -1,
    };

    // Start: the later of the last GPU end and the host step end.
    let mut place = None;
    let mut t = w1;
    let mut last_gpu = (i64::MIN, 0u32);
    for (si, (_, v)) in streams.iter().enumerate() {
        if let Some(x) = v.iter().map(|x| x.end).max() {
            if x > last_gpu.0 {
                last_gpu = (x, si as u32);
            }
        }
    }
    // Where the latest work ended: the GPU, or the step's host thread.
    let host_last = step_track
        .and_then(|tr| thread_ix.get(&tr))
        .and_then(|&ti| threads[ti as usize].evs.iter().map(|x| x.end.min(w1)).max())
        .unwrap_or(i64::MIN);
    // The thread whose work ends last: where the walk starts when there is no step span
    // (whole-trace fallback) and no later GPU work.
    let mut latest: Option<(i64, u32)> = None;
    for (ti, th) in threads.iter().enumerate() {
        if let Some(x) = th.evs.iter().map(|x| x.end.min(w1)).max() {
            if latest.is_none_or(|(b, _)| x > b) {
                latest = Some((x, ti as u32));
            }
        }
    }
    if last_gpu.0 > i64::MIN && last_gpu.0 >= host_last {
        place = Some(Place::Gpu(last_gpu.1));
    } else if let Some(tr) = step_track.and_then(|tr| thread_ix.get(&tr)) {
        place = Some(Place::Cpu(*tr));
    } else if let Some((x, ti)) = latest {
        t = x;
        place = Some(Place::Cpu(ti));
    }
    let Some(mut place) = place else {
        out.warnings.push(Note::NoActivityInStep);
        return out;
    };
    // The step's thread; without one, the thread whose work ends last (also when the
    // walk starts on the GPU). `None` only when there is no host thread, and then the
    // walk never reaches the host.
    let main = step_track
        .and_then(|tr| thread_ix.get(&tr).copied())
        .or(latest.map(|(_, ti)| ti));

    let mut by_cat: FxHashMap<PathCategory, i64> = FxHashMap::default();
    let mut by_event: FxHashMap<(u32, PathCategory), (i64, u64)> = FxHashMap::default();
    let mut pieces = 0u64;
    let mut add = |cat: PathCategory, name: u32, from: i64, to: i64| {
        let from = from.max(w0);
        if to > from {
            *by_cat.entry(cat).or_default() += to - from;
            let x = by_event.entry((name, cat)).or_default();
            x.0 += to - from;
            x.1 += 1;
            pieces += 1;
        }
    };
    const GAP: u32 = u32::MAX;
    let mut guard = 0usize;
    let limit = 4 * e.len() + 16;
    while t > w0 && guard < limit {
        guard += 1;
        match place {
            Place::Gpu(si) => {
                let v = &streams[si as usize].1;
                let k = v.partition_point(|x| x.start < t);
                if k == 0 {
                    break;
                }
                let cur = v[k - 1];
                if cur.end < t {
                    add(PathCategory::GpuIdle, GAP, cur.end, t);
                    t = cur.end;
                }
                let i = cur.id as usize;
                let name = trace.strings.get(e.name[i]);
                let cat = match kinds[e.cat[i].0 as usize] {
                    CategoryKind::Kernel if is_comm_kernel(name) => PathCategory::GpuCommunication,
                    CategoryKind::Kernel => PathCategory::GpuCompute,
                    _ => PathCategory::GpuMemory,
                };
                add(cat, e.name[i].0, cur.start, t);
                t = cur.start;
                // Which prerequisite finished last?
                let prev = (k >= 2).then(|| v[k - 2].end.min(cur.start));
                let launch = launch_of
                    .get(&e.correlation[i])
                    .filter(|_| e.correlation[i] != 0);
                let issue = launch.map(|(_, l)| l.end.min(cur.start));
                let dev = device_of(streams[si as usize].0);
                let mut other: Option<(u32, i64)> = None;
                let floor = prev.unwrap_or(i64::MIN).max(issue.unwrap_or(i64::MIN));
                for (sj, (tr, w)) in streams.iter().enumerate() {
                    if sj == si as usize || device_of(*tr) != dev {
                        continue;
                    }
                    let q = w.partition_point(|x| x.end <= cur.start);
                    if q > 0 {
                        let x = w[q - 1].end;
                        if x > floor && cur.start - x <= 5_000 && other.is_none_or(|(_, o)| x > o) {
                            other = Some((sj as u32, x));
                        }
                    }
                }
                if let Some((sj, x)) = other {
                    add(PathCategory::StreamWait, GAP - 1, x, t);
                    t = x;
                    place = Place::Gpu(sj);
                } else if let (Some(is), Some((tr, _))) = (issue, launch) {
                    if prev.is_none_or(|p| is >= p) && thread_ix.contains_key(tr) {
                        add(PathCategory::KernelLaunchDelay, GAP - 2, is, t);
                        t = is;
                        place = Place::Cpu(thread_ix[tr]);
                    } else if let Some(p) = prev {
                        add(PathCategory::GpuKernelGap, GAP - 3, p, t);
                        t = p;
                    } else {
                        break;
                    }
                } else if let Some(p) = prev {
                    add(PathCategory::GpuKernelGap, GAP - 3, p, t);
                    t = p;
                } else {
                    break;
                }
            }
            Place::Cpu(ti) => {
                let th = &threads[ti as usize];
                let found = th.at(t);
                // Another thread idle or done: it was started by (waited on) the step's
                // thread, so the path goes back there.
                if let Some(m) = main.filter(|&m| m != ti) {
                    if found.is_none_or(|(_, active)| !active) {
                        place = Place::Cpu(m);
                        continue;
                    }
                }
                let Some((j, active)) = found else { break };
                let ev = th.evs[j];
                if !active {
                    add(PathCategory::CpuUntraced, GAP - 4, ev.end, t);
                    t = ev.end;
                    continue;
                }
                let i = ev.id as usize;
                let name = trace.strings.get(e.name[i]);
                let kind = kinds[e.cat[i].0 as usize];
                let is_runtime = matches!(
                    kind,
                    CategoryKind::CudaRuntime
                        | CategoryKind::CudaDriver
                        | CategoryKind::OtherRuntime
                );
                if is_runtime && (name.contains("Synchronize") || name == "cudaMemcpy") {
                    // Ends when the GPU work it waits for ends.
                    let mut best: Option<(u32, i64)> = None;
                    for (sj, (_, w)) in streams.iter().enumerate() {
                        let q = w.partition_point(|x| x.end <= t);
                        if q > 0 {
                            let x = w[q - 1].end;
                            if x > ev.start && best.is_none_or(|(_, b)| x > b) {
                                best = Some((sj as u32, x));
                            }
                        }
                    }
                    if let Some((sj, x)) = best {
                        add(PathCategory::Sync, e.name[i].0, x, t);
                        t = x;
                        place = Place::Gpu(sj);
                        continue;
                    }
                }
                // Self time back to the last child that ended before t.
                let ch = &th.children[j];
                let c = ch.partition_point(|&c| th.evs[c as usize].start < t);
                let b = if c > 0 {
                    th.evs[ch[c - 1] as usize].end.min(t).max(ev.start)
                } else {
                    ev.start
                };
                // A long stretch of self time while another thread works: the thread
                // is blocked on it (autograd's backward thread, a worker). Follow the
                // other thread's work that ended last inside the stretch.
                if t - b > 50_000 && !is_runtime {
                    let mut other: Option<(u32, i64)> = None;
                    for (tj, o) in threads.iter().enumerate() {
                        if tj == ti as usize {
                            continue;
                        }
                        let k = o.evs.partition_point(|x| x.start < t);
                        // Latest end in (b, t] among the events starting before t.
                        let mut x_best = i64::MIN;
                        for x in o.evs[..k].iter().rev().take(64) {
                            if x.end > b && x.end <= t {
                                x_best = x_best.max(x.end);
                            }
                        }
                        if x_best > b && other.is_none_or(|(_, y)| x_best > y) {
                            other = Some((tj as u32, x_best));
                        }
                    }
                    if let Some((tj, x)) = other {
                        add(PathCategory::ThreadWait, e.name[i].0, x, t);
                        t = x;
                        place = Place::Cpu(tj);
                        continue;
                    }
                }
                let cat = if is_runtime {
                    PathCategory::CudaRuntime
                } else if name.starts_with("enumerate(DataLoader)")
                    || name.starts_with("enumerate(DataPipe)")
                {
                    PathCategory::DataLoading
                } else {
                    PathCategory::Cpu
                };
                add(cat, e.name[i].0, b, t);
                if b == t {
                    // No progress (zero-length child): step below it.
                    t -= 1;
                } else {
                    t = b;
                }
            }
        }
    }
    if guard >= limit {
        out.warnings.push(Note::WalkStoppedEarly);
    }
    let total: i64 = by_cat.values().sum();
    out.length_ns = total;
    out.pieces = pieces;
    let mut cats: Vec<CategoryTime> = by_cat
        .into_iter()
        .map(|(c, ns)| CategoryTime {
            category: c,
            time_ns: ns,
            share: if total > 0 {
                ns as f64 / total as f64
            } else {
                0.0
            },
        })
        .collect();
    cats.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.category.cmp(&b.category)));
    out.categories = cats;
    let mut evs: Vec<PathEvent> = by_event
        .into_iter()
        .map(|((name, cat), (ns, n))| PathEvent {
            name: if name >= GAP - 4 {
                cat.label().to_string()
            } else {
                trace.strings.get(kinetoscope_trace::StrId(name)).to_owned()
            },
            category: cat,
            time_ns: ns,
            pieces: n,
        })
        .collect();
    evs.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    evs.truncate(if opts.top == 0 { usize::MAX } else { opts.top });
    out.top_events = evs;
    if (out.length_ns - (w1 - w0)).abs() as f64 > 0.01 * (w1 - w0) as f64 {
        out.warnings.push(Note::PartialPath {
            length_ns: out.length_ns,
            window_ns: w1 - w0,
        });
    }
    out
}
