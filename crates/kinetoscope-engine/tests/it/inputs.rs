//! What a path on the command line turns out to be: a file, a folder of rank files, or a
//! run folder of phase files (possibly one timestamped sub-folder down).

use std::path::{Path, PathBuf};

use kinetoscope_engine::input::{map_paths, map_paths_each, open_path as open_input, Input};
use kinetoscope_trace::read::read_trace;
use kinetoscope_trace::{ArtifactKind, TraceError};

use crate::common::{fixture, fixtures_dir, lenient};

fn file_names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_file_is_a_file() {
    let p = fixture("backward_thread.json");
    assert_eq!(open_input(&p).unwrap(), Input::File(p.clone()));
    assert_eq!(open_input(&p).unwrap().trace_files(), vec![p]);
}

#[test]
fn rank_folder_of_two_traces() {
    let dir = fixtures_dir().join("ranks");
    let input = open_input(&dir).unwrap();
    let Input::RankFolder { dir: d, traces, .. } = &input else {
        panic!("expected a rank folder, got {input:?}");
    };
    assert_eq!(d, &dir);
    assert_eq!(
        file_names(traces),
        ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"]
    );
    assert_eq!(input.trace_files(), *traces);

    // Read them in parallel; results come back in input order, ranks from
    // `distributedInfo`.
    let ranks: Vec<_> = map_paths(traces, &lenient(2), |t| {
        let dist = t.meta.distributed.as_ref();
        (
            t.meta.rank.map(|r| r.value),
            dist.and_then(|d| d.world_size),
        )
    })
    .into_iter()
    .map(|r| r.result.unwrap())
    .collect();
    assert_eq!(ranks, [(Some(0), Some(128)), (Some(1), Some(128))]);
}

fn touch(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// A run folder in the layout of a staged training script.
fn make_run_folder(dir: &Path) {
    let trace = std::fs::read(fixture("backward_thread.json")).unwrap();
    let gz = std::fs::read(fixture("torch-2.15.0_py_export.json.gz")).unwrap();
    touch(dir, "stage1-model_init_trace.json", &trace);
    touch(
        dir,
        "stage3-training_microsteps_mem.pickle",
        b"\x80\x04\x95",
    );
    touch(
        dir,
        "stage3-training_microsteps_memory_timeline.html",
        b"<!DOCTYPE html>",
    );
    touch(dir, "stage2-train_trace.json.gz", &gz);
    // Sorts before stage2 by name but after stage3 by number.
    touch(dir, "stage10-eval_trace.json", &trace);
    // Not an artifact.
    touch(dir, "notes.txt", b"hello");
}

/// A phase as (stage, phase name, [(file name, kind)]).
type PhaseView<'a> = (u32, &'a str, Vec<(String, ArtifactKind)>);

fn assert_run_folder(input: &Input, dir: &Path, files_in: &Path) {
    let Input::RunFolder { dir: d, phases, .. } = input else {
        panic!("expected a run folder, got {input:?}");
    };
    assert_eq!(d, dir);
    let got: Vec<PhaseView> = phases
        .iter()
        .map(|p| {
            (
                p.stage,
                p.phase.as_str(),
                p.artifacts
                    .iter()
                    .map(|a| {
                        assert_eq!(a.path.parent().unwrap(), files_in);
                        (
                            a.path.file_name().unwrap().to_string_lossy().into_owned(),
                            a.kind,
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    let art = |n: &str, k| (n.to_owned(), k);
    assert_eq!(
        got,
        vec![
            (
                1,
                "model_init",
                vec![art("stage1-model_init_trace.json", ArtifactKind::Trace)]
            ),
            (
                2,
                "train",
                vec![art("stage2-train_trace.json.gz", ArtifactKind::Trace)]
            ),
            (
                3,
                "training_microsteps",
                vec![
                    art(
                        "stage3-training_microsteps_mem.pickle",
                        ArtifactKind::MemorySnapshot
                    ),
                    art(
                        "stage3-training_microsteps_memory_timeline.html",
                        ArtifactKind::MemoryTimelineHtml
                    ),
                ]
            ),
            (
                10,
                "eval",
                vec![art("stage10-eval_trace.json", ArtifactKind::Trace)]
            ),
        ]
    );
    assert_eq!(
        file_names(&input.trace_files()),
        [
            "stage1-model_init_trace.json",
            "stage2-train_trace.json.gz",
            "stage10-eval_trace.json"
        ]
    );
}

#[test]
fn run_folder_in_stage_order() {
    let tmp = tempfile::tempdir().unwrap();
    make_run_folder(tmp.path());
    let input = open_input(tmp.path()).unwrap();
    assert_run_folder(&input, tmp.path(), tmp.path());
    // The traces in it read.
    for f in input.trace_files() {
        kinetoscope_trace::read::read_trace(&f, &lenient(2)).unwrap();
    }
}

#[test]
fn run_folder_one_timestamped_level_down() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("2025-06-01_12-30-00");
    std::fs::create_dir(&sub).unwrap();
    make_run_folder(&sub);
    let input = open_input(tmp.path()).unwrap();
    assert_run_folder(&input, tmp.path(), &sub);
}

#[test]
fn rank_folder_one_level_down() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("run_0");
    std::fs::create_dir(&sub).unwrap();
    for n in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
        std::fs::copy(fixtures_dir().join("ranks").join(n), sub.join(n)).unwrap();
    }
    let input = open_input(tmp.path()).unwrap();
    assert_eq!(
        file_names(&input.trace_files()),
        ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"]
    );
}

#[test]
fn folder_without_traces_is_empty_input() {
    let tmp = tempfile::tempdir().unwrap();
    touch(tmp.path(), "README.md", b"nothing here");
    match open_input(tmp.path()) {
        Err(TraceError::EmptyInput { path, .. }) => assert_eq!(path, tmp.path()),
        other => panic!("expected EmptyInput, got {other:?}"),
    }
}

#[test]
fn missing_path_is_an_io_error() {
    let tmp = tempfile::tempdir().unwrap();
    let r = open_input(&tmp.path().join("nope"));
    assert!(matches!(r, Err(TraceError::Io { .. })), "{r:?}");
}

#[test]
fn rank_folder_skips_memory_timelines_and_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("torch-2.15.0_py_export.json.gz"),
        tmp.path().join("w0.pt.trace.json.gz"),
    )
    .unwrap();
    touch(tmp.path(), "mem.raw.json.gz", b"[]");
    touch(tmp.path(), "snapshot.pickle", b"\x80\x04");
    touch(tmp.path(), "run_memory_timeline.json", b"[]");
    let input = open_input(tmp.path()).unwrap();
    assert_eq!(file_names(&input.trace_files()), ["w0.pt.trace.json.gz"]);
}

/// Make a FIFO with `mkfifo(1)`.
fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn special_files_in_a_folder_are_skipped_and_listed_never_opened() {
    use kinetoscope_engine::{SkippedFile, SpecialFileKind};
    let tmp = tempfile::tempdir().unwrap();
    for n in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
        std::fs::copy(fixtures_dir().join("ranks").join(n), tmp.path().join(n)).unwrap();
    }
    // A FIFO named like a trace, a link to it, and a link that leads nowhere.
    let fifo = tmp.path().join("rank-2.json");
    mkfifo(&fifo);
    std::os::unix::fs::symlink(&fifo, tmp.path().join("rank-3.json")).unwrap();
    std::os::unix::fs::symlink("missing", tmp.path().join("rank-4.json")).unwrap();
    let input = open_input(tmp.path()).unwrap();
    let skipped: Vec<SkippedFile> = ["rank-2.json", "rank-3.json"]
        .iter()
        .map(|n| SkippedFile {
            path: tmp.path().join(n).display().to_string(),
            kind: SpecialFileKind::Fifo,
        })
        .collect();
    assert_eq!(input.skipped(), skipped);
    // The dangling link stays a trace file: reading it gives the error naming it.
    assert_eq!(
        file_names(&input.trace_files()),
        [
            "rank-4.json",
            "sampled_rank-0.json.gz",
            "sampled_rank-1.json.gz"
        ]
    );
    // Reading the folder never opens the FIFO (it would block): it ends, with the
    // dangling link as the one failure.
    let results = map_paths(&input.trace_files(), &lenient(2), |t| t.events.len());
    let failed: Vec<_> = results.iter().filter(|r| r.result.is_err()).collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].path.ends_with("rank-4.json"));
}

#[test]
fn files_read_covers_a_folders_readable_files_and_a_traces_timeline_siblings() {
    use kinetoscope_engine::input::files_read;
    let tmp = tempfile::tempdir().unwrap();
    make_run_folder(tmp.path());
    let sub = tmp.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    touch(&sub, "rank0.json", b"{}");
    let mut got = file_names(&files_read(tmp.path())[1..]);
    got.sort();
    assert_eq!(
        got,
        [
            "rank0.json",
            "stage1-model_init_trace.json",
            "stage10-eval_trace.json",
            "stage2-train_trace.json.gz",
            "stage3-training_microsteps_mem.pickle",
        ]
    );
    assert_eq!(files_read(tmp.path())[0], tmp.path());
    // A file: itself, then what `memory` may read beside it as its timeline.
    let trace = tmp.path().join("stage1-model_init_trace.json");
    let mut got = file_names(&files_read(&trace));
    got.sort();
    assert_eq!(
        got,
        [
            "stage1-model_init_trace.json",
            "stage1-model_init_trace.json",
            "stage10-eval_trace.json",
            "stage2-train_trace.json.gz",
        ]
    );
}

#[test]
fn more_threads_than_cores_are_clamped() {
    let traces: Vec<PathBuf> = ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"]
        .iter()
        .map(|n| fixtures_dir().join("ranks").join(n))
        .collect();
    let counts: Vec<usize> = map_paths(&traces, &lenient(1_000_000), |t| t.events.len())
        .into_iter()
        .map(|r| r.result.unwrap())
        .collect();
    let one: Vec<usize> = map_paths(&traces, &lenient(1), |t| t.events.len())
        .into_iter()
        .map(|r| r.result.unwrap())
        .collect();
    assert_eq!(counts, one);
    assert!(kinetoscope_engine::input::available_threads() >= 1);
}

/// `map_paths_each` hands every result over in input order, on the calling thread, even
/// when a large file is read beside many small ones (forty files: more than the
/// read-ahead of a few files per reader), and gives what reading each alone gives.
#[test]
fn results_are_handed_over_in_input_order() {
    let big = fixture("inference_rank_1.json.gz");
    let small = fixture("backward_thread.json");
    let mut paths = Vec::new();
    for i in 0..40 {
        paths.push(if i % 10 == 0 {
            big.clone()
        } else {
            small.clone()
        });
    }
    paths.push(fixtures_dir().join("missing.json"));
    let caller = std::thread::current().id();
    let mut seen = Vec::new();
    map_paths_each(
        &paths,
        &lenient(4),
        read_trace,
        |t| t.events.len(),
        |r| {
            assert_eq!(std::thread::current().id(), caller);
            seen.push((r.path, r.result.ok()));
        },
    );
    let alone: Vec<_> = paths
        .iter()
        .map(|p| {
            (
                p.clone(),
                read_trace(p, &lenient(1)).ok().map(|t| t.events.len()),
            )
        })
        .collect();
    assert_eq!(seen, alone);
    assert!(seen.last().unwrap().1.is_none(), "the missing file fails");
}
