//! What a user sees: one insta snapshot per view of the terminal output (exit code,
//! stdout and stderr; `snapshots/view_<view>.snap`) on a small committed fixture, run
//! from the fixture's folder so the paths in the output are portable; and no view panics
//! on any committed trace.
//!
//! Update with `INSTA_UPDATE=always cargo test -p kinetoscope --test it views::` and read
//! every changed `.snap` as a user would.

use std::path::{Path, PathBuf};

use crate::common::{corpus, fixtures, kinetoscope, snapshot_settings};

/// A V100 training step from the TensorBoard plugin's tests (PyTorch 1.8, 83 KiB of plain
/// JSON): operators linked to their 30 kernels.
const GPU_STEP: &str = "gpu_metrics_input.json";

/// HTA's `cuda_event_sync` trace: one step, four kernels and a `cudaStreamSynchronize`.
const EVENT_SYNC: &str = "event_sync_trace.json.gz";

/// A small ROCm (MI250) training step recorded with shapes.
const ROCM_SHAPES: &str = "mi250_minitoy_train_ROCm6_2_kineto.json.gz";

/// Rank 0 of HTA's two-rank `trace_filter` folder (`ranks/`): NCCL kernels, two steps.
const RANK_0: &str = "ranks/sampled_rank-0.json.gz";

/// Run `kinetoscope args` in `dir`, check that it succeeds, and snapshot what it printed
/// as `view_<name>`.
fn view(name: &str, dir: &Path, args: &[&str]) {
    let run = kinetoscope(dir, args);
    assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
    assert!(!run.stdout.trim().is_empty(), "{args:?} printed nothing");
    snapshot_settings().bind(|| insta::assert_snapshot!(format!("view_{name}"), run.transcript()));
}

#[test]
fn summary() {
    view("summary", &fixtures(), &["summary", GPU_STEP]);
}

#[test]
fn overview() {
    view("overview", &fixtures(), &["overview", GPU_STEP]);
}

#[test]
fn ops_by_name() {
    view("ops_by_name", &fixtures(), &["ops", GPU_STEP, "--top", "5"]);
}

#[test]
fn ops_by_shape() {
    view(
        "ops_by_shape",
        &fixtures(),
        &["ops", ROCM_SHAPES, "--group-by", "shape", "--top", "5"],
    );
}

#[test]
fn perf() {
    view("perf", &fixtures(), &["perf", ROCM_SHAPES, "--top", "8"]);
}

#[test]
fn kernels_by_name() {
    view(
        "kernels_by_name",
        &fixtures(),
        &["kernels", GPU_STEP, "--top", "5"],
    );
}

#[test]
fn kernels_by_properties() {
    view(
        "kernels_by_properties",
        &fixtures(),
        &[
            "kernels",
            GPU_STEP,
            "--group-by",
            "properties",
            "--top",
            "5",
        ],
    );
}

#[test]
fn kernels_by_class() {
    view(
        "kernels_by_class",
        &fixtures(),
        &["kernels", RANK_0, "--by-class", "--top", "3"],
    );
}

#[test]
fn memory_of_a_trace() {
    view(
        "memory_trace",
        &fixtures(),
        &[
            "memory",
            "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz",
            "--top",
            "3",
        ],
    );
}

/// A nanochat-style run folder: the phases side by side, then each phase's report.
#[test]
fn report_of_a_run_folder() {
    view("report_run_folder", &corpus(), &["report", "run_folder"]);
}

#[test]
fn memory_of_a_snapshot() {
    view(
        "memory_snapshot",
        &fixtures(),
        &["memory", "snapshots/v2_6_full.pickle", "--top", "3"],
    );
}

#[test]
fn memory_of_a_timeline() {
    view(
        "memory_timeline",
        &fixtures(),
        &["memory", "memory_timelines/torch-2.2.2/mem.raw.json.gz"],
    );
}

#[test]
fn temporal() {
    view("temporal", &fixtures(), &["temporal", "ranks"]);
}

#[test]
fn idle() {
    view("idle", &fixtures(), &["idle", RANK_0]);
}

#[test]
fn launches() {
    view("launches", &fixtures(), &["launches", RANK_0, "--top", "3"]);
}

#[test]
fn comm() {
    view("comm", &fixtures(), &["comm", RANK_0, "--top", "5"]);
}

#[test]
fn ranks() {
    view("ranks", &fixtures(), &["ranks", "ranks"]);
}

#[test]
fn sequences() {
    view(
        "sequences",
        &fixtures(),
        &["sequences", RANK_0, "--top", "3"],
    );
}

#[test]
fn critical_path() {
    view(
        "critical_path",
        &fixtures(),
        &["critical-path", EVENT_SYNC, "--top", "8"],
    );
}

#[test]
fn check() {
    view(
        "check",
        &fixtures(),
        &["check", EVENT_SYNC, "--examples", "2"],
    );
}

#[test]
fn report() {
    view("report", &corpus(), &["report", "dataloader/trace.json.gz"]);
}

/// Every committed input a view can be given: the reader's trace fixtures, the rank
/// folder, the memory timelines and snapshots, and the advisor corpus (files and its
/// rank folder).
fn every_input() -> Vec<PathBuf> {
    let mut inputs = Vec::new();
    let mut add_files = |dir: PathBuf, suffixes: &[&str]| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                suffixes.iter().any(|s| name.ends_with(s))
            })
            .collect();
        found.sort();
        assert!(!found.is_empty(), "no {suffixes:?} in {}", dir.display());
        inputs.extend(found);
    };
    add_files(fixtures(), &[".json", ".json.gz"]);
    add_files(fixtures().join("memory_timelines"), &[".json"]);
    add_files(
        fixtures().join("memory_timelines/torch-2.2.2"),
        &[".json.gz"],
    );
    add_files(fixtures().join("snapshots"), &[".pickle"]);
    for d in [
        "clean",
        "dataloader",
        "item_sync",
        "leak",
        "unfused_optimizer",
    ] {
        add_files(corpus().join(d), &[".json.gz"]);
    }
    inputs.push(fixtures().join("ranks"));
    inputs.push(corpus().join("straggler"));
    inputs.push(corpus().join("run_folder"));
    inputs
}

/// No command may panic on any trace: every view on every committed input exits with 0,
/// or with 2 and an error message (a folder where a file is needed, a snapshot given to
/// a trace view, ...), never with a panic. `critical-path` used to panic on the traces
/// without `ProfilerStep#` (`inference_rank_1.json.gz`, `step_based_trace_2543932.json.gz`).
#[test]
fn no_view_panics_on_any_committed_input() {
    let views: &[&[&str]] = &[
        &["summary"],
        &["overview"],
        &["ops"],
        &["ops", "--group-by", "shape"],
        &["perf"],
        &["kernels"],
        &["kernels", "--group-by", "properties"],
        &["kernels", "--by-class"],
        &["memory"],
        &["temporal"],
        &["idle"],
        &["launches"],
        &["comm"],
        &["ranks"],
        &["sequences"],
        &["critical-path"],
        &["report"],
        &["check", "--fail-on", "none"],
    ];
    let inputs = every_input();
    assert!(inputs.len() >= 30, "{inputs:?}");
    let mut failures = Vec::new();
    for input in &inputs {
        let path = input.to_str().unwrap();
        for v in views {
            let mut args = v.to_vec();
            args.push(path);
            let run = kinetoscope(&fixtures(), &args);
            let ok = match run.code {
                Some(0) => true,
                Some(2) => !run.stderr.trim().is_empty(),
                _ => false,
            };
            if !ok || run.stderr.contains("panicked") {
                failures.push(format!("{args:?}: exit {:?}\n{}", run.code, run.stderr));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
