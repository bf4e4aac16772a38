//! Rules over cProfile / profile statistics (`pstats`): the known Python-side
//! bottlenecks of training loops, each a share of the profile's total own time
//! (`total_tt`) with a fix. They run on [`PstatsFacts`], not on a trace; the engine runs
//! them on every pstats file of a run folder (`kinetoscope report`).
//!
//! A rule matches functions by name ([`PstatsRule::matches`]); its time is the
//! cumulative time of the matched functions that no other matched function calls
//! directly (so a matched function inside another is not counted twice), as a share of
//! `total_tt`. pstats has no steps, so there is no step gating: the whole profile is the
//! one interval, and `impact_ns_per_step` is the matched time over the profile.

pub mod data_loader_shutdown;
pub mod device_copies;
pub mod garbage_collection;
pub mod logging_callbacks;
pub mod sync_item;
pub mod token_counting;

use std::collections::HashSet;

use kinetoscope_analysis::pstats::Stats;
use kinetoscope_trace::{FuncKey, PstatsEntry};

use crate::config::Config;
use crate::finding::{About, Confidence, Finding, Severity};
use crate::rules::RuleMeta;

/// What the pstats rules read: the statistics (summed, as loaded) and the file.
pub struct PstatsFacts<'a> {
    /// The statistics.
    pub stats: &'a Stats,
    /// The file (or files) they come from, for the findings' `trace`.
    pub source: String,
}

/// A rule over pstats statistics.
pub trait PstatsRule: Sync {
    /// Its identity.
    fn meta(&self) -> &'static RuleMeta;
    /// Whether a function is one this rule is about.
    fn matches(&self, f: &FuncKey) -> bool;
    /// The title, given the share (percent) and seconds.
    fn title(&self, pct: f64, secs: f64, calls: i64) -> String;
    /// What to change.
    fn fix(&self) -> &'static str;
}

/// Every pstats rule, in code order.
pub fn all() -> Vec<&'static dyn PstatsRule> {
    vec![
        &data_loader_shutdown::DataLoaderWorkerShutdown,
        &token_counting::TokenCounting,
        &sync_item::SyncItem,
        &device_copies::DeviceDtypeCopies,
        &logging_callbacks::LoggingAndCallbacks,
        &garbage_collection::GarbageCollection,
    ]
}

/// The functions of `stats` a rule matches, and their time counted once.
struct Matched<'s> {
    entries: Vec<&'s PstatsEntry>,
    seconds: f64,
    calls: i64,
}

fn matched<'s>(rule: &dyn PstatsRule, stats: &'s Stats) -> Matched<'s> {
    let entries: Vec<&PstatsEntry> = stats
        .entries
        .iter()
        .filter(|e| rule.matches(&e.func))
        .collect();
    let keys: HashSet<&FuncKey> = entries.iter().map(|e| &e.func).collect();
    let outer = entries.iter().filter(|e| {
        !e.callers
            .iter()
            .any(|c| c.caller != e.func && keys.contains(&c.caller))
    });
    Matched {
        seconds: outer.map(|e| e.cumtime).filter(|x| x.is_finite()).sum(),
        calls: entries
            .iter()
            .map(|e| e.calls)
            .fold(0i64, i64::wrapping_add),
        entries,
    }
}

/// Run every pstats rule on `facts`: a finding for each whose share reaches
/// `pstats.info_pct`.
pub fn check_all(facts: &PstatsFacts, config: &Config) -> Vec<Finding> {
    all()
        .into_iter()
        .filter_map(|r| check(r, facts, config))
        .collect()
}

fn check(rule: &dyn PstatsRule, facts: &PstatsFacts, config: &Config) -> Option<Finding> {
    let total = facts.stats.total_tt;
    let m = matched(rule, facts.stats);
    if m.entries.is_empty() || total.is_nan() || total <= 0.0 {
        return None;
    }
    let secs = m.seconds.min(total).max(0.0);
    let pct = 100.0 * secs / total;
    let t = &config.pstats;
    let severity = if pct >= t.critical_pct {
        Severity::Critical
    } else if pct >= t.warning_pct {
        Severity::Warning
    } else if pct >= t.info_pct {
        Severity::Info
    } else {
        return None;
    };
    let mut top = m.entries.clone();
    top.sort_by(|a, b| b.cumtime.total_cmp(&a.cumtime));
    let evidence = top
        .iter()
        .take(5)
        .map(|e| {
            format!(
                "{}: {} calls, cumtime {:.6} s ({:.1} % of {:.6} s), tottime {:.6} s",
                e.func.std_string(),
                e.calls,
                e.cumtime,
                100.0 * e.cumtime / total,
                total,
                e.tottime
            )
        })
        .collect();
    let meta = rule.meta();
    Some(Finding {
        id: meta.code.to_owned(),
        rule: meta.name.to_owned(),
        subject: About::Trace.subject(meta.code),
        title: rule.title(pct, secs, m.calls),
        severity,
        impact_ns_per_step: secs * 1e9,
        impact_share: secs / total,
        confidence: Confidence {
            steps: 0,
            of_steps: 0,
            ranks: 1,
            of_ranks: 1,
        },
        evidence,
        fix: rule.fix().to_owned(),
        details: format!(
            "{pct:.1} % of the profile's own time; info at ≥ {} %, warning at ≥ {} %, \
             critical at ≥ {} % (pstats.*_pct). pstats has no steps: the impact is over the \
             whole profile.",
            t.info_pct, t.warning_pct, t.critical_pct
        ),
        trace: facts.source.clone(),
        rank: None,
        across_ranks: None,
    })
}

/// Whether a built-in's pstats name (`<method 'NAME' of 'torch...' objects>`) is the
/// method `method` of a torch class.
pub(crate) fn torch_method(f: &FuncKey, method: &str) -> bool {
    f.file == "~" && f.name.starts_with(&format!("<method '{method}' of 'torch"))
}
