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

mod ends;
mod recent;
mod thread;
mod walk;

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{CategoryKind, Phase, Trace, TrackId};

use crate::note::Note;
use crate::overview::step_ranges::step_plan;
use walk::{Piece, Window};

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

/// Find the critical path of one step.
pub fn critical_path(trace: &Trace, opts: CriticalPathOptions) -> CriticalPath {
    let plan = step_plan(trace);
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
    let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
    let (host_start, step_track) = host_span(trace, &kinds, &step.name).unzip();
    let (w0, w1) = (host_start.unwrap_or(step.start).min(step.start), step.end);
    out.window_ns = Some([w0, w1]);
    let Some(totals) = Window::collect(trace, kinds, (w0, w1)).walk(step_track, w1) else {
        out.warnings.push(Note::NoActivityInStep);
        return out;
    };
    if totals.stopped_early {
        out.warnings.push(Note::WalkStoppedEarly);
    }
    summarise(&mut out, trace, totals, opts.top);
    if (out.length_ns - (w1 - w0)).unsigned_abs() as f64 > 0.01 * (w1 - w0) as f64 {
        out.warnings.push(Note::PartialPath {
            length_ns: out.length_ns,
            window_ns: w1 - w0,
        });
    }
    out
}

/// The first host span named `step` (start and thread), in file order.
fn host_span(trace: &Trace, kinds: &[CategoryKind], step: &str) -> Option<(i64, TrackId)> {
    let e = &trace.events;
    (0..e.len())
        .find(|&i| {
            e.phase[i] == Phase::Complete
                && matches!(
                    kinds[e.cat[i].0 as usize],
                    CategoryKind::UserAnnotation | CategoryKind::CpuOp
                )
                && trace.strings.get(e.name[i]) == step
        })
        .map(|i| (e.ts_ns[i], e.track[i]))
}

/// Time per category and the events with the most time, from the walk's totals.
fn summarise(out: &mut CriticalPath, trace: &Trace, totals: walk::Totals, top: usize) {
    let total: i64 = totals.by_category.values().sum();
    out.length_ns = total;
    out.pieces = totals.pieces;
    let mut cats: Vec<CategoryTime> = totals
        .by_category
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
    let name_of = |(name, cat): Piece| -> String {
        match name {
            Some(n) => trace.strings.get(n).to_owned(),
            None => cat.label().to_owned(),
        }
    };
    let mut evs: Vec<PathEvent> = totals
        .by_piece
        .into_iter()
        .map(|(piece, (ns, n))| PathEvent {
            name: name_of(piece),
            category: piece.1,
            time_ns: ns,
            pieces: n,
        })
        .collect();
    evs.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
    evs.truncate(if top == 0 { usize::MAX } else { top });
    out.top_events = evs;
}
