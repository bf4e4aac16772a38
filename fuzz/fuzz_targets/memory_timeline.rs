//! The profiler memory-timeline reader (`export_memory_timeline` JSON) on arbitrary bytes.
#![no_main]

use std::path::Path;

use kinetoscope_trace::read::timeline_from_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = timeline_from_bytes(Path::new("fuzz_memory_timeline.json"), data);
});
