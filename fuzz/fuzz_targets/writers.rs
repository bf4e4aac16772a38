//! The trace writers on arbitrary bytes: whatever the reader accepts, `trim` (every
//! filter, JSON and Perfetto protobuf), `merge` (JSON) and `check` must take without a
//! panic, and every JSON they write must be valid JSON (`serde_json`, an independent
//! parser) that kinetoscope reads again. The first byte picks trim's filters.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use kinetoscope_analysis::integrity::CheckOptions;
use kinetoscope_engine::input::map_bytes;
use kinetoscope_engine::{Engine, ReadOptions, Source};
use kinetoscope_export::merge::{write_merged, Format};
use kinetoscope_export::trim::{TimePoint, TimeRange, TrimInput, TrimOptions};
use kinetoscope_export::MergeInput;
use kinetoscope_trace::read::spans::TraceText;
use libfuzzer_sys::fuzz_target;

/// Trim's filters from one byte: steps 1..2, the first 2 ms, kernels only, no stacks.
fn trim_options(pick: u8) -> TrimOptions {
    TrimOptions {
        steps: (pick & 1 != 0).then_some((1, 2)),
        time: (pick & 2 != 0).then_some(TimeRange {
            start: TimePoint::FromStart(0),
            end: TimePoint::FromStart(2_000_000),
        }),
        kernels_only: pick & 4 != 0,
        drop_stacks: pick & 8 != 0,
    }
}

/// `json` must be valid JSON, and a trace kinetoscope reads.
fn assert_valid(what: &str, json: &[u8], read: &ReadOptions) {
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(json) {
        panic!(
            "{what} wrote invalid JSON ({e}): {}",
            String::from_utf8_lossy(json)
        );
    }
    let again = map_bytes("written.json", json, read, |_| ());
    if let Err(e) = again.result {
        panic!("{what} wrote a trace kinetoscope cannot read: {e}");
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&pick, data)) = input.split_first() else {
        return;
    };
    let read = ReadOptions {
        threads: 1,
        ..ReadOptions::default()
    };
    let name = "fuzz.json";
    let merged = map_bytes(name, data, &read, |trace| {
        let mut out = Vec::new();
        let one = MergeInput {
            rank: 0,
            trace,
            offset_ns: 0,
        };
        write_merged(&[one], Format::Json, &mut out).map(|_| out)
    });
    let Ok(merged) = merged.result else {
        return;
    };
    assert_valid("merge", &merged.expect("writing to memory"), &read);

    let opts = trim_options(pick);
    let trimmed = map_bytes(name, data, &read, |trace| {
        let text = TraceText::from_bytes(Path::new(name), data.to_vec()).ok()?;
        let input = TrimInput::from_parts(trace, text);
        let mut json = Vec::new();
        let ok = input.write(&opts, &mut json).is_ok();
        let _ = input.write_pftrace(&opts, &read, &mut Vec::new());
        ok.then_some(json)
    });
    if let Ok(Some(json)) = trimmed.result {
        assert_valid("trim", &json, &read);
    }

    let engine = Engine::new(read.clone());
    let src = Source::Bytes {
        name: name.into(),
        data: Arc::from(data),
    };
    let _ = engine.check(&src, &CheckOptions::default());
});
