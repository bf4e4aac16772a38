//! The pstats reader: every fixture (cProfile on CPython 3.6–3.13, `profile` on 3.8 and
//! 3.13) against the reference numbers Python's own `pstats` read from the same file
//! (`tests/fixtures/pstats/reference.py`), every entry in order; detection by content,
//! gzip, every entry point; and hostile marshal data (code objects, truncation, length,
//! nesting and reference bombs, wrong types, the memory budget), never a panic.

use std::path::{Path, PathBuf};

use kinetoscope_trace::read::{
    pstats_from_bytes, pstats_from_reader, read_pstats, sniff_bytes, ContentKind, ReadOptions,
};
use kinetoscope_trace::{EdgeStats, FuncKey, MemoryBudget, PstatsProfile, TraceError};
use proptest::prelude::*;
use serde_json::Value;

use crate::common::{fixture, gzip};

fn dir() -> PathBuf {
    fixture("pstats")
}

/// Every `.prof` fixture with its reference JSON.
fn fixtures() -> Vec<(PathBuf, Value)> {
    let mut out: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "prof"))
        .map(|p| {
            let text = std::fs::read_to_string(p.with_extension("json")).unwrap();
            (p, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(out.len(), 11, "9 cProfile + 2 profile fixtures");
    out
}

/// A reference float: `repr(float)` text, parsed exactly.
fn secs(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn key(v: &Value) -> FuncKey {
    FuncKey {
        file: v[0].as_str().unwrap().to_owned(),
        line: v[1].as_i64().unwrap(),
        name: v[2].as_str().unwrap().to_owned(),
    }
}

/// Every entry and every caller edge equal to what Python's pstats loaded, in order.
fn check_against_reference(p: &PstatsProfile, reference: &Value, file: &Path) {
    let want = reference["plain"]["entries"].as_array().unwrap();
    assert_eq!(p.entries.len(), want.len(), "{}", file.display());
    for (got, want) in p.entries.iter().zip(want) {
        let ctx = format!("{}: {}", file.display(), got.func.std_string());
        assert_eq!(got.func, key(&want["func"]), "{ctx}");
        assert_eq!(got.primitive_calls, want["cc"].as_i64().unwrap(), "{ctx}");
        assert_eq!(got.calls, want["nc"].as_i64().unwrap(), "{ctx}");
        assert_eq!(got.tottime, secs(&want["tt"]), "{ctx}");
        assert_eq!(got.cumtime, secs(&want["ct"]), "{ctx}");
        let callers = want["callers"].as_array().unwrap();
        assert_eq!(got.callers.len(), callers.len(), "{ctx}");
        for (edge, w) in got.callers.iter().zip(callers) {
            assert_eq!(edge.caller, key(&w[0]), "{ctx}");
            let expected = match &w[1] {
                Value::Array(a) => EdgeStats::Timed {
                    calls: a[0].as_i64().unwrap(),
                    primitive_calls: a[1].as_i64().unwrap(),
                    tottime: secs(&a[2]),
                    cumtime: secs(&a[3]),
                },
                n => EdgeStats::Count {
                    calls: n.as_i64().unwrap(),
                },
            };
            assert_eq!(
                edge.stats,
                expected,
                "{ctx} <- {}",
                edge.caller.std_string()
            );
        }
    }
}

#[test]
fn every_fixture_equals_pythons_pstats() {
    for (path, reference) in fixtures() {
        let p = read_pstats(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.file_bytes, std::fs::metadata(&path).unwrap().len());
        check_against_reference(&p, &reference, &path);
        let profile_module = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("profile");
        let counts = p
            .entries
            .iter()
            .flat_map(|e| &e.callers)
            .all(|c| matches!(c.stats, EdgeStats::Count { .. }));
        assert_eq!(counts, profile_module, "{}", path.display());
    }
}

#[test]
fn every_entry_point_and_gzip_read_the_same() {
    let (path, _) = &fixtures()[0];
    let bytes = std::fs::read(path).unwrap();
    let want = read_pstats(path).unwrap();
    let name = Path::new(path);
    assert_eq!(
        pstats_from_bytes(name, &bytes).unwrap().entries,
        want.entries
    );
    assert_eq!(
        pstats_from_reader(name, &bytes[..]).unwrap().entries,
        want.entries
    );
    let gz = gzip(&bytes);
    assert_eq!(sniff_bytes(name, &gz).unwrap().kind(), ContentKind::Pstats);
    assert_eq!(pstats_from_bytes(name, &gz).unwrap().entries, want.entries);
    assert_eq!(
        pstats_from_reader(name, &gz[..]).unwrap().entries,
        want.entries
    );
}

#[test]
fn a_trace_given_as_pstats_is_refused_by_content() {
    let e = pstats_from_bytes(Path::new("x.prof"), br#"{"traceEvents": []}"#).unwrap_err();
    assert!(matches!(e, TraceError::NotA { .. }), "{e}");
    assert!(e.to_string().contains("x.prof"), "{e}");
}

/// The error for marshal bytes `data` (read as a file named `bad.prof`), with its offset.
fn refused(data: &[u8]) -> (u64, String) {
    match pstats_from_bytes(Path::new("bad.prof"), data) {
        Err(e @ TraceError::Malformed { offset, .. }) => {
            let text = e.to_string();
            assert!(text.starts_with("bad.prof: byte "), "{text}");
            (offset, text)
        }
        Err(e @ TraceError::NotA { .. }) => (0, e.to_string()),
        other => panic!("not refused: {other:?}"),
    }
}

/// `{(a, 1, f): (1, 1, 0.5, 0.5, CALLERS)}` with `callers` as raw marshal bytes.
fn one_entry(callers: &[u8]) -> Vec<u8> {
    let mut v =
        b"{)\x03z\x01ai\x01\x00\x00\x00z\x01f)\x05i\x01\x00\x00\x00i\x01\x00\x00\x00".to_vec();
    v.extend_from_slice(b"g\x00\x00\x00\x00\x00\x00\xe0?g\x00\x00\x00\x00\x00\x00\xe0?");
    v.extend_from_slice(callers);
    v.push(b'0');
    v
}

#[test]
fn a_hand_made_entry_reads_and_its_wrong_twins_are_refused() {
    let p = pstats_from_bytes(Path::new("ok.prof"), &one_entry(b"{0")).unwrap();
    assert_eq!(p.entries.len(), 1);
    assert_eq!(p.entries[0].func.std_string(), "a:1(f)");
    assert_eq!(p.entries[0].tottime, 0.5);
    // callers that are a list, and a caller edge that is a string
    let (_, e) = refused(&one_entry(b"[\x00\x00\x00\x00"));
    assert!(e.contains("callers are list"), "{e}");
    let (_, e) = refused(&one_entry(b"{)\x03z\x01ai\x01\x00\x00\x00z\x01fz\x01x0"));
    assert!(e.contains("caller's stats"), "{e}");
    // a key of two items; a value that is not a tuple
    let (off, e) = refused(b"{)\x02z\x01ai\x01\x00\x00\x00N0");
    assert!(e.contains("function key"), "{e}");
    assert_eq!(off, 1);
    let (_, e) = refused(b"{)\x03z\x01ai\x01\x00\x00\x00z\x01fN0");
    assert!(e.contains("function's stats is None"), "{e}");
    // an empty stats dict is an empty profile
    let p = pstats_from_bytes(Path::new("empty.prof"), b"\xfb0").unwrap();
    assert!(p.entries.is_empty());
}

#[test]
fn a_code_object_is_refused_with_its_offset() {
    // a callers dict whose value is a code object, as a crafted file would hold one
    let data = one_entry(b"{)\x03z\x01ai\x01\x00\x00\x00z\x01fc\x00\x00\x00\x00");
    let (off, e) = refused(&data);
    assert!(e.contains("code object"), "{e}");
    assert_eq!(data[off as usize], b'c');
    for ty in [b'x', b'y', b'?', b'S', b'.'] {
        let (off, e) = refused(&one_entry(&[b'{', b')', 3, ty]));
        assert!(e.contains("refused"), "{e}");
        assert_eq!(off as usize, one_entry(b"").len() - 1 + 3);
    }
}

#[test]
fn every_truncation_of_a_fixture_fails_cleanly() {
    let (path, _) = &fixtures()[0];
    let bytes = std::fs::read(path).unwrap();
    for n in 0..bytes.len() {
        let r = pstats_from_bytes(Path::new("cut.prof"), &bytes[..n]);
        let e = r.expect_err("a truncated file is an error");
        assert!(e.to_string().starts_with("cut.prof"), "{e}");
    }
}

#[test]
fn length_bombs_are_refused_before_allocating() {
    for data in [
        &b"{)\x03(\xff\xff\xff\x7f"[..], // tuple of 2^31-1 items
        b"{)\x03u\xff\xff\xff\x7f",      // str of 2 GiB
        b"{)\x03l\xff\xff\xff\x7f",      // long of 2^31-1 digits
        b"{)\x03(\xff\xff\xff\xff",      // negative length
    ] {
        let (off, e) = refused(data);
        assert_eq!(off, 3, "{e}");
        assert!(e.contains("past the end") || e.contains("negative"), "{e}");
    }
}

#[test]
fn deep_nesting_is_refused_without_recursion_trouble() {
    let deep = [b"{".to_vec(), b")\x01".repeat(100_000), b"N".to_vec()].concat();
    let (_, e) = refused(&deep);
    assert!(e.contains("nested deeper than 64"), "{e}");
}

#[test]
fn reference_loops_and_laughs_are_bounded() {
    // a key tuple that contains itself: read, then refused by the schema
    let (_, e) = refused(b"{\xa9\x03r\x00\x00\x00\x00r\x00\x00\x00\x00r\x00\x00\x00\x00N0");
    assert!(
        e.contains("function key") || e.contains("function's stats"),
        "{e}"
    );
    // one 60 KiB caller dict referenced by 20,000 entries: the walk's budget refuses it
    let mut data = b"{)\x03z\x01ai\x00\x00\x00\x00z\x01f)\x05i\x01\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00i\x00\x00\x00\x00\xfb".to_vec();
    for i in 0..3000u32 {
        data.extend_from_slice(b")\x03z\x01bi");
        data.extend_from_slice(&i.to_le_bytes());
        data.extend_from_slice(b"z\x01gi\x01\x00\x00\x00");
    }
    data.push(b'0');
    for i in 1..20_000u32 {
        data.extend_from_slice(b")\x03z\x01ai");
        data.extend_from_slice(&i.to_le_bytes());
        data.extend_from_slice(b"z\x01f)\x05i\x01\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00i\x00\x00\x00\x00r\x00\x00\x00\x00");
    }
    data.push(b'0');
    let (_, e) = refused(&data);
    assert!(e.contains("references multiply the work"), "{e}");
}

#[test]
fn a_file_over_the_memory_budget_is_an_error_not_an_abort() {
    let (path, _) = &fixtures()[0];
    let bytes = std::fs::read(path).unwrap();
    let opts = ReadOptions {
        budget: MemoryBudget::new(Some(4096)),
        ..ReadOptions::default()
    };
    let e = sniff_bytes(path, &gzip(&bytes))
        .unwrap()
        .read_pstats(&opts)
        .unwrap_err();
    assert!(matches!(e, TraceError::OutOfMemory { .. }), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_after_a_dict_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        let data = [b"\xfb".to_vec(), tail].concat();
        let _ = pstats_from_bytes(Path::new("r.prof"), &data);
    }

    #[test]
    fn mutated_fixtures_never_panic(at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let bytes = std::fs::read(dir().join("cprofile-3.13.prof")).unwrap();
        let mut data = bytes.clone();
        let i = at.index(data.len());
        data[i] = byte;
        let _ = pstats_from_bytes(Path::new("m.prof"), &data);
    }
}

/// Every pstats file of the shared corpus (`samples/*.prof`) reads, and its caller edges
/// are consistent with its entries (the calls along the edges into a function are at
/// most its calls). Fails when the shared folder is missing.
#[test]
#[ignore = "reads ../shared"]
fn shared_pstats_files_read() {
    let root = crate::common::require_shared();
    let mut n = 0;
    for dir in ["samples", "reference"] {
        let Ok(files) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for f in files.map(|e| e.unwrap().path()) {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if !(name.ends_with(".prof") || name.ends_with(".pstats")) {
                continue;
            }
            let p = read_pstats(&f).unwrap_or_else(|e| panic!("{e}"));
            assert!(!p.entries.is_empty(), "{name}");
            for e in &p.entries {
                let into: i64 = e.callers.iter().map(|c| c.stats.calls()).sum();
                assert!(into <= e.calls, "{name}: {}", e.func.std_string());
            }
            n += 1;
        }
    }
    assert!(n > 0, "no pstats file in the shared corpus");
}
