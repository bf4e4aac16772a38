//! End-to-end tests of `kinetoscope memory` on profiler memory timelines, the inferred
//! categories of a trace, the comparison with PyTorch's timeline, and `--html` refusals.

use std::path::PathBuf;

use crate::common::{json, kinetoscope, memory_timelines};

#[test]
fn raw_timeline_table() {
    let run = kinetoscope(
        &memory_timelines(),
        &["memory", "torch-2.2.2/mem.raw.json.gz"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("raw .raw.json.gz · 491 rows (21 before profiling)"),
        "{out}"
    );
    assert!(
        out.contains("peak            229.2 KiB at +2.324 ms"),
        "{out}"
    );
    for cat in [
        "parameter",
        "optimizer_state",
        "activation",
        "gradient",
        "autograd_detail",
    ] {
        assert!(out.contains(cat), "{cat} missing: {out}");
    }
    assert!(out.contains("bytes per category over time"), "{out}");
}

#[test]
fn coalesced_and_raw_agree_in_json() {
    let raw = json(
        &memory_timelines(),
        &["memory", "torch-2.2.2/mem.raw.json.gz", "--format", "json"],
    );
    let co = json(
        &memory_timelines(),
        &[
            "memory",
            "torch-2.2.2_mem_coalesced_memory_timeline.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(raw["kind"], "memory_timeline");
    assert_eq!(raw["format"], "raw");
    assert_eq!(co["format"], "coalesced");
    let peak = &raw["series"]["peak"];
    assert_eq!(peak["total_bytes"], 234_728);
    assert_eq!(
        peak["by_category"],
        serde_json::json!([71_208, 76_896, 8_456, 4, 34_052, 44_112, 0, 0])
    );
    assert_eq!(co["series"]["peak"]["by_category"], peak["by_category"]);
    assert_eq!(raw["series"]["categories"][7], "unknown");
}

#[test]
fn trace_categories_compared_with_the_timeline_beside_it() {
    let run = kinetoscope(
        &memory_timelines(),
        &[
            "memory",
            "torch-2.2.2/plain.pt.trace.json.gz",
            "--format",
            "json",
        ],
    );
    let v = run.json();
    let t = &v["traces"][0];
    let cats = &t["devices"][0]["categories"];
    assert_eq!(cats["series"]["categories"][8], "untracked");
    let peak = &cats["series"]["peak"];
    // The peak of the trace's own Total Allocated (140.3 KiB), split by category.
    assert_eq!(peak["total_bytes"], 143_712);
    let by: Vec<i64> = serde_json::from_value(peak["by_category"].clone()).unwrap();
    assert_eq!(by.iter().sum::<i64>(), 143_712);
    let c = &t["timeline_comparison"];
    assert_eq!(c["device"], "CPU");
    assert_eq!(c["timeline_peak"]["total_bytes"], 234_728);
    assert!(c["timeline"].as_str().unwrap().ends_with("mem.raw.json.gz"));
    // Terminal: both side by side.
    let table = kinetoscope(
        &memory_timelines(),
        &["memory", "torch-2.2.2/plain.pt.trace.json.gz"],
    );
    assert!(
        table.stdout.contains("PyTorch timeline at its peak"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("kinetoscope at its peak"));
}

#[test]
fn explicit_timeline_and_bad_timeline() {
    let ok = kinetoscope(
        &memory_timelines(),
        &[
            "memory",
            "torch-2.2.2/plain.pt.trace.json.gz",
            "--timeline",
            "torch-2.2.2_mem_coalesced_memory_timeline.json",
            "--format",
            "json",
        ],
    );
    let v = ok.json();
    assert_eq!(
        v["traces"][0]["timeline_comparison"]["timeline_peak"]["total_bytes"],
        234_728
    );
    let bad = kinetoscope(
        &memory_timelines(),
        &[
            "memory",
            "torch-2.2.2/plain.pt.trace.json.gz",
            "--timeline",
            "SOURCE.md",
        ],
    );
    assert_eq!(bad.code, Some(2), "{}", bad.stdout);
}

#[test]
fn html_never_overwrites_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mem.raw.json.gz");
    std::fs::copy(
        memory_timelines().join("torch-2.2.2/mem.raw.json.gz"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let run = kinetoscope(
        dir.path(),
        &["memory", "mem.raw.json.gz", "--html", "./mem.raw.json.gz"],
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("refusing to write over mem.raw.json.gz, which this command reads"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    let ok = kinetoscope(
        dir.path(),
        &["memory", "mem.raw.json.gz", "--html", "out.html"],
    );
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    let html = std::fs::read_to_string(dir.path().join("out.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script src"), "no external scripts");
    assert!(!html.contains("<link"), "no external stylesheets");
}

/// A run folder: stage 1 has a trace, its memory timeline and a snapshot; stage 2 a
/// trace without memory events and an HTML timeline (a picture, not read).
fn run_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let f = memory_timelines();
    let copy = |from: PathBuf, to: &str| {
        std::fs::copy(from, dir.path().join(to)).unwrap();
    };
    copy(
        f.join("torch-2.2.2/plain.pt.trace.json.gz"),
        "stage1-train_trace.json.gz",
    );
    copy(
        f.join("torch-2.2.2/mem.raw.json.gz"),
        "stage1-train_memory_timeline.raw.json.gz",
    );
    copy(
        f.join("../snapshots/v2_6_full.pickle"),
        "stage1-train_mem.pickle",
    );
    copy(f.join("../backward_thread.json"), "stage2-eval_trace.json");
    std::fs::write(
        dir.path().join("stage2-eval_memory_timeline.html"),
        "<!DOCTYPE html>",
    )
    .unwrap();
    dir
}

#[test]
fn run_folder_memory_per_phase() {
    let dir = run_folder();
    let run = kinetoscope(dir.path(), &["memory", ".", "--top", "2"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.contains("memory per phase"), "{out}");
    assert!(
        out.contains("reserved 22.0 MiB · allocated 12.5 MiB · peak active 14.5 MiB"),
        "{out}"
    );
    assert!(
        out.contains("peak 229.2 KiB (largest: optimizer_state 75.1 KiB)"),
        "{out}"
    );
    assert!(out.contains("peak allocated 140.3 KiB on CPU"), "{out}");
    // The phase's timeline is compared with the phase's trace.
    assert!(out.contains("PyTorch timeline at its peak"), "{out}");
    let v = json(dir.path(), &["memory", ".", "--format", "json"]);
    let phases = v["phase_memory"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    let arts = phases[0]["artifacts"].as_array().unwrap();
    let snap = arts
        .iter()
        .find(|a| a["kind"] == "memory_snapshot")
        .unwrap();
    assert_eq!(snap["peak_bytes"], 15_204_352);
}

#[test]
fn run_folder_summary_reads_snapshots_and_timelines() {
    let dir = run_folder();
    let run = kinetoscope(dir.path(), &["summary", "."]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("stage1-train_mem.pickle  (reserved 22.0 MiB"),
        "{out}"
    );
    assert!(
        out.contains("stage1-train_memory_timeline.raw.json.gz  (peak 229.2 KiB"),
        "{out}"
    );
    // The HTML export is a picture: listed, and said to hold no numbers.
    assert_eq!(out.matches("not read yet").count(), 0, "{out}");
    assert!(
        out.contains("stage2-eval_memory_timeline.html  (a picture (PyTorch's HTML export"),
        "{out}"
    );
}

#[test]
fn trace_categories_over_time_with_table_curve() {
    let run = kinetoscope(
        &memory_timelines(),
        &[
            "memory",
            "torch-2.2.2/plain.pt.trace.json.gz",
            "--table",
            "curve",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("CPU bytes per inferred category over time"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("untracked"));
}
