//! The backward walk (module docs of [`super`]): the events of the window per thread and
//! stream, where the walk starts, and each step back. Every step is a few binary
//! searches ([`Ends`], [`Thread::at`], [`RecentEnds`]), and the walk takes at most 4n + 16 steps, so the
//! path costs O(n log n) whatever the number of streams, threads or nesting levels.
//! Places are indexes checked once when the window is built: a thread or stream the walk
//! can name always exists.

use rustc_hash::FxHashMap;

use kinetoscope_trace::{CategoryKind, Phase, StrId, Trace, TrackId, TrackKind};

use super::ends::Ends;
use super::recent::RecentEnds;
use super::thread::{Ev, Thread};
use super::PathCategory;
use crate::comm::names::is_comm_kernel;

/// Where the walk is: a host thread or a GPU stream (indexes into [`Window`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Cpu(usize),
    Gpu(usize),
}

/// What a piece of the path is named after: an event name, or its category's label (a
/// gap, a wait, untraced time).
pub(super) type Piece = (Option<StrId>, PathCategory);

/// The pieces of a walk, summed.
#[derive(Default)]
pub(super) struct Totals {
    /// Time per category, ns.
    pub by_category: FxHashMap<PathCategory, i64>,
    /// Time and pieces per name and category.
    pub by_piece: FxHashMap<Piece, (i64, u64)>,
    /// Pieces.
    pub pieces: u64,
    /// Whether the walk hit its step limit.
    pub stopped_early: bool,
}

/// The events of the window, indexed for the walk.
pub(super) struct Window<'t> {
    trace: &'t Trace,
    kinds: Vec<CategoryKind>,
    w0: i64,
    threads: Vec<Thread>,
    thread_of: FxHashMap<TrackId, usize>,
    /// GPU streams by track, each sorted by (start, end).
    streams: Vec<(TrackId, Vec<Ev>)>,
    launch_of: FxHashMap<i64, (TrackId, Ev)>,
    /// Activity ends per device (group: stream), and of all devices.
    device_ends: FxHashMap<i64, Ends>,
    gpu_ends: Ends,
}

impl<'t> Window<'t> {
    /// The events of `[w0, w1)` (host events up to 1 s before, for launches).
    pub fn collect(trace: &'t Trace, kinds: Vec<CategoryKind>, (w0, w1): (i64, i64)) -> Self {
        let e = &trace.events;
        let mut cpu: FxHashMap<TrackId, Vec<Ev>> = FxHashMap::default();
        let mut gpu: FxHashMap<TrackId, Vec<Ev>> = FxHashMap::default();
        let mut launch_of: FxHashMap<i64, (TrackId, Ev)> = FxHashMap::default();
        for i in 0..e.len() {
            if e.phase[i] != Phase::Complete {
                continue;
            }
            let (s, t) = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i));
            if t <= w0.saturating_sub(1_000_000_000) || s >= w1 {
                continue;
            }
            let ev = Ev {
                id: i as u32,
                start: s,
                end: t,
            };
            match kinds[e.cat[i].0 as usize] {
                CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
                    if s >= w0 =>
                {
                    gpu.entry(e.track[i]).or_default().push(ev);
                }
                CategoryKind::CudaRuntime
                | CategoryKind::CudaDriver
                | CategoryKind::OtherRuntime => {
                    if e.correlation.at(i) != 0 {
                        launch_of.insert(e.correlation.at(i), (e.track[i], ev));
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
        let mut thread_of: FxHashMap<TrackId, usize> = FxHashMap::default();
        for (tr, evs) in cpu {
            thread_of.insert(tr, threads.len());
            threads.push(Thread::build(evs));
        }
        let mut streams: Vec<(TrackId, Vec<Ev>)> = gpu.into_iter().collect();
        streams.sort_by_key(|(t, _)| *t);
        for (_, v) in &mut streams {
            v.sort_unstable_by_key(|e| (e.start, e.end));
        }
        let mut window = Self {
            trace,
            kinds,
            w0,
            threads,
            thread_of,
            streams,
            launch_of,
            device_ends: FxHashMap::default(),
            gpu_ends: Ends::default(),
        };
        window.index_ends();
        window
    }

    /// Build the [`Ends`] indexes.
    fn index_ends(&mut self) {
        let mut per_device: FxHashMap<i64, Vec<(i64, u32)>> = FxHashMap::default();
        let mut all = Vec::new();
        for (si, (tr, v)) in self.streams.iter().enumerate() {
            let ends = per_device.entry(self.device_of(*tr)).or_default();
            for x in v {
                ends.push((x.end, si as u32));
                all.push((x.end, si as u32));
            }
        }
        self.device_ends = per_device
            .into_iter()
            .map(|(d, v)| (d, Ends::new(v)))
            .collect();
        self.gpu_ends = Ends::new(all);
    }

    fn device_of(&self, tr: TrackId) -> i64 {
        match self.trace.tracks.get(tr).kind {
            TrackKind::GpuStream { device, .. } => device,
            _ => -1,
        }
    }

    /// Walk back from the end of the step (`w1`) to `w0`. `step_track`: the thread of
    /// the step's host span. `None` when the window has no host thread and no GPU
    /// activity.
    pub fn walk(&self, step_track: Option<TrackId>, w1: i64) -> Option<Totals> {
        let step_thread = step_track.and_then(|tr| self.thread_of.get(&tr).copied());
        // Where the latest work ended: the GPU, or the step's host thread.
        let last_gpu = self
            .streams
            .iter()
            .enumerate()
            .filter_map(|(si, (_, v))| v.iter().map(|x| x.end).max().map(|x| (x, si)))
            .fold(None, |best: Option<(i64, usize)>, c| {
                Some(best.filter(|b| b.0 >= c.0).unwrap_or(c))
            });
        let last_end = |ti: usize| self.threads[ti].evs.iter().map(|x| x.end.min(w1)).max();
        let host_last = step_thread.and_then(last_end).unwrap_or(i64::MIN);
        // The thread whose work ends last: where the walk starts when there is no step
        // span (whole-trace fallback) and no later GPU work.
        let mut latest: Option<(i64, usize)> = None;
        for ti in 0..self.threads.len() {
            if let Some(x) = last_end(ti) {
                if latest.is_none_or(|(b, _)| x > b) {
                    latest = Some((x, ti));
                }
            }
        }
        let (place, t) = match (last_gpu, step_thread, latest) {
            (Some((x, si)), _, _) if x >= host_last => (Place::Gpu(si), w1),
            (_, Some(ti), _) => (Place::Cpu(ti), w1),
            (_, None, Some((x, ti))) => (Place::Cpu(ti), x),
            _ => return None,
        };
        // The step's thread; without one, the thread whose work ends last (also when
        // the walk starts on the GPU). `None` only when there is no host thread, and
        // then the walk never reaches the host.
        let main = step_thread.or(latest.map(|(_, ti)| ti));
        let mut walk = Walker {
            w: self,
            main,
            place,
            t,
            totals: Totals::default(),
            recent: None,
        };
        walk.run();
        Some(walk.totals)
    }
}

/// One walk in progress.
struct Walker<'w, 't> {
    w: &'w Window<'t>,
    main: Option<usize>,
    place: Place,
    t: i64,
    totals: Totals,
    /// The other threads' recent work, built on the first thread-wait question.
    recent: Option<RecentEnds>,
}

/// Name key of a gap or wait: its category's label.
const LABEL: Option<StrId> = None;

impl Walker<'_, '_> {
    fn add(&mut self, cat: PathCategory, name: Option<StrId>, from: i64, to: i64) {
        let from = from.max(self.w.w0);
        if to > from {
            *self.totals.by_category.entry(cat).or_default() += to - from;
            let x = self.totals.by_piece.entry((name, cat)).or_default();
            x.0 += to - from;
            x.1 += 1;
            self.totals.pieces += 1;
        }
    }

    fn run(&mut self) {
        let limit = 4 * self.w.trace.events.len() + 16;
        let mut steps = 0usize;
        while self.t > self.w.w0 && steps < limit {
            steps += 1;
            let go_on = match self.place {
                Place::Gpu(si) => self.gpu_step(si),
                Place::Cpu(ti) => self.cpu_step(ti),
            };
            if !go_on {
                break;
            }
        }
        self.totals.stopped_early = steps >= limit;
    }

    /// One step back on stream `si`; `false` when the path ends.
    fn gpu_step(&mut self, si: usize) -> bool {
        let (trace, e) = (self.w.trace, &self.w.trace.events);
        let (track, v) = &self.w.streams[si];
        let k = v.partition_point(|x| x.start < self.t);
        let Some(cur) = k.checked_sub(1).map(|k| v[k]) else {
            return false;
        };
        if cur.end < self.t {
            self.add(PathCategory::GpuIdle, LABEL, cur.end, self.t);
            self.t = cur.end;
        }
        let i = cur.id as usize;
        let cat = match self.w.kinds[e.cat[i].0 as usize] {
            CategoryKind::Kernel if is_comm_kernel(trace.strings.get(e.name[i])) => {
                PathCategory::GpuCommunication
            }
            CategoryKind::Kernel => PathCategory::GpuCompute,
            _ => PathCategory::GpuMemory,
        };
        self.add(cat, Some(e.name[i]), cur.start, self.t);
        self.t = cur.start;
        // Which prerequisite finished last?
        let prev = (k >= 2).then(|| v[k - 2].end.min(cur.start));
        let launch = self
            .w
            .launch_of
            .get(&e.correlation.at(i))
            .filter(|_| e.correlation.at(i) != 0);
        let issue = launch.map(|(_, l)| l.end.min(cur.start));
        let floor = prev.unwrap_or(i64::MIN).max(issue.unwrap_or(i64::MIN));
        // The activity on another stream of the device that ended last before this one.
        let other = self
            .w
            .device_ends
            .get(&self.w.device_of(*track))
            .and_then(|ends| ends.latest(cur.start, Some(si as u32)))
            .filter(|&(x, _)| x > floor && cur.start - x <= 5_000);
        let launch_thread = launch.and_then(|(tr, _)| self.w.thread_of.get(tr).copied());
        if let Some((x, sj)) = other {
            self.add(PathCategory::StreamWait, LABEL, x, self.t);
            self.t = x;
            self.place = Place::Gpu(sj as usize);
        } else if let (Some(is), Some(_)) = (issue, launch) {
            match launch_thread.filter(|_| prev.is_none_or(|p| is >= p)) {
                Some(ti) => {
                    self.add(PathCategory::KernelLaunchDelay, LABEL, is, self.t);
                    self.t = is;
                    self.place = Place::Cpu(ti);
                }
                None => return self.kernel_gap(prev),
            }
        } else {
            return self.kernel_gap(prev);
        }
        true
    }

    /// Back to the end of the previous activity on the stream; `false` without one.
    fn kernel_gap(&mut self, prev: Option<i64>) -> bool {
        let Some(p) = prev else { return false };
        self.add(PathCategory::GpuKernelGap, LABEL, p, self.t);
        self.t = p;
        true
    }

    /// One step back on thread `ti`; `false` when the path ends.
    fn cpu_step(&mut self, ti: usize) -> bool {
        let (trace, e) = (self.w.trace, &self.w.trace.events);
        let th = &self.w.threads[ti];
        let found = th.at(self.t);
        // Another thread idle or done: it was started by (waited on) the step's
        // thread, so the path goes back there.
        if let Some(m) = self.main.filter(|&m| m != ti) {
            if found.is_none_or(|(_, active)| !active) {
                self.place = Place::Cpu(m);
                return true;
            }
        }
        let Some((j, active)) = found else {
            return false;
        };
        let ev = th.evs[j];
        if !active {
            self.add(PathCategory::CpuUntraced, LABEL, ev.end, self.t);
            self.t = ev.end;
            return true;
        }
        let i = ev.id as usize;
        let name = trace.strings.get(e.name[i]);
        let is_runtime = matches!(
            self.w.kinds[e.cat[i].0 as usize],
            CategoryKind::CudaRuntime | CategoryKind::CudaDriver | CategoryKind::OtherRuntime
        );
        if is_runtime && (name.contains("Synchronize") || name == "cudaMemcpy") {
            // Ends when the GPU work it waits for ends.
            if let Some((x, sj)) = self
                .w
                .gpu_ends
                .latest(self.t, None)
                .filter(|b| b.0 > ev.start)
            {
                self.add(PathCategory::Sync, Some(e.name[i]), x, self.t);
                self.t = x;
                self.place = Place::Gpu(sj as usize);
                return true;
            }
        }
        // Self time back to the last child that ended before t.
        let ch = th.children(j);
        let c = ch.partition_point(|&c| th.evs[c as usize].start < self.t);
        let b = match c.checked_sub(1) {
            Some(c) => th.evs[ch[c] as usize].end.min(self.t).max(ev.start),
            None => ev.start,
        };
        // A long stretch of self time while another thread works: the thread is blocked
        // on it (autograd's backward thread, a worker). Follow the other thread's work
        // that ended last inside the stretch.
        if self.t - b > 50_000 && !is_runtime {
            if let Some((x, tj)) = self.other_thread_end(ti, b) {
                self.add(PathCategory::ThreadWait, Some(e.name[i]), x, self.t);
                self.t = x;
                self.place = Place::Cpu(tj);
                return true;
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
        self.add(cat, Some(e.name[i]), b, self.t);
        // No progress (zero-length child): step below it.
        self.t = if b == self.t { self.t - 1 } else { b };
        true
    }

    /// The latest end in `(b, t]` among the last 64 events started before `t` on each
    /// thread other than `ti`: `(end, thread)`.
    fn other_thread_end(&mut self, ti: usize, b: i64) -> Option<(i64, usize)> {
        let threads = &self.w.threads;
        self.recent
            .get_or_insert_with(|| RecentEnds::new(threads))
            .latest(threads, self.t, b, ti)
    }
}
