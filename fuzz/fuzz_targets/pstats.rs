//! The marshal decoder and the pstats reader on arbitrary bytes, then the pstats view
//! (sums, strip_dirs, callers, callees, the call tree) on what they accept: never a
//! panic, never unbounded memory, never a code object.
#![no_main]

use std::path::Path;

use kinetoscope_analysis::pstats::{view, PstatsOptions, Stats};
use kinetoscope_trace::read::pstats_from_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = pstats_from_bytes(Path::new("fuzz.prof"), data) {
        let opts = PstatsOptions {
            strip_dirs: true,
            callers: Some(regex::Regex::new(".").unwrap()),
            callees: Some(regex::Regex::new(".").unwrap()),
            tree: true,
            ..PstatsOptions::default()
        };
        let _ = view(Stats::load([p.clone(), p]), &opts);
    }
});
