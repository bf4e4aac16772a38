//! GPU time as Holistic Trace Analysis (HTA 0.5.0) defines it: which
//! rows count as GPU work, HTA's load-time step filter, and the analyses built on them:
//!
//! - [`classes`]: kernel classes (computation, communication, memory) and the per-class
//!   kernel breakdown (HTA's `get_gpu_kernel_breakdown`, `get_comm_comp_overlap`).
//! - [`temporal`]: idle / compute / non-compute time per rank.
//! - [`idle`]: idle time per stream split into host wait, kernel wait and other.
//! - [`launches`]: CUDA kernel launch statistics.
//!
//! Every analysis runs in one of two modes ([`Compat`]). kinetoscope's default keeps every
//! GPU row of the trace; `--hta-compat` reproduces HTA 0.5.0's load-time filter: drop host
//! events from the start of the rank's last `ProfilerStep` on, and GPU rows whose launch
//! was dropped. The differences are documented in `docs/hta-differences.md`.

pub mod classes;
pub mod idle;
pub mod launches;
pub mod temporal;

use kinetoscope_trace::{
    sort_runs_by_key, CategoryKind, CorrelationIndex, EventId, IdRank, Phase, Trace, TrackKind,
};
use serde::{Deserialize, Serialize};

use crate::steps::{find_steps, StepSource};

/// Which definitions an analysis follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compat {
    /// kinetoscope's definitions: every GPU row of the trace, HTA 0.6 kernel classes,
    /// every known launch call.
    #[default]
    Kinetoscope,
    /// HTA 0.5.0's: the load-time step filter, 0.5.0 kernel classes, HTA's list of
    /// launch calls.
    Hta,
}

/// What the analysis looked at: the mode, and what HTA's step filter dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The definitions used.
    pub compat: Compat,
    /// Whether HTA's step filter was applied (HTA mode with two or more distinct
    /// `ProfilerStep`s over all ranks).
    pub step_filter: bool,
    /// The step whose start is the cut (the rank's last `ProfilerStep`), when filtered.
    pub cut_step: Option<String>,
    /// The cut (epoch ns): host events starting at or after it are dropped.
    pub cut_ns: Option<i64>,
    /// GPU rows (kernels, memcpy, memset, stream syncs on a stream) before the filter.
    pub gpu_rows_total: u64,
    /// GPU rows the filter dropped (launched after the cut, or with no launch call).
    pub gpu_rows_dropped: u64,
}

/// Event times as an analysis sees them. HTA rounds every event to whole microseconds,
/// start up and end down (its trace parser; a no-op on integer-µs traces, and events
/// under 1 µs can get a negative duration); kinetoscope keeps exact nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Round to whole µs as HTA does.
    pub round_us: bool,
}

impl Clock {
    /// The clock of a mode: rounding in HTA mode only.
    pub fn of(compat: Compat) -> Self {
        Self {
            round_us: compat == Compat::Hta,
        }
    }

    /// A start time (ns) as seen by the analysis.
    pub fn start(self, ts_ns: i64) -> i64 {
        if self.round_us {
            ts_ns.div_euclid(1000) * 1000 + if ts_ns.rem_euclid(1000) > 0 { 1000 } else { 0 }
        } else {
            ts_ns
        }
    }

    /// An end time (ns) as seen by the analysis.
    pub fn end(self, end_ns: i64) -> i64 {
        if self.round_us {
            end_ns.div_euclid(1000) * 1000
        } else {
            end_ns
        }
    }

    /// `(start, end)` of event `i`, ns.
    pub fn span(self, trace: &Trace, i: usize) -> (i64, i64) {
        let e = &trace.events;
        (
            self.start(e.ts_ns[i]),
            self.end(e.ts_ns[i] + e.dur_ns.at(i)),
        )
    }
}

/// What a GPU row is, for the analyses that tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// A kernel.
    Kernel,
    /// A memcpy.
    Memcpy,
    /// A memset.
    Memset,
    /// A `cuda_sync` event on a stream (`Stream Sync`, `Stream Wait Event`).
    Sync,
}

/// The GPU rows of one trace (HTA's rows with a stream), sorted by start time (ties in file
/// order).
#[derive(Clone, Debug)]
pub struct GpuRows {
    /// Event indices.
    pub rows: Vec<u32>,
    /// CUDA stream of each row.
    pub stream: Vec<i64>,
    /// Kind of each row.
    pub kind: Vec<RowKind>,
    /// What was looked at.
    pub window: Window,
    /// The clock the rows were selected with (use it for their times).
    pub clock: Clock,
}

/// Distinct `ProfilerStep#N` names of a trace (HTA's step set S, per rank).
pub fn step_names(trace: &Trace) -> Vec<String> {
    let (steps, source) = find_steps(trace);
    if source != StepSource::ProfilerStep {
        return Vec::new();
    }
    let mut names: Vec<String> = steps.into_iter().map(|s| s.name).collect();
    names.sort();
    names.dedup();
    names
}

/// The HTA-filter cut of a trace (`Some` only when `filter` is set and the trace has a
/// step), as (ns on `clock`, name of the event that sets it). HTA 0.5.0 cuts at the latest
/// start of any host-side event (its "CPU events": everything but kernels, memcpys,
/// memsets and syncs) whose name contains `ProfilerStep`. That includes the
/// `gpu_user_annotation` copy of the step that Kineto draws on the GPU timeline where the
/// GPU ran it, which often starts after the host step has ended; the cut then keeps
/// (part of) the last step.
pub fn cut_of(trace: &Trace, filter: bool, clock: Clock) -> Option<(i64, String)> {
    if !filter || step_names(trace).is_empty() {
        return None;
    }
    let e = &trace.events;
    let mut named = vec![None::<bool>; trace.strings.len()];
    let mut best: Option<(i64, usize)> = None;
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || is_gpu_row_kind(trace.categories.kind(e.cat[i])) {
            continue;
        }
        let slot = &mut named[e.name[i].0 as usize];
        let is_step =
            *slot.get_or_insert_with(|| trace.strings.get(e.name[i]).contains("ProfilerStep"));
        if is_step {
            let ts = clock.start(e.ts_ns[i]);
            if best.is_none_or(|(b, _)| ts > b) {
                best = Some((ts, i));
            }
        }
    }
    best.map(|(ts, i)| (ts, trace.strings.get(e.name[i]).to_owned()))
}

/// Categories whose events can be GPU rows (HTA's "GPU events").
fn is_gpu_row_kind(kind: CategoryKind) -> bool {
    matches!(
        kind,
        CategoryKind::Kernel
            | CategoryKind::GpuMemcpy
            | CategoryKind::GpuMemset
            | CategoryKind::CudaSync
    )
}

/// Host-side launch calls (runtime and driver calls with a correlation id) by
/// correlation id: a lighter alternative to [`Trace::correlation_index`], which keeps the
/// last call of a repeated id where this keeps the first.
#[derive(Clone, Debug, Default)]
pub struct LaunchIndex {
    /// The ids, each answering its rank.
    ids: IdRank,
    /// The first call (event index) of each id, by rank.
    call: Vec<u32>,
}

impl LaunchIndex {
    /// Collect every runtime / driver call with a correlation id: through a bit per id
    /// of their range when the ids are dense (Kineto's counters; no sort), else by
    /// sorting.
    pub fn build(trace: &Trace) -> Self {
        let e = &trace.events;
        let call_id = |i: usize| {
            let c = e.correlation.at(i);
            let runtime = matches!(
                trace.categories.kind(e.cat[i]),
                CategoryKind::CudaRuntime | CategoryKind::CudaDriver | CategoryKind::OtherRuntime
            );
            (c != 0 && runtime).then_some(c)
        };
        let (mut min, mut max, mut n) = (i64::MAX, i64::MIN, 0usize);
        for c in (0..e.len()).filter_map(call_id) {
            (min, max, n) = (min.min(c), max.max(c), n + 1);
        }
        if n == 0 {
            return Self::default();
        }
        if IdRank::fits_bits(min, max, n) {
            let ids = IdRank::bits(min, max, (0..e.len()).filter_map(call_id));
            let mut call = vec![u32::MAX; ids.len()];
            // Every id has its bit: `get` finds it.
            for i in 0..e.len() {
                if let Some(rank) = call_id(i).and_then(|c| ids.get(c)) {
                    let first = &mut call[rank as usize];
                    if *first == u32::MAX {
                        *first = i as u32;
                    }
                }
            }
            return Self { ids, call };
        }
        let mut pairs: Vec<(i64, u32)> = (0..e.len())
            .filter_map(|i| call_id(i).map(|c| (c, i as u32)))
            .collect();
        // Stable: each thread's calls come with rising ids, runs the stable sort merges
        // (the keys are distinct). A repeated id's first call comes first.
        pairs.sort();
        pairs.dedup_by_key(|p| p.0);
        let call = pairs.iter().map(|&(_, i)| i).collect();
        let ids = IdRank::new(pairs.into_iter().map(|(c, _)| c).collect());
        Self { ids, call }
    }

    /// The same index read off the trace's correlation index, when that is built
    /// anyway: its ids and the first call of each, copied, instead of three passes over
    /// the events.
    pub fn of_correlation(index: &CorrelationIndex) -> Self {
        let (ids, first) = index.first_launches();
        Self {
            ids: ids.clone(),
            call: first.to_vec(),
        }
    }

    /// The launch call of a correlation id (the first in file order if repeated).
    pub fn get(&self, corr: i64) -> Option<u32> {
        self.ids
            .get(corr)
            .and_then(|rank| self.call.get(rank as usize).copied())
            .filter(|&c| c != u32::MAX)
    }
}

/// Whether a GPU row with correlation `corr` survives the cut: its host launch call
/// starts (on `clock`) before `cut`. GPU rows with no launch call never survive a cut.
pub fn launch_kept(
    trace: &Trace,
    launches: &LaunchIndex,
    corr: i64,
    cut: Option<i64>,
    clock: Clock,
) -> bool {
    let Some(cut) = cut else { return true };
    if corr == 0 {
        return false;
    }
    launches
        .get(corr)
        .is_some_and(|l| clock.start(trace.events.ts_ns[l as usize]) < cut)
}

/// Select the GPU rows of a trace: kernels, memcpys, memsets and `cuda_sync` events that
/// carry a stream, as HTA's "rows with a stream" minus the host-side Triton ops HTA also
/// counts (docs/hta-differences.md). Device-wide syncs (`Event Sync`, `Context Sync`) are
/// not on a stream: kinetoscope leaves them out; HTA mode keeps those written with
/// `stream` 4294967295 (older Kineto), which HTA's `stream != -1` test lets through, as
/// rows of that stream. With `filter`, apply HTA's step filter.
pub fn select(trace: &Trace, compat: Compat, filter: bool) -> GpuRows {
    let e = &trace.events;
    let clock = Clock::of(compat);
    let cut = cut_of(trace, filter, clock);
    let cut_ns = cut.as_ref().map(|c| c.0);
    let launches = if cut.is_some() {
        LaunchIndex::build(trace)
    } else {
        LaunchIndex::default()
    };
    let kargs = &trace.args.kernel;
    let targs = &trace.args.transfer;
    let (mut kc, mut tc) = (0usize, 0usize);
    let mut rows = Vec::new();
    let mut total = 0u64;
    let mut device_sync_stream = None;
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete {
            continue;
        }
        let kind = match trace.categories.kind(e.cat[i]) {
            CategoryKind::Kernel => RowKind::Kernel,
            CategoryKind::GpuMemcpy => RowKind::Memcpy,
            CategoryKind::GpuMemset => RowKind::Memset,
            CategoryKind::CudaSync => {
                let name = trace.strings.get(e.name[i]);
                if name == "Event Sync" || name == "Context Sync" {
                    match trace.args.sync_of(EventId(i as u32)) {
                        Some(a) if compat == Compat::Hta && a.stream != -1 => {
                            device_sync_stream = Some(a.stream)
                        }
                        _ => continue,
                    }
                }
                RowKind::Sync
            }
            _ => continue,
        };
        let id = i as u32;
        let mut stream = device_sync_stream.take();
        match kind {
            RowKind::Kernel => {
                while kc < kargs.len() && kargs.events()[kc].0 < id {
                    kc += 1;
                }
                if let Some(k) = kargs.get(kc).filter(|k| k.event.0 == id) {
                    if k.launch.stream >= 0 {
                        stream = Some(k.launch.stream);
                    }
                }
            }
            RowKind::Memcpy | RowKind::Memset => {
                while tc < targs.len() && targs[tc].event.0 < id {
                    tc += 1;
                }
                if tc < targs.len() && targs[tc].event.0 == id && targs[tc].stream >= 0 {
                    stream = Some(targs[tc].stream);
                }
            }
            RowKind::Sync => {}
        }
        let stream = stream.or(match trace.tracks.get(e.track[i]).kind {
            TrackKind::GpuStream { stream, .. } => Some(stream),
            _ => None,
        });
        let Some(stream) = stream else { continue };
        total += 1;
        if !launch_kept(trace, &launches, e.correlation.at(i), cut_ns, clock) {
            continue;
        }
        rows.push((id, stream, kind));
    }
    // File order holds the activities in long runs in time order: the runs are merged
    // (the keys are distinct, so this is the order of any sort).
    sort_runs_by_key(&mut rows, |&(id, ..)| {
        (clock.start(e.ts_ns[id as usize]), id)
    });
    let kept = rows.len() as u64;
    let mut out = GpuRows {
        rows: Vec::with_capacity(rows.len()),
        stream: Vec::with_capacity(rows.len()),
        kind: Vec::with_capacity(rows.len()),
        window: Window {
            compat,
            step_filter: cut.is_some(),
            cut_step: cut.as_ref().map(|c| c.1.clone()),
            cut_ns,
            gpu_rows_total: total,
            gpu_rows_dropped: total - kept,
        },
        clock,
    };
    for (id, stream, kind) in rows {
        out.rows.push(id);
        out.stream.push(stream);
        out.kind.push(kind);
    }
    out
}

/// One rank's result before HTA's cross-rank decision: HTA filters only when the step set
/// over **all** ranks has two or more names, so a rank with a single step keeps
/// both answers until every rank has been read.
#[derive(Clone, Debug)]
pub struct PerRank<T> {
    /// This rank's distinct `ProfilerStep` names (HTA mode only).
    pub step_names: Vec<String>,
    /// The result with the step filter.
    pub filtered: Option<T>,
    /// The result without it.
    pub unfiltered: Option<T>,
}

impl<T> PerRank<T> {
    /// Run `f` on the trace in the mode(s) that may be needed.
    pub fn compute(trace: &Trace, compat: Compat, f: impl Fn(bool) -> T) -> Self {
        if compat == Compat::Kinetoscope {
            return Self {
                step_names: Vec::new(),
                filtered: None,
                unfiltered: Some(f(false)),
            };
        }
        let step_names = step_names(trace);
        let filtered = (!step_names.is_empty()).then(|| f(true));
        let unfiltered = (step_names.len() <= 1).then(|| f(false));
        Self {
            step_names,
            filtered,
            unfiltered,
        }
    }

    /// The result to report, given HTA's cross-rank decision (see [`filter_all`]).
    pub fn pick(self, filter: bool) -> T {
        match (filter, self.filtered, self.unfiltered) {
            (true, Some(t), _) | (false, _, Some(t)) | (_, None, Some(t)) | (_, Some(t), None) => t,
            (_, None, None) => unreachable!("PerRank always holds one result"),
        }
    }
}

/// HTA's decision: filter when the distinct `ProfilerStep` names over all ranks number two
/// or more.
pub fn filter_all<'a>(names: impl IntoIterator<Item = &'a Vec<String>>) -> bool {
    let mut all: Vec<&str> = names
        .into_iter()
        .flat_map(|v| v.iter().map(String::as_str))
        .collect();
    all.sort_unstable();
    all.dedup();
    all.len() >= 2
}

/// Length of the union of half-open intervals given in start order, HTA's way: a
/// new merged interval starts only when `start > max(end so far)`. Returns (first start,
/// last merged end, total length), or `None` when there are none.
pub fn union_sorted(spans: impl IntoIterator<Item = (i64, i64)>) -> Option<(i64, i64, i64)> {
    let mut it = spans.into_iter();
    let (first, mut cur_end) = it.next()?;
    let mut cur_start = first;
    let mut total = 0;
    for (s, e) in it {
        if s > cur_end {
            total += cur_end - cur_start;
            cur_start = s;
            cur_end = e;
        } else {
            cur_end = cur_end.max(e);
        }
    }
    total += cur_end - cur_start;
    Some((first, cur_end, total))
}

/// Merged intervals (HTA's way, see [`union_sorted`]) of spans given in start order.
pub fn merge_sorted(spans: impl IntoIterator<Item = (i64, i64)>) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// `part / whole` (0 when `whole` is 0).
pub(crate) fn share(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_touching() {
        assert_eq!(
            union_sorted([(0, 10), (5, 30), (30, 31), (40, 45)]),
            Some((0, 45, 36))
        );
        assert_eq!(union_sorted(std::iter::empty()), None);
        assert_eq!(
            merge_sorted([(0, 10), (10, 12), (20, 21)]),
            vec![(0, 12), (20, 21)]
        );
    }

    #[test]
    fn cross_rank_decision() {
        let a = vec!["ProfilerStep#1".to_owned()];
        let b = vec!["ProfilerStep#2".to_owned()];
        assert!(!filter_all([&a, &a]));
        assert!(filter_all([&a, &b]));
        let r = PerRank {
            step_names: a,
            filtered: Some(1),
            unfiltered: Some(2),
        };
        assert_eq!(r.clone().pick(true), 1);
        assert_eq!(r.pick(false), 2);
    }
}
