//! kinetoscope's performance advisor: rules over the analyses of
//! [`kinetoscope_analysis`] that turn a PyTorch profiler trace into findings ranked by
//! estimated recoverable time per step (severity breaks ties).
//!
//! - [`advise_trace`] runs every per-trace rule ([`rules::all`]) and returns a
//!   [`TraceReport`]: a one-screen [`summary::Summary`], FLOPs and MFU
//!   ([`flops::FlopsSummary`]) and the [`Finding`]s.
//! - [`advise_ranks`] runs the rules across the rank traces of one job
//!   (`StragglerRank`, `RankMemoryImbalance`); [`RankGroups`] groups the per-trace
//!   findings of its ranks, one per rule and subject.
//! - [`Config`] holds every threshold, each with its source; TOML overrides it.
//!
//! ```no_run
//! use kinetoscope_advisor::{advise_trace, Config};
//! use kinetoscope_trace::read::{read_trace, ReadOptions};
//!
//! let trace = read_trace("rank0.pt.trace.json.gz".as_ref(), &ReadOptions::default()).unwrap();
//! let report = advise_trace(&trace, &Config::default());
//! for f in &report.findings {
//!     println!("{} {} {:.2} ms/step", f.id, f.title, f.impact_ns_per_step / 1e6);
//! }
//! ```

pub mod across_ranks;
pub mod config;
pub mod facts;
pub mod finding;
pub mod flops;
pub mod gemm;
mod queue;
pub mod rules;
pub mod summary;

use serde::{Deserialize, Serialize};

pub use across_ranks::{RankGroups, RankSpread};
pub use config::Config;
pub use finding::{
    all_findings, rank_findings, About, Confidence, Finding, Severity, SeverityCounts,
};
pub use rules::distributed::rank_memory_imbalance::RankMemory;

/// The advisor's result for one trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceReport {
    /// The file.
    pub path: String,
    /// Rank, when known.
    pub rank: Option<i64>,
    /// The one-screen summary.
    pub summary: summary::Summary,
    /// FLOPs, achieved TFLOP/s and MFU.
    pub flops: flops::FlopsSummary,
    /// Findings, ranked (largest impact first, then by severity; see [`rank_findings`]).
    pub findings: Vec<Finding>,
    /// What `kinetoscope diff` compares (every step, operators, kernels, counts, memory
    /// growth), so that a saved report is a baseline; absent in reports saved before
    /// schema 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<kinetoscope_analysis::diff::TraceProfile>,
}

/// Run every pstats rule (PY001–PY006) on the statistics of a cProfile / profile file
/// (`source` names it in the findings), ranked.
pub fn advise_pstats(
    stats: &kinetoscope_analysis::pstats::Stats,
    source: &str,
    config: &Config,
) -> Vec<Finding> {
    let facts = rules::pstats::PstatsFacts {
        stats,
        source: source.to_owned(),
    };
    let mut findings = rules::pstats::check_all(&facts, config);
    rank_findings(&mut findings);
    findings
}

/// Run every per-trace rule on `trace`.
pub fn advise_trace(trace: &kinetoscope_trace::Trace, config: &Config) -> TraceReport {
    advise_trace_with(trace, config, |_| ()).0
}

/// [`advise_trace`], and also `extra` computed from the same facts (so an analysis the
/// rules already made, such as the overview, is not made again).
pub fn advise_trace_with<R>(
    trace: &kinetoscope_trace::Trace,
    config: &Config,
    extra: impl FnOnce(&facts::Facts) -> R,
) -> (TraceReport, R) {
    std::thread::scope(|outer| {
        // The memory view needs only the trace: it starts now, beside the overview (which
        // leaves a core partly idle), instead of after it on the facts' thread; so does
        // the host nesting, which many facts and rules search up.
        let memory = outer.spawn(|| {
            let view = kinetoscope_analysis::memory::analyze_trace_for_rules(
                trace,
                &kinetoscope_analysis::memory::MemoryOptions::default(),
            );
            trace.nesting();
            view
        });
        let facts = facts::Facts::new(trace).with_memory(move || join(memory));
        advise_with_facts(&facts, config, extra)
    })
}

/// The rules, the summary and `extra` over prepared `facts`.
fn advise_with_facts<R>(
    facts: &facts::Facts,
    config: &Config,
    extra: impl FnOnce(&facts::Facts) -> R,
) -> (TraceReport, R) {
    // The facts several rules share are computed on a second thread (the memory view
    // is already under way on another: `advise_trace_with`), and the diff profile on a
    // third, while this thread and a fourth take the rules, then the summary and the
    // FLOPs estimate, one at a time from a shared queue (reading used both cores; these
    // are most of what the advisor adds to it, and no one rule or fact holds most of
    // it): whichever is free takes the next, so neither waits long for the other at the
    // end. A rule that needs a fact before it is ready waits for it.
    let trace = facts.trace;
    let queue = queue::Queue::new(rules::all(), facts, config);
    let profile = std::thread::scope(|s| {
        s.spawn(|| facts.prepare());
        let profile = s.spawn(|| {
            kinetoscope_analysis::diff::profile_in(
                trace,
                facts.operator_tree(),
                &facts.overview,
                facts.memory(),
            )
        });
        let helper = s.spawn(|| queue.work());
        queue.work();
        join(helper);
        join(profile)
    });
    let (mut findings, summary, flops) = queue.finish();
    rank_findings(&mut findings);
    let extra = extra(facts);
    let report = TraceReport {
        path: trace.path.display().to_string(),
        rank: facts.overview.rank,
        summary,
        flops,
        findings,
        profile: Some(profile),
    };
    (report, extra)
}

/// The result of a scoped thread, its panic resumed here.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Run the cross-rank rules over one job's ranks: `ranks` is their comparison
/// (`kinetoscope_analysis::ranks`, the result `kinetoscope ranks` shows, so both name the
/// same straggler) and `memory` each rank's fullest GPU ([`RankMemory::of_reports`], or
/// from a Parquet export's tables); `input` names the folder in the findings.
pub fn advise_ranks(
    memory: &[RankMemory],
    ranks: &kinetoscope_analysis::ranks::RanksReport,
    config: &Config,
    input: &str,
) -> Vec<Finding> {
    let mut f = rules::distributed::straggler_rank::check(ranks, config, input);
    f.extend(rules::distributed::rank_memory_imbalance::check(
        memory, config, input,
    ));
    rank_findings(&mut f);
    f
}
