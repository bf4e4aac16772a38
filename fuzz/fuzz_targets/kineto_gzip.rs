//! The Kineto reader through its gzip path: the input is compressed and read back (the
//! fuzzer mutates the JSON), and, with the first byte odd, read as a raw gzip stream
//! (the fuzzer mutates the compressed bytes themselves).
#![no_main]

use std::io::Write;
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;
use kinetoscope_trace::read::{read_trace_bytes, read_trace_from, ReadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let name = Path::new("fuzz.json.gz");
    let opts = ReadOptions {
        threads: 1,
        ..ReadOptions::default()
    };
    if mode & 1 == 1 {
        let mut raw = vec![0x1f, 0x8b];
        raw.extend_from_slice(rest);
        let _ = read_trace_bytes(name, &raw, &opts);
        return;
    }
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(rest).expect("compress in memory");
    let gz = enc.finish().expect("compress in memory");
    // From memory and as a stream: both must agree.
    let a = read_trace_bytes(name, &gz, &opts);
    let b = read_trace_from(name, &gz[..], &opts);
    assert_eq!(
        a.as_ref().map(|t| t.events.len()).ok(),
        b.as_ref().map(|t| t.events.len()).ok()
    );
});
