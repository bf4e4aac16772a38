//! Where each shape puts its steps, its units and their tracks (times in ns after the
//! trace's `baseTimeNanoseconds`, as PyTorch 2.4+ writes them).

use super::Shape;

/// The first step's start, ns after the trace's `baseTimeNanoseconds`.
const T0: i64 = 1_000_000_000;
/// Gap between two steps, ns.
const STEP_GAP: i64 = 1_000_000;
/// A unit's period in the sequential shapes, ns.
const PERIOD: i64 = 10_000;
/// The time step of the overlapping shape, ns.
const STAGGER: i64 = 1_000;
/// Nanoseconds per level of the deep nest (span start, call, activity, allocation).
const LEVEL: i64 = 5;

/// The times of one unit's events, `[start, end)` ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The host span.
    pub op: (i64, i64),
    /// The runtime call inside it.
    pub call: (i64, i64),
    /// The GPU activity the call launched.
    pub gpu: (i64, i64),
    /// The allocation.
    pub alloc_at: i64,
    /// The free.
    pub free_at: i64,
}

/// The length of a step of `m` units, ns.
fn step_len(shape: Shape, m: i64) -> i64 {
    match shape {
        Shape::SameTimestamp => PERIOD,
        Shape::DeepNesting => 2 * LEVEL * m + 2 * LEVEL,
        Shape::Overlap => (2 * m + 2) * STAGGER,
        _ => m * PERIOD + 2_000,
    }
}

/// Step `s` (of `m` units) as `[start, end)`: steps one after the other, or all at one
/// time for [`Shape::SameTimestamp`].
pub fn step_region(shape: Shape, s: i64, m: i64) -> (i64, i64) {
    if shape == Shape::SameTimestamp {
        return (T0, T0 + PERIOD);
    }
    // Steps of a trace differ by at most one unit: place them on the longer length.
    let stride = step_len(shape, m + 1) + STEP_GAP;
    let start = T0 + s * stride;
    (start, start + step_len(shape, m))
}

/// Unit `k` of the `m` units of the step starting at `r`.
pub fn place(shape: Shape, r: i64, k: i64, m: i64) -> Place {
    match shape {
        Shape::SameTimestamp => Place {
            op: (T0, T0 + PERIOD),
            call: (T0, T0 + PERIOD),
            gpu: (T0, T0 + PERIOD),
            alloc_at: T0,
            free_at: T0,
        },
        Shape::DeepNesting => {
            // Level k: [r+5k+1, end-5k-1) holds its call, activity start and allocation
            // before level k+1 starts at r+5k+6, and its free after level k+1 ends.
            let end = r + step_len(shape, m);
            let a = r + LEVEL * k;
            Place {
                op: (a + 1, end - LEVEL * k - 1),
                call: (a + 2, a + 3),
                gpu: (a + 3, a + 5),
                alloc_at: a + 4,
                free_at: end - LEVEL * k - 2,
            }
        }
        Shape::Overlap => {
            let a = r + STAGGER + k * STAGGER;
            let width = m * STAGGER;
            Place {
                op: (a, a + width + 500),
                call: (a + 250, a + 250 + width),
                gpu: (a + 500, a + 500 + width),
                alloc_at: a + 100,
                free_at: a + width + 400,
            }
        }
        _ => {
            let t = r + 1_000 + k * PERIOD;
            Place {
                op: (t, t + 8_000),
                call: (t + 2_000, t + 4_000),
                gpu: (t + 5_000, t + 9_000),
                alloc_at: t + 1_000,
                free_at: t + 7_000,
            }
        }
    }
}

/// Which `(pid, tid)` each event goes to.
pub struct Tracks {
    shape: Shape,
    /// Tracks handed out so far (track-per-event).
    next: i64,
}

/// The host process.
const HOST: (i64, i64) = (1, 1);
/// The GPU and its stream.
const GPU: (i64, i64) = (0, 7);

impl Tracks {
    /// The track policy of `shape`.
    pub fn new(shape: Shape) -> Self {
        Tracks { shape, next: 0 }
    }

    fn fresh(&mut self, pid: i64) -> (i64, i64) {
        self.next += 1;
        (pid, self.next)
    }

    /// The track of a host span (a step or a unit's span).
    pub fn host(&mut self) -> (i64, i64) {
        match self.shape {
            Shape::TrackPerEvent => self.fresh(HOST.0),
            _ => HOST,
        }
    }

    /// The track of a call or memory record made under a host span on `host`.
    pub fn host_call(&mut self, host: (i64, i64)) -> (i64, i64) {
        match self.shape {
            Shape::TrackPerEvent => self.fresh(HOST.0),
            _ => host,
        }
    }

    /// The `(pid, stream)` of a GPU activity; the pid is also its device. Track per
    /// event gives each activity a device and a stream of its own.
    pub fn gpu(&mut self) -> (i64, i64) {
        match self.shape {
            Shape::TrackPerEvent => {
                let (_, t) = self.fresh(0);
                (t, t)
            }
            Shape::OneTrack => HOST,
            _ => GPU,
        }
    }
}
