//! Bounded reading: decompression bombs, oversized elements, running out of memory, and a
//! FIFO given directly. Each input is a small gzip file (a few MB at most) made here; what
//! it inflates to is far larger than the memory bound each run is held to, so a reader
//! that buffered it would fail the bound.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use super::harness::{fingerprint, run_measured, Measured};

const MIB: usize = 1 << 20;

/// One small event, as the events of the shapes.
const EVENT: &[u8] = br#"{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1000, "dur": 5}"#;

/// A gzip file made of `parts`; a `Repeat` part is one gzip member of its unit compressed
/// once and written `times` times (gzip readers read concatenated members as one stream),
/// so hundreds of MiB of text cost a few hundred KB and no time to make.
enum Part<'a> {
    Text(&'a [u8]),
    Repeat(&'a [u8], usize),
}

fn gzip_member(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip")
}

fn bomb(dir: &Path, name: &str, parts: &[Part<'_>]) -> PathBuf {
    let path = dir.join(name);
    let mut out = std::fs::File::create(&path).expect("create");
    for part in parts {
        match part {
            Part::Text(t) => out.write_all(&gzip_member(t)).expect("write"),
            Part::Repeat(unit, times) => {
                let chunk = unit.repeat(MIB / unit.len());
                let member = gzip_member(&chunk);
                for _ in 0..(unit.len() * times).div_ceil(chunk.len()) {
                    out.write_all(&member).expect("write");
                }
            }
        }
    }
    path
}

/// Run `summary FILE ARGS` in `dir` and check it stays sane under `max_rss` and leaves
/// the input unchanged.
fn summary(dir: &Path, file: &Path, args: &[&str], max_rss: u64) -> Measured {
    let before = fingerprint(&[file.to_owned()]);
    let mut all = vec!["summary", file.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    let run = run_measured(dir, &all);
    run.assert_sane(max_rss);
    assert_eq!(before, fingerprint(&[file.to_owned()]), "the input changed");
    run
}

/// The `cpu_op` events read, from `summary --format json`.
fn events_of(run: &Measured) -> u64 {
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON document");
    doc["traces"][0]["events_by_category"]["cpu_op"]
        .as_u64()
        .unwrap_or_else(|| panic!("no event count in {}", run.out()))
}

#[test]
fn whitespace_after_the_events_is_streamed_past() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = bomb(
        dir.path(),
        "ws_after.json.gz",
        &[
            Part::Text(br#"{"traceEvents": ["#),
            Part::Text(EVENT),
            Part::Text(b"]"),
            Part::Repeat(b" ", 512 * MIB),
            Part::Text(br#", "traceName": "kept after the whitespace"}"#),
        ],
    );
    let run = summary(dir.path(), &file, &["--format", "json"], 256 << 20);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert_eq!(events_of(&run), 1);
}

#[test]
fn a_huge_array_under_an_unknown_key_is_streamed_past_before_and_after_the_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, before, after) in [
        ("before.json.gz", true, false),
        ("after.json.gz", false, true),
    ] {
        let mut parts = vec![Part::Text(b"{")];
        if before {
            parts.extend([Part::Text(br#""junk": ["#), Part::Repeat(b"0,", 256 * MIB)]);
            parts.push(Part::Text(b"0], "));
        }
        parts.extend([
            Part::Text(br#""traceEvents": ["#),
            Part::Text(EVENT),
            Part::Text(b"]"),
        ]);
        if after {
            parts.extend([
                Part::Text(br#", "junk": ["#),
                Part::Repeat(b"0,", 256 * MIB),
            ]);
            parts.push(Part::Text(b"0]"));
        }
        parts.push(Part::Text(b"}"));
        let file = bomb(dir.path(), name, &parts);
        let run = summary(dir.path(), &file, &["--format", "json"], 256 << 20);
        assert_eq!(run.code, Some(0), "{name}: {}", run.err());
        assert_eq!(events_of(&run), 1, "{name}");
    }
}

/// A trace whose second event holds `inner` between two of its keys, then one more event.
fn one_big_event(dir: &Path, name: &str, inner: Part<'_>, name_text: bool) -> PathBuf {
    let open: &[u8] = if name_text {
        br#"{"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": ""#
    } else {
        br#"{"ph": "X", "cat": "cpu_op", "name": "big", "pid": 1, "tid": 1,"#
    };
    let close: &[u8] = if name_text {
        br#""}"#
    } else {
        br#" "ts": 1, "dur": 1}"#
    };
    bomb(
        dir,
        name,
        &[
            Part::Text(br#"{"traceEvents": ["#),
            Part::Text(EVENT),
            Part::Text(b", "),
            Part::Text(open),
            inner,
            Part::Text(close),
            Part::Text(b", "),
            Part::Text(EVENT),
            Part::Text(b"]}"),
        ],
    )
}

#[test]
fn an_event_over_the_cap_is_skipped_and_counted_or_refused_under_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = one_big_event(
        dir.path(),
        "ws_inside.json.gz",
        Part::Repeat(b" ", 384 * MIB),
        false,
    );
    let name = one_big_event(
        dir.path(),
        "name.json.gz",
        Part::Repeat(b"a", 384 * MIB),
        true,
    );
    for file in [&ws, &name] {
        let cap = ["--max-element", "8MiB"];
        let run = summary(dir.path(), file, &cap, 256 << 20);
        assert_eq!(run.code, Some(0), "{}", run.err());
        let text = run.out() + &run.err();
        assert!(text.contains("1 elements over the size cap"), "{text}");

        let json = summary(
            dir.path(),
            file,
            &["--format", "json", cap[0], cap[1]],
            256 << 20,
        );
        assert_eq!(
            events_of(&json),
            2,
            "the events around the big one are read"
        );

        let strict = summary(dir.path(), file, &["--strict", cap[0], cap[1]], 256 << 20);
        assert_eq!(strict.code, Some(2), "{}", strict.err());
        let err = strict.err();
        let at = format!("{}: byte 110, event #1", file.display());
        assert!(err.contains(&at), "names the file and offset: {err}");
        assert!(err.contains("larger than the 8 MiB cap"), "{err}");
    }
}

#[test]
fn the_default_cap_bounds_memory_on_a_huge_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = one_big_event(
        dir.path(),
        "name.json.gz",
        Part::Repeat(b"a", 512 * MIB),
        true,
    );
    let run = summary(dir.path(), &file, &["--format", "json"], 400 << 20);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert_eq!(events_of(&run), 2);
}

#[test]
fn running_out_of_memory_is_an_error_with_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut events = Vec::new();
    for i in 0..200_000 {
        events.extend_from_slice(
            format!(r#"{{"ph": "X", "cat": "cpu_op", "name": "op{i}", "pid": 1, "tid": {i}, "ts": {i}, "dur": 1}},"#)
                .as_bytes(),
        );
    }
    events.pop();
    let file = bomb(
        dir.path(),
        "many.json.gz",
        &[
            Part::Text(br#"{"traceEvents": ["#),
            Part::Text(&events),
            Part::Text(b"]}"),
        ],
    );
    let run = summary(dir.path(), &file, &["--max-memory", "4MiB"], 256 << 20);
    assert_eq!(run.code, Some(2), "{}", run.err());
    let err = run.err();
    assert!(err.contains(&format!("{}: byte ", file.display())), "{err}");
    assert!(err.contains("out of memory"), "{err}");
    assert!(err.contains("of the 4 MiB budget"), "{err}");
    assert!(err.contains("--max-memory"), "{err}");
    let ok = summary(dir.path(), &file, &["--max-memory", "256MiB"], 256 << 20);
    assert_eq!(ok.code, Some(0), "{}", ok.err());
}

/// A FIFO at `dir/name` that a thread fills with `text` once a reader opens it.
fn fifo(dir: &Path, name: &str, text: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = dir.join(name);
    let c = std::ffi::CString::new(path.to_str().expect("utf-8 path")).expect("path");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    std::thread::spawn(move || {
        // Opening blocks until kinetoscope opens the other end.
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open fifo");
        // The reader may stop early on an error; a broken pipe is fine then.
        let _ = w.write_all(&text);
    })
}

#[test]
fn a_fifo_given_directly_is_read_as_a_stream_with_the_same_caps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = br#"{"traceEvents": ["#.to_vec();
    text.extend_from_slice(EVENT);
    text.extend_from_slice(br#", {"ph": "X", "name": ""#);
    text.extend_from_slice(&vec![b'a'; 3 * MIB]);
    text.extend_from_slice(br#"", "ts": 1}, "#);
    text.extend_from_slice(EVENT);
    text.extend_from_slice(b"]}");
    let writer = fifo(dir.path(), "trace.json", text);
    let run = run_measured(
        dir.path(),
        &[
            "summary",
            "trace.json",
            "--format",
            "json",
            "--max-element",
            "1MiB",
        ],
    );
    writer.join().expect("writer");
    run.assert_sane(256 << 20);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert_eq!(events_of(&run), 2, "the events around the oversized one");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
    let text = doc.to_string();
    assert!(
        text.contains("oversized"),
        "the skipped event is counted: {text}"
    );
}

#[test]
fn a_fifo_holding_a_memory_timeline_is_read_by_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows: Vec<String> = (0..1000)
        .map(|i| format!("[{i},1,{},4]", 1 << 20))
        .collect();
    let writer = fifo(
        dir.path(),
        "timeline.json",
        format!("[{}]", rows.join(",")).into(),
    );
    let run = run_measured(dir.path(), &["memory", "timeline.json", "--format", "json"]);
    writer.join().expect("writer");
    run.assert_sane(256 << 20);
    assert_eq!(run.code, Some(0), "{}", run.err());
    assert!(run.out().contains("memory_timeline"), "{}", run.out());
}

#[test]
fn a_device_given_directly_is_refused_by_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = run_measured(dir.path(), &["summary", "/dev/zero"]);
    run.assert_sane(96 << 20);
    assert_eq!(run.code, Some(2), "{}", run.err());
    assert!(
        run.err().contains("/dev/zero: not a Kineto Chrome trace"),
        "{}",
        run.err()
    );
}
