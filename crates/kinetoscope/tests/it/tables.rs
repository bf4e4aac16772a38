//! `kinetoscope tables` and `report` on the recorded oumi run folder
//! (`fixtures/key_averages`): the comparison with the Chrome trace of the same run,
//! sorting and cutting, CSV, refused options, and the tables listed by `report`.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{fixtures, json, kinetoscope};

fn dir() -> PathBuf {
    fixtures().join("key_averages")
}

#[test]
fn tables_agree_with_the_trace_of_the_same_run() {
    let doc = json(
        &dir(),
        &[
            "tables",
            "prof_0_local_0_self_cpu_time_total.txt",
            "--format",
            "json",
        ],
    );
    let table = &doc["tables"][0];
    assert_eq!(table["oumi"]["sort_key"], "self_cpu_time_total");
    let cmp = &table["comparison"];
    assert!(cmp["trace"]
        .as_str()
        .unwrap()
        .ends_with("prof_0_local_0_pt_trace.json.gz"));
    let ops = cmp["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 15);
    let matched: Vec<&Value> = ops.iter().filter(|o| !o["trace_name"].is_null()).collect();
    assert!(matched.len() >= 12, "{ops:?}");
    for o in matched {
        assert_eq!(o["table_calls"], o["trace_calls"], "{o}");
        let table_ns = o["table_self_cpu_ns"].as_i64().unwrap();
        let diff = o["self_diff_ns"].as_i64().unwrap();
        // The table prints 3 decimals of its unit: within half the last digit.
        assert!(diff.abs() as f64 <= table_ns as f64 * 0.0005 + 1.0, "{o}");
    }
    // User annotations (Optimizer.step#...) are not operators in the trace's ops view.
    let step = ops
        .iter()
        .find(|o| o["name"] == "Optimizer.step#SGD.step")
        .unwrap();
    assert!(step["trace_name"].is_null());
}

#[test]
fn sort_top_and_csv() {
    let doc = json(
        &dir(),
        &[
            "tables",
            "prof_0_local_0_cpu_time_total.txt",
            "--sort",
            "# of calls",
            "--top",
            "3",
            "--format",
            "json",
        ],
    );
    let table = &doc["tables"][0];
    assert_eq!(table["total_rows"], 15);
    let i = table["table"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["header"] == "# of Calls")
        .unwrap();
    let calls: Vec<u64> = table["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cells"][i]["value"].as_u64().unwrap())
        .collect();
    assert_eq!(calls.len(), 3);
    assert!(
        calls.windows(2).all(|w| w[0] >= w[1]) && calls[0] == 168,
        "{calls:?}"
    );

    let (code, out, err) = kinetoscope(
        &dir(),
        &["tables", "variant_no_memory.txt", "--format", "csv"],
    )
    .into_parts();
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "file,row,name,column,unit,value");
    // 15 rows × 6 columns after Name.
    assert_eq!(lines.len(), 1 + 15 * 6);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("aten::addmm,Self CPU,duration,1086")),
        "{out}"
    );
}

#[test]
fn unknown_sort_column_names_the_columns() {
    let (code, _, err) = kinetoscope(
        &dir(),
        &["tables", "variant_no_memory.txt", "--sort", "Wall"],
    )
    .into_parts();
    assert_eq!(code, Some(2));
    assert!(
        err.contains("no such column") && err.contains("Self CPU %"),
        "{err}"
    );
}

#[test]
fn report_lists_the_folders_tables_by_rank_and_sort_key() {
    let doc = json(&dir(), &["report", ".", "--format", "json"]);
    let tables = doc["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 11);
    let oumi: Vec<&str> = tables
        .iter()
        .filter_map(|t| t["oumi"]["sort_key"].as_str())
        .collect();
    for key in [
        "cpu_time_total",
        "self_cpu_time_total",
        "cpu_memory_usage",
        "self_cpu_memory_usage",
    ] {
        assert!(oumi.contains(&key), "{oumi:?}");
    }
    assert_eq!(doc["traces"].as_array().unwrap().len(), 1);
    assert_eq!(doc["pstats"].as_array().unwrap().len(), 1);
    let listed = json(&dir(), &["tables", ".", "--top", "1", "--format", "json"]);
    assert_eq!(listed["tables"].as_array().unwrap().len(), 11);
}

#[test]
fn a_trace_view_given_a_table_points_to_tables() {
    let (code, _, err) = kinetoscope(&dir(), &["summary", "variant_no_memory.txt"]).into_parts();
    assert_eq!(code, Some(2));
    assert!(
        err.contains("key_averages table") && err.contains("kinetoscope tables"),
        "{err}"
    );
}
