//! The one helper module of the analyses' tests: where the test data lives (this crate's
//! reference outputs, the reader's fixtures, the shared reference folder) and reading a
//! trace from a file or from JSON text written in a test.

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{read_trace, read_trace_bytes, ReadOptions};
use kinetoscope_trace::Trace;

/// This crate's fixtures (`crates/kinetoscope-analysis/tests/fixtures`): the TensorBoard
/// plugin's and HTA's traces and reference outputs, each folder with its `SOURCE.md`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A file of the reader's fixtures (`crates/kinetoscope-trace/tests/fixtures/<rel>`).
pub fn trace_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kinetoscope-trace/tests/fixtures")
        .join(rel)
}

/// A file of the advisor corpus (`corpus/traces/<rel>`: real traces with planted
/// problems, `corpus/README.md`).
pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/traces")
        .join(rel)
}

/// HTA's two-rank `trace_filter` traces (`fixtures/ranks`), rank 0 then rank 1.
pub fn rank_fixtures() -> Vec<PathBuf> {
    (0..2)
        .map(|r| trace_fixture(&format!("ranks/sampled_rank-{r}.json.gz")))
        .collect()
}

/// The shared reference folder: `$KINETOSCOPE_SHARED`, else `../shared` beside the
/// repository (`CARGO_MANIFEST_DIR/../../../shared`). Panics with a clear message when it
/// is missing: a test that needs it is `#[ignore]`d and must fail, not pass silently,
/// when someone runs it without the data.
pub fn shared_dir() -> PathBuf {
    let candidate = std::env::var_os("KINETOSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    assert!(
        candidate.is_dir(),
        "this test needs the shared reference folder, which is missing: looked for {} \
         (set KINETOSCOPE_SHARED to its path, or check out `shared/` beside the repository)",
        candidate.display()
    );
    candidate
}

/// `shared_dir()/<rel>`, which must exist (a missing file fails with its path).
pub fn shared_file(rel: &str) -> PathBuf {
    let p = shared_dir().join(rel);
    assert!(
        p.exists(),
        "the shared reference folder lacks {} (is it an older copy?)",
        p.display()
    );
    p
}

/// Read a trace file (plain or gzip) with the default options.
pub fn read(path: &Path) -> Trace {
    read_trace(path, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{} reads: {e}", path.display()))
}

/// Read a trace from JSON text written in a test (named `inline.json`).
pub fn read_json(json: &str) -> Trace {
    read_trace_bytes(
        Path::new("inline.json"),
        json.as_bytes(),
        &ReadOptions::default(),
    )
    .expect("inline trace reads")
}

/// A trace whose `traceEvents` are `events` (JSON objects), with `schemaVersion` 1.
pub fn trace_of_events<S: AsRef<str>>(events: &[S]) -> Trace {
    let events: Vec<&str> = events.iter().map(AsRef::as_ref).collect();
    read_json(&format!(
        "{{\"schemaVersion\": 1, \"traceEvents\": [\n{}\n]}}",
        events.join(",\n")
    ))
}
