//! `kinetoscope check`: trace integrity. Each check family is one module and returns
//! [`CheckResult`]s: a [`CheckKind`], its [`Severity`], how many times it occurred and
//! the first examples in time (event names, timestamps, tracks), so a user can find
//! them. Nothing here is prose; `docs/check.md` says what each kind means and why it is
//! a defect.
//!
//! - [`read`]: defects the reader skipped or repaired (`ReadReport`).
//! - [`overlap`]: GPU activities overlapping on one stream; host slices crossing the
//!   end of the slice they start in.
//! - [`launch`]: launch calls without GPU activity, activities without launch call
//!   (those cut by the profiling window told apart), negative launch latencies.
//! - [`flows`]: flow arrows with one end only, or bound to no slice.
//! - [`steps`]: gaps and repeats in `ProfilerStep#N` numbers.
//! - [`ranks`]: across the traces of a rank folder: missing and repeated ranks, steps
//!   missing on some ranks, clock offsets between ranks.
//!
//! Every check sorts events per track once and sweeps them: O(n log n) time, O(n)
//! memory, whatever the trace holds.

mod examples;
pub mod flows;
pub mod launch;
pub mod overlap;
pub mod ranks;
pub mod read;
pub mod steps;

pub use examples::{Example, Firsts, TrackRef};

use kinetoscope_trace::Trace;
use serde::{Deserialize, Serialize};

/// How serious a defect is. `check --fail-on` compares against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Repaired, expected or harmless: worth knowing, nothing is wrong with the numbers.
    Info,
    /// Some numbers of the trace are unreliable (a link, a time, a missing step).
    Warning,
    /// Data was lost or contradicts itself; viewers show it wrongly.
    Error,
}

/// What a check found. `docs/check.md` describes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Names with an unescaped `"`, repaired by the reader.
    UnescapedQuote,
    /// Bare tokens (`N/A`, `nan`) read as null.
    BareToken,
    /// Raw control characters in strings, kept.
    ControlCharacter,
    /// The file ends inside an event; the partial event was dropped.
    TruncatedTail,
    /// Events that could not be parsed; skipped.
    MalformedEvent,
    /// Events without a usable `ts`; skipped.
    MissingTimestamp,
    /// Elements over the reader's size cap; skipped.
    Oversized,
    /// Runtime calls whose `External id` had to be re-linked by time nesting.
    RepairedLaunchLink,
    /// Events with a negative `dur`, read as 0.
    NegativeDuration,
    /// A GPU activity starts before the previous one on its stream has ended.
    GpuStreamOverlap,
    /// A host slice starts inside another on its thread and ends after it.
    HostSliceCrossing,
    /// The same where one of the two is a Python frame (with_stack traces).
    PythonFrameCrossing,
    /// A kernel / copy / set launch call with a correlation id no GPU activity carries.
    LaunchWithoutActivity,
    /// The same, after the last launch that has its activity: cut by the window's end.
    LaunchCutAtEnd,
    /// A GPU activity whose correlation id no launch call carries.
    ActivityWithoutLaunch,
    /// The same, before the first activity that has its launch: launched before the
    /// window opened.
    ActivityCutAtStart,
    /// GPU activities in a trace without any launch call (no host activity recorded).
    NoLaunchCalls,
    /// A GPU activity starts before the call that launched it.
    NegativeLaunchLatency,
    /// A flow arrow with a start and no finish, or a finish and no start.
    UnpairedFlow,
    /// The same, where the profiling window cut the other end.
    FlowCutByWindow,
    /// A flow finish alone on a host runtime call that launched nothing.
    LoneFlowOnCall,
    /// A flow end on a track where no slice is there to bind it.
    UnboundFlow,
    /// `ProfilerStep#N` numbers skip values.
    MissingSteps,
    /// A `ProfilerStep#N` number recorded for two different spans.
    RepeatedStep,
    /// Rank numbers of a rank folder skip values (below the world size).
    MissingRanks,
    /// Two traces of a rank folder carry the same rank.
    RepeatedRank,
    /// A step number other ranks recorded is absent on this rank.
    StepMissingOnRank,
    /// A rank's clock is offset from the reference rank's (estimated from the ends of
    /// collectives matched across ranks).
    ClockSkew,
}

impl CheckKind {
    /// The severity of this kind of defect.
    pub fn severity(self) -> Severity {
        use CheckKind::*;
        match self {
            UnescapedQuote | BareToken | ControlCharacter | RepairedLaunchLink | LaunchCutAtEnd
            | ActivityCutAtStart | NoLaunchCalls | PythonFrameCrossing | FlowCutByWindow
            | LoneFlowOnCall => Severity::Info,
            NegativeDuration
            | GpuStreamOverlap
            | HostSliceCrossing
            | LaunchWithoutActivity
            | ActivityWithoutLaunch
            | NegativeLaunchLatency
            | UnpairedFlow
            | UnboundFlow
            | MissingSteps
            | RepeatedStep
            | StepMissingOnRank
            | ClockSkew
            | MissingRanks
            | RepeatedRank => Severity::Warning,
            TruncatedTail | MalformedEvent | MissingTimestamp | Oversized => Severity::Error,
        }
    }
}

/// One kind of defect found: how often, and the first occurrences in time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// What.
    pub kind: CheckKind,
    /// How serious ([`CheckKind::severity`]).
    pub severity: Severity,
    /// Occurrences (events, pairs, flows, numbers, ranks: `docs/check.md`).
    pub count: u64,
    /// The first occurrences (earliest first), at most [`CheckOptions::examples`].
    pub examples: Vec<Example>,
}

impl CheckResult {
    /// A result of `kind` from the occurrences collected.
    pub fn new(kind: CheckKind, count: u64, examples: Firsts) -> Self {
        Self {
            kind,
            severity: kind.severity(),
            count,
            examples: examples.into_sorted(),
        }
    }
}

/// Options of the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOptions {
    /// Examples kept per kind of defect.
    pub examples: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self { examples: 3 }
    }
}

/// The integrity report of one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceCheck {
    /// The file.
    pub path: String,
    /// Its rank, when known.
    pub rank: Option<i64>,
    /// Events in the model (duration, instant and counter events).
    pub events: u64,
    /// Flow events.
    pub flows: u64,
    /// `baseTimeNanoseconds` (0 when absent): a file's `ts` is `(ts_ns − base) / 1000`.
    pub base_time_ns: i64,
    /// The first event's start, epoch ns (0 without events).
    pub start_ns: i64,
    /// Defects found, one entry per kind found, most severe first (then by kind).
    pub defects: Vec<CheckResult>,
}

impl TraceCheck {
    /// The most severe defect's severity; `None` when the trace is clean.
    pub fn worst(&self) -> Option<Severity> {
        self.defects.iter().map(|d| d.severity).max()
    }
}

/// Every per-trace check of `trace`.
pub fn check_trace(trace: &Trace, opts: &CheckOptions) -> TraceCheck {
    let mut defects = read::check(trace, opts);
    defects.extend(overlap::check(trace, opts));
    defects.extend(launch::check(trace, opts));
    defects.extend(flows::check(trace, opts));
    defects.extend(steps::check(trace, opts));
    finish(&mut defects);
    TraceCheck {
        path: trace.path.display().to_string(),
        rank: trace.meta.rank.map(|r| r.value),
        events: trace.events.len() as u64,
        flows: trace.flows.len() as u64,
        base_time_ns: trace.meta.base_time_ns.unwrap_or(0),
        start_ns: trace.span_ns().map_or(0, |(lo, _)| lo),
        defects,
    }
}

/// Drop empty results and order the rest: most severe first, then by kind.
pub fn finish(defects: &mut Vec<CheckResult>) {
    defects.retain(|d| d.count > 0);
    defects.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.kind.cmp(&b.kind)));
}
