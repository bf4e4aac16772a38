//! End-to-end tests of `kinetoscope ops` and `kinetoscope kernels`: formats, options,
//! messages and exit codes. The numbers themselves are checked against the TensorBoard
//! plugin in `crates/kinetoscope-analysis/tests/it/ops_kernels.rs`.

use crate::common::{fixtures, json, kinetoscope};

/// ResNet-50 on a V100, PyTorch 1.9 era (the plugin's `resnet50_num_workers_0` span 1).
const RESNET: &str = "worker0.1623143089861.pt.trace.json.gz";

#[test]
fn ops_terminal_table() {
    let run = kinetoscope(&fixtures(), &["ops", RESNET, "--top", "3"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("3 of 76 operator rows, by name, sorted by device_self"),
        "{out}"
    );
    let first = out.lines().find(|l| l.contains("aten::")).expect("a row");
    assert!(
        first.contains("aten::cudnn_convolution_backward_weight") && first.contains("142461.0"),
        "{out}"
    );
}

#[test]
fn ops_json_document() {
    let doc = json(
        &fixtures(),
        &[
            "ops",
            RESNET,
            "--format",
            "json",
            "--top",
            "2",
            "--group-by",
            "shape",
        ],
    );
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(doc["input"], RESNET);
    assert_eq!(doc["group_by"], "shape");
    assert_eq!(doc["sort"], "device_self");
    assert_eq!(doc["top"], 2);
    assert_eq!(doc["errors"].as_array().unwrap().len(), 0);
    let t = &doc["traces"][0];
    assert_eq!(t["total_rows"], 577);
    assert!(t["rank"].is_null());
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // The plugin's top row by name + input shape.
    assert_eq!(rows[0]["name"], "aten::cudnn_batch_norm_backward");
    assert_eq!(
        rows[0]["input_shape"],
        "[[32, 256, 56, 56], [32, 256, 56, 56], [256], [256], [256], [256], [256], [], [0]]"
    );
    assert_eq!(rows[0]["calls"], 24);
    assert_eq!(rows[0]["device_self_ns"], 16_151_000);
}

#[test]
fn ops_sort_and_csv() {
    let run = kinetoscope(
        &fixtures(),
        &[
            "ops",
            RESNET,
            "--format",
            "csv",
            "--sort",
            "host-self",
            "--top",
            "1",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mut lines = run.stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        "path,rank,name,calls,launching_calls,device_self_us,device_total_us,host_self_us,\
         host_total_us,tc_eligible,tc_self_pct,tc_total_pct,has_call_stack"
    );
    // By host self time the plugin's top operator is aten::empty (4404 calls, 68147 µs).
    let row = lines.next().unwrap();
    assert!(
        row.starts_with(&format!("{RESNET},,aten::empty,4404,0,")),
        "{row}"
    );
    assert!(row.contains(",68147,"), "{row}");
    assert_eq!(lines.next(), None);
}

/// `perf`: the JSON rows carry the keys issue 20 names, the CSV has them as columns, and
/// the peak flags are checked.
#[test]
fn perf_keys_in_json_and_csv() {
    const KEYS: [&str; 16] = [
        "family",
        "name",
        "input_dims",
        "dtypes",
        "calls",
        "gflop_per_call",
        "bytes_per_call",
        "flop_per_byte",
        "kernel_us",
        "tflops",
        "tbps",
        "peak_tflops",
        "peak_tbps",
        "bound",
        "roofline_fraction",
        "lost_us",
    ];
    let shapes = "mi250_minitoy_train_ROCm6_2_kineto.json.gz";
    let args = [
        "perf",
        shapes,
        "--peak-tflops",
        "100",
        "--peak-tbps",
        "2",
        "--format",
        "json",
    ];
    let doc = json(&fixtures(), &args);
    let rows = doc["traces"][0]["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for key in KEYS {
        assert!(rows[0].get(key).is_some(), "JSON row lacks {key}");
    }
    let addmm = rows.iter().find(|r| r["name"] == "aten::addmm").unwrap();
    assert_eq!(addmm["peak_tflops"], 100.0);
    assert!(addmm["roofline_fraction"].as_f64().is_some());
    let run = kinetoscope(&fixtures(), &["perf", shapes, "--format", "csv"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let header: Vec<&str> = run.stdout.lines().next().unwrap().split(',').collect();
    for key in KEYS {
        assert!(header.contains(&key), "CSV lacks {key}");
    }
    let bad = kinetoscope(&fixtures(), &["perf", shapes, "--peak-tbps", "0"]);
    assert_eq!(bad.code, Some(2));
    assert!(bad.stderr.contains("--peak-tbps"), "{}", bad.stderr);
}

#[test]
fn kernels_by_name_and_properties() {
    let doc = json(
        &fixtures(),
        &["kernels", RESNET, "--format", "json", "--top", "1"],
    );
    let t = &doc["traces"][0];
    assert_eq!(t["total_rows"], 67);
    let row = &t["rows"][0];
    assert!(row["name"]
        .as_str()
        .unwrap()
        .starts_with("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>"));
    assert_eq!(row["calls"], 162);
    assert_eq!(row["total_ns"], 80_756_000);
    assert_eq!(row["tensor_cores"], false);
    assert!(row.get("operator").is_none());

    let doc = json(
        &fixtures(),
        &[
            "kernels",
            RESNET,
            "--format",
            "json",
            "--group-by",
            "properties",
            "--sort",
            "calls",
            "--top",
            "1",
        ],
    );
    let t = &doc["traces"][0];
    assert_eq!(t["total_rows"], 226);
    assert_eq!(t["sort"], "calls");
    let row = &t["rows"][0];
    for field in [
        "operator",
        "grid",
        "block",
        "registers_per_thread",
        "shared_memory_bytes",
    ] {
        assert!(row.get(field).is_some(), "{field}: {row}");
    }

    let run = kinetoscope(
        &fixtures(),
        &[
            "kernels",
            RESNET,
            "--format",
            "csv",
            "--group-by",
            "properties",
            "--top",
            "1",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.starts_with(
        "path,rank,name,operator,grid,block,registers_per_thread,shared_memory_bytes,\
         op_tc_eligible,calls,total_us,"
    ));
}

#[test]
fn rank_folder_and_read_errors() {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixtures().join("ranks")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.path().join("rank-9.json"), "not json").unwrap();
    let run = kinetoscope(dir.path(), &["ops", ".", "--format", "json", "--top", "1"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["layout"], "rank_folder");
    let traces = doc["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[0]["rows"].as_array().unwrap().len(), 1);
    assert_eq!(doc["errors"].as_array().unwrap().len(), 1);
    let run = kinetoscope(dir.path(), &["kernels", ".", "--format", "csv"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("rank-9.json"), "{}", run.stderr);
}

#[test]
fn bad_options() {
    let run = kinetoscope(&fixtures(), &["ops", RESNET, "--sort", "bogus"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("possible values: device_self, device_total, host_self"),
        "{}",
        run.stderr
    );
    let run = kinetoscope(&fixtures(), &["kernels", RESNET, "--sort", "host_self"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("possible values: total, calls"),
        "{}",
        run.stderr
    );
    let run = kinetoscope(&fixtures(), &["kernels", RESNET, "--group-by", "shape"]);
    assert_eq!(run.code, Some(2));
    let run = kinetoscope(&fixtures(), &["ops", "--help"]);
    assert!(run
        .stdout
        .contains("Sort keys (--sort): device_self (default"));
}
