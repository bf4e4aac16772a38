//! The corpus results: one record per entry and size, the derived ratios, the table per
//! entry and the targets (issue 15) judged on the worst entry.

use std::io::{self, Write};

use serde::Serialize;

use super::measure::Timing;
use super::sources::Entry;
use crate::table::write_grid;

/// What was measured on one grown trace.
#[derive(Clone, Debug, Serialize)]
pub struct SizeResult {
    /// The size asked for (`--size` or `--small-size`).
    pub size: String,
    /// Bytes of JSON (uncompressed).
    pub json_bytes: u64,
    /// Bytes on disk (the `.gz` for gzip entries).
    pub file_bytes: u64,
    /// `summary -j 1`.
    pub summary_j1: Timing,
    /// `summary -j 2`.
    pub summary_j2: Timing,
    /// `report -j 2`.
    pub report: Timing,
    /// The serde_json borrowed-struct parse (plain entries).
    pub serde: Option<Timing>,
    /// The single-stream inflate floor (gzip entries).
    pub inflate: Option<Timing>,
    /// The largest peak RSS of the `summary -j 2` runs, KiB.
    pub summary_rss_kib: u64,
}

/// The ratios the targets are about.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Ratios {
    /// `summary -j 1` / `summary -j 2` (medians): the speed-up of the second thread.
    pub j2_speedup: f64,
    /// serde_json / `summary -j 2` (medians).
    pub vs_serde: Option<f64>,
    /// `report` / `summary -j 2` (medians).
    pub report_over_summary: f64,
    /// Peak RSS of `summary -j 2` / JSON bytes.
    pub rss_over_json: f64,
    /// `summary -j 2` on the `.gz` / the inflate floor (medians).
    pub gz_over_inflate: Option<f64>,
}

impl SizeResult {
    /// The ratios of this measurement.
    pub fn ratios(&self) -> Ratios {
        let j2 = self.summary_j2.median;
        Ratios {
            j2_speedup: self.summary_j1.median / j2,
            vs_serde: self.serde.as_ref().map(|s| s.median / j2),
            report_over_summary: self.report.median / j2,
            rss_over_json: (self.summary_rss_kib * 1024) as f64 / self.json_bytes as f64,
            gz_over_inflate: self.inflate.as_ref().map(|i| j2 / i.median),
        }
    }

    /// `report`'s median seconds per GB of JSON.
    pub fn report_s_per_gb(&self) -> f64 {
        self.report.median / (self.json_bytes as f64 / 1e9)
    }
}

/// One entry's results: at `--size` and at `--small-size`.
#[derive(Clone, Debug, Serialize)]
pub struct EntryResult {
    /// The entry.
    #[serde(flatten)]
    pub entry: Entry,
    /// Events in the large trace (from its `summary`), when known.
    pub events: Option<u64>,
    /// At `--size`.
    pub large: SizeResult,
    /// At `--small-size`.
    pub small: SizeResult,
    /// `report`'s s/GB at `--size` over its s/GB at `--small-size` (1 = linear).
    pub report_linearity: f64,
}

impl EntryResult {
    /// Joins the two sizes' measurements.
    pub fn new(entry: Entry, events: Option<u64>, large: SizeResult, small: SizeResult) -> Self {
        let report_linearity = large.report_s_per_gb() / small.report_s_per_gb();
        EntryResult {
            entry,
            events,
            large,
            small,
            report_linearity,
        }
    }
}

/// One target, judged on the worst entry.
#[derive(Clone, Debug, Serialize)]
pub struct TargetResult {
    /// What is measured.
    pub target: &'static str,
    /// The bound, as written.
    pub bound: &'static str,
    /// The worst entry.
    pub worst: Option<String>,
    /// Its value.
    pub value: Option<f64>,
    /// Whether the worst entry meets the bound.
    pub pass: bool,
}

/// How a target reads an entry and which way is worse.
struct TargetSpec {
    target: &'static str,
    bound: &'static str,
    value: fn(&EntryResult) -> Option<f64>,
    /// The value passes when it is at least (true) or at most (false) `limit`.
    at_least: bool,
    limit: f64,
}

const TARGETS: &[TargetSpec] = &[
    TargetSpec {
        target: "summary: -j 2 speed-up over -j 1",
        bound: ">= 1.6x",
        value: |e| Some(e.large.ratios().j2_speedup),
        at_least: true,
        limit: 1.6,
    },
    TargetSpec {
        target: "summary -j 2 vs serde_json borrowed structs (plain)",
        bound: ">= 3x faster",
        value: |e| e.large.ratios().vs_serde,
        at_least: true,
        limit: 3.0,
    },
    TargetSpec {
        target: "report / summary -j 2",
        bound: "<= 1.3x",
        value: |e| Some(e.large.ratios().report_over_summary),
        at_least: false,
        limit: 1.3,
    },
    TargetSpec {
        target: "report s/GB at --size / at --small-size (linear)",
        bound: "<= 1.2x",
        value: |e| Some(e.report_linearity),
        at_least: false,
        limit: 1.2,
    },
    TargetSpec {
        target: "summary peak RSS / JSON size",
        bound: "<= 0.25",
        value: |e| Some(e.large.ratios().rss_over_json),
        at_least: false,
        limit: 0.25,
    },
    TargetSpec {
        target: "summary on .json.gz / single-stream inflate",
        bound: "<= 1.2x",
        value: |e| e.large.ratios().gz_over_inflate,
        at_least: false,
        limit: 1.2,
    },
];

/// Every target, judged on the worst of `results` (at `--size`).
pub fn judge(results: &[EntryResult]) -> Vec<TargetResult> {
    TARGETS
        .iter()
        .map(|t| {
            let worst = results
                .iter()
                .filter_map(|e| (t.value)(e).map(|v| (e.entry.name, v)))
                .reduce(|a, b| {
                    let b_worse = if t.at_least { b.1 < a.1 } else { b.1 > a.1 };
                    if b_worse {
                        b
                    } else {
                        a
                    }
                });
            let pass = worst.is_some_and(|(_, v)| {
                if t.at_least {
                    v >= t.limit
                } else {
                    v <= t.limit
                }
            });
            TargetResult {
                target: t.target,
                bound: t.bound,
                worst: worst.map(|(n, _)| n.to_string()),
                value: worst.map(|(_, v)| v),
                pass,
            }
        })
        .collect()
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

/// The table of one entry: a row per size.
pub fn print_entry(out: &mut impl Write, r: &EntryResult) -> io::Result<()> {
    let e = &r.entry;
    writeln!(
        out,
        "\n== {} ({}, {:?}{}): {}",
        e.name,
        e.seed,
        e.layout,
        if e.gzip { ", gzip" } else { "" },
        e.exercises
    )?;
    let header = [
        "size",
        "JSON bytes",
        "j1 s",
        "j2 s",
        "j2 speed-up",
        "serde s",
        "x serde",
        "report s",
        "report/summary",
        "RSS MiB",
        "RSS/size",
        "inflate s",
        "gz/inflate",
    ];
    let rows: Vec<Vec<String>> = [&r.small, &r.large]
        .into_iter()
        .map(|s| {
            let q = s.ratios();
            vec![
                s.size.clone(),
                s.json_bytes.to_string(),
                format!("{:.3}", s.summary_j1.median),
                format!("{:.3}", s.summary_j2.median),
                format!("{:.2}", q.j2_speedup),
                opt(s.serde.as_ref().map(|t| t.median), 3),
                opt(q.vs_serde, 2),
                format!("{:.3}", s.report.median),
                format!("{:.2}", q.report_over_summary),
                format!("{:.0}", s.summary_rss_kib as f64 / 1024.0),
                format!("{:.3}", q.rss_over_json),
                opt(s.inflate.as_ref().map(|t| t.median), 3),
                opt(q.gz_over_inflate, 2),
            ]
        })
        .collect();
    write_grid(out, &header, &rows)?;
    writeln!(
        out,
        "report s/GB: {:.3} at {}, {:.3} at {} ({:.2}x)",
        r.small.report_s_per_gb(),
        r.small.size,
        r.large.report_s_per_gb(),
        r.large.size,
        r.report_linearity
    )
}

/// The final table: each target with its worst entry.
pub fn print_targets(out: &mut impl Write, targets: &[TargetResult]) -> io::Result<()> {
    writeln!(out, "\n== targets (the worst entry at --size)")?;
    let rows: Vec<Vec<String>> = targets
        .iter()
        .map(|t| {
            vec![
                t.target.to_string(),
                t.bound.to_string(),
                t.worst.clone().unwrap_or_else(|| "-".into()),
                opt(t.value, 3),
                if t.pass { "PASS" } else { "FAIL" }.to_string(),
            ]
        })
        .collect();
    write_grid(out, &["target", "bound", "worst entry", "value", ""], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::sources::CORPUS;

    fn size(j1: f64, j2: f64, report: f64, bytes: u64, gz: bool) -> SizeResult {
        SizeResult {
            size: "x".into(),
            json_bytes: bytes,
            file_bytes: bytes,
            summary_j1: Timing::new(vec![j1]),
            summary_j2: Timing::new(vec![j2]),
            report: Timing::new(vec![report]),
            serde: (!gz).then(|| Timing::new(vec![3.5 * j2])),
            inflate: gz.then(|| Timing::new(vec![j2 / 1.1])),
            summary_rss_kib: bytes / 1024 / 5,
        }
    }

    #[test]
    fn targets_are_judged_on_the_worst_entry() {
        let fast = EntryResult::new(
            CORPUS[0],
            None,
            size(2.0, 1.0, 1.2, 1_000_000_000, false),
            size(0.2, 0.1, 0.06, 50_000_000, false),
        );
        let slow = EntryResult::new(
            CORPUS[2],
            None,
            size(1.5, 1.0, 1.5, 1_000_000_000, true),
            size(0.2, 0.1, 0.075, 50_000_000, true),
        );
        let t = judge(&[fast, slow]);
        let by = |name: &str| t.iter().find(|t| t.target.starts_with(name)).unwrap();
        let speedup = by("summary: -j 2");
        assert_eq!(speedup.worst.as_deref(), Some("a100-gz"));
        assert!(!speedup.pass);
        let report = by("report / summary");
        assert_eq!(report.worst.as_deref(), Some("a100-gz"));
        assert_eq!(report.value, Some(1.5));
        assert!(!report.pass);
        // Only the plain entry has a serde baseline, only the gzip one an inflate floor.
        assert_eq!(by("summary -j 2 vs serde").worst.as_deref(), Some("a100"));
        assert!(by("summary -j 2 vs serde").pass);
        assert_eq!(by("summary on .json.gz").worst.as_deref(), Some("a100-gz"));
        assert!(by("summary on .json.gz").pass);
        // 1.2 s/GB at 1 GB against 1.2 s/GB at 50 MB: linear.
        assert!(by("report s/GB").pass);
        assert!(by("summary peak RSS").pass);
    }
}
