//! End-to-end tests of the `kinetoscope` binary: output snapshots (insta, stored in
//! `tests/it/snapshots/`), exit codes and error messages.
//!
//! Paths in the output are kept portable by running the binary from the fixtures folder
//! (or a temporary folder) with relative paths. Update snapshots with
//! `INSTA_UPDATE=always cargo test -p kinetoscope --test it cli::` and review the `.snap`
//! files.

use std::path::Path;

use crate::common::{fixtures, kinetoscope, snapshot_settings};

#[test]
fn no_arguments_reports_on_the_embedded_sample() {
    let run = kinetoscope(&fixtures(), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    snapshot_settings().bind(|| insta::assert_snapshot!("no_args_table", run.stdout));
}

#[test]
fn report_is_the_default_subcommand() {
    let a = kinetoscope(&fixtures(), &["report"]);
    let b = kinetoscope(&fixtures(), &[]);
    assert_eq!(a.code, Some(0));
    assert_eq!(a.stdout, b.stdout);
    let a = kinetoscope(&fixtures(), &["report", "inference_rank_1.json.gz"]);
    let b = kinetoscope(&fixtures(), &["inference_rank_1.json.gz"]);
    assert_eq!(a.code, Some(0), "{}", a.stderr);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn help() {
    let run = kinetoscope(&fixtures(), &["--help"]);
    assert_eq!(run.code, Some(0));
    snapshot_settings().bind(|| insta::assert_snapshot!("help", run.stdout));
    let run = kinetoscope(&fixtures(), &["summary", "--help"]);
    assert_eq!(run.code, Some(0));
    snapshot_settings().bind(|| insta::assert_snapshot!("summary_help", run.stdout));
    let run = kinetoscope(&fixtures(), &["report", "--help"]);
    assert_eq!(run.code, Some(0));
    snapshot_settings().bind(|| insta::assert_snapshot!("report_help", run.stdout));
}

fn summary_json(file: &str) -> serde_json::Value {
    let run = kinetoscope(&fixtures(), &["summary", file, "--format", "json"]);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.json()
}

#[test]
fn summary_json_torch_2_4_relative_time_base() {
    let v = summary_json("torch-2.4.1_tb_w0.1795239112653061314.pt.trace.json.gz");
    assert_eq!(v["traces"][0]["steps"].as_array().unwrap().len(), 2);
    snapshot_settings().bind(|| insta::assert_json_snapshot!("summary_json_torch_2_4_1", v));
}

#[test]
fn summary_json_old_categories() {
    let v = summary_json("inference_rank_1.json.gz");
    assert_eq!(v["traces"][0]["events_by_category"]["kernel"], 4);
    snapshot_settings().bind(|| insta::assert_json_snapshot!("summary_json_inference_rank_1", v));
}

#[test]
fn summary_json_plain_json_file() {
    let v = summary_json("backward_thread.json");
    assert_eq!(v["traces"][0]["gzip"], false);
    snapshot_settings().bind(|| insta::assert_json_snapshot!("summary_json_backward_thread", v));
}

#[test]
fn summary_table_of_a_rank_folder() {
    let run = kinetoscope(&fixtures(), &["summary", "ranks"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    snapshot_settings().bind(|| insta::assert_snapshot!("summary_table_ranks", run.stdout));
}

#[test]
fn summary_table_of_a_1_9_era_trace() {
    let run = kinetoscope(
        &fixtures(),
        &[
            "summary",
            "worker0.1623143089861.pt.trace.json.gz",
            "-j",
            "2",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    snapshot_settings().bind(|| insta::assert_snapshot!("summary_table_torch_1_9", run.stdout));
}

#[test]
fn not_a_trace_fails_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("snapshot.pickle"),
        b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.",
    )
    .unwrap();
    let run = kinetoscope(dir.path(), &["summary", "snapshot.pickle"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("snapshot.pickle"), "{}", run.stderr);
    assert!(run.stderr.contains("pickle"), "{}", run.stderr);
    snapshot_settings().bind(|| insta::assert_snapshot!("not_a_trace", run.transcript()));
}

#[test]
fn empty_file_fails_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.json"), b"").unwrap();
    let run = kinetoscope(dir.path(), &["summary", "empty.json"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("empty.json"), "{}", run.stderr);
    assert!(run.stderr.contains("empty"), "{}", run.stderr);
}

#[test]
fn missing_file_fails_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let run = kinetoscope(dir.path(), &["summary", "nope.json"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("nope.json"), "{}", run.stderr);
}

/// The first 2,000 bytes of the plain-JSON fixture `backward_thread.json`: the file
/// ends inside its fourth event.
fn truncated_trace(dir: &Path) -> &'static str {
    let text = std::fs::read(fixtures().join("backward_thread.json")).unwrap();
    std::fs::write(dir.join("truncated.json"), &text[..2000]).unwrap();
    "truncated.json"
}

#[test]
fn truncated_file_is_read_leniently() {
    let dir = tempfile::tempdir().unwrap();
    let name = truncated_trace(dir.path());
    let run = kinetoscope(dir.path(), &["summary", name]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("truncated tail"), "{}", run.stdout);
    snapshot_settings().bind(|| insta::assert_snapshot!("truncated_lenient", run.transcript()));
}

#[test]
fn truncated_file_with_strict_fails_with_location() {
    let dir = tempfile::tempdir().unwrap();
    let name = truncated_trace(dir.path());
    let run = kinetoscope(dir.path(), &["summary", name, "--strict"]);
    assert_eq!(run.code, Some(2));
    // The message names the file, the byte offset and the event index.
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: truncated.json: byte "), "{first}");
    assert!(first.contains(", event #"), "{first}");
    snapshot_settings().bind(|| insta::assert_snapshot!("truncated_strict", run.transcript()));
}

#[test]
fn unknown_option_is_a_usage_error() {
    let run = kinetoscope(&fixtures(), &["summary", "--no-such-flag"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--no-such-flag"), "{}", run.stderr);
}
