//! End-to-end tests of `kinetoscope memory`: formats, tables, messages and exit codes.

use crate::common::{fixtures, kinetoscope};

/// A CPU trace recorded with `profile_memory=True` (PyTorch 2.9.1, 216 `[memory]` events).
const CPU_TRACE: &str = "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz";

#[test]
fn terminal_report() {
    let run = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--top", "3"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("records  216 [memory] events · 216 with address"),
        "{out}"
    );
    assert!(out.contains("peak allocated  102.8 KiB"), "{out}");
    assert!(out.contains("in aten::div"), "{out}");
    assert!(out.contains("CPU operators"), "{out}");
    assert!(
        out.contains("CPU allocations: 106 paired, 4 not freed"),
        "{out}"
    );
    assert!(out.contains("(first 3 of 110)"), "{out}");
}

#[test]
fn json_document() {
    let run = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(doc["layout"], "file");
    let t = &doc["traces"][0];
    assert_eq!(t["records"], 216);
    let cpu = &t["devices"][0];
    assert_eq!(cpu["device"], "CPU");
    assert_eq!(cpu["peak_allocated"]["bytes"], 105_272);
    assert_eq!(cpu["allocations"]["paired"], 106);
    assert_eq!(cpu["curve"]["kind"], "recorded");
    assert_eq!(cpu["curve"]["raw_points"], 216);
    assert_eq!(cpu["operators"].as_array().unwrap().len(), 20);
    assert_eq!(cpu["operators_total"], 35);
}

#[test]
fn csv_tables() {
    let ops = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--format", "csv"]);
    assert_eq!(ops.code, Some(0), "{}", ops.stderr);
    let mut lines = ops.stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "device,operator,calls,size_increase_bytes,self_size_increase_bytes,\
             allocation_count,self_allocation_count,allocation_size_bytes,\
             self_allocation_size_bytes"
        )
    );
    assert_eq!(
        lines.next(),
        Some("CPU,aten::mm,6,108544,108544,6,6,108544,108544")
    );

    let curve = kinetoscope(
        &fixtures(),
        &[
            "memory", CPU_TRACE, "--format", "csv", "--table", "curve", "--points", "10",
        ],
    );
    assert_eq!(curve.code, Some(0), "{}", curve.stderr);
    let rows: Vec<&str> = curve.stdout.lines().skip(1).collect();
    assert!(rows.len() <= 10 && !rows.is_empty());
    assert!(
        rows.iter().any(|r| r.contains(",105272,")),
        "{}",
        curve.stdout
    );

    let events = kinetoscope(
        &fixtures(),
        &[
            "memory", CPU_TRACE, "--format", "csv", "--table", "events", "--top", "0",
        ],
    );
    assert_eq!(events.stdout.lines().count(), 1 + 110);
}

#[test]
fn trace_without_memory_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.json");
    std::fs::write(
        &path,
        r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]}"#,
    )
    .unwrap();
    let run = kinetoscope(dir.path(), &["memory", "plain.json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("no [memory] events: record with profile_memory=True"),
        "{}",
        run.stdout
    );
    let csv = kinetoscope(dir.path(), &["memory", "plain.json", "--format", "csv"]);
    assert_eq!(csv.code, Some(0));
    assert_eq!(csv.stdout.lines().count(), 1);
    assert!(csv.stderr.contains("no [memory] events"), "{}", csv.stderr);
}

#[test]
fn bad_options() {
    let run = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--sort", "bogus"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("possible values: name, calls"),
        "{}",
        run.stderr
    );
    let run = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--device", "gpu0"]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout
            .contains("no [memory] events on the selected device"),
        "{}",
        run.stdout
    );
    let run = kinetoscope(&fixtures(), &["memory", CPU_TRACE, "--device", "tpu"]);
    assert_eq!(run.code, Some(2));
}
