//! Traces shaped to make analyses quadratic (`kinetoscope_synth::shapes`): every event at
//! one timestamp, deep nesting, one track, a track (and device) per event, every name
//! distinct, spans that all overlap, a step per unit. Each is generated small, gzipped,
//! in a tempdir; every view and `report` must exit 0, print no raw control byte, peak
//! under a memory bound and leave the input unchanged. How long they take is the
//! complexity benchmark's question (`kinetoscope-bench --adversarial`), not these tests'.

use std::path::{Path, PathBuf};

use kinetoscope_synth::shapes::{write_shape, Shape, ShapeOptions};

use super::harness::{fingerprint, run_measured};

/// Every per-trace view, `report` first.
const VIEWS: [&str; 14] = [
    "report",
    "check",
    "summary",
    "memory",
    "overview",
    "ops",
    "perf",
    "kernels",
    "temporal",
    "idle",
    "launches",
    "comm",
    "sequences",
    "critical-path",
];

/// Units of each small shape (3 to 5 events each).
const UNITS: u64 = 1_000;

/// Peak RSS allowed to one run on a small shape: the debug binary takes about 17 MiB on
/// these traces (about 1 MB of JSON); state per event times depth, streams or steps
/// would not fit.
const SMALL_RSS: u64 = 64 << 20;

/// Write `shape` as `<dir>/<name>.json.gz`.
fn shape_file(dir: &Path, name: &str, shape: Shape, units: u64, steps: u64) -> PathBuf {
    let file = dir.join(format!("{name}.json.gz"));
    write_shape(
        &ShapeOptions {
            shape,
            units,
            steps,
        },
        &file,
    )
    .expect("write the shape");
    file
}

/// Run every view on `file` and check each run; `report`'s JSON must parse.
fn every_view_is_sane(file: &Path, views: &[&str], max_rss: u64) {
    let dir = file.parent().expect("in a folder");
    let before = fingerprint(&[file.to_owned()]);
    let path = file.to_str().expect("UTF-8 path");
    for view in views {
        let run = run_measured(dir, &[view, path]);
        run.assert_sane(max_rss);
        assert_eq!(run.code, Some(0), "{view} on {path}: {}", run.err());
        assert!(!run.out().is_empty(), "{view} printed nothing");
    }
    let json = run_measured(dir, &["report", path, "--format", "json"]);
    json.assert_sane(max_rss);
    let doc: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("the JSON output parses");
    assert!(
        doc["traces"].as_array().is_some_and(|t| t.len() == 1),
        "{doc}"
    );
    assert_eq!(before, fingerprint(&[file.to_owned()]), "the input changed");
}

fn check_shape(shape: Shape) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = shape_file(dir.path(), shape.name(), shape, UNITS, 3);
    every_view_is_sane(&file, &VIEWS, SMALL_RSS);
}

#[test]
fn every_event_at_one_timestamp() {
    check_shape(Shape::SameTimestamp);
}

#[test]
fn deeply_nested_operators() {
    check_shape(Shape::DeepNesting);
}

#[test]
fn every_event_on_one_track() {
    check_shape(Shape::OneTrack);
}

#[test]
fn every_event_on_its_own_track_and_device() {
    check_shape(Shape::TrackPerEvent);
}

#[test]
fn every_name_distinct() {
    check_shape(Shape::DistinctNames);
}

#[test]
fn every_span_overlapping_every_other() {
    check_shape(Shape::Overlap);
}

#[test]
fn a_step_per_unit() {
    check_shape(Shape::StepPerUnit);
}

/// 30,000 levels of operators, each with its launch, kernel and memory records, in one
/// step (138,000 events, 35 MB of JSON, 3 MB gzipped): the views that follow the
/// nesting (the advisor's, the memory view's operator tree, the critical path's walk,
/// the operator tree) must neither recurse that deep nor walk it per event.
#[test]
fn thirty_thousand_levels_deep() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = shape_file(dir.path(), "deep", Shape::DeepNesting, 30_000, 1);
    every_view_is_sane(
        &file,
        &[
            "report",
            "memory",
            "ops",
            "critical-path",
            "overview",
            "check",
        ],
        160 << 20,
    );
}

/// A rank folder of adversarial traces: `ranks` and `report` compare them.
#[test]
fn a_folder_of_adversarial_ranks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    for (r, shape) in [Shape::TrackPerEvent, Shape::Overlap, Shape::StepPerUnit]
        .into_iter()
        .enumerate()
    {
        shape_file(&ranks, &format!("rank-{r}.pt.trace"), shape, 500, 3);
    }
    let before = fingerprint(std::slice::from_ref(&ranks));
    for view in ["ranks", "report"] {
        let run = run_measured(dir.path(), &[view, "ranks"]);
        run.assert_sane(SMALL_RSS);
        assert_eq!(run.code, Some(0), "{view}: {}", run.err());
    }
    assert_eq!(before, fingerprint(&[ranks]));
}
