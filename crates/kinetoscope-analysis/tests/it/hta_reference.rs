//! kinetoscope's GPU-time analyses in HTA-compatible mode against HTA 0.5.0's outputs on
//! real GPU traces (`tests/fixtures/hta_reference/<trace>/`, made by
//! `scripts/hta_reference/make_reference.py`; the traces are copied with their licences
//! into `tests/fixtures/{tracelens,param,hta_traces}/`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::comm::{comm, resolve_hta, CommOptions, TraceComm};
use kinetoscope_analysis::gpu_time::classes::{class_breakdown, ClassBreakdown};
use kinetoscope_analysis::gpu_time::idle::{idle_breakdown, IdleBreakdown, DEFAULT_KERNEL_WAIT_NS};
use kinetoscope_analysis::gpu_time::launches::{launch_stats, LaunchOptions, LaunchStats};
use kinetoscope_analysis::gpu_time::temporal::{temporal, Temporal};
use kinetoscope_analysis::gpu_time::{filter_all, step_names, Compat};
use kinetoscope_trace::Trace;

use crate::common::{fixtures, read};

/// The traces with an HTA reference: reference folder → trace files (in rank order).
fn inputs(name: &str) -> Vec<PathBuf> {
    let f = fixtures();
    let tl = |file: &str| vec![f.join("tracelens").join(file)];
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
            let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            v.sort();
            assert_eq!(v.len(), 8, "{}", dir.display());
            v
        }
        "param_linear_2080ti" => vec![f.join("param/linear_kineto.json.gz")],
        "hta_critical_path_alexnet" => {
            vec![f.join("hta_traces/benchmark_result_2869224_1695835535_trace.json.gz")]
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

/// Reference CSV rows as header → value maps; `None` when HTA failed on that call.
fn csv_rows(path: &Path) -> Option<Vec<HashMap<String, String>>> {
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

/// One trace set as HTA loads it: the traces, HTA's rank of each (its rank regex, else
/// 0), and the cross-rank step-filter decision.
struct Loaded {
    traces: Vec<Trace>,
    ranks: Vec<i64>,
    filter: bool,
}

fn load(name: &str) -> Loaded {
    let traces: Vec<Trace> = inputs(name).iter().map(|p| read(p)).collect();
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

/// Differences between kinetoscope and HTA on one trace set, per metric (empty = equal).
#[derive(Debug, Default)]
struct Diffs {
    by_metric: Vec<(&'static str, Vec<String>)>,
}

impl Diffs {
    fn add(&mut self, metric: &'static str, d: Vec<String>) {
        self.by_metric.push((metric, d));
    }
}

fn temporal_diffs(l: &Loaded, name: &str) -> Vec<String> {
    let Some(rows) = csv_rows(&reference(name, "temporal_breakdown.csv")) else {
        return vec!["HTA: no output".into()];
    };
    let mut d = Vec::new();
    for (t, &rank) in l.traces.iter().zip(&l.ranks) {
        let ours: Temporal = temporal(t, Compat::Hta, l.filter);
        let row = rows.iter().find(|r| num(r, "rank") as i64 == rank).unwrap();
        let pairs = [
            ("idle_time(us)", us(ours.idle_ns)),
            ("compute_time(us)", us(ours.compute_ns)),
            ("non_compute_time(us)", us(ours.non_compute_ns)),
            ("kernel_time(us)", us(ours.total_ns)),
            ("idle_time_pctg", ours.idle_pct),
            ("compute_time_pctg", ours.compute_pct),
            ("non_compute_time_pctg", ours.non_compute_pct),
        ];
        for (k, v) in pairs {
            if v != num(row, k) {
                d.push(format!("rank {rank} {k}: ks {v} hta {}", num(row, k)));
            }
        }
    }
    d
}

fn idle_diffs(l: &Loaded, name: &str) -> Vec<String> {
    let Some(rows) = csv_rows(&reference(name, "idle_time_breakdown.csv")) else {
        return vec!["HTA: no output".into()];
    };
    let ours: Vec<IdleBreakdown> = l
        .traces
        .iter()
        .map(|t| idle_breakdown(t, Compat::Hta, l.filter, DEFAULT_KERNEL_WAIT_NS))
        .collect();
    let mut got = Vec::new();
    for (b, &rank) in ours.iter().zip(&l.ranks) {
        for s in &b.streams {
            for c in &s.categories {
                got.push((
                    rank,
                    s.stream,
                    c.category.as_str().to_owned(),
                    us(c.idle_ns),
                    c.ratio,
                ));
            }
        }
    }
    let want: Vec<_> = rows
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
    let mut d = Vec::new();
    if got != want {
        for g in &got {
            if !want.contains(g) {
                d.push(format!("ks only {g:?}"));
            }
        }
        for w in &want {
            if !got.contains(w) {
                d.push(format!("hta only {w:?}"));
            }
        }
        if d.is_empty() {
            d.push("row order".into());
        }
    }
    let stats = csv_rows(&reference(name, "idle_time_interval_stats.csv")).unwrap();
    for row in &stats {
        let (rank, stream) = (num(row, "rank") as i64, num(row, "stream") as i64);
        let Some(b) = l.ranks.iter().position(|&r| r == rank).map(|i| &ours[i]) else {
            continue;
        };
        let Some(s) = b.streams.iter().find(|s| s.stream == stream) else {
            continue;
        };
        let Some(c) = s
            .categories
            .iter()
            .find(|c| c.category.as_str() == row["idle_category"])
        else {
            continue;
        };
        let what = format!("stats rank {rank} stream {stream} {}", row["idle_category"]);
        let Some(st) = &c.stats else {
            if num(row, "count") != 0.0 {
                d.push(format!("{what}: ks none"));
            }
            continue;
        };
        let ours = [
            ("count", Some(st.count as f64)),
            ("mean", Some(round2(st.mean_ns / 1e3))),
            ("std", st.std_ns.map(|v| round2(v / 1e3))),
            ("min", Some(us(st.min_ns))),
            ("25%", Some(round2(st.p25_ns / 1e3))),
            ("50%", Some(round2(st.p50_ns / 1e3))),
            ("75%", Some(round2(st.p75_ns / 1e3))),
            ("max", Some(us(st.max_ns))),
        ];
        for (k, v) in ours {
            let h = opt_num(row, k);
            let eq = match (v, h) {
                (Some(a), Some(b)) => (a - b).abs() <= 1e-9,
                (None, None) => true,
                _ => false,
            };
            if !eq {
                d.push(format!("{what} {k}: ks {v:?} hta {h:?}"));
            }
        }
    }
    d
}

fn class_diffs(l: &Loaded, name: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let ours: Vec<ClassBreakdown> = l
        .traces
        .iter()
        .map(|t| class_breakdown(t, Compat::Hta, l.filter, 0))
        .collect();
    // Kernel-type table: sums over ranks, non-zero labels.
    let mut types = Vec::new();
    if let Some(rows) = csv_rows(&reference(name, "gpu_kernel_type_breakdown.csv")) {
        let mut sums: HashMap<String, i64> = HashMap::new();
        for b in &ours {
            for o in &b.overlaps {
                *sums.entry(o.label.clone()).or_default() += o.ns;
            }
        }
        let mut want: HashMap<String, i64> = HashMap::new();
        let total: f64 = rows.iter().map(|r| num(r, "sum")).sum();
        for r in &rows {
            if num(r, "sum") != 0.0 {
                want.insert(r["kernel_type"].clone(), num(r, "sum") as i64 * 1000);
                let ours_pct = sums
                    .get(&r["kernel_type"])
                    .map(|&ns| (1000.0 * us(ns) / total).round() / 10.0);
                if ours_pct != Some(num(r, "percentage")) {
                    types.push(format!(
                        "{} %: ks {ours_pct:?} hta {}",
                        r["kernel_type"],
                        num(r, "percentage")
                    ));
                }
            }
        }
        let mut keys: Vec<&String> = sums.keys().chain(want.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if sums.get(k) != want.get(k) {
                types.push(format!(
                    "{k}: ks {:?} hta {:?}",
                    sums.get(k).map(|&v| us(v)),
                    want.get(k).map(|&v| us(v))
                ));
            }
        }
    } else {
        types.push("HTA: no output".into());
    }

    // Per-kernel table, unfolded.
    let mut kernels = Vec::new();
    if let Some(rows) = csv_rows(&reference(name, "gpu_kernel_breakdown_full.csv")) {
        for (b, &rank) in ours.iter().zip(&l.ranks) {
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
            for (class, k) in &mine {
                if !theirs
                    .iter()
                    .any(|r| r["name"] == k.name && r["kernel_type"] == *class)
                {
                    kernels.push(format!("rank {rank}: ks only {class} {}", k.name));
                }
            }
            for r in theirs {
                let Some((class, k)) = mine.iter().find(|(_, k)| k.name == r["name"]) else {
                    kernels.push(format!("rank {rank}: hta only {}", r["name"]));
                    continue;
                };
                let what = format!("rank {rank} {}", k.name);
                if *class != r["kernel_type"] {
                    kernels.push(format!("{what}: class {class} vs {}", r["kernel_type"]));
                }
                for (key, v) in [
                    ("sum (us)", us(k.sum_ns)),
                    ("max (us)", us(k.max_ns)),
                    ("min (us)", us(k.min_ns)),
                ] {
                    if v != num(r, key) {
                        kernels.push(format!("{what} {key}: ks {v} hta {}", num(r, key)));
                    }
                }
                for (key, v) in [("mean (us)", k.mean_ns / 1e3), ("stddev", k.std_ns / 1e3)] {
                    if (v - num(r, key)).abs() > 1e-6 * v.abs().max(1.0) {
                        kernels.push(format!("{what} {key}: ks {v} hta {}", num(r, key)));
                    }
                }
            }
        }
    } else {
        kernels.push("HTA: no output".into());
    }

    // Communication / computation overlap.
    let mut overlap = Vec::new();
    if let Some(rows) = csv_rows(&reference(name, "comm_comp_overlap.csv")) {
        for (b, &rank) in ours.iter().zip(&l.ranks) {
            let row = rows.iter().find(|r| num(r, "rank") as i64 == rank).unwrap();
            let h = opt_num(row, "comp_comm_overlap_pctg");
            if b.comm_comp_overlap_pct != h {
                overlap.push(format!(
                    "rank {rank}: ks {:?} hta {h:?}",
                    b.comm_comp_overlap_pct
                ));
            }
        }
        // `kinetoscope comm --hta-compat`: the same number through the comm analysis.
        let mut comms: Vec<TraceComm> = l
            .traces
            .iter()
            .map(|t| comm(t, CommOptions { hta_compat: true }))
            .collect();
        resolve_hta(&mut comms);
        for (c, &rank) in comms.iter().zip(&l.ranks) {
            let row = rows.iter().find(|r| num(r, "rank") as i64 == rank).unwrap();
            let h = opt_num(row, "comp_comm_overlap_pctg");
            if c.overlap.overlap_pct != h {
                overlap.push(format!(
                    "comm rank {rank}: ks {:?} hta {h:?}",
                    c.overlap.overlap_pct
                ));
            }
        }
    } else {
        overlap.push("HTA: no output".into());
    }
    (types, kernels, overlap)
}

fn launch_diffs(l: &Loaded, name: &str) -> Vec<String> {
    let Some(rows) = csv_rows(&reference(name, "cuda_kernel_launch_stats.csv")) else {
        return vec!["HTA: no output".into()];
    };
    let opts = LaunchOptions {
        all: true,
        ..LaunchOptions::default()
    };
    let mut got: Vec<(i64, i64, i64, i64, i64)> = Vec::new();
    for (t, &rank) in l.traces.iter().zip(&l.ranks) {
        let s: LaunchStats = launch_stats(t, Compat::Hta, l.filter, opts);
        for x in &s.launches {
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
    let mut d = Vec::new();
    if got != want {
        d.push(format!("count: ks {} hta {}", got.len(), want.len()));
        let only_ks: Vec<_> = got.iter().filter(|g| !want.contains(g)).collect();
        let only_hta: Vec<_> = want.iter().filter(|w| !got.contains(w)).collect();
        d.push(format!(
            "ks only {}: {:?}",
            only_ks.len(),
            &only_ks[..only_ks.len().min(5)]
        ));
        d.push(format!(
            "hta only {}: {:?}",
            only_hta.len(),
            &only_hta[..only_hta.len().min(5)]
        ));
    }
    d
}

fn compare(name: &str) -> Diffs {
    let l = load(name);
    let mut d = Diffs::default();
    d.add("temporal", temporal_diffs(&l, name));
    d.add("idle", idle_diffs(&l, name));
    let (types, kernels, overlap) = class_diffs(&l, name);
    d.add("kernel types", types);
    d.add("kernels", kernels);
    d.add("overlap", overlap);
    d.add("launches", launch_diffs(&l, name));
    d
}

#[test]
#[ignore]
fn explore() {
    for name in ALL {
        let d = compare(name);
        println!("=== {name}");
        for (m, v) in &d.by_metric {
            if v.is_empty() {
                println!("  {m}: equal");
            } else {
                println!("  {m}: {} differences", v.len());
                for x in v.iter().take(12) {
                    println!("    {x}");
                }
            }
        }
    }
}

#[test]
#[ignore]
fn explore_h100() {
    let l = load("tracelens_h100_qwen");
    for c in [Compat::Hta, Compat::Kinetoscope] {
        let t = temporal(&l.traces[0], c, false);
        println!(
            "{c:?} {} {} {} {} {} {} {}",
            us(t.idle_ns),
            us(t.compute_ns),
            us(t.non_compute_ns),
            us(t.total_ns),
            t.idle_pct,
            t.compute_pct,
            t.non_compute_pct
        );
    }
}
