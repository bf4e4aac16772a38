//! kinetoscope's GPU-time analyses in HTA-compatible mode against HTA 0.5.0's outputs on
//! real GPU traces: H100, B200, MI300X, MI210, vLLM and SGLang graph replay, torch.compile
//! (TraceLens), an 8-rank V100 NCCL job and an RTX 2080 Ti trace (PARAM), and HTA's own
//! `critical_path/alexnet`. References: `tests/fixtures/hta_reference/<trace>/` (made by
//! `scripts/hta_reference/make_reference.py`, described in its `README.md`); traces:
//! `tests/fixtures/{tracelens,param,hta_traces}/`, each with its licence and `SOURCE.md`.
//!
//! One test per trace compares every output — temporal breakdown, idle time (with interval
//! statistics), kernel-type table, per-kernel table, comm/comp overlap (through
//! `gpu_time::classes` and through `comm`), launch statistics — and lists every
//! difference. µs columns must be equal; percentages, ratios and interval statistics are
//! compared after HTA's rounding (2 decimals, kernel-type shares 1); per-kernel mean and
//! standard deviation, which HTA computes in floating point without rounding, within a
//! relative 1e-9. Where kinetoscope differs on purpose (docs/hta-differences.md), the trace's
//! test names the metrics that differ, and a second test rebuilds HTA's numbers from
//! kinetoscope's plus the one thing it does differently — so the difference is exactly
//! that, and both behaviours are pinned.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::comm::{comm, resolve_hta, CommOptions, TraceComm};
use kinetoscope_analysis::gpu_time::classes::{
    class_breakdown, classify, ClassBreakdown, ClassRules, KernelClass,
};
use kinetoscope_analysis::gpu_time::idle::{
    idle_breakdown, stream_gaps, GapStats, IdleBreakdown, IdleCategory, DEFAULT_KERNEL_WAIT_NS,
};
use kinetoscope_analysis::gpu_time::launches::{launch_stats, LaunchOptions};
use kinetoscope_analysis::gpu_time::temporal::temporal;
use kinetoscope_analysis::gpu_time::{filter_all, select, step_names, union_sorted, Compat};
use kinetoscope_trace::{CategoryKind, Phase, Trace};

use crate::common::{fixtures, read, shared_file};

// ---------------------------------------------------------------------------------------
// Inputs and reference files

/// The traces of a reference folder, in rank order, and where they came from in the
/// shared reference folder (`make_reference.py` ran on those).
fn inputs(name: &str) -> Vec<(PathBuf, String)> {
    let f = fixtures();
    let tl = |file: &str| {
        vec![(
            f.join("tracelens").join(file),
            format!("external/tracelens/{file}"),
        )]
    };
    match name {
        "tracelens_b200_eager" => tl("b200__eager_trace.json.gz"),
        "tracelens_h100_qwen" => tl("h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
        "tracelens_mi300_qwen" => tl("mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
        "tracelens_mi300_resnet_act_checkpoint" => tl("mi300__resnet_act_checkpoint.json.gz"),
        "tracelens_mi210_gpu_only" => tl("mi210__gpu_only_trace__gpu_only_trace.json.gz"),
        "tracelens_torch_compile_triton" => tl("torch_compile_triton__trace.json.gz"),
        "tracelens_vllm_decode_graph" => tl("inference__vllm_decode_full__graph_execution.json.gz"),
        "tracelens_sglang_decode" => tl("inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz"),
        "param_dlrm_8rank" => {
            let dir = f.join("param/dlrm_kineto");
            let mut v: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| {
                    let p = e.unwrap().path();
                    // Gzipped here; HTA ran on the plain files.
                    let plain = p.file_name().unwrap().to_str().unwrap();
                    let plain = plain.strip_suffix(".gz").unwrap().to_owned();
                    (p, format!("external/param/dlrm_kineto/{plain}"))
                })
                .collect();
            v.sort();
            assert_eq!(v.len(), 8, "{}", dir.display());
            v
        }
        "param_linear_2080ti" => vec![(
            f.join("param/linear_kineto.json.gz"),
            "external/param/linear_kineto.json.gz".into(),
        )],
        "hta_critical_path_alexnet" => {
            let file = "benchmark_result_2869224_1695835535_trace.json.gz";
            vec![(
                f.join("hta_traces").join(file),
                format!("external/hta/critical_path/alexnet/{file}"),
            )]
        }
        _ => panic!("no inputs for {name}"),
    }
}

/// Every reference folder.
const ALL: [&str; 11] = [
    "tracelens_b200_eager",
    "tracelens_h100_qwen",
    "tracelens_mi300_qwen",
    "tracelens_mi300_resnet_act_checkpoint",
    "tracelens_mi210_gpu_only",
    "tracelens_torch_compile_triton",
    "tracelens_vllm_decode_graph",
    "tracelens_sglang_decode",
    "param_dlrm_8rank",
    "param_linear_2080ti",
    "hta_critical_path_alexnet",
];

fn reference(name: &str, file: &str) -> PathBuf {
    fixtures().join("hta_reference").join(name).join(file)
}

type Row = HashMap<String, String>;

/// Reference CSV rows as header → value maps; `None` when HTA wrote no such file (the
/// call failed: `meta.json` says why).
fn csv_rows(path: &Path) -> Option<Vec<Row>> {
    if !path.exists() {
        return None;
    }
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    Some(
        r.records()
            .map(|rec| {
                let rec = rec.unwrap();
                headers
                    .iter()
                    .zip(rec.iter())
                    .map(|(h, v)| (h.to_owned(), v.to_owned()))
                    .collect()
            })
            .collect(),
    )
}

fn meta(name: &str) -> serde_json::Value {
    let p = reference(name, "meta.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn num(row: &Row, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key} = {:?}", row[key]))
}

fn opt_num(row: &Row, key: &str) -> Option<f64> {
    let v = &row[key];
    (!v.is_empty()).then(|| v.parse().unwrap())
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// A 0–1 share as HTA's percentage, rounded to 2 decimals.
fn pct2(share: f64) -> f64 {
    (share * 10000.0).round() / 100.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One trace set as HTA loads it: the traces, HTA's rank of each (`distributedInfo`, else
/// 0, as its rank regex finds), and the cross-rank step-filter decision.
struct Loaded {
    traces: Vec<Trace>,
    ranks: Vec<i64>,
    filter: bool,
}

fn load(name: &str) -> Loaded {
    let traces: Vec<Trace> = inputs(name).iter().map(|(p, _)| read(p)).collect();
    let ranks = traces
        .iter()
        .map(|t| t.meta.rank.map_or(0, |r| r.value))
        .collect();
    let names: Vec<Vec<String>> = traces.iter().map(step_names).collect();
    let filter = filter_all(names.iter());
    Loaded {
        traces,
        ranks,
        filter,
    }
}

// ---------------------------------------------------------------------------------------
// The comparison: every difference, per metric

const TEMPORAL: &str = "temporal";
const IDLE: &str = "idle";
const KERNEL_TYPES: &str = "kernel types";
const KERNELS: &str = "kernels";
const OVERLAP: &str = "overlap";
const LAUNCHES: &str = "launches";

/// Differences between kinetoscope (`--hta-compat`) and HTA on one trace set, per metric
/// (an empty list: equal).
fn compare(name: &str, l: &Loaded) -> Vec<(&'static str, Vec<String>)> {
    vec![
        (TEMPORAL, temporal_diffs(name, l)),
        (IDLE, idle_diffs(name, &kinetoscope_idle(l))),
        (KERNEL_TYPES, kernel_type_diffs(name, l)),
        (KERNELS, kernel_diffs(name, l)),
        (OVERLAP, overlap_diffs(name, l)),
        (LAUNCHES, launch_diffs(name, l)),
    ]
}

/// HTA's temporal breakdown: `temporal_breakdown.csv`, or, where HTA refused its own
/// numbers on an internal assert, what it computed (`temporal_breakdown_asserts_off.csv`).
fn temporal_reference(name: &str) -> Vec<Row> {
    csv_rows(&reference(name, "temporal_breakdown.csv"))
        .or_else(|| csv_rows(&reference(name, "temporal_breakdown_asserts_off.csv")))
        .unwrap_or_else(|| panic!("{name}: no temporal reference"))
}

/// kinetoscope's temporal numbers as HTA's columns.
fn temporal_columns(
    idle: i64,
    compute: i64,
    non_compute: i64,
    total: i64,
) -> [(&'static str, f64); 7] {
    let share = |x: i64| {
        if total == 0 {
            0.0
        } else {
            x as f64 / total as f64
        }
    };
    [
        ("idle_time(us)", us(idle)),
        ("compute_time(us)", us(compute)),
        ("non_compute_time(us)", us(non_compute)),
        ("kernel_time(us)", us(total)),
        ("idle_time_pctg", pct2(share(idle))),
        ("compute_time_pctg", pct2(share(compute))),
        ("non_compute_time_pctg", pct2(share(non_compute))),
    ]
}

fn temporal_row_diffs(rank: i64, cols: &[(&str, f64)], row: &Row) -> Vec<String> {
    cols.iter()
        .filter(|(k, v)| *v != num(row, k))
        .map(|(k, v)| format!("rank {rank} {k}: kinetoscope {v}, HTA {}", num(row, k)))
        .collect()
}

fn rank_row(rows: &[Row], rank: i64) -> &Row {
    rows.iter()
        .find(|r| num(r, "rank") as i64 == rank)
        .unwrap_or_else(|| panic!("no HTA row for rank {rank}"))
}

fn temporal_diffs(name: &str, l: &Loaded) -> Vec<String> {
    let rows = temporal_reference(name);
    assert_eq!(rows.len(), l.traces.len(), "{name}: ranks");
    let mut d = Vec::new();
    for (t, &rank) in l.traces.iter().zip(&l.ranks) {
        let x = temporal(t, Compat::Hta, l.filter);
        let cols = temporal_columns(x.idle_ns, x.compute_ns, x.non_compute_ns, x.total_ns);
        d.extend(temporal_row_diffs(rank, &cols, rank_row(&rows, rank)));
    }
    d
}

/// One row of HTA's idle-time tables: rank, stream, category, Σ gaps (ns), share of the
/// stream's idle time (2 decimals), gap statistics.
#[derive(Clone, Debug, PartialEq)]
struct IdleRow {
    rank: i64,
    stream: i64,
    category: &'static str,
    idle_ns: i64,
    ratio: Option<f64>,
    stats: Option<GapStats>,
}

fn kinetoscope_idle(l: &Loaded) -> Vec<IdleRow> {
    let mut out = Vec::new();
    for (t, &rank) in l.traces.iter().zip(&l.ranks) {
        let b: IdleBreakdown = idle_breakdown(t, Compat::Hta, l.filter, DEFAULT_KERNEL_WAIT_NS);
        for s in &b.streams {
            for c in &s.categories {
                out.push(IdleRow {
                    rank,
                    stream: s.stream,
                    category: c.category.as_str(),
                    idle_ns: c.idle_ns,
                    ratio: c.ratio,
                    stats: c.stats.clone(),
                });
            }
        }
    }
    out
}

/// Differences between idle rows and HTA's two idle tables (rows in HTA's order).
fn idle_diffs(name: &str, got: &[IdleRow]) -> Vec<String> {
    let rows = csv_rows(&reference(name, "idle_time_breakdown.csv")).unwrap();
    let stats = csv_rows(&reference(name, "idle_time_interval_stats.csv")).unwrap();
    let mut d = Vec::new();
    if rows.len() != got.len() {
        d.push(format!(
            "rows: kinetoscope {}, HTA {}",
            got.len(),
            rows.len()
        ));
    }
    for (g, r) in got.iter().zip(&rows) {
        let want = (
            num(r, "rank") as i64,
            num(r, "stream") as i64,
            r["idle_category"].as_str(),
            num(r, "idle_time"),
            opt_num(r, "idle_time_ratio"),
        );
        let have = (g.rank, g.stream, g.category, us(g.idle_ns), g.ratio);
        if have != want {
            d.push(format!("kinetoscope {have:?}, HTA {want:?}"));
        }
    }
    // Interval statistics: pandas describe(), rounded to 2 decimals.
    for r in &stats {
        let key = (
            num(r, "rank") as i64,
            num(r, "stream") as i64,
            r["idle_category"].as_str(),
        );
        let Some(g) = got.iter().find(|g| (g.rank, g.stream, g.category) == key) else {
            d.push(format!("stats {key:?}: no kinetoscope row"));
            continue;
        };
        let ours: [(&str, Option<f64>); 8] = match &g.stats {
            None => [
                ("count", Some(0.0)),
                ("mean", None),
                ("std", None),
                ("min", None),
                ("25%", None),
                ("50%", None),
                ("75%", None),
                ("max", None),
            ],
            Some(st) => [
                ("count", Some(st.count as f64)),
                ("mean", Some(round2(st.mean_ns / 1e3))),
                ("std", st.std_ns.map(|v| round2(v / 1e3))),
                ("min", Some(us(st.min_ns))),
                ("25%", Some(round2(st.p25_ns / 1e3))),
                ("50%", Some(round2(st.p50_ns / 1e3))),
                ("75%", Some(round2(st.p75_ns / 1e3))),
                ("max", Some(us(st.max_ns))),
            ],
        };
        for (k, v) in ours {
            let h = opt_num(r, k);
            let eq = match (v, h) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-9,
                (None, None) => true,
                _ => false,
            };
            if !eq {
                d.push(format!("stats {key:?} {k}: kinetoscope {v:?}, HTA {h:?}"));
            }
        }
    }
    d
}

fn class_breakdowns(l: &Loaded) -> Vec<ClassBreakdown> {
    l.traces
        .iter()
        .map(|t| class_breakdown(t, Compat::Hta, l.filter, 0))
        .collect()
}

/// HTA's kernel-type table (labels with a sum of 0 dropped: HTA's tie-order artefact),
/// as label → ns, with the percentage column.
fn kernel_type_reference(name: &str) -> (HashMap<String, i64>, HashMap<String, f64>) {
    let rows = csv_rows(&reference(name, "gpu_kernel_type_breakdown.csv")).unwrap();
    let (mut sums, mut pcts) = (HashMap::new(), HashMap::new());
    for r in rows.iter().filter(|r| num(r, "sum") != 0.0) {
        sums.insert(r["kernel_type"].clone(), num(r, "sum") as i64 * 1000);
        pcts.insert(r["kernel_type"].clone(), num(r, "percentage"));
    }
    (sums, pcts)
}

fn kernel_type_diffs(name: &str, l: &Loaded) -> Vec<String> {
    let mut ours: HashMap<String, i64> = HashMap::new();
    for b in class_breakdowns(l) {
        for o in &b.overlaps {
            *ours.entry(o.label.clone()).or_default() += o.time_ns;
        }
    }
    let (want, pcts) = kernel_type_reference(name);
    let mut d = Vec::new();
    let mut labels: Vec<&String> = ours.keys().chain(want.keys()).collect();
    labels.sort();
    labels.dedup();
    for k in labels {
        if ours.get(k) != want.get(k) {
            d.push(format!(
                "{k}: kinetoscope {:?} µs, HTA {:?} µs",
                ours.get(k).map(|&v| us(v)),
                want.get(k).map(|&v| us(v))
            ));
        }
    }
    // Percentages of the total over all labels, 1 decimal.
    let total: i64 = ours.values().sum();
    for (k, &p) in &pcts {
        let mine = ours
            .get(k)
            .map(|&ns| (1000.0 * ns as f64 / total as f64).round() / 10.0);
        if mine != Some(p) {
            d.push(format!("{k} %: kinetoscope {mine:?}, HTA {p}"));
        }
    }
    d
}

fn kernel_diffs(name: &str, l: &Loaded) -> Vec<String> {
    let rows = csv_rows(&reference(name, "gpu_kernel_breakdown_full.csv")).unwrap();
    let mut d = Vec::new();
    for (b, &rank) in class_breakdowns(l).iter().zip(&l.ranks) {
        let mine: Vec<_> = b
            .classes
            .iter()
            .filter(|c| c.class != KernelClass::Other)
            .flat_map(|c| c.top.iter().map(move |k| (c.class.label(), k)))
            .collect();
        let theirs: Vec<&Row> = rows
            .iter()
            .filter(|r| num(r, "rank") as i64 == rank)
            .collect();
        for (class, k) in &mine {
            if !theirs.iter().any(|r| r["name"] == k.name) {
                d.push(format!(
                    "rank {rank}: only kinetoscope has {class} {}",
                    k.name
                ));
            }
        }
        for r in theirs {
            let Some((class, k)) = mine.iter().find(|(_, k)| k.name == r["name"]) else {
                d.push(format!("rank {rank}: only HTA has {}", r["name"]));
                continue;
            };
            let what = format!("rank {rank} {}", k.name);
            if *class != r["kernel_type"] {
                d.push(format!("{what}: class {class}, HTA {}", r["kernel_type"]));
            }
            for (key, v) in [
                ("sum (us)", us(k.sum_ns)),
                ("max (us)", us(k.max_ns)),
                ("min (us)", us(k.min_ns)),
            ] {
                if v != num(r, key) {
                    d.push(format!(
                        "{what} {key}: kinetoscope {v}, HTA {}",
                        num(r, key)
                    ));
                }
            }
            for (key, v) in [("mean (us)", k.mean_ns / 1e3), ("stddev", k.std_ns / 1e3)] {
                if (v - num(r, key)).abs() > 1e-9 * v.abs().max(1.0) {
                    d.push(format!(
                        "{what} {key}: kinetoscope {v}, HTA {}",
                        num(r, key)
                    ));
                }
            }
        }
    }
    d
}

/// HTA's overlap against kinetoscope's twice: `kernels --by-class` and `comm`.
fn overlap_diffs(name: &str, l: &Loaded) -> Vec<String> {
    let rows = csv_rows(&reference(name, "comm_comp_overlap.csv")).unwrap();
    let mut comms: Vec<TraceComm> = l
        .traces
        .iter()
        .map(|t| comm(t, CommOptions { hta_compat: true }))
        .collect();
    resolve_hta(&mut comms);
    let mut d = Vec::new();
    for ((b, c), &rank) in class_breakdowns(l).iter().zip(&comms).zip(&l.ranks) {
        let h = opt_num(rank_row(&rows, rank), "comp_comm_overlap_pctg");
        for (what, share) in [
            ("kernels --by-class", b.comm_comp_overlap_share),
            ("comm", c.overlap.overlap_share),
        ] {
            if share.map(pct2) != h {
                d.push(format!(
                    "rank {rank} {what}: kinetoscope {share:?}, HTA {h:?} %"
                ));
            }
        }
    }
    d
}

fn launch_diffs(name: &str, l: &Loaded) -> Vec<String> {
    let rows = csv_rows(&reference(name, "cuda_kernel_launch_stats.csv")).unwrap();
    let opts = LaunchOptions {
        all: true,
        ..LaunchOptions::default()
    };
    let mut got: Vec<(i64, i64, i64, i64, i64)> = Vec::new();
    for (t, &rank) in l.traces.iter().zip(&l.ranks) {
        for x in launch_stats(t, Compat::Hta, l.filter, opts).launches {
            got.push((rank, x.correlation, x.cpu_dur_ns, x.gpu_dur_ns, x.delay_ns));
        }
    }
    let mut want: Vec<(i64, i64, i64, i64, i64)> = rows
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
    got.sort_unstable();
    want.sort_unstable();
    if got == want {
        return Vec::new();
    }
    let only_ours: Vec<_> = got.iter().filter(|g| !want.contains(g)).take(5).collect();
    let only_hta: Vec<_> = want.iter().filter(|w| !got.contains(w)).take(5).collect();
    vec![format!(
        "launches: kinetoscope {}, HTA {}; only kinetoscope {only_ours:?}; only HTA {only_hta:?}",
        got.len(),
        want.len()
    )]
}

/// Compare one trace set: the metrics in `differ` must differ (each is a documented
/// difference with its own test below), all others must be equal.
fn check(name: &str, differ: &[&str]) -> Loaded {
    let l = load(name);
    let mut failures = Vec::new();
    for (metric, diffs) in compare(name, &l) {
        match (differ.contains(&metric), diffs.is_empty()) {
            (false, false) => failures.push(format!("{metric}:\n    {}", diffs.join("\n    "))),
            (true, true) => failures.push(format!(
                "{metric}: now equal to HTA; update this test and docs/hta-differences.md"
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{name}:\n  {}", failures.join("\n  "));
    l
}

// ---------------------------------------------------------------------------------------
// One test per trace

#[test]
fn b200_eager() {
    // Triton's host-side launch op: triton_host_ops_are_the_only_difference.
    check("tracelens_b200_eager", &[TEMPORAL, KERNEL_TYPES, KERNELS]);
}

#[test]
fn h100_qwen() {
    // Rows launched outside the trace: launch_less_rows_are_the_only_idle_difference.
    // Temporal is compared with what HTA computed before its own assert refused it:
    // hta_refuses_negative_non_compute_on_h100.
    check("tracelens_h100_qwen", &[IDLE]);
}

#[test]
fn mi300_qwen() {
    check("tracelens_mi300_qwen", &[IDLE]);
}

#[test]
fn mi300_resnet_act_checkpoint() {
    let l = check("tracelens_mi300_resnet_act_checkpoint", &[]);
    // Three steps: HTA's filter applies, cut at the GPU-side `ProfilerStep#17` annotation
    // (after the host step has ended), not at the host step's start.
    assert!(l.filter);
    let t = temporal(&l.traces[0], Compat::Hta, true);
    assert_eq!(t.window.cut_step.as_deref(), Some("ProfilerStep#17"));
    let host_step_17 = 3_743_411_255_650_577 + 1_767_189_312_000_000_000;
    let gpu_step_17 = 3_743_411_293_161_409 + 1_767_189_312_000_000_000;
    let cut = t.window.cut_ns.unwrap();
    assert!(cut > host_step_17, "the cut is not the host step's start");
    assert_eq!(
        cut,
        (gpu_step_17 / 1000 + 1) * 1000,
        "ceil to µs of the GPU annotation"
    );
}

#[test]
fn mi210_gpu_only() {
    check("tracelens_mi210_gpu_only", &[]);
}

#[test]
fn torch_compile_triton() {
    check(
        "tracelens_torch_compile_triton",
        &[TEMPORAL, KERNEL_TYPES, KERNELS],
    );
}

#[test]
fn vllm_decode_graph() {
    check("tracelens_vllm_decode_graph", &[]);
}

#[test]
fn sglang_decode() {
    check("tracelens_sglang_decode", &[]);
}

#[test]
fn param_dlrm_8rank() {
    let l = check("param_dlrm_8rank", &[IDLE]);
    assert_eq!(l.ranks, (0..8).collect::<Vec<i64>>());
    assert!(
        !l.filter,
        "one ProfilerStep over all ranks: HTA filters nothing"
    );
}

#[test]
fn param_linear_2080ti() {
    check("param_linear_2080ti", &[]);
}

#[test]
fn hta_critical_path_alexnet() {
    check("hta_critical_path_alexnet", &[]);
}

#[test]
fn every_reference_is_tested() {
    let mut dirs: Vec<String> = std::fs::read_dir(fixtures().join("hta_reference"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut all: Vec<String> = ALL.iter().map(|s| s.to_string()).collect();
    all.sort();
    assert_eq!(dirs, all);
    for name in ALL {
        let m = meta(name);
        assert_eq!(m["versions"]["HolisticTraceAnalysis"], "0.5.0", "{name}");
        let want: Vec<String> = inputs(name).into_iter().map(|(_, s)| s).collect();
        let got: Vec<String> = m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["path"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(got, want, "{name}: the files HTA ran on");
    }
}

// ---------------------------------------------------------------------------------------
// The documented differences, each rebuilt from kinetoscope's numbers

/// The host-side `cpu_op` events torch.compile / Triton writes for a kernel launch, named
/// like the kernel (in these files each carries `"stream": 0`, which makes it a GPU row to
/// HTA; docs/hta-differences.md §2).
fn triton_host_ops(t: &Trace) -> Vec<usize> {
    let e = &t.events;
    let mut kernel_names: Vec<u32> = (0..e.len())
        .filter(|&i| t.categories.kind(e.cat[i]) == CategoryKind::Kernel)
        .map(|i| e.name[i].0)
        .collect();
    kernel_names.sort_unstable();
    (0..e.len())
        .filter(|&i| {
            e.phase[i] == Phase::Complete
                && t.categories.kind(e.cat[i]) == CategoryKind::CpuOp
                && kernel_names.binary_search(&e.name[i].0).is_ok()
        })
        .collect()
}

/// §2: HTA counts Triton's host launch ops as GPU computation; kinetoscope (both modes)
/// does not. Adding those ops to kinetoscope's HTA-mode rows gives HTA's temporal
/// breakdown, kernel-type table and per-kernel rows exactly.
#[test]
fn triton_host_ops_are_the_only_difference() {
    for (name, n_ops) in [
        ("tracelens_b200_eager", 1),
        ("tracelens_torch_compile_triton", 4),
    ] {
        let l = load(name);
        assert!(!l.filter);
        let t = &l.traces[0];
        let ops = triton_host_ops(t);
        assert_eq!(ops.len(), n_ops, "{name}");
        let rows = select(t, Compat::Hta, false);
        let span = |i: usize| rows.clock.span(t, i);
        let is_comp = |i: usize| {
            classify(t.strings.get(t.events.name[i]), ClassRules::Hta050)
                == KernelClass::Computation
        };
        let mut all: Vec<(i64, i64)> = rows.rows.iter().map(|&i| span(i as usize)).collect();
        let mut comp: Vec<(i64, i64)> = rows
            .rows
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| is_comp(i))
            .map(span)
            .collect();
        for &i in &ops {
            assert!(is_comp(i), "a Triton kernel name is computation");
            all.push(span(i));
            comp.push(span(i));
        }
        all.sort_unstable();
        comp.sort_unstable();
        let (first, last, busy) = union_sorted(all).unwrap();
        let compute = union_sorted(comp).unwrap().2;
        let total = last - first;
        let idle = total - busy;
        let cols = temporal_columns(idle, compute, total - compute - idle, total);
        let hta = temporal_reference(name);
        assert_eq!(
            temporal_row_diffs(0, &cols, &hta[0]),
            Vec::<String>::new(),
            "{name}"
        );

        // Kernel types: HTA's table has no label overlapping computation here, so its
        // COMPUTATION is the rebuilt compute time; the other labels are kinetoscope's.
        let (want, _) = kernel_type_reference(name);
        assert!(want
            .keys()
            .all(|k| k == "COMPUTATION" || !k.contains("COMPUTATION")));
        assert_eq!(want["COMPUTATION"], compute, "{name}");
        let b = class_breakdown(t, Compat::Hta, false, 0);
        for o in &b.overlaps {
            if o.label != "COMPUTATION" {
                assert_eq!(Some(&o.time_ns), want.get(&o.label), "{name} {}", o.label);
            }
        }

        // Per kernel: kinetoscope's rows of these names plus the host ops give HTA's.
        let full = csv_rows(&reference(name, "gpu_kernel_breakdown_full.csv")).unwrap();
        for &i in &ops {
            let kname = t.strings.get(t.events.name[i]);
            let (s, e) = span(i);
            let k = b
                .classes
                .iter()
                .flat_map(|c| &c.top)
                .find(|k| k.name == kname)
                .unwrap();
            let r = full.iter().find(|r| r["name"] == kname).unwrap();
            let n = k.count as f64 + 1.0;
            assert_eq!(us(k.sum_ns + e - s), num(r, "sum (us)"), "{kname}");
            assert_eq!(us(k.max_ns.max(e - s)), num(r, "max (us)"), "{kname}");
            assert_eq!(us(k.min_ns.min(e - s)), num(r, "min (us)"), "{kname}");
            let mean = us(k.sum_ns + e - s) / n;
            assert!((mean - num(r, "mean (us)")).abs() < 1e-9, "{kname}");
        }

        // kinetoscope's own numbers: only the GPU kernels (the ops last 12–74 µs, the
        // kernels they launch 1–527 µs).
        let ks = temporal(t, Compat::Hta, false);
        assert!(ks.compute_ns < compute);
    }
}

/// §12: a GPU row whose launch call is not in the trace (launched before profiling began,
/// or by a CUDA graph) cannot have waited for the host as far as kinetoscope knows; HTA
/// 0.5.0 looks up the partner row of such a row at index 0, i.e. it takes the **first
/// event of the file** as its launch call, and calls the gap host wait when that event
/// starts after the previous row ended. Reclassifying kinetoscope's gaps that way gives
/// HTA's idle tables exactly, statistics included.
#[test]
fn launch_less_rows_are_the_only_idle_difference() {
    for (name, first) in [
        ("tracelens_h100_qwen", "ProfilerStep#6"),
        ("tracelens_mi300_qwen", "ProfilerStep#6"),
        (
            "param_dlrm_8rank",
            "autograd::engine::evaluate_function: SumBackward1",
        ),
    ] {
        let l = load(name);
        let mut rebuilt = Vec::new();
        let mut moved = 0;
        for (t, &rank) in l.traces.iter().zip(&l.ranks) {
            // The first event of the file is a host event HTA keeps.
            assert_eq!(t.events.phase[0], Phase::Complete, "{name}");
            if rank == 1 || l.traces.len() == 1 {
                assert_eq!(t.strings.get(t.events.name[0]), first, "{name}");
            }
            let rows = select(t, Compat::Hta, l.filter);
            let first_ts = rows.clock.start(t.events.ts_ns[0]);
            // Per stream (in kinetoscope's order, which is HTA's), per category, the gaps.
            let ours = idle_breakdown(t, Compat::Hta, l.filter, DEFAULT_KERNEL_WAIT_NS);
            let mut gaps: HashMap<(i64, &str), Vec<i64>> = HashMap::new();
            for g in stream_gaps(t, &rows, DEFAULT_KERNEL_WAIT_NS) {
                let launch_less =
                    g.launch.is_none() && t.events.correlation.at(g.row as usize) != 0;
                let cat = if launch_less && first_ts > g.start_ns {
                    if g.category != IdleCategory::HostWait {
                        moved += 1;
                    }
                    IdleCategory::HostWait
                } else {
                    g.category
                };
                gaps.entry((g.stream, cat.as_str()))
                    .or_default()
                    .push(g.idle_ns(Compat::Hta));
            }
            for s in &ours.streams {
                let sums: Vec<i64> = IdleCategory::ALL
                    .iter()
                    .map(|c| {
                        gaps.get(&(s.stream, c.as_str()))
                            .map_or(0, |g| g.iter().sum())
                    })
                    .collect();
                let total: i64 = sums.iter().sum();
                for (k, &c) in IdleCategory::ALL.iter().enumerate() {
                    let list = gaps.remove(&(s.stream, c.as_str())).unwrap_or_default();
                    // HTA lists a category when a row falls in it; the first row of a
                    // stream (no gap) is `other`.
                    if list.is_empty() && c != IdleCategory::Other {
                        continue;
                    }
                    let mut list = list;
                    rebuilt.push(IdleRow {
                        rank,
                        stream: s.stream,
                        category: c.as_str(),
                        idle_ns: sums[k],
                        ratio: (total != 0)
                            .then(|| (100.0 * sums[k] as f64 / total as f64).round() / 100.0),
                        stats: GapStats::of(&mut list),
                    });
                }
            }
            assert!(
                gaps.is_empty(),
                "{name}: gaps on streams kinetoscope did not list"
            );
        }
        assert!(moved > 0, "{name}: the quirk changes something");
        assert_eq!(idle_diffs(name, &rebuilt), Vec::<String>::new(), "{name}");
    }
}

/// HTA's `get_temporal_breakdown` fails on the H100 trace (`AssertionError`, non-compute
/// time < 0): its rounding to whole µs gives 22 sub-µs `Memset` rows a negative
/// duration. `--hta-compat` reproduces what HTA computed before refusing it (-17 µs of
/// non-compute time); kinetoscope's default, in exact nanoseconds, has no such artefact.
#[test]
fn hta_refuses_negative_non_compute_on_h100() {
    let name = "tracelens_h100_qwen";
    let m = meta(name);
    let err = m["errors"]["temporal"].as_str().unwrap();
    assert!(err.starts_with("AssertionError"), "{err}");
    assert!(!reference(name, "temporal_breakdown.csv").exists());
    let l = load(name);
    let t = &l.traces[0];
    let hta = temporal(t, Compat::Hta, false);
    assert_eq!(hta.non_compute_ns, -17_000);
    let rows = select(t, Compat::Hta, false);
    let negative = rows
        .rows
        .iter()
        .filter(|&&i| {
            let (s, e) = rows.clock.span(t, i as usize);
            e < s
        })
        .count();
    assert_eq!(negative, 22);
    let ks = temporal(t, Compat::Kinetoscope, false);
    assert!(ks.non_compute_ns > 0);
    assert_eq!(ks.idle_ns + ks.compute_ns + ks.non_compute_ns, ks.total_ns);
}

/// HTA's GPU span includes the device-wide `Context Sync` rows that older Kineto writes
/// with `stream` 4294967295 (HTA's `stream != -1` lets them through); `--hta-compat`
/// matches (`hta_critical_path_alexnet` above: 12,996,011 µs), kinetoscope's default leaves
/// them out: they are the host waiting for the whole device, not work on a stream.
#[test]
fn device_wide_syncs_on_stream_2_pow_32_minus_1() {
    let l = load("hta_critical_path_alexnet");
    let t = &l.traces[0];
    let syncs: Vec<i64> = t
        .args
        .sync
        .iter()
        .filter(|a| t.strings.get(t.events.name[a.event.0 as usize]) == "Context Sync")
        .map(|a| a.stream)
        .collect();
    assert_eq!(syncs, vec![4_294_967_295; 5]);
    let hta = temporal(t, Compat::Hta, false);
    let ks = temporal(t, Compat::Kinetoscope, false);
    assert_eq!(us(hta.total_ns), 12_996_011.0);
    assert_eq!(hta.window.gpu_rows_total, ks.window.gpu_rows_total + 5);
    // The last Context Sync ends 75.8 ms after every other GPU row.
    assert_eq!(ks.gpu_start_ns, hta.gpu_start_ns);
    assert_eq!(hta.gpu_end_ns.unwrap() - ks.gpu_end_ns.unwrap(), 75_767_000);
    assert_eq!(us(ks.total_ns), 12_920_244.0);
}

/// HTA 0.5.0 knows no HIP launch call, so its launch statistics are empty on every ROCm
/// trace; `--hta-compat` agrees (the trace tests above), kinetoscope's default counts
/// `hipLaunchKernel` and friends (docs/hta-differences.md §4).
#[test]
fn hip_launches_only_by_default() {
    for name in [
        "tracelens_mi300_qwen",
        "tracelens_mi300_resnet_act_checkpoint",
        "tracelens_mi210_gpu_only",
        "tracelens_sglang_decode",
        "tracelens_vllm_decode_graph",
    ] {
        let rows = csv_rows(&reference(name, "cuda_kernel_launch_stats.csv")).unwrap();
        assert!(rows.is_empty(), "{name}");
    }
    let l = load("tracelens_mi300_qwen");
    let t = &l.traces[0];
    assert_eq!(
        launch_stats(t, Compat::Hta, false, LaunchOptions::default()).count,
        0
    );
    assert!(launch_stats(t, Compat::Kinetoscope, false, LaunchOptions::default()).count > 1000);
}

/// The copies in `tests/fixtures` are the files HTA ran on (`../shared`, paths in each
/// `meta.json`): byte for byte, or, for the PARAM ranks gzipped here, the same trace.
#[test]
#[ignore = "needs ../shared"]
fn fixtures_are_the_files_hta_ran_on() {
    for name in ALL {
        for (copy, rel) in inputs(name) {
            let orig = shared_file(&rel);
            if copy.extension() == orig.extension() {
                assert_eq!(
                    std::fs::read(&copy).unwrap(),
                    std::fs::read(&orig).unwrap(),
                    "{}",
                    copy.display()
                );
            } else {
                let (a, b) = (read(&copy), read(&orig));
                assert_eq!(a.events.ts_ns, b.events.ts_ns, "{}", copy.display());
                assert_eq!(a.events.dur_ns, b.events.dur_ns, "{}", copy.display());
                assert_eq!(a.events.correlation, b.events.correlation);
                assert_eq!(a.meta.rank, b.meta.rank);
            }
        }
    }
}
