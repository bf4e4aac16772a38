//! Which host operator launched each runtime call: the one launch link every analysis
//! shares, built by the reader.
//!
//! Kineto writes the launching operator's `External id` on each runtime (or driver) call,
//! and the call runs on the operator's thread inside its span. Some exporters (PyTorch
//! 2.0–2.2 era traces among them) number the operators' ids and the runtime calls' ids
//! differently: a call's id then names no operator, or a wrong one on another thread or
//! at another time. So a link by id is kept only when the call lies inside that
//! operator's span on the same thread; otherwise, and when the id names no operator, the
//! call is linked to the innermost operator (or annotation) that encloses it on its
//! thread. How many links were repaired so is counted in [`LinkRepairs`]
//! (`ReadReport::launch_links`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::groups::Groups;
use super::idmap::IdMap;
use super::start_order::sort_by_start;
use super::{CategoryKind, CorrelationIndex, EventId, Phase, Trace};

/// The stored launcher of a call launched outside any operator (`External id` 0).
const OUTSIDE: u32 = u32::MAX - 1;
/// The stored launcher of a call whose operator is unknown.
const UNKNOWN: u32 = u32::MAX;
/// While building: the call's id names an operator the call is not inside.
const REJECTED: u32 = u32::MAX - 2;
/// While building: the call's id names no operator.
const NO_SUCH_ID: u32 = u32::MAX - 3;
/// Per link of the correlation index: the link has no launch call.
const LINK_WITHOUT_LAUNCH: u32 = u32::MAX - 4;
/// Per link of the correlation index: the event kept as its launch is no complete call.
const LINK_NOT_A_CALL: u32 = u32::MAX - 5;

/// Who launched a runtime call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Launcher {
    /// A host operator or `record_function` annotation that encloses the call on its
    /// thread.
    Span(EventId),
    /// `External id` 0: the call was made outside any operator.
    Outside,
    /// The call has an `External id`, but no operator enclosing it carries that id and no
    /// operator encloses it at all.
    Unknown,
}

/// Links the reader could not take as written, by what was done instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRepairs {
    /// Calls whose `External id` names an operator they do not run inside (another
    /// thread, or outside its span), linked to the innermost operator enclosing them.
    pub relinked: u64,
    /// Calls whose `External id` names an operator they do not run inside and that no
    /// operator encloses: linked to none.
    pub unlinked: u64,
    /// Calls whose `External id` names no operator, linked to the innermost operator
    /// enclosing them.
    pub nested: u64,
}

impl LinkRepairs {
    /// Whether no link was repaired.
    pub fn is_empty(&self) -> bool {
        self.relinked == 0 && self.unlinked == 0 && self.nested == 0
    }

    /// Whether no `External id` named an operator its call did not run inside: a link by
    /// id that cannot be checked against time (a GPU activity without its runtime call)
    /// may then be trusted.
    pub fn ids_trusted(&self) -> bool {
        self.relinked == 0 && self.unlinked == 0
    }
}

/// A kernel, memcpy or memset: the GPU activities a runtime call launches.
fn is_gpu_activity(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel | CategoryKind::GpuMemcpy | CategoryKind::GpuMemset
    )
}

/// Whether events of this kind can launch GPU work: operators and annotations.
fn is_launcher_kind(kind: CategoryKind) -> bool {
    matches!(kind, CategoryKind::CpuOp | CategoryKind::UserAnnotation)
}

/// Every runtime call (complete events of [`CategoryKind::is_launch_call`] kinds) with
/// its validated launcher, and the lookup by CUPTI correlation id.
#[derive(Clone, Debug, Default)]
pub struct LaunchLinks {
    /// The calls, in file order.
    calls: Vec<u32>,
    /// The launcher of each call: an event index, [`OUTSIDE`] or [`UNKNOWN`].
    launcher: Vec<u32>,
    /// Correlation id → position in `calls` (the last call of a repeated id), built on
    /// first use, and only where the correlation index cannot answer
    /// ([`Self::of_correlation`]).
    by_correlation: OnceLock<IdMap>,
    /// Per link of the correlation index, the stored launcher of its launch call (or
    /// [`LINK_WITHOUT_LAUNCH`], [`LINK_NOT_A_CALL`]), built on first use
    /// ([`Self::of_activity`]).
    by_link: OnceLock<Vec<u32>>,
}

impl LaunchLinks {
    /// Link every runtime call of `trace`, count the repairs, and count the GPU
    /// activities without a launch ([`Self::count_without_launch`]). With `parallel`,
    /// the operators' nesting, which the repairs need, is built on a second thread while
    /// the calls are linked by id, and abandoned if no link needs repair.
    pub fn build(trace: &Trace, parallel: bool) -> (Self, LinkRepairs, u64) {
        let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
        let abandon = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let nesting = parallel
                .then(|| {
                    std::thread::Builder::new()
                        .name("kinetoscope-nesting".into())
                        .spawn_scoped(scope, || Enclosing::build(trace, &kinds, &abandon))
                        .ok()
                })
                .flatten();
            let (mut links, pending, without_launch) = Self::link_by_id(trace, &kinds);
            if !pending {
                abandon.store(true, Ordering::Relaxed);
            }
            // On one thread (or when the system refused a second), the nesting is built
            // here, and only when a call needs it.
            let enclosing = match nesting {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                None => pending
                    .then(|| Enclosing::build(trace, &kinds, &abandon))
                    .flatten(),
            };
            let repairs = match (pending, enclosing) {
                (true, Some(enclosing)) => links.repair(trace, &enclosing),
                _ => LinkRepairs::default(),
            };
            (links, repairs, without_launch)
        })
    }

    /// Link each call to the operator its `External id` names, when the call lies inside
    /// it on its thread; mark the others for repair. Returns the links, whether any call
    /// is marked, and the number of GPU activities without a launch.
    fn link_by_id(trace: &Trace, kinds: &[CategoryKind]) -> (Self, bool, u64) {
        let e = &trace.events;
        let kind = |i: usize| kinds.get(e.cat[i].0 as usize).copied();
        let complete = |i: usize| e.phase[i] == Phase::Complete;
        // One pass over the events: the operators with an `External id` (their indexes:
        // 4 bytes each while the map is built), the calls, and the GPU activities (so
        // that those without a launch are counted without a second pass over all).
        let mut ops: Vec<u32> = Vec::new();
        let mut calls: Vec<u32> = Vec::new();
        let mut gpu: Vec<u32> = Vec::new();
        for i in 0..e.len() {
            if !complete(i) {
                continue;
            }
            let Some(k) = kind(i) else {
                continue;
            };
            if is_launcher_kind(k) && e.external_id.at(i) != 0 {
                ops.push(i as u32);
            }
            if k.is_launch_call() {
                calls.push(i as u32);
            }
            if is_gpu_activity(k) {
                gpu.push(i as u32);
            }
        }
        let by_ext = IdMap::build(
            || ops.iter().map(|&i| (e.external_id.at(i as usize), i)),
            true,
        );
        drop(ops);
        let mut links = Self {
            launcher: Vec::with_capacity(calls.len()),
            calls,
            by_correlation: OnceLock::new(),
            by_link: OnceLock::new(),
        };
        let without_launch = links.without_launch(trace, gpu.iter().map(|&i| i as usize));
        drop(gpu);
        let mut pending = false;
        for &call in &links.calls {
            let i = call as usize;
            let ext = e.external_id.at(i);
            let launcher = match (ext, by_ext.get(ext)) {
                (0, _) => OUTSIDE,
                (_, Some(op))
                    if e.track[op as usize] == e.track[i] && encloses(trace, op as usize, i) =>
                {
                    op
                }
                (_, Some(_)) => REJECTED,
                (_, None) => NO_SUCH_ID,
            };
            pending |= launcher == REJECTED || launcher == NO_SUCH_ID;
            links.launcher.push(launcher);
        }
        (links, pending, without_launch)
    }

    /// Link each call marked for repair to the innermost operator enclosing it, and
    /// count the repairs.
    fn repair(&mut self, trace: &Trace, enclosing: &Enclosing) -> LinkRepairs {
        let mut repairs = LinkRepairs::default();
        let mut cursors = Cursors::new(enclosing);
        for (&call, launcher) in self.calls.iter().zip(self.launcher.iter_mut()) {
            if *launcher != REJECTED && *launcher != NO_SUCH_ID {
                continue;
            }
            let found = enclosing.innermost(trace, call as usize, &mut cursors);
            match (*launcher == REJECTED, found) {
                (true, Some(_)) => repairs.relinked += 1,
                (true, None) => repairs.unlinked += 1,
                (false, Some(_)) => repairs.nested += 1,
                (false, None) => {}
            }
            *launcher = found.unwrap_or(UNKNOWN);
        }
        repairs
    }

    /// The calls and their stored launchers, as a cache stores them.
    pub(crate) fn parts(&self) -> (&[u32], &[u32]) {
        (&self.calls, &self.launcher)
    }

    /// Links from stored parts, checked against a trace of `events` events: calls in
    /// increasing order and in range, one launcher each, every launcher an event or
    /// "outside" / "unknown". `None` when any check fails.
    pub(crate) fn from_parts(calls: Vec<u32>, launcher: Vec<u32>, events: usize) -> Option<Self> {
        let in_range = |v: u32| (v as usize) < events;
        let ok = calls.len() == launcher.len()
            && calls.iter().all(|&c| in_range(c))
            && calls.windows(2).all(|w| w[0] < w[1])
            && launcher
                .iter()
                .all(|&l| in_range(l) || l == OUTSIDE || l == UNKNOWN);
        ok.then(|| Self {
            calls,
            launcher,
            by_correlation: OnceLock::new(),
            by_link: OnceLock::new(),
        })
    }

    /// Number of runtime calls.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether the trace has no runtime call.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Every runtime call with its launcher, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (EventId, Launcher)> + '_ {
        self.calls
            .iter()
            .zip(&self.launcher)
            .map(|(&c, &l)| (EventId(c), decode(l)))
    }

    /// The launcher of a runtime call; `None` when `call` is not one.
    pub fn of_call(&self, call: EventId) -> Option<Launcher> {
        let pos = self.calls.binary_search(&call.0).ok()?;
        Some(decode(self.launcher[pos]))
    }

    /// The runtime call with this CUPTI correlation id (the last one when repeated) and
    /// its launcher: the link of a kernel, memcpy or memset through its `correlation`.
    /// `None` for id 0 or an id no runtime call carries. `trace` is the trace these
    /// links belong to: its correlation index ([`Trace::correlation_index`]) names the
    /// call, and the map of the calls' own ids is built only for the rare id whose last
    /// launch-kind event is not a complete call (an instant, in a hostile trace).
    pub fn of_correlation(&self, trace: &Trace, correlation: i64) -> Option<(EventId, Launcher)> {
        if correlation == 0 {
            return None;
        }
        // The index keeps the last event of a launch kind with this id, whatever its
        // phase: when that one is a call, it is the last call too.
        let last = trace.correlation_index().launch(correlation)?;
        if let Some(launcher) = self.of_call(last) {
            return Some((last, launcher));
        }
        let map = self.by_correlation.get_or_init(|| {
            let corr = &trace.events.correlation;
            IdMap::build(
                || {
                    self.calls.iter().enumerate().filter_map(|(pos, &c)| {
                        let id = corr.get(c as usize).unwrap_or(0);
                        (id != 0).then_some((id, pos as u32))
                    })
                },
                false,
            )
        });
        let pos = map.get(correlation)? as usize;
        Some((
            EventId(*self.calls.get(pos)?),
            decode(*self.launcher.get(pos)?),
        ))
    }

    /// The launcher of a GPU activity of `trace`: what [`Self::of_correlation`] gives for
    /// the activity's correlation id, found by position (the activity's link in the
    /// correlation index, then a launcher kept per link) instead of by an id lookup and
    /// a search of the calls.
    pub fn of_activity(&self, trace: &Trace, activity: EventId) -> Option<Launcher> {
        let index = trace.correlation_index();
        if let Some(l) = index.link_of_event(activity) {
            let by_link = self.by_link.get_or_init(|| self.launchers_by_link(index));
            match by_link[l] {
                LINK_WITHOUT_LAUNCH => return None,
                LINK_NOT_A_CALL => {}
                stored => return Some(decode(stored)),
            }
        }
        let correlation = trace.events.correlation.at(activity.index());
        self.of_correlation(trace, correlation).map(|(_, l)| l)
    }

    /// The stored launcher of each link's launch call, in one pass over the calls.
    fn launchers_by_link(&self, index: &CorrelationIndex) -> Vec<u32> {
        let mut by_link: Vec<u32> = (0..index.links())
            .map(|l| match index.launch_of_link(l) {
                Some(_) => LINK_NOT_A_CALL,
                None => LINK_WITHOUT_LAUNCH,
            })
            .collect();
        for (&call, &launcher) in self.calls.iter().zip(&self.launcher) {
            if let Some(l) = index.link_of_event(EventId(call)) {
                if index.launch_of_link(l) == Some(EventId(call)) {
                    by_link[l] = launcher;
                }
            }
        }
        by_link
    }

    /// The GPU activities (complete kernels, memcpys and memsets) of `trace` whose
    /// correlation matches no runtime call: they have no launch record. Counted against
    /// the calls' ids held apart (a bit per id when they are dense, else 8 bytes a call
    /// sorted; freed on return) rather than through the correlation index, which a reader
    /// need not build.
    pub fn count_without_launch(&self, trace: &Trace) -> u64 {
        let e = &trace.events;
        self.without_launch(
            trace,
            (0..e.len()).filter(|&i| {
                e.phase[i] == Phase::Complete && is_gpu_activity(trace.categories.kind(e.cat[i]))
            }),
        )
    }

    /// How many of the GPU activities `gpu` (event indexes) have no launch record.
    fn without_launch(&self, trace: &Trace, gpu: impl Iterator<Item = usize>) -> u64 {
        let e = &trace.events;
        let ids = CallIds::new(
            self.calls
                .iter()
                .filter_map(|&c| e.correlation.get(c as usize))
                .filter(|&id| id != 0),
        );
        gpu.filter(|&i| {
            let c = e.correlation.at(i);
            c == 0 || !ids.contains(c)
        })
        .count() as u64
    }

    /// The launcher of a GPU activity (by its `correlation`), as an operator or
    /// annotation event; `None` when it has no runtime call or its call has no launcher.
    pub fn operator_of_gpu(&self, trace: &Trace, gpu: EventId) -> Option<EventId> {
        let correlation = trace.events.correlation.get(gpu.index())?;
        match self.of_correlation(trace, correlation)? {
            (_, Launcher::Span(op)) => Some(op),
            _ => None,
        }
    }
}

/// A set of correlation ids: a bit per id in `min ..= max` when that takes at most 64
/// bits per id given, the room the sorted ids would take, else the ids sorted. Kineto's
/// counter also numbers what the trace does not hold: HTA's `profile_memory` trace has a
/// runtime call for one id in 6.4 of the range.
enum CallIds {
    /// Bit `id - min` of `bits` is set for each id.
    Bits { min: i64, bits: Vec<u64> },
    /// The ids, sorted.
    Sorted(Vec<i64>),
}

impl CallIds {
    /// The set of `ids` (any order, repeats allowed).
    fn new(ids: impl Iterator<Item = i64> + Clone) -> Self {
        let (mut min, mut max, mut n) = (i64::MAX, i64::MIN, 0u64);
        for id in ids.clone() {
            (min, max, n) = (min.min(id), max.max(id), n + 1);
        }
        if n > 0 && (max as i128 - min as i128) < 64 * n as i128 + 4096 {
            let mut bits = vec![0u64; ((max - min) as usize) / 64 + 1];
            for id in ids {
                let off = (id - min) as usize;
                bits[off / 64] |= 1 << (off % 64);
            }
            CallIds::Bits { min, bits }
        } else {
            let mut sorted: Vec<i64> = ids.collect();
            sorted.sort_unstable();
            CallIds::Sorted(sorted)
        }
    }

    /// Whether `id` is in the set.
    fn contains(&self, id: i64) -> bool {
        match self {
            CallIds::Bits { min, bits } => id.checked_sub(*min).is_some_and(|off| {
                off >= 0
                    && bits
                        .get(off as usize / 64)
                        .is_some_and(|w| w >> (off as usize % 64) & 1 == 1)
            }),
            CallIds::Sorted(sorted) => sorted.binary_search(&id).is_ok(),
        }
    }
}

/// The stored launcher value as a [`Launcher`].
fn decode(l: u32) -> Launcher {
    match l {
        OUTSIDE => Launcher::Outside,
        UNKNOWN => Launcher::Unknown,
        op => Launcher::Span(EventId(op)),
    }
}

/// End of an event, saturating (a hostile `dur` cannot overflow).
fn end(trace: &Trace, i: usize) -> i64 {
    trace.events.ts_ns[i].saturating_add(trace.events.dur_ns.at(i))
}

/// Whether event `outer` lies around event `inner` in time (both ends included).
fn encloses(trace: &Trace, outer: usize, inner: usize) -> bool {
    let ts = &trace.events.ts_ns;
    ts[outer] <= ts[inner] && end(trace, inner) <= end(trace, outer)
}

/// Per track, where [`Enclosing::innermost`]'s last search on it ended.
struct Cursors {
    at: Vec<Cursor>,
}

/// The start of the last call searched on a track, and the end of the track's spans
/// that start at or before it (a position in [`Enclosing`]'s `spans`).
#[derive(Clone, Copy)]
struct Cursor {
    start: i64,
    past: u32,
}

impl Cursors {
    /// No search made yet on any track of `enclosing`.
    fn new(enclosing: &Enclosing) -> Self {
        Self {
            at: (0..enclosing.spans.len())
                .map(|t| Cursor {
                    start: i64::MIN,
                    past: enclosing.spans.range(t).start as u32,
                })
                .collect(),
        }
    }
}

/// How far [`Enclosing`] looks through open spans, or up a chain of parents, before it
/// gives up: real traces nest a few dozen deep; hostile ones must not cost quadratic time.
const MAX_WALK: usize = 256;

/// How many events [`Enclosing::build`] groups between two looks at whether it is
/// abandoned.
const ABANDON_BLOCK: usize = 1 << 16;

/// The operators and annotations of every track in pre-order, with their parents, to find
/// the innermost one enclosing a call. One flat list (track by track) keeps the
/// allocation count and the peak memory low.
struct Enclosing {
    /// Event indexes grouped by track, each track's sorted by (start, end descending,
    /// file order).
    spans: Groups<u32>,
    /// The position in `spans` of each span's parent (`u32::MAX` for none).
    parent: Vec<u32>,
}

impl Enclosing {
    /// Sort and nest the launcher spans of every track; `None` once `abandon` is set
    /// (it is read between blocks of events and between tracks).
    fn build(trace: &Trace, kinds: &[CategoryKind], abandon: &AtomicBool) -> Option<Self> {
        let abandoned = || abandon.load(Ordering::Relaxed);
        let e = &trace.events;
        let tracks = trace.tracks.len();
        let is_span = |i: usize| {
            e.phase[i] == Phase::Complete
                && kinds
                    .get(e.cat[i].0 as usize)
                    .is_some_and(|&k| is_launcher_kind(k))
        };
        // Spans grouped by track in file order, then each track's sorted by (start, end
        // descending, file order): Kineto writes each thread's spans mostly in start
        // order, so each track's sort is short work, and its comparisons read the
        // columns in near file order.
        // An abandoned build may hand fewer spans to the second pass than to the first:
        // its groups are incomplete, and thrown away.
        let mut spans = Groups::build(tracks, |put| {
            for block in (0..e.len()).step_by(ABANDON_BLOCK) {
                if abandoned() {
                    return;
                }
                let block = block..(block + ABANDON_BLOCK).min(e.len());
                for i in block.filter(|&i| is_span(i)) {
                    put(e.track[i].index(), i as u32);
                }
            }
        });
        for t in 0..tracks {
            if abandoned() {
                return None;
            }
            // By start, then end descending (parents first), then file order; the end is
            // read only on equal starts.
            sort_by_start(
                spans.group_mut(t),
                |&i| e.ts_ns[i as usize],
                |&a, &b| {
                    let (a, b) = (a as usize, b as usize);
                    end(trace, b).cmp(&end(trace, a)).then(a.cmp(&b))
                },
            );
        }
        let list = spans.items();
        let mut parent = vec![u32::MAX; list.len()];
        let mut stack: Vec<u32> = Vec::new();
        for t in 0..tracks {
            stack.clear();
            for pos in spans.range(t) {
                let i = list[pos] as usize;
                let (start, stop) = (e.ts_ns[i], end(trace, i));
                // Close the spans that end before this one starts (or at its start,
                // unless it is empty and so still inside them).
                while stack.last().is_some_and(|&top| {
                    let top_end = end(trace, list[top as usize] as usize);
                    top_end < start || (top_end == start && stop > start)
                }) {
                    stack.pop();
                }
                // The innermost open span that contains this one (spans that overlap it
                // without containing it are skipped, not closed).
                parent[pos] = stack
                    .iter()
                    .rev()
                    .take(MAX_WALK)
                    .copied()
                    .find(|&top| end(trace, list[top as usize] as usize) >= stop)
                    .unwrap_or(u32::MAX);
                stack.push(pos as u32);
            }
        }
        Some(Self { spans, parent })
    }

    /// The innermost span on `call`'s track that encloses it, as an event index.
    fn innermost(&self, trace: &Trace, call: usize, cursors: &mut Cursors) -> Option<u32> {
        let track = trace.events.track[call].index();
        if track >= self.spans.len() {
            return None;
        }
        let std::ops::Range { start: lo, end: hi } = self.spans.range(track);
        let spans = self.spans.items();
        let start = trace.events.ts_ns[call];
        let starts_by = |i: u32| trace.events.ts_ns[i as usize] <= start;
        // The spans starting at or before the call: `lo .. past`.
        let cursor = &mut cursors.at[track];
        let past = if start >= cursor.start {
            // A later call of the track (the usual case: a thread's calls come in time
            // order): move on from the last answer, a few steps, then by bisection (calls
            // that jump back and forth must not cost a walk each).
            let mut past = cursor.past as usize;
            let near = hi.min(past + 16);
            while past < near && starts_by(spans[past]) {
                past += 1;
            }
            if past == near {
                past += spans[past..hi].partition_point(|&i| starts_by(i));
            }
            past
        } else {
            lo + spans[lo..hi].partition_point(|&i| starts_by(i))
        };
        *cursor = Cursor {
            start,
            past: past as u32,
        };
        let mut pos = past.checked_sub(1).filter(|&p| p >= lo)?;
        for _ in 0..MAX_WALK {
            let span = spans[pos];
            if encloses(trace, span as usize, call) {
                return Some(span);
            }
            pos = match self.parent[pos] {
                u32::MAX => return None,
                p => p as usize,
            };
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{CallIds, CategoryKind, Enclosing};
    use std::sync::atomic::AtomicBool;

    #[test]
    fn an_abandoned_nesting_is_none() {
        let json =
            br#"[{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 9},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]"#;
        let path = std::path::Path::new("inline.json");
        let trace = crate::read::read_trace_bytes(path, json, &Default::default()).unwrap();
        let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
        let built = Enclosing::build(&trace, &kinds, &AtomicBool::new(false)).unwrap();
        assert_eq!(built.spans.items().len(), 2);
        assert_eq!(built.parent, [u32::MAX, 0]);
        assert!(Enclosing::build(&trace, &kinds, &AtomicBool::new(true)).is_none());
    }

    #[test]
    fn call_ids_hold_their_ids_and_no_other_at_the_ends_of_the_range() {
        let near_max = [i64::MAX - 1, i64::MAX, i64::MAX - 70];
        let sparse = [i64::MIN, 0, i64::MAX];
        for ids in [&near_max[..], &sparse[..]] {
            let set = CallIds::new(ids.iter().copied());
            for &id in ids {
                assert!(set.contains(id), "{id}");
            }
            // Far below the range (its difference to the smallest id overflows) or inside
            // it without being an id.
            for id in [i64::MIN + 1, i64::MIN + 1 + 70, 1, i64::MAX - 2] {
                assert!(!set.contains(id), "{id}");
            }
        }
        assert!(matches!(
            CallIds::new(near_max.into_iter()),
            CallIds::Bits { .. }
        ));
        assert!(!CallIds::new(std::iter::empty()).contains(0));
    }

    #[test]
    fn call_ids_take_bits_up_to_one_id_in_64_of_their_range() {
        // One id in 7 (HTA's `profile_memory` trace: 42,373 calls over 270,450) and one
        // in 60 take bits; one in 100 is kept sorted. Either way, every id and no other.
        for (step, bits) in [(7i64, true), (60, true), (100, false)] {
            let ids: Vec<i64> = (0..10_000).map(|k| 73_689 + k * step).collect();
            let set = CallIds::new(ids.iter().copied());
            assert_eq!(matches!(set, CallIds::Bits { .. }), bits, "one in {step}");
            for &id in &ids {
                assert!(set.contains(id) && !set.contains(id + 1) && !set.contains(id - 1));
            }
            assert!(!set.contains(ids[9_999] + step) && !set.contains(73_689 - step));
        }
    }
}
