//! Hostile key_averages tables through `kinetoscope tables` and `report`: control and
//! bidi characters in names, a huge line, ragged rows and garbage units, a table
//! longer than the row cap, and a gzip bomb of table text. Each run exits 0 or 2 with the
//! file (and line) named, within its memory bound, and prints no raw control byte.

use std::io::Write;
use std::path::Path;

use super::harness::run_measured;

const MIB: u64 = 1 << 20;

const HEADER: &str = "----------  ------------  ------------\n      Name      Self CPU    # of Calls\n----------  ------------  ------------\n";

fn run(dir: &Path, name: &str, data: &[u8], args: &[&str]) -> super::harness::Measured {
    std::fs::write(dir.join(name), data).unwrap();
    let mut all = vec!["tables", name];
    all.extend_from_slice(args);
    let run = run_measured(dir, &all);
    run.assert_sane(256 * MIB);
    run
}

#[test]
fn names_with_controls_are_shown_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    // Past the first 512 bytes, where detection looks for binary data.
    let plain = "  op       1.000us             1\n".repeat(20);
    let text = format!("{HEADER}{plain}  a\u{1b}[2Jb\u{202e}      1.000us             2\n");
    for format in ["table", "csv", "json"] {
        let r = run(
            tmp.path(),
            "ctl.txt",
            text.as_bytes(),
            &["--format", format],
        );
        assert_eq!(r.code, Some(0), "{}", r.err());
        assert!(
            r.out().contains("\\x1b") || r.out().contains("\\u001b"),
            "{}",
            r.out()
        );
    }
    let r = run_measured(tmp.path(), &["report", "ctl.txt"]);
    r.assert_sane(256 * MIB);
}

#[test]
fn bad_lines_are_counted_or_refused_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let garbage = format!(
        "{HEADER}  aten::mm      1.0furlongs            3\n  aten::t    1.000us       2\nragged\n"
    );
    let r = run(d, "garbage.txt", garbage.as_bytes(), &[]);
    assert_eq!(r.code, Some(0), "{}", r.err());
    assert!(r.out().contains("rows skipped"), "{}", r.out());
    let r = run(d, "garbage.txt", garbage.as_bytes(), &["--strict"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.err().contains("garbage.txt") && r.err().contains("line 4"),
        "{}",
        r.err()
    );
    let huge = format!("{HEADER}{}\n", "y".repeat(1 << 20));
    let r = run(d, "huge.txt", huge.as_bytes(), &[]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.err().contains("huge.txt") && r.err().contains("longer than"),
        "{}",
        r.err()
    );
}

#[test]
fn long_and_compressed_tables_stay_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut long = HEADER.to_owned();
    long.push_str(&"  op       1.000us             1\n".repeat(200_000));
    let r = run(d, "long.txt", long.as_bytes(), &["--top", "1"]);
    assert_eq!(r.code, Some(2), "{}", r.out());
    assert!(
        r.err().contains("more than") && r.err().contains("rows"),
        "{}",
        r.err()
    );
    // 200 MiB of text in a small gzip: refused past the input cap.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(HEADER.as_bytes()).unwrap();
    let line = " ".repeat(1 << 20);
    for _ in 0..200 {
        gz.write_all(line.as_bytes()).unwrap();
    }
    let r = run(d, "bomb.txt", &gz.finish().unwrap(), &[]);
    assert_eq!(r.code, Some(2), "{}", r.out());
    assert!(r.err().contains("bomb.txt"), "{}", r.err());
}
