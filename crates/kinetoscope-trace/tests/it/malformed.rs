//! Hand-written small traces, one per defect or oddity the reader must get past (or
//! refuse), each read both as plain JSON and gzip-compressed, through every entry: a
//! file (mapped and not), bytes in memory and a stream.

use kinetoscope_trace::read::{read_trace, read_trace_bytes, read_trace_from, ReadOptions};
use kinetoscope_trace::{DefectKind, RawId, Trace, TraceError, TraceResult, TrackKind};

use crate::common::{categories, gzip, lenient, not_a_trace, step_spans, strict, temp_file};

/// How a test input was read: gzip or not, and through which entry.
#[derive(Clone, Copy, Debug)]
struct Via {
    gz: bool,
    entry: &'static str,
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} via {}", self.gz, self.entry)
    }
}

/// Read the stored bytes `raw` (named `name`) through every entry: a file mapped and
/// read through `read()`, bytes in memory, and a stream.
fn each_entry(
    name: &str,
    raw: &[u8],
    gz: bool,
    opts: &ReadOptions,
    check: impl Fn(TraceResult<Trace>, Via),
) {
    let (_dir, path) = temp_file(name, raw, false);
    let no_mmap = ReadOptions {
        mmap: false,
        ..opts.clone()
    };
    let via = |entry| Via { gz, entry };
    check(read_trace(&path, opts), via("file"));
    check(read_trace(&path, &no_mmap), via("file without mmap"));
    check(read_trace_bytes(&path, raw, opts), via("bytes"));
    check(read_trace_from(&path, raw, opts), via("reader"));
}

/// Read `text` plain and gzip-compressed, through every entry, and hand each result to
/// `check` (with `gz` telling which).
fn both(text: &[u8], opts: &ReadOptions, check: impl Fn(TraceResult<Trace>, Via)) {
    for gz in [false, true] {
        let name = if gz { "t.json.gz" } else { "t.json" };
        let raw = if gz { gzip(text) } else { text.to_vec() };
        each_entry(name, &raw, gz, opts, &check);
    }
}

/// Byte offset of the `n`-th (0-based) occurrence of `needle` in `text`.
fn nth(text: &str, needle: &str, n: usize) -> usize {
    text.match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle:?} #{n} not in text"))
        .0
}

fn names(t: &Trace) -> Vec<String> {
    t.events.ids().map(|e| t.name(e).to_owned()).collect()
}

fn kinds(t: &Trace) -> Vec<DefectKind> {
    t.report.defects.iter().map(|d| d.kind).collect()
}

/// An event line in the Kineto layout (name before `ts`).
fn op(name: &str, ts: &str, dur: &str) -> String {
    format!(
        r#"  {{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}, "args": {{"External id": 1}}}}"#
    )
}

fn trace_of(events: &[String]) -> String {
    format!(
        "{{\n\"schemaVersion\": 1,\n\"traceEvents\": [\n{}\n],\n\"traceName\": \"t.json\"\n}}\n",
        events.join(",\n")
    )
}

/// Lenient: the defect is counted once at event #1 (which starts at `at`), all three
/// events are kept. Strict: an error at that event.
fn assert_one_defect_at_event_1(text: &str, kind: DefectKind) {
    let at = nth(text, "{\"ph\"", 1) as u64;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap_or_else(|e| panic!("gz={gz}: {e}"));
        assert_eq!(t.events.len(), 3, "gz={gz}");
        assert_eq!(t.report.defects.len(), 1, "gz={gz}: {:?}", t.report.defects);
        let d = &t.report.defects[0];
        assert_eq!(d.kind, kind, "gz={gz}");
        assert_eq!(d.count, 1, "gz={gz}");
        assert_eq!(d.first_event_index, 1, "gz={gz}");
        assert_eq!(d.first_offset, at, "gz={gz}");
        assert_eq!(t.report.elements, 3, "gz={gz}");
    });
    both(text.as_bytes(), &strict(), |r, gz| match r {
        Err(TraceError::Malformed {
            offset,
            event_index,
            ..
        }) => {
            assert_eq!(offset, at, "gz={gz}");
            assert_eq!(event_index, Some(1), "gz={gz}");
        }
        other => panic!("gz={gz}: expected Malformed, got {other:?}"),
    });
}

// --- Unescaped quotes in names (Kineto before 2026-07, pytorch issue 146900).

/// The example of the spec: a name holding `{"device": "cpu"}`.
#[test]
fn unescaped_quote_with_json_inside_the_name() {
    let text = trace_of(&[
        op("aten::mm", "100", "10"),
        op(r#"foo {"device": "cpu"} bar"#, "120", "5"),
        op("aten::add", "130", "3"),
    ]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(
            names(&t),
            ["aten::mm", r#"foo {"device": "cpu"} bar"#, "aten::add"],
            "gz={gz}"
        );
        assert_eq!(t.events.ts_ns, [100_000, 120_000, 130_000], "gz={gz}");
    });
    assert_one_defect_at_event_1(&text, DefectKind::UnescapedQuote);
}

/// A simpler stray quote pair inside a name.
#[test]

fn unescaped_quote_in_a_name_is_repaired() {
    let text = trace_of(&[
        op("aten::mm", "100", "10"),
        op(r#"say "hi" to torch"#, "120", "5"),
        op("aten::add", "130", "3"),
    ]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(
            names(&t),
            ["aten::mm", r#"say "hi" to torch"#, "aten::add"],
            "gz={gz}"
        );
        assert_eq!(t.events.ts_ns, [100_000, 120_000, 130_000], "gz={gz}");
        assert_eq!(t.events.dur_ns.to_vec(), [10_000, 5_000, 3_000], "gz={gz}");
    });
    assert_one_defect_at_event_1(&text, DefectKind::UnescapedQuote);
}

/// A name that is only a quoted word followed by more text on the same event.
#[test]

fn unescaped_quote_at_the_start_of_a_name() {
    let text = trace_of(&[
        op("a", "1", "1"),
        op(r#""quoted" start"#, "2", "1"),
        op("c", "3", "1"),
    ]);
    both(text.as_bytes(), &lenient(1), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["a", r#""quoted" start"#, "c"], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::UnescapedQuote], "gz={gz}");
    });
}

// --- Bare tokens.

#[test]

fn bare_na_is_read_as_null() {
    let events = [
        op("a", "1", "1"),
        r#"  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"memory bandwidth (GB/s)": N/A, "device": 0, "stream": 7, "correlation": 42}}"#.to_owned(),
        op("c", "3", "1"),
    ];
    let text = trace_of(&events);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["a", "k", "c"], "gz={gz}");
        // The arguments after the bare token are still read.
        assert_eq!(t.args.kernel.len(), 1);
        assert_eq!(t.args.kernel.get(0).unwrap().launch.device, 0);
        assert_eq!(t.args.kernel.get(0).unwrap().launch.stream, 7);
        assert_eq!(t.events.correlation.at(1), 42);
    });
    assert_one_defect_at_event_1(&text, DefectKind::BareToken);
}

#[test]

fn bare_nan_in_dur_is_a_bare_token() {
    let text = trace_of(&[op("a", "1", "1"), op("b", "2", "nan"), op("c", "3", "1")]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(t.events.dur_ns.to_vec(), [1000, 0, 1000], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::BareToken], "gz={gz}");
    });
}

// --- Control characters.

#[test]

fn raw_control_character_in_a_name_is_kept() {
    let text = trace_of(&[
        op("a", "1", "1"),
        op("bad\u{1}name", "2", "1"),
        op("c", "3", "1"),
    ]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["a", "bad\u{1}name", "c"], "gz={gz}");
    });
    assert_one_defect_at_event_1(&text, DefectKind::ControlCharacter);
}

#[test]
fn negative_duration_is_read_as_zero_and_counted() {
    let text = trace_of(&[op("a", "1", "1"), op("b", "2", "-0.5"), op("c", "3", "1")]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(t.events.dur_ns.to_vec(), [1000, 0, 1000], "gz={gz}");
    });
    assert_one_defect_at_event_1(&text, DefectKind::NegativeDuration);
}

#[test]

fn raw_tab_in_a_name_is_a_control_character() {
    let text = trace_of(&[op("a", "1", "1"), op("x\ty", "2", "1"), op("c", "3", "1")]);
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["a", "x\ty", "c"], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::ControlCharacter], "gz={gz}");
    });
}

// --- Truncated files.

fn three_ops() -> String {
    trace_of(&[
        op("first", "100", "10"),
        op("second", "200", "10"),
        op("third", "300", "10"),
    ])
}

#[test]

fn truncated_mid_event_keeps_every_complete_event() {
    let full = three_ops();
    let third = nth(&full, "{\"ph\"", 2);
    let cut = &full[..third + 40];
    both(cut.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["first", "second"], "gz={gz}");
        assert_eq!(t.events.ts_ns, [100_000, 200_000], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::TruncatedTail], "gz={gz}");
        let d = &t.report.defects[0];
        assert_eq!(d.first_offset, third as u64, "gz={gz}");
        assert_eq!(d.first_event_index, 2, "gz={gz}");
    });
    both(cut.as_bytes(), &strict(), |r, gz| match r {
        Err(TraceError::Malformed {
            offset,
            event_index,
            message,
            ..
        }) => {
            assert_eq!(offset, third as u64, "gz={gz}");
            assert_eq!(event_index, Some(2), "gz={gz}");
            assert!(message.contains("truncated"), "{message}");
        }
        other => panic!("gz={gz}: expected Malformed, got {other:?}"),
    });
}

#[test]

fn truncated_between_events_keeps_every_event() {
    let full = three_ops();
    let third = nth(&full, "{\"ph\"", 2);
    let cut = &full[..third]; // ends with ",\n"
    both(cut.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["first", "second"], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::TruncatedTail], "gz={gz}");
        assert_eq!(t.report.elements, 2, "gz={gz}");
    });
}

#[test]

fn truncated_inside_a_string_of_the_last_event() {
    let full = three_ops();
    let cut = &full[..nth(&full, "third", 0) + 2];
    both(cut.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["first", "second"], "gz={gz}");
        assert_eq!(kinds(&t), [DefectKind::TruncatedTail], "gz={gz}");
    });
}

#[test]
fn truncated_before_the_event_array_is_an_error() {
    let full = three_ops();
    let cut = &full[..nth(&full, "traceEvents", 0) + 4];
    both(cut.as_bytes(), &lenient(2), |r, gz| {
        assert!(
            matches!(r, Err(TraceError::Malformed { .. })),
            "gz={gz}: {r:?}"
        );
    });
}

/// A gzip stream cut short (a writer killed mid-file) must not panic. Whether it is
/// read leniently (events kept, TruncatedTail) or refused with an I/O error, the reader
/// must say so.
#[test]
fn truncated_gzip_stream_does_not_panic() {
    let full = three_ops();
    let gz = gzip(full.as_bytes());
    let cut = &gz[..gz.len() * 2 / 3];
    each_entry("t.json.gz", cut, true, &lenient(2), |r, via| match r {
        Ok(t) => assert!(kinds(&t).contains(&DefectKind::TruncatedTail), "{via}"),
        Err(TraceError::Io { .. }) | Err(TraceError::Malformed { .. }) => {}
        Err(e) => panic!("{via}: unexpected error {e}"),
    });
}

// --- Top-level keys and time bases.

#[test]
fn keys_after_trace_events_are_applied() {
    let text = r#"{
  "schemaVersion": 1,
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1000.500, "dur": 2.250},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 999.000, "dur": 10.000}
  ],
  "traceName": "t.json",
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000
}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        const BASE: i64 = 1_790_857_026_000_000_000;
        assert_eq!(t.meta.base_time_ns, Some(BASE), "gz={gz}");
        assert!(!t.meta.features.base_time_before_events);
        assert_eq!(
            t.events.ts_ns,
            [BASE + 1_000_500, BASE + 999_000],
            "gz={gz}"
        );
        assert_eq!(t.events.dur_ns.to_vec(), [2_250, 10_000], "gz={gz}");
        let d = t.meta.distributed.as_ref().unwrap();
        assert_eq!((d.rank, d.world_size), (Some(3), Some(8)));
        assert_eq!(t.meta.trace_name.as_deref(), Some("t.json"));
        let steps = step_spans(&t);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].start_ns, BASE + 999_000);
        assert_eq!(t.meta.pytorch_era(), "PyTorch 2.4–2.6");
    });
}

#[test]
fn fractional_timestamps_are_exact_nanoseconds() {
    let text = r#"{"schemaVersion": 1, "baseTimeNanoseconds": 1790857026000000000, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 4380983323465.801, "dur": 0.001},
  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4380983323465.999, "dur": 123456.789},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 4380983323466.010}
]}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        const BASE: i64 = 1_790_857_026_000_000_000;
        assert_eq!(
            t.events.ts_ns,
            [
                BASE + 4_380_983_323_465_801,
                BASE + 4_380_983_323_465_999,
                BASE + 4_380_983_323_466_010
            ],
            "gz={gz}"
        );
        assert_eq!(t.events.dur_ns.to_vec(), [1, 123_456_789, 0], "gz={gz}");
        assert!(t.meta.features.base_time_before_events);
        assert!(t.meta.features.fractional_ts);
        assert_eq!(t.meta.pytorch_era(), "PyTorch 2.7+");
    });
}

/// Era 2 (2024-03/04 nightlies): absolute epoch µs with a fraction and no base.
#[test]
fn era_2_absolute_fractional_timestamps() {
    let text = r#"{"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495519689.047, "dur": 5.5}
], "displayTimeUnit": "ns"}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(t.events.ts_ns, [1_712_195_495_519_689_047], "gz={gz}");
        assert_eq!(t.events.dur_ns.to_vec(), [5_500], "gz={gz}");
        assert_eq!(t.meta.base_time_ns, None);
    });
}

// --- pid / tid forms.

#[test]
fn string_pid_and_tid() {
    let text = r#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 1234, "tid": "1234", "ts": 10, "dur": 5},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm", "pid": 0, "tid": "stream 7", "ts": 12, "dur": 2, "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Traces", "tid": "PyTorch Profiler", "ts": 10, "dur": 10},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": "stream 7", "ts": 10, "args": {"name": "stream 7 "}}
]}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert!(t.report.defects.is_empty(), "gz={gz}");
        assert!(t.meta.features.string_tids, "gz={gz}");
        assert_eq!(t.meta.pytorch_era(), "PyTorch 1.8–1.9");
        let op = t.tracks.get(t.events.track[0]);
        assert_eq!((op.pid, op.tid), (RawId::Int(1234), RawId::Int(1234)));
        assert_eq!(op.kind, TrackKind::CpuThread);
        let k = t.tracks.get(t.events.track[1]);
        assert_eq!(
            k.kind,
            TrackKind::GpuStream {
                device: 0,
                stream: 7
            }
        );
        match k.tid {
            RawId::Str(s) => assert_eq!(t.strings.get(s), "stream 7"),
            other => panic!("tid {other:?}"),
        }
        assert_eq!(t.strings.get(k.thread_name), "stream 7 ");
        let span = t.tracks.get(t.events.track[2]);
        assert_eq!(span.kind, TrackKind::Other);
        let c = categories(&t);
        assert_eq!(c["cpu_op"], 1);
        assert_eq!(c["kernel"], 1);
        assert_eq!(c["Trace"], 1);
        assert_eq!(c["(metadata)"], 1);
    });
}

// --- Legacy and unusual layouts.

#[test]
fn legacy_bare_array() {
    let text = r#"[{"name": "aten::add", "ph": "X", "ts": 10, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::mul", "ph": "X", "ts": 13, "dur": 1, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "launch", "ph": "s", "cat": "cpu_to_cuda", "id": 1, "ts": 13, "tid": 1, "pid": "CPU functions"}
]"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert!(t.meta.features.bare_array, "gz={gz}");
        assert_eq!(t.meta.pytorch_era(), "legacy autograd profiler (no Kineto)");
        assert_eq!(names(&t), ["aten::add", "aten::mul"], "gz={gz}");
        assert_eq!(t.flows.len(), 1, "gz={gz}");
        assert_eq!(t.report.elements, 3, "gz={gz}");
        assert!(t.report.defects.is_empty(), "gz={gz}");
        let c = categories(&t);
        assert_eq!(c["(none)"], 2);
        assert_eq!(c["cpu_to_cuda"], 1);
    });
}

#[test]
fn empty_event_array() {
    let text = r#"{"schemaVersion": 1, "traceEvents": []}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert!(t.events.is_empty(), "gz={gz}");
        assert!(t.report.defects.is_empty(), "gz={gz}");
        assert!(step_spans(&t).is_empty());
        assert_eq!(t.span_ns(), None);
    });
}

#[test]
fn utf8_bom_and_leading_whitespace() {
    let text = "\u{feff}\n  {\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"é\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap_or_else(|e| panic!("gz={gz}: {e}"));
        assert_eq!(names(&t), ["é"]);
    });
}

#[test]
fn escaped_strings_are_decoded() {
    let text = r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a\"b\\c\u00e9\n", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}"#;
    both(text.as_bytes(), &lenient(2), |r, gz| {
        let t = r.unwrap();
        assert_eq!(names(&t), ["a\"b\\cé\n"], "gz={gz}");
        assert!(t.report.defects.is_empty(), "gz={gz}");
    });
}

// --- Files that are not traces.

fn assert_not_a_trace(bytes: &[u8], name: &str, expect: &str) {
    let (_dir, path) = temp_file(name, bytes, false);
    let r = read_trace(&path, &lenient(2));
    let what = not_a_trace(&r).unwrap_or_else(|| panic!("{name}: expected NotATrace, got {r:?}"));
    assert!(
        what.to_lowercase().contains(expect),
        "{name}: {what:?} should mention {expect:?}"
    );
    // The message names the file.
    let msg = r.unwrap_err().to_string();
    assert!(msg.contains(name), "{msg}");
}

const PICKLE: &[u8] = &[
    0x80, 0x04, 0x95, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0x94, 0x8c, 0x08, b's', b'e', b'g', b'm',
    b'e', b'n', b't', b's', 0x94, 0x5d, 0x94, 0x73, 0x2e,
];

#[test]
fn pickle_is_not_a_trace() {
    assert_not_a_trace(PICKLE, "snapshot.pickle", "pickle");
    // Named like a trace: detection is by content.
    assert_not_a_trace(PICKLE, "looks_like.pt.trace.json", "pickle");
}

#[test]
fn gzip_of_a_pickle_is_not_a_trace() {
    assert_not_a_trace(&gzip(PICKLE), "snapshot.pickle.gz", "pickle");
    assert_not_a_trace(&gzip(PICKLE), "snapshot.pickle.gz", "gzip");
}

#[test]
fn elf_binary_is_not_a_trace() {
    let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
    elf.extend_from_slice(&[0u8; 56]);
    elf.extend_from_slice(b"\x02\x00\x3e\x00");
    assert_not_a_trace(&elf, "kinetoscope.bin", "binary");
}

#[test]
fn empty_file_is_not_a_trace() {
    assert_not_a_trace(b"", "empty.json", "empty");
    assert_not_a_trace(&gzip(b""), "empty.json.gz", "empty");
    assert_not_a_trace(b"  \n\t\n", "blank.json", "empty");
}

#[test]
fn html_page_is_not_a_trace() {
    let html =
        b"<!DOCTYPE html>\n<html><head><title>memory timeline</title></head><body></body></html>\n";
    assert_not_a_trace(html, "stage3-training_memory_timeline.html", "html");
    assert_not_a_trace(b"<html><body>x</body></html>", "page.json", "html");
}

#[test]
fn marshal_profile_is_not_a_trace() {
    assert_not_a_trace(&[0xfb, 0x29, 0x03, 0, 0, 0], "fib.prof", "marshal");
}

#[test]
fn json_object_without_trace_events_is_not_a_trace() {
    let et = br#"{"schema": "1.0.1", "pid": 1, "time": "2023", "start_ts": 1, "nodes": [{"id": 1}], "finish_ts": 2}"#;
    assert_not_a_trace(et, "benchmark_et.json", "execution trace");
    assert_not_a_trace(b"{}", "empty_object.json", "traceevents");
}

#[test]
fn memory_timeline_arrays_are_not_traces() {
    assert_not_a_trace(
        b"[[1714000000000000000, 0, 512, 3], [1714000000000001000, 2, -512, 3]]",
        "mem.raw.json",
        "memory timeline",
    );
}

#[test]
fn plain_text_is_not_a_trace() {
    assert_not_a_trace(b"hello, world\n", "notes.json", "not json");
}

#[test]
fn a_missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let r = read_trace(&dir.path().join("nope.json"), &lenient(2));
    assert!(matches!(r, Err(TraceError::Io { .. })), "{r:?}");
}

// --- Defects far into a large file: offsets and indexes stay exact across read blocks
// and worker threads.

/// A synthetic trace of `n` events (about 150 bytes each); event `bad` (if any) gets a
/// bare `N/A` argument. Returns the text and the byte offset of every event.
fn large_trace(n: usize, bad: Option<usize>) -> (String, Vec<usize>) {
    let mut text = String::from("{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    let mut starts = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 {
            text.push_str(",\n");
        }
        starts.push(text.len() + 2);
        let arg = if bad == Some(i) { "N/A" } else { "1.5" };
        text.push_str(&format!(
            "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op_{}\", \"pid\": 7, \"tid\": {}, \"ts\": {}, \"dur\": {}, \"args\": {{\"External id\": {i}, \"x\": {arg}}}}}",
            i % 97,
            i % 3,
            1_700_000_000_000_000u64 + i as u64 * 10,
            i % 9
        ));
    }
    text.push_str("\n  ],\n  \"traceName\": \"big.json\"\n}\n");
    (text, starts)
}

#[test]
fn defect_deep_in_a_large_file_is_located_exactly() {
    const N: usize = 90_000; // about 13 MB: more than one read block
    const BAD: usize = 80_000;
    let (text, starts) = large_trace(N, Some(BAD));
    assert!(text.len() > 12 << 20);
    for threads in [1, 3] {
        both(text.as_bytes(), &lenient(threads), |r, gz| {
            let t = r.unwrap();
            assert_eq!(t.events.len(), N, "gz={gz} threads={threads}");
            assert_eq!(t.report.elements, N as u64);
            assert_eq!(t.report.json_bytes, text.len() as u64);
            assert_eq!(kinds(&t), [DefectKind::BareToken], "threads={threads}");
            let d = &t.report.defects[0];
            assert_eq!(d.first_event_index, BAD as u64, "gz={gz} threads={threads}");
            assert_eq!(
                d.first_offset, starts[BAD] as u64,
                "gz={gz} threads={threads}"
            );
            assert_eq!(
                t.name(kinetoscope_trace::EventId(BAD as u32)),
                "aten::op_72"
            );
            assert_eq!(
                t.events.ts_ns[BAD],
                (1_700_000_000_000_000i64 + BAD as i64 * 10) * 1000
            );
        });
        let strict = ReadOptions {
            strict: true,
            threads,
            ..ReadOptions::default()
        };
        both(text.as_bytes(), &strict, |r, gz| match r {
            Err(TraceError::Malformed {
                offset,
                event_index,
                ..
            }) => {
                assert_eq!(offset, starts[BAD] as u64, "gz={gz} threads={threads}");
                assert_eq!(event_index, Some(BAD as u64), "gz={gz} threads={threads}");
            }
            other => panic!(
                "gz={gz}: expected Malformed, got {:?}",
                other.map(|t| t.events.len())
            ),
        });
    }
}

#[test]
fn large_file_truncated_in_a_later_block() {
    const N: usize = 70_000; // about 10 MB
    let (text, starts) = large_trace(N, None);
    let cut = starts[N - 5] + 30; // inside the fifth-last event
    for threads in [1, 3] {
        both(&text.as_bytes()[..cut], &lenient(threads), |r, gz| {
            let t = r.unwrap();
            assert_eq!(t.events.len(), N - 5, "gz={gz} threads={threads}");
            assert_eq!(kinds(&t), [DefectKind::TruncatedTail]);
            let d = &t.report.defects[0];
            assert_eq!(
                d.first_offset,
                starts[N - 5] as u64,
                "gz={gz} threads={threads}"
            );
            assert_eq!(d.first_event_index, (N - 5) as u64);
        });
    }
}

/// Names with an unescaped `{"ph"` inside look like event starts to the parallel
/// splitter; the split must be verified and the result be that of one thread. (The
/// names are placed after the first read block.)
#[test]
fn fake_event_starts_inside_names_do_not_fool_the_splitter() {
    const N: usize = 80_000;
    let (plain, _) = large_trace(N, None);
    // Rewrite the names of the events after byte 9 MB.
    let from = plain[9 << 20..].find("aten::op_").unwrap() + (9 << 20);
    let text = format!(
        "{}{}",
        &plain[..from],
        plain[from..].replace("aten::op_", "op {\"ph\" ")
    );
    let fakes = text.matches("op {\"ph\" ").count() as u64;
    assert!(fakes > 10_000);
    let one = read_trace(&temp_file("a.json", text.as_bytes(), false).1, &lenient(1));
    let (_dir, path) = temp_file("b.json", text.as_bytes(), false);
    for threads in [2, 4, 7] {
        let many = read_trace(&path, &lenient(threads)).unwrap();
        let one = one.as_ref().unwrap();
        assert_eq!(many.events.len(), N, "threads={threads}");
        assert_eq!(names(&many), names(one), "threads={threads}");
        assert_eq!(many.events.ts_ns, one.events.ts_ns, "threads={threads}");
        assert_eq!(kinds(&many), [DefectKind::UnescapedQuote]);
        assert_eq!(many.report.defects[0].count, fakes, "threads={threads}");
        assert_eq!(many.report.defects, one.report.defects, "threads={threads}");
    }
    assert_eq!(
        names(one.as_ref().unwrap())[N - 1],
        format!("op {{\"ph\" {}", (N - 1) % 97)
    );
}
