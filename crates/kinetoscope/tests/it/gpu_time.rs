//! End-to-end tests of `kinetoscope temporal`, `idle`, `launches` and `kernels --by-class`
//! on HTA's 2-rank `trace_filter` folder: formats, options and exit codes. The numbers are
//! checked against HTA in `crates/kinetoscope-analysis/tests/it/hta_trace_filter.rs`.

use crate::common::{fixtures, json, kinetoscope};

#[test]
fn temporal_json_and_hta_compat() {
    let hta = json(
        &fixtures(),
        &["temporal", "ranks", "--hta-compat", "--format", "json"],
    );
    assert_eq!(hta["schema_version"], 3);
    assert_eq!(hta["analysis"], "temporal");
    assert_eq!(hta["layout"], "rank_folder");
    assert_eq!(hta["compat"], "hta");
    assert_eq!(hta["step_filter"], true);
    let t = &hta["traces"];
    assert_eq!(t.as_array().unwrap().len(), 2);
    // HTA 0.5.0 on these traces: rank 0 idle 321,378 / compute 106,252 / non-compute
    // 172,428 of 600,058 µs.
    assert_eq!(t[0]["rank"], 0);
    assert_eq!(t[0]["idle_ns"], 321_378_000);
    assert_eq!(t[0]["compute_ns"], 106_252_000);
    assert_eq!(t[0]["non_compute_ns"], 172_428_000);
    assert_eq!(t[0]["total_ns"], 600_058_000);
    // HTA 0.5.0: rank 1 idle 54.72 %.
    let idle = t[1]["idle_share"].as_f64().unwrap();
    assert_eq!((idle * 10000.0).round() / 100.0, 54.72);
    assert_eq!(t[0]["window"]["cut_step"], "ProfilerStep#552");

    let ks = json(&fixtures(), &["temporal", "ranks", "--format", "json"]);
    assert_eq!(ks["compat"], "kinetoscope");
    assert_eq!(ks["traces"][0]["window"]["gpu_rows_dropped"], 0);
    assert_eq!(ks["traces"][0]["total_ns"], 1_222_847_000);

    let csv = kinetoscope(
        &fixtures(),
        &["temporal", "ranks", "--hta-compat", "--format", "csv"],
    );
    assert_eq!(csv.code, Some(0));
    let mut lines = csv.stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        "path,rank,idle_us,compute_us,non_compute_us,total_us,idle_pct,compute_pct,non_compute_pct"
    );
    assert!(lines
        .next()
        .unwrap()
        .ends_with(",0,321378,106252,172428,600058,53.56,17.71,28.74"));
}

#[test]
fn idle_table_csv_and_threshold() {
    let table = kinetoscope(&fixtures(), &["idle", "ranks", "--hta-compat"]);
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(table.stdout.contains("host_wait") && table.stdout.contains("213825.0"));
    let csv = kinetoscope(
        &fixtures(),
        &["idle", "ranks", "--hta-compat", "--format", "csv"],
    );
    assert!(csv.stdout.contains("\n0,7,host_wait,213825,0.45,82,"));
    assert!(csv.stdout.contains("\n0,7,kernel_wait,1985,0,196,"));
    // A larger threshold moves gaps from other to kernel wait.
    let wide = json(
        &fixtures(),
        &[
            "idle",
            "ranks",
            "--hta-compat",
            "--kernel-wait-us",
            "1000",
            "--format",
            "json",
        ],
    );
    assert_eq!(wide["traces"][0]["kernel_wait_ns"], 1_000_000);
    let s7 = wide["traces"][0]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stream"] == 7)
        .unwrap()
        .clone();
    assert!(s7["categories"][1]["idle_ns"].as_i64().unwrap() > 1_985_000);
}

#[test]
fn launches_and_kernel_classes() {
    let l = json(
        &fixtures(),
        &[
            "launches",
            "ranks",
            "--hta-compat",
            "--format",
            "json",
            "--top",
            "3",
        ],
    );
    let r0 = &l["traces"][0];
    let count = r0["count"].as_u64().unwrap();
    let r1 = l["traces"][1]["count"].as_u64().unwrap();
    assert_eq!(count + r1, 1179, "HTA's launch-stats rows");
    assert!(r0["short_kernel_list"].as_array().unwrap().len() <= 3);
    assert_eq!(r0["steps"][0]["step"], "ProfilerStep#551");
    let csv = kinetoscope(
        &fixtures(),
        &["launches", "ranks", "--hta-compat", "--format", "csv"],
    );
    assert_eq!(csv.stdout.lines().count(), 1180);
    let low = json(
        &fixtures(),
        &[
            "launches",
            "ranks",
            "--runtime-cutoff-us",
            "5",
            "--format",
            "json",
        ],
    );
    assert!(low["traces"][0]["runtime_outliers"].as_u64().unwrap() > 0);
    assert_eq!(low["traces"][0]["options"]["runtime_cutoff_ns"], 5000);

    let c = json(
        &fixtures(),
        &[
            "kernels",
            "ranks",
            "--by-class",
            "--hta-compat",
            "--format",
            "json",
            "--top",
            "2",
        ],
    );
    assert_eq!(c["analysis"], "kernel_classes");
    let t0 = &c["traces"][0];
    // HTA 0.5.0: 11.81 %.
    let overlap = t0["comm_comp_overlap_share"].as_f64().unwrap();
    assert_eq!((overlap * 10000.0).round() / 100.0, 11.81);
    assert_eq!(t0["rules"], "hta050");
    let comp = t0["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["class"] == "computation")
        .unwrap();
    let top = comp["top"].as_array().unwrap();
    assert_eq!(top.len(), 3, "two kernels and `others`");
    assert_eq!(top[2]["name"], "others");
    let table = kinetoscope(&fixtures(), &["kernels", "ranks", "--by-class"]);
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(table
        .stdout
        .contains("COMPUTATION overlapping COMMUNICATION"));
    // --hta-compat needs --by-class.
    let bad = kinetoscope(&fixtures(), &["kernels", "ranks", "--hta-compat"]);
    assert_eq!(bad.code, Some(2));
}
