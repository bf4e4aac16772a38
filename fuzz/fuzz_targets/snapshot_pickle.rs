//! The pickle VM and the CUDA memory-snapshot decoder on arbitrary bytes: never a panic,
//! never unbounded memory, and (by construction) never code execution.
#![no_main]

use std::path::Path;

use kinetoscope_trace::read::snapshot_from_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = snapshot_from_bytes(Path::new("fuzz.pickle"), data);
});
