//! The fixture checks over every trace in the shared reference folder
//! (`shared/external` and `shared/samples`, about 500 MB of JSON), each file also sniffed
//! and read without mmap. Ignored by default (a fresh clone has no `shared/`); run with
//! `cargo test -p kinetoscope-trace --test it -- --ignored`, with `KINETOSCOPE_SHARED`
//! pointing at the folder when it is not `../shared` beside the workspace.

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{read_trace, sniff_path, ContentKind, ReadOptions};
use kinetoscope_trace::TraceError;

use crate::common::{compare, oracle};

/// The files in the corpus that are not Kineto traces, by file name, and what they are
/// sniffed as: raw memory timelines and PyTorch execution traces.
const NOT_TRACES: [(&str, ContentKind); 4] = [
    ("mem.raw.json.gz", ContentKind::MemoryTimeline),
    ("memory_timeline.raw.gz", ContentKind::MemoryTimeline),
    (
        "benchmark_simple_add_et.json.gz",
        ContentKind::ExecutionTrace,
    ),
    (
        "linear_et.execution_trace.json.gz",
        ContentKind::ExecutionTrace,
    ),
];

fn not_a_trace(name: &str) -> Option<ContentKind> {
    NOT_TRACES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

/// Candidate data files: JSON or gzip, anything but docs, scripts and the pstats file.
fn data_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            data_files(&p, out);
        } else {
            let name = p.file_name().unwrap().to_string_lossy();
            if name.ends_with(".json") || name.ends_with(".gz") {
                out.push(p);
            }
        }
    }
}

fn corpus() -> Vec<PathBuf> {
    let shared = crate::common::require_shared();
    let mut files = Vec::new();
    for sub in ["external", "samples"] {
        data_files(&shared.join(sub), &mut files);
    }
    assert!(files.len() > 50, "only {} files found", files.len());
    files
}

#[test]
#[ignore = "needs ../shared; run with --ignored"]
fn every_shared_trace_agrees_with_the_oracle() {
    let mut failures = Vec::new();
    let mut read = 0;
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = sniff_path(&path).map(|s| s.kind()).ok();
        let expect_kind = not_a_trace(&name).unwrap_or(ContentKind::KinetoTrace);
        if kind != Some(expect_kind) {
            failures.push(format!(
                "{name}: sniffed as {kind:?}, expected {expect_kind:?}"
            ));
        }
        let result = read_trace(&path, &ReadOptions::default());
        let expect_not_trace = not_a_trace(&name).is_some();
        match (result, expect_not_trace) {
            (Err(TraceError::NotATrace { .. }), true) => continue,
            (Err(e), true) => failures.push(format!("{name}: expected NotATrace, got {e}")),
            (Ok(_), true) => failures.push(format!("{name}: expected NotATrace, read as a trace")),
            (Err(e), false) => failures.push(format!("{}: reader failed: {e}", path.display())),
            (Ok(trace), false) => {
                read += 1;
                // Reading through `read()` instead of a mapping changes nothing.
                let no_mmap = ReadOptions {
                    mmap: false,
                    ..ReadOptions::default()
                };
                match read_trace(&path, &no_mmap) {
                    Ok(t) if format!("{t:?}") == format!("{trace:?}") => {}
                    Ok(_) => failures.push(format!("{name}: differs without mmap")),
                    Err(e) => failures.push(format!("{name}: without mmap: {e}")),
                }
                match oracle(&path) {
                    Ok(exp) => {
                        for m in compare(&trace, &exp) {
                            failures.push(format!("{}: {m}", path.display()));
                        }
                    }
                    Err(e) => failures.push(format!("{}: serde_json: {e}", path.display())),
                }
            }
        }
    }
    assert!(read >= 60, "only {read} traces read");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Strict mode reads every real trace too (none has a defect).
#[test]
#[ignore = "needs ../shared; run with --ignored"]
fn every_shared_trace_reads_in_strict_mode() {
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let mut failures = Vec::new();
    for path in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if not_a_trace(&name).is_some() {
            continue;
        }
        if let Err(e) = read_trace(&path, &strict) {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
