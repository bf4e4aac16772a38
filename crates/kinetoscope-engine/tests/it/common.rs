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

/// The recorded base/new pairs of `kinetoscope diff` (`corpus/pairs` on CPU,
/// `corpus/pairs-h100` on an H100; corpus/README.md): `(base, new)` of one pair.
pub fn pair(set: &str, name: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(set)
        .join(name);
    (dir.join("base.json.gz"), dir.join("new.json.gz"))
}

/// The shared reference folder (`$KINETOSCOPE_SHARED`, else `shared/` beside the
/// workspace); a test that needs it fails, naming where it looked, when it is missing.
pub fn require_shared() -> PathBuf {
    if let Some(p) = std::env::var_os("KINETOSCOPE_SHARED") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    assert!(
        p.is_dir(),
        "the shared reference folder is missing: looked for $KINETOSCOPE_SHARED, then {}; \
         set KINETOSCOPE_SHARED or run without --ignored",
        p.display()
    );
    p
}
