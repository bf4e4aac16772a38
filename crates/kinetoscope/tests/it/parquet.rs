//! End-to-end tests of `kinetoscope export --parquet` and of `ranks` and `report` given
//! the export, on PARAM's real 8-rank DLRM job (8× V100, NCCL).

use std::path::{Path, PathBuf};

use crate::common::{json, kinetoscope};

fn param_ranks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-analysis/tests/fixtures/param/dlrm_kineto")
}

#[test]
fn ranks_and_report_read_the_export_and_other_views_name_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let traces = param_ranks();
    let (t, o) = (traces.to_str().unwrap(), out.to_str().unwrap());
    let doc = json(
        tmp.path(),
        &["export", t, "--parquet", o, "--format", "json"],
    );
    let ranks = doc["manifest"]["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 8);
    assert!(out.join("collectives/rank-00007.parquet").is_file());

    let mut from_traces = json(tmp.path(), &["ranks", t, "--format", "json"]);
    let mut from_export = json(tmp.path(), &["ranks", o, "--format", "json"]);
    assert_eq!(from_export["input"], o);
    for v in [&mut from_traces, &mut from_export] {
        v.as_object_mut().unwrap().remove("input");
    }
    assert_eq!(from_export, from_traces);

    let table = kinetoscope(tmp.path(), &["export", t, "--parquet", o]);
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    assert!(
        table.stdout.contains("8 rank(s) exported"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("collectives"), "{}", table.stdout);

    // `report` runs the cross-rank rules from the export (none fires on this job) and
    // says that the rules of each trace need the traces; views of events name both.
    let report = kinetoscope(tmp.path(), &["report", o]);
    assert_eq!(report.code, Some(0), "{}", report.stderr);
    assert!(
        report
            .stdout
            .contains("the rules of each trace need the traces"),
        "{}",
        report.stdout
    );
    let ops = kinetoscope(tmp.path(), &["ops", o]);
    assert_eq!(ops.code, Some(2));
    assert!(
        ops.stderr.contains("`ranks` and `report`"),
        "{}",
        ops.stderr
    );
}

#[test]
fn an_output_folder_with_other_files_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("keep.json"), "{}").unwrap();
    let t = param_ranks();
    let run = kinetoscope(
        tmp.path(),
        &[
            "export",
            t.to_str().unwrap(),
            "--parquet",
            tmp.path().to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("keep.json"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("keep.json")).unwrap(),
        "{}"
    );
}
