//! The advisor over every Kineto trace of the shared reference folder (`../shared`:
//! the recorded CPU samples, the TensorBoard plugin's ResNet-50 samples and Kineto
//! documentation traces, TraceLens's GPU traces): no panic, and every finding fits in
//! the step. Ignored by default; `cargo test -p kinetoscope-advisor -- --ignored` runs
//! it, and it fails with a clear message when the folder is missing.

use std::path::{Path, PathBuf};

use kinetoscope_advisor::Config;

use crate::common::{assert_findings_fit, report_file, shared_dir};

/// Files under `dir` (recursively) whose name ends with one of `suffixes`.
fn files_under(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{} is not readable: {e}", dir.display()));
    for entry in entries {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files_under(&p, suffixes, out);
        } else if suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)) {
            out.push(p);
        }
    }
}

#[test]
#[ignore = "reads ../shared (KINETOSCOPE_SHARED); fails when it is missing"]
fn shared_traces_give_consistent_findings() {
    let shared = shared_dir();
    let mut files = Vec::new();
    files_under(&shared.join("samples"), &[".pt.trace.json.gz"], &mut files);
    files_under(
        &shared.join("external/tb_plugin/samples"),
        &[".pt.trace.json.gz"],
        &mut files,
    );
    files_under(
        &shared.join("external/tb_plugin/extra/kineto_docs_traces"),
        &[".json"],
        &mut files,
    );
    files_under(
        &shared.join("external/tracelens"),
        &[".json.gz"],
        &mut files,
    );
    files.sort();
    assert!(files.len() >= 20, "{} traces: {files:?}", files.len());
    for f in &files {
        let r = report_file(f, &Config::default());
        assert_findings_fit(&r, &f.display().to_string());
    }
}
