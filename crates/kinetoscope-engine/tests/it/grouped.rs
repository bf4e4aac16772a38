//! A rank folder's job-wide `findings`: each per-trace problem once, grouped across the
//! ranks it is on, checked against the ranks' own lists on PARAM's real 8-rank DLRM job
//! and the corpus's Gloo straggler run (whose cross-rank finding joins the list).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kinetoscope_advisor::{rank_findings, Config, Finding, Severity, SeverityCounts};
use kinetoscope_engine::{Engine, ReportDocument, Source};

use crate::common::{corpus, lenient};

/// What a group should be, from the ranks' own findings.
#[derive(Default)]
struct Expected {
    ranks: BTreeSet<i64>,
    most: f64,
    worst_rank: Option<i64>,
    least: f64,
    sum: f64,
    n: usize,
    severity: Option<Severity>,
}

/// A subject with a device's number written `*`.
fn group_of(subject: &str) -> String {
    match subject.split_once(":device=") {
        Some((code, dev)) if dev.ends_with(|c: char| c.is_ascii_digit()) => {
            format!(
                "{code}:device={}*",
                dev.trim_end_matches(|c: char| c.is_ascii_digit())
            )
        }
        _ => subject.to_owned(),
    }
}

/// `0-3,5` from a set of ranks.
fn ranges(ranks: &BTreeSet<i64>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut it = ranks.iter().copied().peekable();
    while let Some(lo) = it.next() {
        let mut hi = lo;
        while it.peek() == Some(&(hi + 1)) {
            hi = it.next().unwrap();
        }
        out.push(if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        });
    }
    out.join(",")
}

fn check_grouped(doc: &ReportDocument) {
    let mut want: BTreeMap<String, Expected> = BTreeMap::new();
    for (i, t) in doc.traces.iter().enumerate() {
        let rank = t.rank.unwrap_or(i as i64);
        for f in &t.findings {
            let e = want.entry(group_of(&f.subject)).or_insert(Expected {
                least: f64::INFINITY,
                most: f64::NEG_INFINITY,
                ..Expected::default()
            });
            e.ranks.insert(rank);
            if f.impact_ns_per_step > e.most {
                e.most = f.impact_ns_per_step;
                e.worst_rank = f.rank;
            }
            e.least = e.least.min(f.impact_ns_per_step);
            e.sum += f.impact_ns_per_step;
            e.n += 1;
            e.severity = e.severity.max(Some(f.severity));
        }
    }
    let grouped: Vec<&Finding> = doc
        .findings
        .iter()
        .filter(|f| f.across_ranks.is_some())
        .collect();
    let subjects: BTreeSet<&str> = grouped.iter().map(|f| f.subject.as_str()).collect();
    assert_eq!(subjects.len(), grouped.len(), "one finding per group");
    assert_eq!(
        subjects,
        want.keys().map(String::as_str).collect::<BTreeSet<_>>()
    );
    for f in &grouped {
        let e = &want[&f.subject];
        let a = f.across_ranks.as_ref().unwrap();
        assert_eq!(f.confidence.ranks, e.ranks.len(), "{}", f.subject);
        assert_eq!(f.confidence.of_ranks, doc.traces.len());
        assert_eq!(f.impact_ns_per_step, e.most, "{}", f.subject);
        assert_eq!(Some(f.severity), e.severity, "{}", f.subject);
        assert_eq!(a.worst_rank, e.worst_rank, "{}", f.subject);
        assert_eq!(a.least_impact_ns_per_step, e.least);
        assert!((a.mean_impact_ns_per_step - e.sum / e.n as f64).abs() < 1e-6);
        assert_eq!(a.seen_on, ranges(&e.ranks));
        assert_eq!((f.trace.as_str(), f.rank), (doc.input.as_str(), None));
        let shown = doc.traces.iter().find(|t| t.path == a.worst_trace).unwrap();
        assert_eq!(shown.rank, e.worst_rank);
    }
    // The cross-rank findings are in the list too, and the list is ranked.
    for c in &doc.cross_rank_findings {
        assert!(doc.findings.contains(c), "{}", c.subject);
    }
    assert_eq!(
        doc.findings.len(),
        grouped.len() + doc.cross_rank_findings.len()
    );
    let mut ranked = doc.findings.clone();
    rank_findings(&mut ranked);
    assert_eq!(ranked, doc.findings);
    assert_eq!(doc.counts, SeverityCounts::of(&doc.findings));
}

#[test]
fn param_job_lists_each_problem_once_over_its_ranks() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto");
    let doc = Engine::new(lenient(2))
        .report(&Source::Path(src), &Config::default())
        .unwrap();
    assert_eq!(doc.traces.len(), 8);
    let per_rank: usize = doc.traces.iter().map(|t| t.findings.len()).sum();
    assert!(per_rank > 4 * doc.findings.len(), "{per_rank} per rank");
    // The GPU subjects of eight different GPUs make one group.
    assert!(doc
        .findings
        .iter()
        .any(|f| f.subject == "GP001:device=GPU*" && f.confidence.ranks == 8));
    check_grouped(&doc);
}

#[test]
fn straggler_run_keeps_its_cross_rank_finding_among_the_groups() {
    let doc = Engine::new(lenient(2))
        .report(
            &Source::Path(corpus().join("straggler")),
            &Config::default(),
        )
        .unwrap();
    assert!(!doc.cross_rank_findings.is_empty());
    check_grouped(&doc);
}

#[test]
fn one_file_is_not_grouped() {
    let doc = Engine::new(lenient(2))
        .report(
            &Source::Path(crate::common::fixture("inference_rank_1.json.gz")),
            &Config::default(),
        )
        .unwrap();
    assert!(!doc.findings.is_empty());
    assert_eq!(doc.findings, doc.traces[0].findings);
}
