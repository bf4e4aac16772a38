//! Every crash `cargo fuzz` found (`fuzz/`), kept as a regression test: the inputs are in
//! `tests/fixtures/fuzz_regressions/<fuzz target>/`, each read by that target's reader
//! (this test binary is built with overflow checks, as the fuzz targets are).

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::timeline_from_bytes;

fn cases(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fuzz_regressions")
        .join(target);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cases folder")
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).expect("read case")))
        .collect();
    out.sort();
    out
}

/// Memory timelines whose sizes summed past `i64` (found by `memory_timeline`): sizes
/// and times are clamped on reading, so every total is a plain sum.
#[test]
fn memory_timeline_cases_read_and_sum() {
    let cases = cases("memory_timeline");
    assert!(!cases.is_empty(), "no memory_timeline cases");
    for (path, bytes) in cases {
        let tl = timeline_from_bytes(&path, &bytes).expect("a valid raw timeline");
        for i in 0..tl.times_ns.len() {
            assert!(tl.total_at(i).abs() <= 8 << 52, "{}", path.display());
        }
        assert!(tl.times_ns.windows(2).all(|w| w[0] <= w[1]));
    }
}
