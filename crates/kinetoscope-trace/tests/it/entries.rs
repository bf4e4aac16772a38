//! The reader's entries beside a path: sniffing once and reading on, bytes of any
//! lifetime, streams, and files that change while they are read (with `mmap` off: a
//! truncated tail or an error, never a signal).

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kinetoscope_trace::read::{
    read_trace, read_trace_bytes, read_trace_from, sniff_bytes, sniff_path, sniff_reader,
    ContentKind, Loaded, ReadOptions,
};
use kinetoscope_trace::{DefectKind, TraceError};

use crate::common::{fixture, fixtures_dir, gzip, json_text, lenient, strict, temp_file};

/// The 1.9-era fixture as plain JSON: 35 MB, several of the reader's blocks.
fn big_text() -> Vec<u8> {
    json_text(&fixture("worker0.1623143089861.pt.trace.json.gz"))
}

fn no_mmap(mut opts: ReadOptions) -> ReadOptions {
    opts.mmap = false;
    opts
}

/// A file truncated between opening and reading (the open handle is kept by the sniff
/// result): without mmap, a truncated tail leniently and an error when strict.
#[test]
fn file_truncated_while_open_is_a_truncated_tail() {
    let text = big_text();
    let full = read_trace_bytes(Path::new("t.json"), &text, &lenient(2)).unwrap();
    for cut in [10_000, text.len() / 3, text.len() - 100] {
        for strict_mode in [false, true] {
            let (_dir, path) = temp_file("t.json", &text, false);
            let sniffed = sniff_path(&path).unwrap();
            assert_eq!(sniffed.kind(), ContentKind::KinetoTrace);
            OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(cut as u64)
                .unwrap();
            let opts = if strict_mode { strict() } else { lenient(2) };
            match (sniffed.read_trace(&no_mmap(opts)), strict_mode) {
                (Ok(t), false) => {
                    let kinds: Vec<DefectKind> = t.report.defects.iter().map(|d| d.kind).collect();
                    assert_eq!(kinds, [DefectKind::TruncatedTail], "cut at {cut}");
                    assert!(t.events.len() < full.events.len(), "cut at {cut}");
                    // The head read before the cut is still there.
                    assert!(t.report.json_bytes >= cut.min(64 << 10) as u64);
                }
                (Err(TraceError::Malformed { path: p, .. }), true) => assert_eq!(p, path),
                (other, _) => panic!(
                    "cut at {cut}, strict {strict_mode}: {:?}",
                    other.map(|t| t.report.defects)
                ),
            }
        }
    }
}

/// A stream whose reads fail part way (a disk or a socket gone), after more than one of
/// the reader's blocks: an I/O error naming the input, whether the blocks are read on a
/// thread of their own (one parser thread) or by the parsing thread between windows
/// (several), plain or gzip.
#[test]
fn a_stream_that_fails_part_way_is_an_io_error() {
    /// Hands out `data` up to `fail_at`, then an error.
    struct Failing {
        data: Vec<u8>,
        at: usize,
        fail_at: usize,
    }
    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.at >= self.fail_at {
                return Err(std::io::Error::other("the disk went away"));
            }
            let n = buf.len().min(self.fail_at - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }
    let text = big_text();
    assert!(text.len() > 20 << 20, "spans more than two 8 MiB blocks");
    for gz in [false, true] {
        let data = if gz { gzip(&text) } else { text.clone() };
        let fail_at = data.len() * 3 / 4;
        for threads in [1, 2, 3] {
            let reader = Failing {
                data: data.clone(),
                at: 0,
                fail_at,
            };
            let name = Path::new("stream.json");
            match read_trace_from(name, reader, &lenient(threads)) {
                Err(TraceError::Io { path, source }) => {
                    assert_eq!(path, name, "gz {gz}, {threads} threads");
                    assert!(source.to_string().contains("disk went away"), "{source}");
                }
                Err(e) => panic!("gz {gz}, {threads} threads: unexpected {e}"),
                Ok(t) => panic!("gz {gz}, {threads} threads: read {} events", t.events.len()),
            }
        }
    }
}

/// A gzip file truncated after the sniff: a truncated tail or an I/O error.
#[test]
fn gzip_file_truncated_while_open() {
    let gz = gzip(&big_text());
    let (_dir, path) = temp_file("t.json.gz", &gz, false);
    let sniffed = sniff_path(&path).unwrap();
    assert!(sniffed.is_gzip());
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(gz.len() as u64 / 2).unwrap();
    match sniffed.read_trace(&lenient(2)) {
        Ok(t) => assert!(t
            .report
            .defects
            .iter()
            .any(|d| d.kind == DefectKind::TruncatedTail)),
        Err(TraceError::Io { path: p, .. }) => assert_eq!(p, path),
        Err(e) => panic!("unexpected {e}"),
    }
}

/// A file rewritten with other bytes while it is read: what was read, or an error, no
/// panic. (Here the new bytes fall inside two long strings and join them: valid JSON
/// with fewer elements.)
#[test]
fn file_rewritten_while_open_is_not_a_crash() {
    let text = big_text();
    let full = read_trace_bytes(Path::new("t.json"), &text, &lenient(2)).unwrap();
    let (_dir, path) = temp_file("t.json", &text, false);
    let sniffed = sniff_path(&path).unwrap();
    let mut f = OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(text.len() as u64 / 2)).unwrap();
    f.write_all(&vec![b'}'; 1 << 20]).unwrap();
    drop(f);
    match sniffed.read_trace(&no_mmap(lenient(2))) {
        Ok(t) => assert!(
            t.report.elements < full.report.elements || !t.report.defects.is_empty(),
            "{:?}",
            t.report
        ),
        Err(e) => assert!(e.to_string().contains("t.json"), "{e}"),
    }
}

/// A stream that fails part-way: an I/O error naming the input.
#[test]
fn failing_stream_is_an_io_error() {
    struct Failing(Vec<u8>, usize);
    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.1 >= self.0.len() / 2 {
                return Err(std::io::Error::other("connection reset"));
            }
            let n = buf.len().min(4096).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }
    let text = big_text();
    for gz in [false, true] {
        let data = if gz { gzip(&text) } else { text.clone() };
        let r = read_trace_from(Path::new("upload.json"), Failing(data, 0), &lenient(2));
        match r {
            Err(TraceError::Io { path, source }) => {
                assert_eq!(path, Path::new("upload.json"));
                assert!(source.to_string().contains("connection reset"), "{source}");
            }
            other => panic!("gz={gz}: {:?}", other.map(|t| t.events.len())),
        }
    }
}

/// Bytes that live only in this function (no `'static`), and a stream: the progress
/// callback ends at the bytes stored, which is the trace's `file_bytes`.
#[test]
fn progress_and_sizes_through_every_entry() {
    let text = big_text();
    for gz in [false, true] {
        let data = if gz { gzip(&text) } else { text.clone() };
        let (_dir, path) = temp_file("t.json", &data, false);
        let last = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&last);
        let opts = ReadOptions {
            progress: Some(Arc::new(move |n| seen.store(n, Ordering::Relaxed))),
            ..lenient(2)
        };
        let traces = [
            read_trace(&path, &opts),
            read_trace(&path, &no_mmap(opts.clone())),
            read_trace_bytes(&path, &data, &opts),
            read_trace_from(&path, data.as_slice(), &opts),
        ];
        for (k, t) in traces.into_iter().enumerate() {
            let t = t.unwrap();
            assert_eq!(t.report.file_bytes, data.len() as u64, "gz={gz} #{k}");
            assert_eq!(t.report.json_bytes, text.len() as u64, "gz={gz} #{k}");
            assert_eq!(t.report.gzip, gz);
        }
        assert_eq!(last.load(Ordering::Relaxed), data.len() as u64, "gz={gz}");
    }
}

/// What each kind of input is sniffed as, from a file, bytes and a stream alike.
#[test]
fn sniffs_every_kind() {
    let snapshot = std::fs::read(fixtures_dir().join("snapshots/v2_6_full.pickle")).unwrap();
    let timeline =
        std::fs::read(fixtures_dir().join("memory_timelines/torch-2.2.2/mem.raw.json.gz")).unwrap();
    let trace = std::fs::read(fixture("backward_thread.json")).unwrap();
    let et =
        br#"{"schema": "1.0.1", "pid": 1, "time": "2023", "start_ts": 1, "nodes": [{"id": 1}]}"#;
    let cases: Vec<(&str, Vec<u8>, ContentKind, bool)> = vec![
        ("trace", trace.clone(), ContentKind::KinetoTrace, false),
        ("trace.gz", gzip(&trace), ContentKind::KinetoTrace, true),
        ("timeline.gz", timeline, ContentKind::MemoryTimeline, true),
        ("snapshot", snapshot.clone(), ContentKind::Snapshot, false),
        ("snapshot.gz", gzip(&snapshot), ContentKind::Snapshot, true),
        ("et", et.to_vec(), ContentKind::ExecutionTrace, false),
        ("pstats", vec![0xfb, 0x29, 3, 0], ContentKind::Pstats, false),
        (
            "html",
            b"<!DOCTYPE html><p>".to_vec(),
            ContentKind::Html,
            false,
        ),
        ("empty", Vec::new(), ContentKind::Empty, false),
        ("empty.gz", gzip(b""), ContentKind::Empty, true),
        (
            "elf",
            vec![0x7f, b'E', b'L', b'F', 0, 1],
            ContentKind::Binary,
            false,
        ),
        (
            "json",
            b"{\"a\": 1}".to_vec(),
            ContentKind::OtherJson,
            false,
        ),
        ("text", b"hello".to_vec(), ContentKind::Text, false),
    ];
    for (name, bytes, kind, gz) in cases {
        let (_dir, path) = temp_file(name, &bytes, false);
        let sniffed = [
            sniff_path(&path).unwrap(),
            sniff_bytes(&path, &bytes).unwrap(),
            sniff_reader(&path, bytes.as_slice()).unwrap(),
        ];
        for s in sniffed {
            assert_eq!((s.kind(), s.is_gzip()), (kind, gz), "{name}");
            assert_eq!(s.path(), path);
        }
    }
}

/// `Sniffed::read` reads each kind with its reader; a kind no reader takes is refused
/// saying what it looks like.
#[test]
fn read_by_kind() {
    let dir = fixtures_dir();
    let read = |p: &Path| sniff_path(p).unwrap().read(&lenient(2));
    assert!(matches!(
        read(&fixture("backward_thread.json")),
        Ok(Loaded::Trace(t)) if !t.events.is_empty()
    ));
    assert!(matches!(
        read(&dir.join("snapshots/v2_6_full.pickle")),
        Ok(Loaded::Snapshot(s)) if !s.segments.is_empty()
    ));
    assert!(matches!(
        read(&dir.join("memory_timelines/torch-2.2.2_mem_coalesced_memory_timeline.json")),
        Ok(Loaded::MemoryTimeline(tl)) if !tl.times_ns.is_empty()
    ));
    let (_dir, html) = temp_file("m.html", b"<html>", true);
    match read(&html) {
        Err(TraceError::NotATrace { looks_like, .. }) => {
            assert_eq!(
                looks_like,
                "gzip-compressed an HTML page (a memory-timeline picture?)"
            )
        }
        other => panic!("{other:?}"),
    }
    // A trace is neither a snapshot nor a timeline, and says so.
    let p = fixture("backward_thread.json");
    let e = sniff_path(&p)
        .unwrap()
        .read_snapshot(&ReadOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("not a CUDA memory snapshot"), "{e}");
    let e = sniff_path(&p)
        .unwrap()
        .read_memory_timeline(&ReadOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("not a memory timeline"), "{e}");
}

/// A sniffed input can be handed to another thread (a server's worker) to be read.
#[test]
fn sniffed_inputs_move_between_threads() {
    fn send<T: Send>(_: &T) {}
    let bytes = std::fs::read(fixture("backward_thread.json")).unwrap();
    let from_bytes = sniff_bytes(Path::new("b.json"), &bytes).unwrap();
    send(&from_bytes);
    let from_file = sniff_path(&fixture("backward_thread.json")).unwrap();
    let t = std::thread::spawn(move || from_file.read_trace(&lenient(2)).unwrap())
        .join()
        .unwrap();
    let u = std::thread::scope(|s| s.spawn(move || from_bytes.read_trace(&lenient(2))).join())
        .unwrap()
        .unwrap();
    assert_eq!(t.events.len(), u.events.len());
}
