//! The per-trace findings of a job's ranks grouped across them: one finding per rule and
//! subject, a device subject standing for each rank's own device of that kind
//! (`GP001:device=GPU*`), with the ranks it was seen on and the spread of its impact.
//! Built one rank at a time in memory that does not grow with the ranks, so that a report
//! over a thousand ranks lists the dozen problems the job has, not eleven thousand
//! findings.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity};

/// How a finding grouped across a job's ranks spreads over them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSpread {
    /// The ranks it was seen on, as ranges (`0-7,9,12-15`; at most
    /// [`MAX_RANGES_SHOWN`] ranges, then `…`). A trace that names no rank counts by
    /// its place in the folder.
    pub seen_on: String,
    /// The rank whose finding is shown: the largest impact, then the worst severity,
    /// then the lowest rank.
    pub worst_rank: Option<i64>,
    /// That rank's trace.
    pub worst_trace: String,
    /// The least impact per step over the ranks it was seen on, ns.
    pub least_impact_ns_per_step: f64,
    /// The mean impact per step over the ranks it was seen on, ns.
    pub mean_impact_ns_per_step: f64,
}

/// Ranges `seen_on` lists before it ends with `…`.
pub const MAX_RANGES_SHOWN: usize = 12;

/// Findings of a job's ranks as they arrive, one group per rule and grouped subject.
#[derive(Debug, Default)]
pub struct RankGroups {
    /// Groups in order of first appearance.
    groups: Vec<Group>,
    /// Grouped subject → index in `groups`.
    index: HashMap<String, usize>,
    /// Traces added.
    traces: usize,
}

/// One rule and subject over the ranks.
#[derive(Debug)]
struct Group {
    /// The finding shown: the worst rank's.
    worst: Finding,
    /// The most severe severity of any rank.
    severity: Severity,
    /// The ranks it was seen on.
    ranks: RankSet,
    /// Findings added (a rank with two devices adds two).
    findings: usize,
    /// Their impacts summed, ns per step.
    impact_sum: f64,
    /// The least of them.
    least: f64,
}

impl RankGroups {
    /// No rank yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the findings of the next trace of the folder, whose rank is `rank` (its place
    /// in the folder when it names none).
    pub fn add(&mut self, findings: &[Finding], rank: Option<i64>) {
        let rank = rank.unwrap_or(self.traces as i64);
        self.traces += 1;
        for f in findings {
            let subject = grouped_subject(&f.subject);
            let i = match self.index.get(&subject) {
                Some(&i) => i,
                None => {
                    self.index.insert(subject, self.groups.len());
                    self.groups.push(Group {
                        worst: f.clone(),
                        severity: f.severity,
                        ranks: RankSet::default(),
                        findings: 0,
                        impact_sum: 0.0,
                        least: f.impact_ns_per_step,
                    });
                    self.groups.len() - 1
                }
            };
            let g = &mut self.groups[i];
            g.ranks.insert(rank);
            g.findings += 1;
            g.impact_sum += f.impact_ns_per_step;
            g.least = g.least.min(f.impact_ns_per_step);
            g.severity = g.severity.max(f.severity);
            let worse = f
                .impact_ns_per_step
                .total_cmp(&g.worst.impact_ns_per_step)
                .then(f.severity.cmp(&g.worst.severity))
                .is_gt();
            if worse {
                g.worst = f.clone();
            }
        }
    }

    /// One finding per group, about the folder `input` (its `trace`; `rank` unset): the
    /// worst rank's finding with the most severe severity of any rank, `confidence.ranks`
    /// of `of_ranks` (the traces of the folder read), and the spread in `across_ranks`.
    /// In order of first appearance; rank them with the rest
    /// ([`crate::all_findings`]).
    pub fn finish(self, input: &str) -> Vec<Finding> {
        let of_ranks = self.traces;
        self.groups
            .into_iter()
            .map(|g| {
                let mut f = g.worst;
                let spread = RankSpread {
                    seen_on: g.ranks.to_string(),
                    worst_rank: f.rank,
                    worst_trace: std::mem::replace(&mut f.trace, input.to_owned()),
                    least_impact_ns_per_step: g.least,
                    mean_impact_ns_per_step: g.impact_sum / g.findings as f64,
                };
                f.subject = grouped_subject(&f.subject);
                f.severity = g.severity;
                f.rank = None;
                f.confidence.ranks = g.ranks.len();
                f.confidence.of_ranks = of_ranks;
                f.across_ranks = Some(spread);
                f
            })
            .collect()
    }
}

/// The subject a finding is grouped by across ranks: its own, with a device's number
/// replaced by `*` (`GP001:device=GPU3` → `GP001:device=GPU*`), since each rank has its
/// own device; a CPU stays apart from the GPUs.
pub fn grouped_subject(subject: &str) -> String {
    match subject.split_once(":device=") {
        Some((code, device)) => {
            let kind = device.trim_end_matches(|c: char| c.is_ascii_digit());
            if kind.len() < device.len() {
                format!("{code}:device={kind}*")
            } else {
                subject.to_owned()
            }
        }
        None => subject.to_owned(),
    }
}

/// A set of ranks as sorted, disjoint, non-adjacent inclusive ranges: ranks that arrive in
/// order take one range.
#[derive(Debug, Default)]
struct RankSet {
    ranges: Vec<(i64, i64)>,
}

impl RankSet {
    /// Add `r`.
    fn insert(&mut self, r: i64) {
        // The first range that ends at or after r - 1 (one r can join or extend).
        let i = self
            .ranges
            .partition_point(|&(_, hi)| hi < r.saturating_sub(1));
        match self.ranges.get(i).copied() {
            Some((lo, hi)) if lo <= r && r <= hi => {}
            Some((lo, hi)) if hi.saturating_add(1) == r => {
                self.ranges[i].1 = r;
                // It may now touch the next range.
                if let Some(&(next_lo, next_hi)) = self.ranges.get(i + 1) {
                    if next_lo == r.saturating_add(1) {
                        self.ranges[i] = (lo, next_hi);
                        self.ranges.remove(i + 1);
                    }
                }
            }
            Some((lo, _)) if lo.saturating_sub(1) == r => self.ranges[i].0 = r,
            _ => self.ranges.insert(i, (r, r)),
        }
    }

    /// How many ranks.
    fn len(&self) -> usize {
        self.ranges
            .iter()
            .map(|&(lo, hi)| (hi.abs_diff(lo) as usize).saturating_add(1))
            .sum()
    }
}

impl std::fmt::Display for RankSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &(lo, hi)) in self.ranges.iter().enumerate() {
            if i == MAX_RANGES_SHOWN {
                return f.write_str(",…");
            }
            if i > 0 {
                f.write_str(",")?;
            }
            match lo == hi {
                true => write!(f, "{lo}")?,
                false => write!(f, "{lo}-{hi}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ranks: &[i64]) -> RankSet {
        let mut s = RankSet::default();
        for &r in ranks {
            s.insert(r);
        }
        s
    }

    #[test]
    fn ranks_in_any_order_make_the_same_ranges() {
        let s = set(&[3, 0, 1, 7, 2, 9, 8, 5, 3]);
        assert_eq!(s.to_string(), "0-3,5,7-9");
        assert_eq!(s.len(), 8);
        // 4 and 6 join everything into one range.
        let s = set(&[3, 0, 1, 7, 2, 9, 8, 5, 4, 6]);
        assert_eq!(s.to_string(), "0-9");
        assert_eq!(s.ranges.len(), 1);
    }

    #[test]
    fn many_ranges_are_cut() {
        let s = set(&(0..40).map(|r| 2 * r).collect::<Vec<_>>());
        assert_eq!(s.len(), 40);
        assert!(s.to_string().ends_with("22,…"), "{s}");
    }

    #[test]
    fn device_numbers_are_grouped_and_kinds_kept_apart() {
        assert_eq!(grouped_subject("GP001:device=GPU3"), "GP001:device=GPU*");
        assert_eq!(grouped_subject("ME002:device=CPU"), "ME002:device=CPU");
        assert_eq!(grouped_subject("GP003:trace"), "GP003:trace");
        assert_eq!(
            grouped_subject("TR002:direction=HtoD"),
            "TR002:direction=HtoD"
        );
    }
}
