//! kinetoscope's GPU-time analyses in HTA-compatible mode against HTA 0.5.0's outputs on
//! HTA's `trace_filter` traces (2 ranks; fixtures and provenance in
//! `tests/fixtures/hta_trace_filter/SOURCE.md`): temporal breakdown, idle-time breakdown
//! with interval statistics, kernel-type and per-kernel breakdown, comm/comp overlap and
//! CUDA kernel launch statistics. The traces have integer-µs timestamps, so every µs
//! column must match exactly; rounded columns are compared after HTA's rounding.
//! The last tests pin kinetoscope's default (no step filter) on the same traces.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use kinetoscope_analysis::gpu_time::classes::{class_breakdown, ClassBreakdown};
use kinetoscope_analysis::gpu_time::idle::{idle_breakdown, IdleBreakdown, DEFAULT_KERNEL_WAIT_NS};
use kinetoscope_analysis::gpu_time::launches::{launch_stats, LaunchOptions, LaunchStats};
use kinetoscope_analysis::gpu_time::temporal::{temporal, Temporal};
use kinetoscope_analysis::gpu_time::{filter_all, step_names, Compat};
use kinetoscope_trace::Trace;

use crate::common::{fixtures, rank_fixtures, read};

/// An HTA 0.5.0 output on these traces (`fixtures/hta_trace_filter/<file>`).
fn reference(file: &str) -> PathBuf {
    fixtures().join("hta_trace_filter").join(file)
}

/// The two ranks, read.
fn ranks() -> Vec<Trace> {
    rank_fixtures().iter().map(|p| read(p)).collect()
}

/// HTA's cross-rank decision on these traces: steps 551 and 552 → filter.
fn hta_filter(traces: &[Trace]) -> bool {
    let names: Vec<Vec<String>> = traces.iter().map(step_names).collect();
    filter_all(names.iter())
}

/// Reference CSV rows as header → value maps (RFC 4180, names may hold commas).
fn csv_rows(file: &str) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(reference(file)).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} = {:?}", row[key]))
}

fn opt_num(row: &HashMap<String, String>, key: &str) -> Option<f64> {
    let v = &row[key];
    (!v.is_empty()).then(|| v.parse().unwrap())
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A 0–1 share as HTA's percentage, rounded to 2 decimals.
fn pct2(share: f64) -> f64 {
    (share * 10000.0).round() / 100.0
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: kinetoscope {a} vs HTA {b}");
}

fn hta<T>(f: impl Fn(&Trace, bool) -> T) -> Vec<T> {
    let traces = ranks();
    let filter = hta_filter(&traces);
    assert!(filter, "two distinct steps over the ranks: HTA filters");
    traces.iter().map(|t| f(t, filter)).collect()
}

#[test]
fn temporal_breakdown_matches_hta() {
    let ours: Vec<Temporal> = hta(|t, f| temporal(t, Compat::Hta, f));
    let rows = csv_rows("temporal_breakdown.csv");
    assert_eq!(rows.len(), 2);
    for (t, row) in ours.iter().zip(&rows) {
        assert_eq!(t.rank, Some(num(row, "rank") as i64));
        assert_eq!(us(t.idle_ns), num(row, "idle_time(us)"));
        assert_eq!(us(t.compute_ns), num(row, "compute_time(us)"));
        assert_eq!(us(t.non_compute_ns), num(row, "non_compute_time(us)"));
        assert_eq!(us(t.total_ns), num(row, "kernel_time(us)"));
        assert_eq!(pct2(t.idle_share), num(row, "idle_time_pctg"));
        assert_eq!(pct2(t.compute_share), num(row, "compute_time_pctg"));
        assert_eq!(pct2(t.non_compute_share), num(row, "non_compute_time_pctg"));
        assert!(t.window.step_filter);
        assert_eq!(t.window.cut_step.as_deref(), Some("ProfilerStep#552"));
    }
}

#[test]
fn idle_breakdown_matches_hta() {
    let ours: Vec<IdleBreakdown> =
        hta(|t, f| idle_breakdown(t, Compat::Hta, f, DEFAULT_KERNEL_WAIT_NS));
    // Rows in HTA's order: streams by first appearance, categories in fixed order.
    let mut got = Vec::new();
    for b in &ours {
        for s in &b.streams {
            for c in &s.categories {
                got.push((
                    b.rank.unwrap(),
                    s.stream,
                    c.category.as_str().to_owned(),
                    us(c.idle_ns),
                    c.ratio,
                ));
            }
        }
    }
    let want: Vec<_> = csv_rows("idle_time_breakdown.csv")
        .iter()
        .map(|r| {
            (
                num(r, "rank") as i64,
                num(r, "stream") as i64,
                r["idle_category"].clone(),
                num(r, "idle_time"),
                opt_num(r, "idle_time_ratio"),
            )
        })
        .collect();
    assert_eq!(got, want);

    // Interval statistics: pandas describe(), rounded to 2 decimals.
    let stats = csv_rows("idle_time_interval_stats.csv");
    assert_eq!(stats.len(), want.len());
    for row in &stats {
        let (rank, stream) = (num(row, "rank") as i64, num(row, "stream") as i64);
        let b = ours.iter().find(|b| b.rank == Some(rank)).unwrap();
        let s = b.streams.iter().find(|s| s.stream == stream).unwrap();
        let c = s
            .categories
            .iter()
            .find(|c| c.category.as_str() == row["idle_category"])
            .unwrap();
        let what = format!("rank {rank} stream {stream} {}", row["idle_category"]);
        match &c.stats {
            None => assert_eq!(num(row, "count"), 0.0, "{what}"),
            Some(st) => {
                assert_eq!(st.count as f64, num(row, "count"), "{what}");
                close(round2(st.mean_ns / 1e3), num(row, "mean"), 1e-9, &what);
                match opt_num(row, "std") {
                    Some(v) => close(round2(st.std_ns.unwrap() / 1e3), v, 1e-9, &what),
                    None => assert!(st.std_ns.is_none(), "{what}"),
                }
                close(us(st.min_ns), num(row, "min"), 1e-9, &what);
                close(round2(st.p25_ns / 1e3), num(row, "25%"), 1e-9, &what);
                close(round2(st.p50_ns / 1e3), num(row, "50%"), 1e-9, &what);
                close(round2(st.p75_ns / 1e3), num(row, "75%"), 1e-9, &what);
                close(us(st.max_ns), num(row, "max"), 1e-9, &what);
            }
        }
    }
}

#[test]
fn kernel_type_breakdown_matches_hta() {
    let ours: Vec<ClassBreakdown> = hta(|t, f| class_breakdown(t, Compat::Hta, f, 0));
    let mut sums: HashMap<String, i64> = HashMap::new();
    for b in &ours {
        for o in &b.overlaps {
            *sums.entry(o.label.clone()).or_default() += o.time_ns;
        }
    }
    let rows = csv_rows("gpu_kernel_type_breakdown.csv");
    let total: f64 = rows.iter().map(|r| num(r, "sum")).sum();
    let mut want: HashMap<String, i64> = HashMap::new();
    for r in &rows {
        if num(r, "sum") > 0.0 {
            want.insert(r["kernel_type"].clone(), num(r, "sum") as i64 * 1000);
            // Percentage of the total, 1 decimal.
            let ours_pct =
                (1000.0 * sums[&r["kernel_type"]] as f64 / 1000.0 / total).round() / 10.0;
            assert_eq!(ours_pct, num(r, "percentage"), "{}", r["kernel_type"]);
        }
    }
    assert_eq!(sums, want);

    let overlap = csv_rows("comm_comp_overlap.csv");
    for (b, r) in ours.iter().zip(&overlap) {
        assert_eq!(
            b.comm_comp_overlap_share.map(pct2),
            Some(num(r, "comp_comm_overlap_pctg"))
        );
    }
}

#[test]
fn per_kernel_breakdown_matches_hta() {
    let ours: Vec<ClassBreakdown> = hta(|t, f| class_breakdown(t, Compat::Hta, f, 0));
    let rows = csv_rows("gpu_kernel_breakdown_full.csv");
    let mut seen = 0;
    for b in &ours {
        let rank = b.rank.unwrap();
        let mine: Vec<_> = b
            .classes
            .iter()
            .filter(|c| c.class.label() != "OTHER")
            .flat_map(|c| c.top.iter().map(move |k| (c.class.label(), k)))
            .collect();
        let theirs: Vec<_> = rows
            .iter()
            .filter(|r| num(r, "rank") as i64 == rank)
            .collect();
        assert_eq!(mine.len(), theirs.len(), "rank {rank}: kernel names");
        for r in theirs {
            let (class, k) = mine
                .iter()
                .find(|(_, k)| k.name == r["name"])
                .unwrap_or_else(|| panic!("rank {rank}: no row for {}", r["name"]));
            let what = format!("rank {rank} {}", k.name);
            assert_eq!(*class, r["kernel_type"], "{what}");
            assert_eq!(us(k.sum_ns), num(r, "sum (us)"), "{what}");
            assert_eq!(us(k.max_ns), num(r, "max (us)"), "{what}");
            assert_eq!(us(k.min_ns), num(r, "min (us)"), "{what}");
            close(k.mean_ns / 1e3, num(r, "mean (us)"), 1e-6, &what);
            close(k.std_ns / 1e3, num(r, "stddev"), 1e-6, &what);
            seen += 1;
        }
    }
    assert_eq!(seen, rows.len());
}

#[test]
fn launch_stats_match_hta() {
    let opts = LaunchOptions {
        all: true,
        ..LaunchOptions::default()
    };
    let ours: Vec<LaunchStats> = hta(|t, f| launch_stats(t, Compat::Hta, f, opts));
    let mut got: HashSet<(i64, i64, i64, i64, i64)> = HashSet::new();
    for s in &ours {
        assert_eq!(s.count as usize, s.launches.len());
        for l in &s.launches {
            got.insert((
                s.rank.unwrap(),
                l.correlation,
                l.cpu_dur_ns,
                l.gpu_dur_ns,
                l.delay_ns,
            ));
        }
    }
    let want: HashSet<(i64, i64, i64, i64, i64)> = csv_rows("cuda_kernel_launch_stats.csv")
        .iter()
        .map(|r| {
            let ns = |k: &str| (num(r, k) * 1000.0).round() as i64;
            (
                num(r, "rank") as i64,
                num(r, "correlation") as i64,
                ns("cpu_duration"),
                ns("gpu_duration"),
                ns("launch_delay"),
            )
        })
        .collect();
    assert_eq!(want.len(), 1179);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    // The lists follow HTA's plot definitions.
    for s in &ours {
        let short = s
            .launches
            .iter()
            .filter(|l| l.cpu_dur_ns <= 50_000 && l.gpu_dur_ns < l.cpu_dur_ns)
            .count();
        assert_eq!(s.short_kernels as usize, short);
        assert_eq!(
            s.delay_outliers as usize,
            s.launches.iter().filter(|l| l.delay_ns > 100_000).count()
        );
        assert_eq!(s.steps.iter().map(|st| st.launches).sum::<u64>(), s.count);
    }
}

/// kinetoscope's default on the same traces: nothing is dropped, so the GPU span reaches
/// into the last step and every launch is counted (docs/hta-differences.md §1).
#[test]
fn default_keeps_the_last_step() {
    let traces = ranks();
    for t in &traces {
        let hta = temporal(t, Compat::Hta, true);
        let ks = temporal(t, Compat::Kinetoscope, false);
        assert!(!ks.window.step_filter);
        assert_eq!(ks.window.gpu_rows_dropped, 0);
        assert_eq!(ks.window.gpu_rows_total, hta.window.gpu_rows_total);
        assert!(
            hta.window.gpu_rows_dropped * 3 > hta.window.gpu_rows_total,
            "about half dropped"
        );
        assert!(ks.total_ns > 2 * hta.total_ns - 100_000_000);
        assert_eq!(ks.idle_ns + ks.compute_ns + ks.non_compute_ns, ks.total_ns);
        let l_hta = launch_stats(t, Compat::Hta, true, LaunchOptions::default());
        let l_ks = launch_stats(t, Compat::Kinetoscope, false, LaunchOptions::default());
        assert!(l_ks.count > l_hta.count);
        // Default mode: the launches of the last step are in the per-step summary.
        assert!(l_ks
            .steps
            .iter()
            .any(|s| s.step == "ProfilerStep#552" && s.launches > 0));
        assert!(l_hta
            .steps
            .iter()
            .all(|s| s.step != "ProfilerStep#552" || s.launches == 0));
    }
    // Exact values of the default, pinned.
    let t0 = temporal(&traces[0], Compat::Kinetoscope, false);
    assert_eq!(
        (
            us(t0.idle_ns),
            us(t0.compute_ns),
            us(t0.non_compute_ns),
            us(t0.total_ns)
        ),
        (675191.0, 210320.0, 337336.0, 1222847.0)
    );
}
