//! Findings of two runs matched by their stable subject key (the rule code and what the
//! finding is about), with the rank for rank folders and the phase for run folders.

use std::collections::BTreeMap;

use kinetoscope_advisor::{rank_findings, Finding};
use kinetoscope_analysis::diff::Change;

use super::document::{FindingChange, FindingDirection, FindingsSection};

/// With the same severity, an impact change above this share of the base impact makes
/// a finding worse or better.
pub const IMPACT_CHANGE_SHARE: f64 = 0.10;

/// The key a finding is matched by: subject, rank and the trace's place in its input
/// (`phase`: a run folder's phase name, else empty).
type Key = (String, Option<i64>, String);

/// Match the findings of both runs; `place` names a finding's trace within its input.
pub fn compare(
    base: &[Finding],
    new: &[Finding],
    place: impl Fn(&Finding) -> String,
) -> FindingsSection {
    let key = |f: &Finding| -> Key { (f.subject.clone(), f.rank, place(f)) };
    let b: BTreeMap<Key, &Finding> = base.iter().map(|f| (key(f), f)).collect();
    let n: BTreeMap<Key, &Finding> = new.iter().map(|f| (key(f), f)).collect();
    let mut out = FindingsSection::default();
    for (k, f) in &n {
        match b.get(k) {
            None => out.new.push((*f).clone()),
            Some(old) => {
                if let Some(direction) = direction(old, f) {
                    out.changed.push(FindingChange {
                        subject: f.subject.clone(),
                        rank: f.rank,
                        title: f.title.clone(),
                        direction,
                        base_severity: old.severity,
                        new_severity: f.severity,
                        impact_ns_per_step: Change::of(
                            Some(old.impact_ns_per_step),
                            Some(f.impact_ns_per_step),
                        ),
                    });
                }
            }
        }
    }
    for (k, f) in &b {
        if !n.contains_key(k) {
            out.resolved.push((*f).clone());
        }
    }
    rank_findings(&mut out.new);
    rank_findings(&mut out.resolved);
    out.changed.sort_by(|x, y| {
        let d = |c: &FindingChange| c.impact_ns_per_step.delta.unwrap_or(0.0).abs();
        y.new_severity
            .max(y.base_severity)
            .cmp(&x.new_severity.max(x.base_severity))
            .then(d(y).total_cmp(&d(x)))
            .then_with(|| x.subject.cmp(&y.subject))
    });
    out
}

/// Worse or better, or `None` when about the same.
fn direction(old: &Finding, new: &Finding) -> Option<FindingDirection> {
    use std::cmp::Ordering::*;
    match new.severity.cmp(&old.severity) {
        Greater => Some(FindingDirection::Worse),
        Less => Some(FindingDirection::Better),
        Equal => {
            let (a, b) = (old.impact_ns_per_step, new.impact_ns_per_step);
            let limit = IMPACT_CHANGE_SHARE * a.abs();
            if a > 0.0 && b - a > limit {
                Some(FindingDirection::Worse)
            } else if a > 0.0 && a - b > limit {
                Some(FindingDirection::Better)
            } else {
                None
            }
        }
    }
}
