use std::collections::BTreeSet;

use super::*;

/// A tiny PyTorch 2.4+-style trace (µs with 3-digit fractions).
const TINY: &str = r#"{
  "schemaVersion": 1,
  "deviceProperties": [],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2, "pg_count": 1},
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [
  {
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 10, "tid": 10,
    "ts": 100.250, "dur": 50.000,
    "args": {"External id": 1, "Record function id": 0, "Ev Idx": 0}
  },
  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10,
    "ts": 101.000, "dur": 10.500,
    "args": {"External id": 2, "Sequence number": 7, "Input Dims": [[2, 2], [2, 2]]}
  },
  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
    "ts": 105.001, "dur": 3.000,
    "args": {"External id": 2, "correlation": 40, "cbid": 211}
  },
  {"ph": "s", "id": 40, "pid": 10, "tid": 10, "ts": 105.001, "cat": "ac2g", "name": "ac2g"},
  {
    "ph": "X", "cat": "kernel", "name": "gemm \"q\" {x}", "pid": 0, "tid": 7,
    "ts": 120.999, "dur": 20.001,
    "args": {"External id": 2, "correlation": 40, "queued": 18446744073709551615}
  },
  {"ph": "f", "id": 40, "pid": 0, "tid": 7, "ts": 120.999, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {
    "ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#2", "pid": 0, "tid": 7,
    "ts": 120.998, "dur": 20.003,
    "args": {"External id": 1}
  },
  {
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10,
    "ts": 150.250, "dur": 40.000, "args": {"External id": 3}
  },
  {
    "ph": "X", "cat": "python_function", "name": "train.py(10): step", "pid": 10, "tid": 10,
    "ts": 150.300, "dur": 1.000, "args": {"Python id": 5, "Python parent id": null}
  },
  {"name": "process_name", "ph": "M", "ts": 0.000, "pid": 10, "tid": 0, "args": {"name": "python"}},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 200.000}
  ],
  "traceName": "tiny.json"
}
"#;

/// A tiny PyTorch ≤ 2.3-style trace (integer µs), no `distributedInfo`.
const TINY_INT: &str = r#"{
  "schemaVersion": 1,
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1623142623460111, "dur": 25, "args": {"External id": 9}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 1623142623460211, "dur": 3}
  ],
  "traceName": "int.json"
}"#;

struct Ev {
    raw: Vec<(String, String)>,
    args: Vec<(String, String)>,
}

impl Ev {
    fn get(&self, k: &str) -> Option<&str> {
        self.raw
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }
    fn arg(&self, k: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }
    fn name(&self) -> String {
        serde_json::from_str(self.get("name").unwrap_or("\"\"")).unwrap()
    }
}

/// Raw text of every event's keys (and args keys), to compare numbers exactly.
fn events_of(text: &str) -> Vec<Ev> {
    // Valid JSON overall.
    let _: serde_json::Value = serde_json::from_str(text).expect("output is valid JSON");
    let events: &RawValue = if text.trim_start().starts_with('[') {
        serde_json::from_str(text).unwrap()
    } else {
        let top: RawObject = serde_json::from_str(text).unwrap();
        top.get("traceEvents").unwrap()
    };
    let events: Vec<&RawValue> = serde_json::from_str(events.get()).unwrap();
    events
        .into_iter()
        .map(|e| {
            let o: RawObject = serde_json::from_str(e.get()).unwrap();
            let args = o
                .get("args")
                .and_then(|a| serde_json::from_str::<RawObject>(a.get()).ok())
                .map(|a| {
                    a.0.into_iter()
                        .map(|(k, v)| (k, v.get().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            Ev {
                raw: o
                    .0
                    .into_iter()
                    .map(|(k, v)| (k, v.get().to_string()))
                    .collect(),
                args,
            }
        })
        .collect()
}

fn render(src: &Source, opts: &WriteOptions) -> (String, WriteStats) {
    let mut out = Vec::new();
    let stats = src.write_to(&mut out, opts).unwrap();
    assert_eq!(stats.json_bytes, out.len() as u64);
    (String::from_utf8(out).unwrap(), stats)
}

fn copies(n: u64) -> WriteOptions {
    WriteOptions {
        target: Target::Copies(n),
        ..WriteOptions::default()
    }
}

#[test]
fn one_copy_is_the_source() {
    let src = Source::parse(TINY, &LoadOptions::default()).unwrap();
    let (text, stats) = render(&src, &copies(1));
    assert_eq!(text, TINY);
    assert_eq!(stats.copies, 1);
    assert_eq!(stats.events, 11);
    let src = Source::parse(TINY_INT, &LoadOptions::default()).unwrap();
    assert_eq!(render(&src, &copies(1)).0, TINY_INT);
}

#[test]
fn three_copies_shift_times_ids_and_steps() {
    let src = Source::parse(TINY, &LoadOptions::default()).unwrap();
    assert_eq!(src.repeated_events(), 9);
    // span 100.250 → 200.000 plus 1 ms gap, rounded up to whole µs.
    assert_eq!(src.period_ns(), 1_100_000);
    // Each family moves by its own span: External ids 1..=3, the rest one id each.
    assert_eq!(src.id_offset(IdFamily::External), 3);
    assert_eq!(src.id_offset(IdFamily::Correlation), 1);
    assert_eq!(src.id_offset(IdFamily::Python), 1);
    assert_eq!(src.id_offset(IdFamily::Sequence), 1);
    assert_eq!(src.step_span(), 2);
    let (text, stats) = render(&src, &copies(3));
    assert_eq!(stats.copies, 3);
    let evs = events_of(&text);
    // 9 repeated × 3 + one metadata event + Record Window End.
    assert_eq!(evs.len(), 29);
    assert_eq!(stats.events, 29);
    assert_eq!(
        evs.iter().filter(|e| e.get("ph") == Some("\"M\"")).count(),
        1
    );
    let rwe: Vec<&Ev> = evs
        .iter()
        .filter(|e| e.name() == "Record Window End")
        .collect();
    assert_eq!(rwe.len(), 1);
    assert_eq!(rwe[0].get("ts"), Some("2400.000"));
    assert_eq!(evs.last().unwrap().name(), "Record Window End");

    let mm: Vec<&Ev> = evs.iter().filter(|e| e.name() == "aten::mm").collect();
    let ts: Vec<&str> = mm.iter().map(|e| e.get("ts").unwrap()).collect();
    assert_eq!(ts, ["101.000", "1201.000", "2301.000"]);
    assert!(mm.iter().all(|e| e.get("dur") == Some("10.500")));
    let seq: Vec<&str> = mm
        .iter()
        .map(|e| e.arg("Sequence number").unwrap())
        .collect();
    assert_eq!(seq, ["7", "8", "9"]);
    // Untouched args keep their text.
    assert!(mm
        .iter()
        .all(|e| e.arg("Input Dims") == Some("[[2, 2], [2, 2]]")));

    let kernels: Vec<&Ev> = evs
        .iter()
        .filter(|e| e.get("cat") == Some("\"kernel\""))
        .collect();
    let kts: Vec<&str> = kernels.iter().map(|e| e.get("ts").unwrap()).collect();
    assert_eq!(kts, ["120.999", "1220.999", "2320.999"]);
    assert!(kernels.iter().all(|e| e.get("dur") == Some("20.001")));
    assert!(kernels
        .iter()
        .all(|e| e.arg("queued") == Some("18446744073709551615")));
    assert!(kernels.iter().all(|e| e.name() == "gemm \"q\" {x}"));

    // Flows follow their correlation ids.
    for (corr, flow) in [("40", "40"), ("41", "41"), ("42", "42")] {
        assert!(kernels.iter().any(|e| e.arg("correlation") == Some(corr)));
        let n = evs
            .iter()
            .filter(|e| e.get("cat") == Some("\"ac2g\"") && e.get("id") == Some(flow))
            .count();
        assert_eq!(n, 2, "flow {flow}");
    }

    // Ids disjoint across copies: 3 distinct External ids per copy.
    let ext: BTreeSet<&str> = evs.iter().filter_map(|e| e.arg("External id")).collect();
    assert_eq!(ext.len(), 9);
    let expected: BTreeSet<&str> = ["1", "2", "3", "4", "5", "6", "7", "8", "9"].into();
    assert_eq!(ext, expected);
    let py: Vec<&str> = evs.iter().filter_map(|e| e.arg("Python id")).collect();
    assert_eq!(py, ["5", "6", "7"]);
    assert!(evs
        .iter()
        .filter_map(|e| e.arg("Python parent id"))
        .all(|v| v == "null"));

    // Steps renumbered on the CPU and the GPU side alike.
    let cpu_steps: Vec<String> = evs
        .iter()
        .filter(|e| e.get("cat") == Some("\"user_annotation\""))
        .map(Ev::name)
        .collect();
    assert_eq!(
        cpu_steps,
        [
            "ProfilerStep#2",
            "ProfilerStep#3",
            "ProfilerStep#4",
            "ProfilerStep#5",
            "ProfilerStep#6",
            "ProfilerStep#7"
        ]
    );
    let gpu_steps: Vec<String> = evs
        .iter()
        .filter(|e| e.get("cat") == Some("\"gpu_user_annotation\""))
        .map(Ev::name)
        .collect();
    assert_eq!(
        gpu_steps,
        ["ProfilerStep#2", "ProfilerStep#4", "ProfilerStep#6"]
    );

    // Top-level keys kept, in place.
    assert!(text.starts_with("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],"));
    assert!(text.ends_with("  ],\n  \"traceName\": \"tiny.json\"\n}\n"));
}

#[test]
fn integer_microseconds_stay_integers() {
    let src = Source::parse(TINY_INT, &LoadOptions::default()).unwrap();
    // span 1623142623460111 → …460214 (103 µs) + 1000 µs gap.
    assert_eq!(src.period_ns(), 1_103_000);
    let (text, _) = render(&src, &copies(3));
    let evs = events_of(&text);
    let ts: Vec<&str> = evs.iter().map(|e| e.get("ts").unwrap()).collect();
    assert_eq!(
        ts,
        [
            "1623142623460111",
            "1623142623460211",
            "1623142623461214",
            "1623142623461314",
            "1623142623462317",
            "1623142623462417"
        ]
    );
    let ext: Vec<&str> = evs.iter().filter_map(|e| e.arg("External id")).collect();
    // One External id: each copy takes the next.
    assert_eq!(ext, ["9", "10", "11"]);
}

#[test]
fn size_target_writes_whole_copies() {
    let src = Source::parse(TINY, &LoadOptions::default()).unwrap();
    let one = render(&src, &copies(1)).1.json_bytes;
    let opts = WriteOptions {
        target: Target::Bytes(5 * one),
        ..WriteOptions::default()
    };
    let (text, stats) = render(&src, &opts);
    assert!(stats.json_bytes >= 5 * one);
    assert!(stats.copies >= 5, "{stats:?}");
    // One copy fewer would not have been enough.
    let fewer = render(&src, &copies(stats.copies - 1)).1;
    assert!(fewer.json_bytes < 5 * one, "{fewer:?}");
    assert_eq!(events_of(&text).len() as u64, stats.events);
}

#[test]
fn compact_output_is_one_event_per_line() {
    let opts = LoadOptions {
        compact: true,
        ..LoadOptions::default()
    };
    let src = Source::parse(TINY, &opts).unwrap();
    let (text, _) = render(&src, &copies(2));
    let evs = events_of(&text);
    assert_eq!(evs.len(), 20);
    assert_eq!(text.lines().count(), 2 + 20);
    assert!(text.contains("\"name\":\"gemm \\\"q\\\" {x}\""));
    assert!(text.contains("\"ts\":1220.999"));
}

#[test]
fn minified_output_is_one_line_with_the_same_events() {
    let load = |one_line| LoadOptions {
        one_line,
        ..LoadOptions::default()
    };
    let pretty = render(&Source::parse(TINY, &load(false)).unwrap(), &copies(3)).0;
    let (text, stats) = render(&Source::parse(TINY, &load(true)).unwrap(), &copies(3));
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.ends_with("}\n"));
    // No whitespace after a key or between values (names keep theirs, below).
    assert!(!text.contains("\": ") && !text.contains(", \"") && !text.contains("  "));
    assert!(
        stats.json_bytes < pretty.len() as u64,
        "{} {}",
        stats.json_bytes,
        pretty.len()
    );
    let a: serde_json::Value = serde_json::from_str(&pretty).unwrap();
    let b: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(a, b);
    assert_eq!(b["baseTimeNanoseconds"], 1790857026000000000u64);
    // Names with spaces keep them: only the whitespace outside strings goes.
    assert!(text.contains("\"train.py(10): step\""));
}

#[test]
fn bare_array_source() {
    let bare = r#"[{"name": "aten::add", "ph": "X", "ts": 10, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#0", "ph": "X", "ts": 9, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}]"#;
    let src = Source::parse(bare, &LoadOptions::default()).unwrap();
    let (text, _) = render(&src, &copies(2));
    let evs = events_of(&text);
    assert_eq!(evs.len(), 4);
    assert_eq!(evs[3].name(), "ProfilerStep#1");
    let opts = WriteOptions {
        rank: Some(RankInfo {
            rank: 1,
            world_size: 2,
        }),
        ..copies(1)
    };
    let (text, _) = render(&src, &opts);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["distributedInfo"]["rank"], 1);
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), 2);
}

fn read_output(path: &Path) -> String {
    let bytes = fs::read(path).unwrap();
    if is_gzip(&bytes) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

#[test]
fn rank_mode_writes_every_rank_and_a_straggler() {
    let dir = tempfile::tempdir().unwrap();
    for (source, gzip) in [(TINY, false), (TINY_INT, true)] {
        let src = Source::parse(source, &LoadOptions::default()).unwrap();
        let out = dir.path().join(if gzip { "gz" } else { "plain" });
        let opts = RankOptions {
            ranks: 3,
            gzip,
            slow: Some((1, Factor::parse("1.5").unwrap())),
            target: Target::Copies(2),
            jobs: 2,
        };
        let files = write_ranks(&src, None, &out, &opts).unwrap();
        assert_eq!(files.len(), 3);
        let mut durs = Vec::new();
        for (r, f) in files.iter().enumerate() {
            assert_eq!(f.path, out.join(rank_file_name(r as u64, gzip)));
            assert_eq!(f.file_bytes, fs::metadata(&f.path).unwrap().len());
            let text = read_output(&f.path);
            assert_eq!(text.len() as u64, f.stats.json_bytes);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["distributedInfo"]["rank"], r as u64);
            assert_eq!(v["distributedInfo"]["world_size"], 3);
            if source == TINY {
                assert_eq!(v["distributedInfo"]["backend"], "nccl");
                assert_eq!(v["distributedInfo"]["pg_count"], 1);
            }
            let evs = events_of(&text);
            durs.push(
                evs.iter()
                    .filter_map(|e| Some((e.get("ts")?.to_string(), e.get("dur")?.to_string())))
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(durs[0], durs[2]);
        assert_ne!(durs[0], durs[1]);
        if gzip {
            // Integer µs, stretched 1.5× about the first event: 25 → 38 (37.5 rounded),
            // the second event starts 100 µs after the first → 150 µs.
            assert_eq!(durs[1][0], ("1623142623460111".into(), "38".into()));
            assert_eq!(durs[1][1], ("1623142623460261".into(), "5".into()));
            // Copy 1 starts 1.5 × 1103 µs (1654.5 → 1655) after copy 0.
            assert_eq!(durs[1][2].0, "1623142623461766");
        } else {
            let mm = &durs[1][1];
            // aten::mm: 1 µs after t0 = 100.000 → 101.500; 10.500 → 15.750.
            assert_eq!(mm, &("101.500".into(), "15.750".into()));
        }
    }
}

#[test]
fn refuses_to_overwrite_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("src.json");
    fs::write(&path, TINY).unwrap();
    let src = load_source(&path, &LoadOptions::default()).unwrap();
    let err = write_file(&src, Some(&path), &path, &copies(2)).unwrap_err();
    assert!(err.to_string().contains("refusing"), "{err}");
    let dotted = dir.path().join(".").join("src.json");
    assert!(write_file(&src, Some(&path), &dotted, &copies(2)).is_err());
    assert_eq!(fs::read_to_string(&path).unwrap(), TINY);

    // gzip in, gzip out, detected by content and by extension.
    let gz = dir.path().join("src.trace");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(TINY.as_bytes()).unwrap();
    fs::write(&gz, enc.finish().unwrap()).unwrap();
    let src = load_source(&gz, &LoadOptions::default()).unwrap();
    let out = dir.path().join("out.json.gz");
    let stats = write_file(&src, Some(&gz), &out, &copies(2)).unwrap();
    assert_eq!(
        events_of(&read_output(&out)).len() as u64,
        stats.stats.events
    );
    assert!(!dir.path().join("out.json.gz.partial").exists());
}

/// A device given as the output (`--out /dev/null`, to time a run) is written in place:
/// renaming the finished `.partial` file onto it replaced `/dev/null` with a file.
#[cfg(unix)]
#[test]
fn a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("src.json");
    fs::write(&path, TINY).unwrap();
    let src = load_source(&path, &LoadOptions::default()).unwrap();
    let null = Path::new("/dev/null");
    let stats = write_file(&src, Some(&path), null, &copies(2)).unwrap();
    assert!(stats.stats.events > 0);
    assert!(fs::metadata(null).unwrap().file_type().is_char_device());
    assert!(!Path::new("/dev/null.partial").exists());
}

#[test]
fn sizes() {
    assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
    assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
    assert_eq!(parse_size("4KiB").unwrap(), 4096);
    assert_eq!(parse_size("1G").unwrap(), 1_000_000_000);
    assert_eq!(parse_size("2.5M").unwrap(), 2_500_000);
    assert_eq!(parse_size("100k").unwrap(), 100_000);
    assert_eq!(parse_size("12345").unwrap(), 12345);
    assert!(parse_size("1XB").is_err());
    assert!(parse_size("GiB").is_err());
    assert!(parse_size("0").is_err());
}
