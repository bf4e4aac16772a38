//! Hostile pstats (marshal) files through `kinetoscope pstats`: a code object, a
//! truncated file, deep nesting, a length bomb, a reference loop and a reference
//! "laughs" bomb, a gzip bomb of marshal data, control characters in function names, and
//! a dense call graph (50^4 paths) whose estimated call tree must stay bounded.
//! Each run exits 0 or 2 with the file and byte offset named, within its memory bound,
//! and prints no raw control byte.

use std::io::Write;
use std::path::Path;

use super::harness::{fingerprint, run_measured};

const MIB: u64 = 1 << 20;

fn check(dir: &Path, name: &str, data: &[u8], args: &[&str]) -> super::harness::Measured {
    let file = dir.join(name);
    std::fs::write(&file, data).unwrap();
    let before = fingerprint(std::slice::from_ref(&file));
    let mut all = vec!["pstats", name];
    all.extend_from_slice(args);
    let run = run_measured(dir, &all);
    run.assert_sane(256 * MIB);
    assert_eq!(before, fingerprint(&[file]), "the input changed");
    run
}

fn refused(dir: &Path, name: &str, data: &[u8], needle: &str) {
    let run = check(dir, name, data, &[]);
    assert_eq!(run.code, Some(2), "{}", run.out());
    let err = run.err();
    assert!(
        err.contains(&format!("{name}: byte ")),
        "file and offset: {err}"
    );
    assert!(err.contains(needle), "{needle:?} in {err}");
}

#[test]
fn malicious_marshal_is_refused_with_file_and_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // a code object where a function's stats belong
    refused(
        d,
        "code.prof",
        b"{)\x03z\x01ai\x01\x00\x00\x00z\x01fc\x00\x00\x00\x00",
        "code object",
    );
    refused(d, "cut.prof", b"{)\x03z\x01ai\x01\x00", "truncated");
    let deep = [b"{".to_vec(), b")\x01".repeat(1 << 20), b"N".to_vec()].concat();
    refused(d, "deep.prof", &deep, "nested deeper");
    refused(d, "long.prof", b"{)\x03u\xff\xff\xff\x7f", "past the end");
    refused(
        d,
        "loop.prof",
        b"{\xa9\x03r\x00\x00\x00\x00r\x00\x00\x00\x00r\x00\x00\x00\x00N0",
        "function key",
    );
}

#[test]
fn a_shared_callers_dict_cannot_multiply_the_work() {
    let tmp = tempfile::tempdir().unwrap();
    let mut data = b"{)\x03z\x01ai\x00\x00\x00\x00z\x01f)\x05i\x01\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00i\x00\x00\x00\x00\xfb".to_vec();
    for i in 0..50_000u32 {
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
    refused(
        tmp.path(),
        "laughs.prof",
        &data,
        "references multiply the work",
    );
}

#[test]
fn a_gzip_bomb_of_marshal_stays_under_the_bound() {
    let tmp = tempfile::tempdir().unwrap();
    // 1 GiB of zeros after a dict header: refused at the size cap or as malformed,
    // never held past the memory bound (--max-memory 128MiB)
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b"{)\x03").unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&zeros).unwrap();
    }
    let gz = enc.finish().unwrap();
    let run = check(tmp.path(), "bomb.prof", &gz, &["--max-memory", "128MiB"]);
    assert_eq!(run.code, Some(2), "{}", run.out());
    assert!(run.err().contains("bomb.prof"), "{}", run.err());
}

#[test]
fn control_characters_in_names_are_shown_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    // one function named "\x1b]52;c;AAAA\x07evil" with a callers dict naming itself
    let name = b"\x1b]52;c;AAAA\x07evil";
    let mut data = b"{)\x03z\x01ai\x01\x00\x00\x00z".to_vec();
    data.push(name.len() as u8);
    data.extend_from_slice(name);
    data.extend_from_slice(b")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00g\x00\x00\x00\x00\x00\x00\xe0?g\x00\x00\x00\x00\x00\x00\xe0?{00");
    for format in ["table", "csv", "json"] {
        let run = check(
            tmp.path(),
            "names.prof",
            &data,
            &["--format", format, "--callers", "evil"],
        );
        assert_eq!(run.code, Some(0), "{}", run.err());
        assert!(run.out().contains("evil"), "{}", run.out());
    }
}

/// Marshal bytes of `(f, line, name)`.
fn key(line: u32, name: &str) -> Vec<u8> {
    let mut v = b")\x03z\x01fi".to_vec();
    v.extend_from_slice(&line.to_le_bytes());
    v.push(b'z');
    v.push(name.len() as u8);
    v.extend_from_slice(name.as_bytes());
    v
}

fn float(x: f64) -> Vec<u8> {
    let mut v = vec![b'g'];
    v.extend_from_slice(&x.to_le_bytes());
    v
}

#[test]
fn a_dense_call_graph_gives_a_bounded_call_tree() {
    // 5 layers of 50 functions, each calling every function of the next layer: 50^4
    // paths; the tree is cut by its size threshold and node cap.
    const W: u32 = 50;
    const LAYERS: u32 = 5;
    let tmp = tempfile::tempdir().unwrap();
    let name = |l: u32, j: u32| format!("L{l}_{j}");
    let mut data = b"{".to_vec();
    data.extend(key(0, "root"));
    data.extend(b")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00");
    data.extend(float(0.0));
    data.extend(float(1.0));
    data.extend(b"{0");
    for l in 0..LAYERS {
        // every function 10 ms; an edge carries its callee's time split among its callers
        let ct = 0.01;
        for j in 0..W {
            data.extend(key(l * W + j + 1, &name(l, j)));
            data.extend(b")\x05i\x01\x00\x00\x00i\x01\x00\x00\x00");
            data.extend(float(ct / 2.0));
            data.extend(float(ct));
            data.push(b'{');
            let callers: Vec<(u32, String)> = if l == 0 {
                vec![(0, "root".to_owned())]
            } else {
                (0..W)
                    .map(|i| ((l - 1) * W + i + 1, name(l - 1, i)))
                    .collect()
            };
            for (line, caller) in callers {
                data.extend(key(line, &caller));
                data.extend(b")\x04i\x01\x00\x00\x00i\x01\x00\x00\x00");
                let edge = if l == 0 { ct } else { ct / f64::from(W) };
                data.extend(float(edge / 2.0));
                data.extend(float(edge));
            }
            data.push(b'0');
        }
    }
    data.push(b'0');
    let run = check(
        tmp.path(),
        "dense.prof",
        &data,
        &["--collapsed", "stacks.txt", "--top", "3"],
    );
    assert_eq!(run.code, Some(0), "{}", run.err());
    let stacks = std::fs::read_to_string(tmp.path().join("stacks.txt")).unwrap();
    let lines = stacks.lines().count();
    assert!(lines > W as usize && lines <= 50_000, "{lines} lines");
}
