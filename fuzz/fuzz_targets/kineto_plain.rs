//! The Kineto JSON reader on arbitrary bytes, lenient and strict, one thread and two
//! (the parallel split only engages on large windows, so two threads mostly checks that
//! the same bytes give the same trace).
#![no_main]

use std::path::Path;

use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = Path::new("fuzz.json");
    for strict in [false, true] {
        let opts = ReadOptions {
            strict,
            threads: 1,
            ..ReadOptions::default()
        };
        let one = read_trace_bytes(name, data, &opts);
        let two = read_trace_bytes(name, data, &ReadOptions { threads: 2, ..opts });
        // The result must not depend on the number of threads.
        assert_eq!(
            one.as_ref().map(|t| t.events.len()).ok(),
            two.as_ref().map(|t| t.events.len()).ok()
        );
    }
});
