//! Helpers shared by the engine's tests: fixture paths and reader options.

use std::path::{Path, PathBuf};

use kinetoscope_engine::ReadOptions;

/// The reader's fixtures folder (real traces with their licences and `SOURCE.md`).
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-trace/tests/fixtures")
}

/// A fixture by file name (relative to the fixtures folder).
pub fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

/// The advisor corpus (`corpus/traces`: real traces with planted problems, and a
/// nanochat-style run folder; `corpus/README.md`).
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/traces")
}

/// Lenient options with `threads` workers.
pub fn lenient(threads: usize) -> ReadOptions {
    ReadOptions {
        threads,
        ..ReadOptions::default()
    }
}
