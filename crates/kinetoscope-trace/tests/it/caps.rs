//! The reading caps through every entry (file mapped and not, bytes, stream; plain and
//! gzip): an element over the element cap is skipped and counted (or refused under
//! `strict`, naming its byte offset), values of unknown top-level keys and whitespace
//! of any size are streamed past, and a model over the memory budget is an error.

use std::path::Path;

use kinetoscope_trace::read::{read_trace, read_trace_bytes, read_trace_from, ReadOptions};
use kinetoscope_trace::{DefectKind, MemoryBudget, Trace, TraceError, TraceResult};

use crate::common::{gzip, temp_file};

const EVENT: &str = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1000, "dur": 5}"#;

/// Read `text` through every entry, plain and gzip, with `opts` (mmap on and off).
fn every_entry(text: &[u8], opts: &ReadOptions) -> Vec<(String, TraceResult<Trace>)> {
    let no_mmap = ReadOptions {
        mmap: false,
        ..opts.clone()
    };
    let mut out = Vec::new();
    for gz in [false, true] {
        let bytes = if gz { gzip(text) } else { text.to_vec() };
        let (_dir, path) = temp_file("t.json", &bytes, false);
        out.push((format!("file gz={gz}"), read_trace(&path, opts)));
        out.push((
            format!("file without mmap gz={gz}"),
            read_trace(&path, &no_mmap),
        ));
        out.push((
            format!("bytes gz={gz}"),
            read_trace_bytes(&path, &bytes, opts),
        ));
        out.push((
            format!("reader gz={gz}"),
            read_trace_from(&path, bytes.as_slice(), opts),
        ));
    }
    out
}

fn capped(cap: u64, strict: bool) -> ReadOptions {
    ReadOptions {
        max_element_bytes: cap,
        strict,
        threads: 2,
        ..ReadOptions::default()
    }
}

/// Events, then one of `size` bytes (a long name) at the returned offset, then events.
fn with_long_event(size: usize) -> (String, u64) {
    let mut text = format!(r#"{{"traceEvents": [{EVENT}, "#);
    let offset = text.len() as u64;
    text.push_str(r#"{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 1, "name": ""#);
    text.push_str(&"n".repeat(size));
    text.push_str(&format!(r#""}}, {EVENT}, {EVENT}]}}"#));
    (text, offset)
}

#[test]
fn an_element_over_the_cap_is_skipped_and_counted_by_every_entry() {
    // Longer than a block (8 MiB), so the reader gathers it, and longer than the cap.
    for (size, cap) in [(300, 200), (9 << 20, 4 << 20), (20 << 20, 12 << 20)] {
        let (text, offset) = with_long_event(size);
        for (entry, r) in every_entry(text.as_bytes(), &capped(cap, false)) {
            let t = r.unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert_eq!(t.events.len(), 3, "{entry} size {size}");
            let d = &t.report.defects;
            assert_eq!(d.len(), 1, "{entry}: {d:?}");
            assert_eq!(d[0].kind, DefectKind::Oversized, "{entry}");
            assert_eq!(
                (d[0].first_offset, d[0].first_event_index),
                (offset, 1),
                "{entry}"
            );
            assert_eq!(t.report.elements, 4, "{entry}");
        }
    }
}

#[test]
fn an_element_under_the_cap_is_read_however_long() {
    let (text, _) = with_long_event(9 << 20);
    for (entry, r) in every_entry(text.as_bytes(), &capped(64 << 20, false)) {
        let t = r.unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert_eq!(t.events.len(), 4, "{entry}");
        assert!(t.report.defects.is_empty(), "{entry}");
        assert_eq!(
            t.name(kinetoscope_trace::EventId(1)).len(),
            9 << 20,
            "{entry}"
        );
    }
}

#[test]
fn strict_refuses_an_element_over_the_cap_naming_its_offset() {
    for size in [300, 9 << 20] {
        let (text, offset) = with_long_event(size);
        for (entry, r) in every_entry(text.as_bytes(), &capped(200, true)) {
            match r {
                Err(TraceError::Malformed {
                    offset: at,
                    event_index,
                    message,
                    ..
                }) => {
                    assert_eq!((at, event_index), (offset, Some(1)), "{entry}");
                    assert!(message.contains("larger than the 200 B cap"), "{message}");
                }
                other => panic!("{entry}: {other:?}"),
            }
        }
    }
}

#[test]
fn unknown_keys_and_whitespace_of_any_size_are_streamed_past() {
    let junk = format!("[{}0]", "0,".repeat(6 << 20));
    let pad = " ".repeat(10 << 20);
    let text = format!(
        r#"{{"junk": {junk},{pad}"schemaVersion": 1, "traceEvents": [{EVENT}]{pad}, "more": {junk}, "baseTimeNanoseconds": 7}}{pad}"#
    );
    // The element cap does not apply to what is streamed past in lenient mode …
    for (entry, r) in every_entry(text.as_bytes(), &capped(1 << 20, false)) {
        let t = r.unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert_eq!(t.events.len(), 1, "{entry}");
        assert_eq!(t.meta.schema_version, Some(1), "{entry}");
        assert_eq!(t.meta.base_time_ns, Some(7), "{entry}");
        assert_eq!(t.events.ts_ns[0], 1_000_000 + 7, "{entry}");
        assert_eq!(t.report.json_bytes, text.len() as u64, "{entry}");
        let d = &t.report.defects;
        assert_eq!(
            (d[0].kind, d[0].count),
            (DefectKind::Oversized, 2),
            "{entry}"
        );
        assert_eq!(d[0].first_offset, 9, "{entry}: the first junk value");
    }
    // … but it is counted, and strict mode refuses it.
    for (entry, r) in every_entry(text.as_bytes(), &capped(1 << 20, true)) {
        assert!(
            matches!(r, Err(TraceError::Malformed { offset: 9, .. })),
            "{entry}: {r:?}"
        );
    }
}

#[test]
fn a_model_over_the_memory_budget_is_an_error_by_every_entry() {
    let events: Vec<String> = (0..50_000)
        .map(|i| format!(r#"{{"ph": "X", "name": "n{i}", "tid": {i}, "ts": {i}, "dur": 1}}"#))
        .collect();
    let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
    let opts = ReadOptions {
        budget: MemoryBudget::new(Some(1 << 20)),
        ..ReadOptions::default()
    };
    for (entry, r) in every_entry(text.as_bytes(), &opts) {
        match r {
            Err(e @ TraceError::OutOfMemory { limit, .. }) => {
                assert_eq!(limit, Some(1 << 20), "{entry}");
                let msg = e.to_string();
                assert!(msg.contains("t.json: byte "), "{entry}: {msg}");
                assert!(msg.contains("--max-memory"), "{entry}: {msg}");
            }
            other => panic!("{entry}: {other:?}"),
        }
    }
    assert_eq!(
        opts.budget.used(),
        0,
        "every failed read gave its memory back"
    );
    let roomy = ReadOptions {
        budget: MemoryBudget::new(Some(256 << 20)),
        ..ReadOptions::default()
    };
    let t = read_trace_bytes(Path::new("t.json"), text.as_bytes(), &roomy).unwrap();
    assert_eq!((t.events.len(), t.tracks.len()), (50_000, 50_000));
    assert!(roomy.budget.used() > 0, "the model holds its charge");
    drop(t);
    assert_eq!(roomy.budget.used(), 0, "and gives it back when dropped");
}
