//! Findings: what a rule reports, with its impact, confidence, evidence and fix.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; no threshold crossed.
    Info,
    /// A threshold from the docs was crossed.
    Warning,
    /// The critical threshold was crossed, with enough steps to trust it.
    Critical,
}

impl Severity {
    /// Lower-case name (`info`, `warning`, `critical`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Critical => "critical",
        }
    }
}

impl std::str::FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "info" => Ok(Self::Info),
            "warning" | "warn" => Ok(Self::Warning),
            "critical" => Ok(Self::Critical),
            _ => Err(format!(
                "unknown severity {s:?}: use info, warning or critical"
            )),
        }
    }
}

/// How many steps or ranks support a finding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    /// Steps in which the problem was seen.
    pub steps: usize,
    /// Steps analysed.
    pub of_steps: usize,
    /// Ranks in which the problem was seen (1 for a single trace).
    pub ranks: usize,
    /// Ranks analysed.
    pub of_ranks: usize,
}

/// What a finding is about inside its trace (or, for cross-rank findings, its rank
/// folder); with the rule code it makes the finding's [`Finding::subject`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum About {
    /// The trace as a whole (a rule that reports at most one finding per trace).
    Trace,
    /// One device: `GPU0`, `CPU`.
    Device(String),
    /// One copy direction: `HtoD`, `DtoH`.
    Direction(String),
    /// One rank of a rank folder.
    Rank(i64),
}

impl About {
    /// The subject key of a finding of rule `code` about this: `ME002:device=GPU0`,
    /// `TR002:direction=HtoD`, `DI001:rank=3`, `GP003:trace`.
    pub fn subject(&self, code: &str) -> String {
        match self {
            Self::Trace => format!("{code}:trace"),
            Self::Device(d) => format!("{code}:device={d}"),
            Self::Direction(d) => format!("{code}:direction={d}"),
            Self::Rank(r) => format!("{code}:rank={r}"),
        }
    }
}

/// A finding of one rule on one trace (or on a set of rank traces).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable rule code (`IN001`); never reused.
    pub id: String,
    /// Rule name, after the problem (`DataloaderStall`).
    pub rule: String,
    /// Stable key of what the finding is about: the rule code and its [`About`]
    /// (`GP001:device=GPU0`). Unique among the findings of one trace and the same from
    /// run to run of the same code on the same problem, so that two reports can be
    /// matched finding by finding (with `rank` for the traces of a rank folder).
    pub subject: String,
    /// One-line title with the key number.
    pub title: String,
    /// Severity after confidence gating.
    pub severity: Severity,
    /// Estimated recoverable time per step, ns (an upper bound: the affected time).
    pub impact_ns_per_step: f64,
    /// `impact_ns_per_step` as a share of the mean step time (0–1).
    pub impact_share: f64,
    /// Steps and ranks that support the finding.
    pub confidence: Confidence,
    /// Evidence lines: operators, kernels, stacks, steps or ranks, with numbers.
    pub evidence: Vec<String>,
    /// What to change.
    pub fix: String,
    /// Which threshold fired, and where it comes from.
    pub details: String,
    /// The trace (or folder) the finding is about.
    pub trace: String,
    /// The rank of that trace, when known.
    pub rank: Option<i64>,
    /// For a finding of a rank folder's job-wide list, grouped across its ranks (one per
    /// rule and subject; `trace` is then the folder and `rank` unset): the ranks it was
    /// seen on, the worst rank (whose finding this is) and the spread of the impact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across_ranks: Option<crate::across_ranks::RankSpread>,
}

/// How many findings there are of each severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeverityCounts {
    /// Critical findings.
    pub critical: usize,
    /// Warnings.
    pub warning: usize,
    /// Info findings.
    pub info: usize,
}

impl SeverityCounts {
    /// Count `findings` by severity.
    pub fn of(findings: &[Finding]) -> Self {
        let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
        Self {
            critical: count(Severity::Critical),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
        }
    }
}

/// Every finding of one input — each trace's, then the cross-rank ones — in one ranked
/// list ([`rank_findings`]).
pub fn all_findings<'a>(
    per_trace: impl IntoIterator<Item = &'a [Finding]>,
    cross_rank: &'a [Finding],
) -> Vec<Finding> {
    let mut all: Vec<Finding> = per_trace
        .into_iter()
        .flatten()
        .chain(cross_rank)
        .cloned()
        .collect();
    rank_findings(&mut all);
    all
}

/// Findings that measure how long the GPU waits for the host, whatever the cause.
const HOST_WAIT: [&str; 2] = ["LowGpuUtilization", "HostBoundGaps"];

/// Host-side causes of that wait, each a fix of its own.
const HOST_CAUSES: [&str; 7] = [
    "DataloaderStall",
    "HostDeviceSync",
    "UnfusedOptimizer",
    "SlowOptimizerStep",
    "AllocatorChurn",
    "ExcessiveTransfers",
    "PageableMemcpy",
];

/// The impact a finding is ranked by: its own, except that a host-side cause
/// ([`HOST_CAUSES`]) that explains at least half of a host-wait finding of the same trace
/// ([`HOST_WAIT`]) is ranked with that finding, just before it — the cause is what to fix,
/// the wait is its measure. `waits` holds the host-wait impacts by trace and rank.
fn rank_impact(f: &Finding, waits: &HashMap<(&str, Option<i64>), Vec<f64>>) -> f64 {
    if !HOST_CAUSES.contains(&f.rule.as_str()) {
        return f.impact_ns_per_step;
    }
    waits
        .get(&(f.trace.as_str(), f.rank))
        .into_iter()
        .flatten()
        .filter(|&&w| 2.0 * f.impact_ns_per_step >= w)
        .fold(f.impact_ns_per_step, |a, &w| a.max(w))
}

/// Order findings by estimated recoverable time (`impact_ns_per_step`, largest first),
/// then severity (critical first), then id. Findings whose impact is unknown carry 0
/// (memory findings, whose cost is the risk of running out of memory), so they follow
/// every finding with a time impact, worst severity first, info last. A host-side cause
/// that explains at least half of the GPU's wait for the host comes just before the
/// findings that measure that wait ([`rank_impact`]).
pub fn rank_findings(findings: &mut [Finding]) {
    let mut waits: HashMap<(&str, Option<i64>), Vec<f64>> = HashMap::new();
    for w in findings
        .iter()
        .filter(|w| HOST_WAIT.contains(&w.rule.as_str()))
    {
        waits
            .entry((w.trace.as_str(), w.rank))
            .or_default()
            .push(w.impact_ns_per_step);
    }
    let keys: Vec<f64> = findings.iter().map(|f| rank_impact(f, &waits)).collect();
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&findings[i], &findings[j]);
        keys[j]
            .total_cmp(&keys[i])
            .then(
                HOST_WAIT
                    .contains(&a.rule.as_str())
                    .cmp(&HOST_WAIT.contains(&b.rule.as_str())),
            )
            .then(b.impact_ns_per_step.total_cmp(&a.impact_ns_per_step))
            .then(b.severity.cmp(&a.severity))
            .then(a.id.cmp(&b.id))
    });
    let sorted: Vec<Finding> = order.iter().map(|&i| findings[i].clone()).collect();
    findings.clone_from_slice(&sorted);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(id: &str, severity: Severity, impact: f64) -> Finding {
        Finding {
            id: id.to_owned(),
            rule: id.to_owned(),
            subject: About::Trace.subject(id),
            title: String::new(),
            severity,
            impact_ns_per_step: impact,
            impact_share: 0.0,
            confidence: Confidence::default(),
            evidence: Vec::new(),
            fix: String::new(),
            details: String::new(),
            trace: String::new(),
            rank: None,
            across_ranks: None,
        }
    }

    #[test]
    fn ranked_by_impact_then_severity() {
        let mut v = vec![
            f("A", Severity::Info, 0.0),
            f("B", Severity::Critical, 1.0),
            f("C", Severity::Info, 5.0),
            f("D", Severity::Warning, 0.0),
            f("E", Severity::Warning, 5.0),
            f("F", Severity::Critical, 0.0),
            f("G", Severity::Warning, 1.0),
        ];
        rank_findings(&mut v);
        let ids: Vec<&str> = v.iter().map(|x| x.id.as_str()).collect();
        // Impact first; equal impact by severity; unknown-impact info findings last.
        assert_eq!(ids, ["E", "C", "B", "G", "F", "D", "A"]);
    }

    fn named(rule: &str, impact: f64, trace: &str) -> Finding {
        Finding {
            rule: rule.to_owned(),
            trace: trace.to_owned(),
            ..f(rule, Severity::Warning, impact)
        }
    }

    #[test]
    fn a_cause_of_most_of_the_host_wait_comes_before_the_wait() {
        let mut v = vec![
            named("LowGpuUtilization", 99.0, "a"),
            named("HostBoundGaps", 84.0, "a"),
            named("LaunchBound", 80.0, "a"),
            named("DataloaderStall", 88.0, "a"),
            named("HostDeviceSync", 10.0, "a"),
            named("UnfusedOptimizer", 60.0, "b"),
        ];
        rank_findings(&mut v);
        let rules: Vec<&str> = v.iter().map(|x| x.rule.as_str()).collect();
        // The stall explains most of trace a's wait; the small sync does not; the
        // optimizer finding of another trace is ranked by its own impact.
        assert_eq!(
            rules,
            [
                "DataloaderStall",
                "LowGpuUtilization",
                "HostBoundGaps",
                "LaunchBound",
                "UnfusedOptimizer",
                "HostDeviceSync"
            ]
        );
    }
}
