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

use serde::{Deserialize, Serialize};

use super::idmap::IdMap;
use super::{CategoryKind, EventId, Phase, Trace};

/// The stored launcher of a call launched outside any operator (`External id` 0).
const OUTSIDE: u32 = u32::MAX - 1;
/// The stored launcher of a call whose operator is unknown.
const UNKNOWN: u32 = u32::MAX;

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
    /// Correlation id → position in `calls` (the last call of a repeated id).
    by_correlation: IdMap,
}

/// Why a call's link by id was not taken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// The id names an operator the call is not inside.
    Rejected,
    /// The id names no operator.
    NoSuchId,
}

impl LaunchLinks {
    /// Link every runtime call of `trace` and count the repairs.
    pub fn build(trace: &Trace) -> (Self, LinkRepairs) {
        let e = &trace.events;
        let kinds: Vec<CategoryKind> = trace.categories.iter().map(|(_, c)| c.kind).collect();
        let kind = |i: usize| kinds.get(e.cat[i].0 as usize).copied();
        let complete = |i: usize| e.phase[i] == Phase::Complete;
        let by_ext = IdMap::build(
            || {
                (0..e.len())
                    .filter(|&i| {
                        complete(i)
                            && kind(i).is_some_and(is_launcher_kind)
                            && e.external_id[i] != 0
                    })
                    .map(|i| (e.external_id[i], i as u32))
            },
            true,
        );
        let mut links = Self::default();
        let mut pending: Vec<(u32, Pending)> = Vec::new();
        let mut correlations: Vec<(i64, u32)> = Vec::new();
        for i in 0..e.len() {
            if !complete(i) || !kind(i).is_some_and(CategoryKind::is_launch_call) {
                continue;
            }
            let pos = links.calls.len() as u32;
            let ext = e.external_id[i];
            let launcher = if ext == 0 {
                OUTSIDE
            } else {
                match by_ext.get(ext) {
                    Some(op)
                        if e.track[op as usize] == e.track[i]
                            && encloses(trace, op as usize, i) =>
                    {
                        op
                    }
                    Some(_) => {
                        pending.push((pos, Pending::Rejected));
                        UNKNOWN
                    }
                    None => {
                        pending.push((pos, Pending::NoSuchId));
                        UNKNOWN
                    }
                }
            };
            links.calls.push(i as u32);
            links.launcher.push(launcher);
            if e.correlation[i] != 0 {
                correlations.push((e.correlation[i], pos));
            }
        }
        links.by_correlation = IdMap::build(|| correlations.iter().copied(), false);

        let mut repairs = LinkRepairs::default();
        if !pending.is_empty() {
            let enclosing = Enclosing::build(trace, &kinds);
            for (pos, why) in pending {
                let call = links.calls[pos as usize] as usize;
                let found = enclosing.innermost(trace, call);
                match (why, found) {
                    (Pending::Rejected, Some(_)) => repairs.relinked += 1,
                    (Pending::Rejected, None) => repairs.unlinked += 1,
                    (Pending::NoSuchId, Some(_)) => repairs.nested += 1,
                    (Pending::NoSuchId, None) => {}
                }
                if let Some(op) = found {
                    links.launcher[pos as usize] = op;
                }
            }
        }
        (links, repairs)
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
    /// `None` for id 0 or an id no runtime call carries.
    pub fn of_correlation(&self, correlation: i64) -> Option<(EventId, Launcher)> {
        if correlation == 0 {
            return None;
        }
        let pos = self.by_correlation.get(correlation)? as usize;
        Some((EventId(self.calls[pos]), decode(self.launcher[pos])))
    }

    /// The launcher of a GPU activity (by its `correlation`), as an operator or
    /// annotation event; `None` when it has no runtime call or its call has no launcher.
    pub fn operator_of_gpu(&self, trace: &Trace, gpu: EventId) -> Option<EventId> {
        match self.of_correlation(trace.events.correlation[gpu.index()])? {
            (_, Launcher::Span(op)) => Some(op),
            _ => None,
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
    trace.events.ts_ns[i].saturating_add(trace.events.dur_ns[i])
}

/// Whether event `outer` lies around event `inner` in time (both ends included).
fn encloses(trace: &Trace, outer: usize, inner: usize) -> bool {
    let ts = &trace.events.ts_ns;
    ts[outer] <= ts[inner] && end(trace, inner) <= end(trace, outer)
}

/// The operators and annotations of each track in pre-order, with their parents, to find
/// the innermost one enclosing a call.
struct Enclosing {
    /// Per track (by index): the spans sorted by (start, end descending, file order).
    spans: Vec<Vec<u32>>,
    /// Per track: the position in `spans` of each span's parent (`u32::MAX` for none).
    parent: Vec<Vec<u32>>,
}

impl Enclosing {
    /// Sort and nest the launcher spans of every track.
    fn build(trace: &Trace, kinds: &[CategoryKind]) -> Self {
        let e = &trace.events;
        let mut spans: Vec<Vec<u32>> = vec![Vec::new(); trace.tracks.len()];
        for i in 0..e.len() {
            let launcher = e.phase[i] == Phase::Complete
                && kinds
                    .get(e.cat[i].0 as usize)
                    .is_some_and(|&k| is_launcher_kind(k));
            if let (true, Some(list)) = (launcher, spans.get_mut(e.track[i].index())) {
                list.push(i as u32);
            }
        }
        let mut parent = Vec::with_capacity(spans.len());
        let mut stack: Vec<u32> = Vec::new();
        for list in &mut spans {
            list.sort_unstable_by_key(|&i| {
                let i = i as usize;
                (e.ts_ns[i], std::cmp::Reverse(end(trace, i)), i)
            });
            stack.clear();
            let mut parents = vec![u32::MAX; list.len()];
            for (pos, &i) in list.iter().enumerate() {
                let (start, stop) = (e.ts_ns[i as usize], end(trace, i as usize));
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
                parents[pos] = stack
                    .iter()
                    .rev()
                    .copied()
                    .find(|&top| end(trace, list[top as usize] as usize) >= stop)
                    .unwrap_or(u32::MAX);
                stack.push(pos as u32);
            }
            parent.push(parents);
        }
        Self { spans, parent }
    }

    /// The innermost span on `call`'s track that encloses it, as an event index.
    fn innermost(&self, trace: &Trace, call: usize) -> Option<u32> {
        let track = trace.events.track[call].index();
        let (list, parents) = (self.spans.get(track)?, self.parent.get(track)?);
        let start = trace.events.ts_ns[call];
        let mut pos = list
            .partition_point(|&i| trace.events.ts_ns[i as usize] <= start)
            .checked_sub(1)? as u32;
        loop {
            let span = list[pos as usize];
            if encloses(trace, span as usize, call) {
                return Some(span);
            }
            pos = parents[pos as usize];
            if pos == u32::MAX {
                return None;
            }
        }
    }
}
