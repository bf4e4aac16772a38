//! The CUDA memory snapshot reader: every documented layout (fixtures written by
//! `tests/fixtures/snapshots/make_snapshots.py`), refused opcodes, hostile input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kinetoscope_trace::read::pickle::{unpickle, PickleError, REFUSED_OPCODES};
use kinetoscope_trace::read::{
    read_snapshot, snapshot_from_bytes, snapshot_from_reader, sniff_path, ContentKind,
};
use kinetoscope_trace::snapshot::*;
use kinetoscope_trace::TraceError;
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const KIB: u64 = 1 << 10;
const BASE: u64 = 0x7F00_0000_0000;
const T0: i64 = 1_795_000_000_000_000;

fn dir() -> PathBuf {
    crate::common::fixtures_dir().join("snapshots")
}

fn read(name: &str) -> Snapshot {
    read_snapshot(&dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn names(s: &Snapshot, id: StackId) -> Vec<String> {
    s.frames(id)
        .iter()
        .map(|f| format!("{}:{}", f.line, f.name))
        .collect()
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pickle"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert_eq!(v.len(), 6, "fixtures: run make_snapshots.py");
    v
}

/// The layout shared by v2_6_full, v2_0_no_time, v2_15_protocol5 and history_off.
fn check_full_state(s: &Snapshot) {
    assert_eq!(s.layout, SnapshotLayout::Dict);
    assert_eq!(s.segments.len(), 2);
    let large = &s.segments[0];
    assert_eq!(large.device, 0);
    assert_eq!(large.address, BASE);
    assert_eq!(large.total_size, 20 * MIB);
    assert_eq!(large.allocated_size, 12 * MIB);
    assert_eq!(large.segment_type.as_deref(), Some("large"));
    assert_eq!(large.blocks.len(), 10);
    // Addresses: written or computed, they agree.
    let mut next = BASE;
    for b in &large.blocks {
        assert_eq!(b.address, next);
        next += b.size;
    }
    assert_eq!(next, BASE + 20 * MIB);
    assert_eq!(large.blocks[0].requested_size, 4_000_000);
    assert_eq!(large.blocks[0].state, BlockState::ActiveAllocated);
    assert_eq!(
        names(s, large.blocks[0].stack),
        vec!["1160:to", "12:build_model"]
    );
    assert_eq!(large.blocks[9].state, BlockState::Inactive);
    assert_eq!(large.blocks[9].size, 8 * MIB);
    assert_eq!(large.blocks[9].stack, StackId::EMPTY);
    let small = &s.segments[1];
    assert_eq!(small.address, BASE + 32 * MIB);
    assert_eq!(small.segment_type.as_deref(), Some("small"));
    assert_eq!(
        small.blocks.iter().map(|b| b.size).collect::<Vec<_>>(),
        vec![512 * KIB, MIB, 512 * KIB]
    );
    assert_eq!(small.blocks[0].requested_size, 500_000);
}

fn check_full_trace(s: &Snapshot, with_time: bool) {
    let t = s.device_traces.as_ref().expect("device_traces");
    assert_eq!(t.len(), 1);
    let t = &t[0];
    let extra = usize::from(s.protocol == 5); // the annotate entry
    assert_eq!(t.len(), 35 + extra);
    assert_eq!(t[0].action, Action::SegmentAlloc);
    assert_eq!(t[0].size, 20 * MIB);
    assert_eq!(t[1].action, Action::Alloc);
    assert_eq!(t[1].addr, Some(BASE));
    assert_eq!(t[1].time_us, with_time.then_some(T0 + 100));
    let oom = t.last().unwrap();
    assert_eq!(oom.action, Action::Oom);
    assert_eq!(oom.addr, None);
    assert_eq!(oom.size, 64 * MIB);
    assert_eq!(oom.device_free, Some(32 * MIB));
    assert_eq!(
        names(s, oom.stack),
        vec![
            "0:c10::cuda::CUDACachingAllocator::malloc",
            "41:forward",
            "30:train_step"
        ]
    );
    let count = |a: Action| t.iter().filter(|e| e.action == a).count();
    assert_eq!(count(Action::Alloc), 17);
    assert_eq!(count(Action::FreeRequested), 8);
    assert_eq!(count(Action::FreeCompleted), 8);
}

#[test]
fn reads_a_2_6_style_snapshot() {
    let s = read("v2_6_full.pickle");
    assert_eq!(s.protocol, 4);
    assert!(!s.gzip);
    check_full_state(&s);
    check_full_trace(&s, true);
    let seg = &s.segments[0];
    assert_eq!(seg.segment_pool_id, Some((0, 0)));
    assert_eq!(seg.is_expandable, Some(false));
    assert_eq!(seg.requested_size, Some(4_000_000 + 8 * MIB));
    assert!(seg.blocks.iter().all(|b| !b.address_computed));
    // Shared frame lists are stored once: empty + param, act, leak, oom.
    assert_eq!(s.stacks.len(), 5);
    let settings = s.allocator_settings.as_ref().unwrap();
    assert_eq!(settings["max_split_size"], serde_json::json!(-1));
    assert_eq!(settings["expandable_segments"], serde_json::json!(false));
    assert_eq!(
        settings["roundup_power2_divisions"],
        serde_json::json!({"1": 0, "2": 0, "4": 0})
    );
    assert_eq!(s.external_annotations.len(), 2);
    assert_eq!(s.external_annotations[1].stage, "END");
    assert_eq!(s.external_annotations[1].time_us, Some(T0 + 500));
    let e = &s.device_traces.as_ref().unwrap()[0][1];
    assert_eq!(e.compile_context.as_deref(), Some("N/A"));
    assert_eq!(e.user_metadata, None, "empty metadata reads as none");
    assert!(s.other_keys.is_empty());
    assert_eq!(s.devices(), vec![0]);
}

#[test]
fn reads_the_1_13_bare_list_with_history_blocks() {
    let s = read("v1_13_bare_list.pickle");
    assert_eq!(s.protocol, 2);
    assert_eq!(s.layout, SnapshotLayout::BareList);
    assert!(s.device_traces.is_none());
    assert!(s.allocator_settings.is_none());
    assert_eq!(s.segments.len(), 1);
    let b = &s.segments[0].blocks;
    assert_eq!(
        b.iter().map(|b| b.address).collect::<Vec<_>>(),
        vec![BASE, BASE + MIB, BASE + 1536 * KIB]
    );
    assert!(b.iter().all(|b| b.address_computed));
    assert_eq!(b[0].requested_size, 1_000_000);
    assert_eq!(b[1].requested_size, 512 * KIB, "no history: the block size");
    assert_eq!(b[2].requested_size, 400_000);
    assert_eq!(
        names(&s, b[0].stack),
        vec!["125:forward", "40:forward", "30:train_step"]
    );
    assert_eq!(b[1].stack, StackId::EMPTY);
    assert_eq!(s.segments[0].requested_size, None);
}

#[test]
fn reads_a_2_0_snapshot_without_times_or_block_addresses() {
    let s = read("v2_0_no_time.pickle");
    assert_eq!(s.protocol, 2);
    check_full_state(&s);
    check_full_trace(&s, false);
    assert!(s.segments[0].blocks.iter().all(|b| b.address_computed));
    assert_eq!(s.segments[0].segment_pool_id, None);
    assert!(s.allocator_settings.is_none());
    assert!(s.external_annotations.is_empty());
}

#[test]
fn reads_a_2_15_protocol_5_snapshot() {
    let s = read("v2_15_protocol5.pickle");
    assert_eq!(s.protocol, 5);
    check_full_state(&s);
    check_full_trace(&s, true);
    assert_eq!(s.other_keys, vec!["host_segments", "host_traces"]);
    let a = &s.device_traces.as_ref().unwrap()[0][3];
    assert_eq!(a.action, Action::Annotate);
    assert_eq!(a.user_metadata.as_deref(), Some(r#"{"tag": "params"}"#));
}

#[test]
fn reads_a_snapshot_without_history() {
    let s = read("history_off.pickle");
    check_full_state(&s);
    assert_eq!(s.device_traces, Some(vec![vec![]]));
}

#[test]
fn reads_gzip_and_detects_by_content() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = std::fs::read(dir().join("v2_6_full.pickle")).unwrap();
    let gz = tmp.path().join("snap.bin");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &raw).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let sniffed = sniff_path(&gz).unwrap();
    assert_eq!(sniffed.kind(), ContentKind::Snapshot);
    assert!(sniffed.is_gzip());
    let s = sniffed
        .read_snapshot(&kinetoscope_trace::read::ReadOptions::default())
        .unwrap();
    assert!(s.gzip);
    check_full_state(&s);
    // The same from the gzip bytes in memory and as a stream.
    let bytes = std::fs::read(&gz).unwrap();
    let s = snapshot_from_bytes(&gz, &bytes).unwrap();
    assert!(s.gzip);
    check_full_state(&s);
    let s = snapshot_from_reader(&gz, bytes.as_slice()).unwrap();
    assert!(s.gzip);
    check_full_state(&s);
    let json = tmp.path().join("x.pickle");
    std::fs::write(&json, b"{\"traceEvents\": []}").unwrap();
    assert_eq!(sniff_path(&json).unwrap().kind(), ContentKind::KinetoTrace);
    let err = read_snapshot(&json).unwrap_err().to_string();
    assert!(
        err.contains("not a CUDA memory snapshot") && err.contains("JSON"),
        "{err}"
    );
}

#[test]
fn a_dict_without_segments_is_not_a_snapshot() {
    // {'a': 1}
    let p = b"\x80\x04}\x8c\x01a\x94K\x01s.";
    let err = snapshot_from_bytes(Path::new("x"), p)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no `segments` key"), "{err}");
    // segments[0].blocks[0] without size
    let p = b"\x80\x04}\x8c\x08segments](}\x8c\x06blocks](}eses.";
    let err = snapshot_from_bytes(Path::new("x"), p)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("segments[0].blocks[0]") && err.contains("size"),
        "{err}"
    );
}

fn refused(bytes: &[u8]) -> PickleError {
    unpickle(bytes).expect_err("must be refused")
}

#[test]
fn every_code_opcode_is_refused_with_its_name_and_offset() {
    for (op, name) in REFUSED_OPCODES {
        let p = [0x80, 4, b'N', *op, b'.'];
        match refused(&p) {
            PickleError::Refused {
                name: n, offset, ..
            } => {
                assert_eq!(n, *name);
                assert_eq!(offset, 3);
            }
            other => panic!("{name}: {other:?}"),
        }
        let err = snapshot_from_bytes(Path::new("evil.pickle"), &p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(name) && err.contains("byte 3") && err.contains("evil.pickle"),
            "{err}"
        );
    }
}

#[test]
fn a_code_execution_payload_is_refused_before_anything_runs() {
    // pickle.dumps of os.system("id") via __reduce__, protocol 2.
    let p = b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.";
    let e = refused(p);
    assert!(
        matches!(
            e,
            PickleError::Refused {
                name: "GLOBAL",
                offset: 2,
                ..
            }
        ),
        "{e:?}"
    );
    // Protocol 4 form: STACK_GLOBAL.
    let p = b"\x80\x04\x8c\x05posix\x8c\x06system\x93\x8c\x02id\x85R.";
    let e = refused(p);
    assert!(
        matches!(
            e,
            PickleError::Refused {
                name: "STACK_GLOBAL",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn text_protocol_opcodes_are_unsupported_not_silently_misread() {
    let e = refused(b"\x80\x02I42\n.");
    assert!(
        matches!(e, PickleError::Unsupported { name: "INT", .. }),
        "{e:?}"
    );
    let e = refused(b"\x80\x05\x97.");
    assert!(
        matches!(
            e,
            PickleError::Unsupported {
                name: "NEXT_BUFFER",
                ..
            }
        ),
        "{e:?}"
    );
    let e = refused(b"\x80\x07N.");
    assert!(e.to_string().contains("protocol 7"), "{e}");
}

#[test]
fn mark_nesting_bomb_is_refused() {
    let mut p = vec![0x80, 4];
    p.extend(vec![b'('; 100_000]);
    let e = refused(&p);
    assert!(e.to_string().contains("nested MARKs"), "{e}");
}

#[test]
fn stack_bomb_is_refused() {
    let mut p = vec![0x80, 4];
    p.extend(vec![b'N'; 5_000_000]);
    p.push(b'.');
    let e = refused(&p);
    assert!(e.to_string().contains("stack deeper"), "{e}");
}

#[test]
fn deep_nesting_through_the_memo_costs_no_recursion() {
    // l0 = []; l1 = [l0]; ... 200,000 levels through the memo with an empty stack
    // between levels: no recursion when building, decoding or dropping.
    let mut p = vec![0x80, 4, b']', 0x94, b'0'];
    for i in 0u32..200_000 {
        p.extend_from_slice(b"]j");
        p.extend_from_slice(&i.to_le_bytes());
        p.extend_from_slice(&[b'a', 0x94, b'0']);
    }
    p.push(b'j');
    p.extend_from_slice(&200_000u32.to_le_bytes());
    p.push(b'.');
    let r = unpickle(&p).unwrap();
    assert_eq!(r.objects.len(), 200_001);
    let err = snapshot_from_bytes(Path::new("deep"), &p).unwrap_err();
    assert!(err.to_string().contains("segments[0]"), "{err}");
    // A chain of TUPLE1, each wrapping the previous.
    let mut p = vec![0x80, 4, b'N'];
    p.extend(vec![0x85u8; 1_000_000]);
    p.push(b'.');
    let r = unpickle(&p).unwrap();
    assert_eq!(r.objects.len(), 1_000_000);
    let err = snapshot_from_bytes(Path::new("deep"), &p).unwrap_err();
    assert!(
        err.to_string().contains("expected a dict or a list"),
        "{err}"
    );
}

#[test]
fn length_bombs_are_refused_before_allocating() {
    for p in [
        &b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x3f"[..], // BINUNICODE8 2^62
        b"\x80\x04X\xff\xff\xff\xff",                         // BINUNICODE 4 GiB
        b"\x80\x04\x8b\xff\xff\xff\x7f",                      // LONG4 2 GiB
        b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff",      // BINBYTES8 2^64-1
        b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff.",     // FRAME: ignored, no STOP
    ] {
        let e = refused(p);
        assert!(matches!(e, PickleError::Invalid { .. }), "{e:?}");
    }
    let e = refused(b"\x80\x04X\xff\xff\xff\xff");
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn memo_abuse_is_refused() {
    let e = refused(b"\x80\x04j\xff\xff\xff\x7f.");
    assert!(e.to_string().contains("memo key"), "{e}");
    // Billion laughs: one entry dict referenced 1,000 times in a list that is itself
    // referenced 1,000 times: 1,000,000 trace entries from ~4 KB. The decoder's budget
    // (one element per input byte) refuses it.
    let mut p = vec![0x80, 4, b'}'];
    let s = |p: &mut Vec<u8>, t: &str| {
        p.push(0x8c);
        p.push(t.len() as u8);
        p.extend_from_slice(t.as_bytes());
    };
    s(&mut p, "segments");
    p.extend_from_slice(b"]s");
    s(&mut p, "device_traces");
    p.push(b']'); // outer
    p.extend_from_slice(b"}q\x02");
    s(&mut p, "action");
    s(&mut p, "alloc");
    p.extend_from_slice(b"s0"); // D done, popped
    p.extend_from_slice(b"]q\x01(");
    for _ in 0..1000 {
        p.extend_from_slice(b"h\x02");
    }
    p.extend_from_slice(b"e0("); // E filled, popped; outer on top
    for _ in 0..1000 {
        p.extend_from_slice(b"h\x01");
    }
    p.extend_from_slice(b"es.");
    let e = snapshot_from_bytes(Path::new("laughs"), &p).unwrap_err();
    assert!(e.to_string().contains("refused as hostile"), "{e}");
    // With 3 references it is an ordinary (tiny) snapshot.
    let small: Vec<u8> = {
        let mut q = p.clone();
        let tail = q.len() - 3 - 2000;
        q.truncate(tail);
        q.extend_from_slice(b"h\x01h\x01h\x01es.");
        q
    };
    let snap = snapshot_from_bytes(Path::new("ok"), &small).unwrap();
    let t = snap.device_traces.unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t[0].len(), 1000);
}

#[test]
fn a_huge_dict_referenced_many_times_is_refused() {
    // One dict with 200,000 items, then 100,000 trace entries that are all that dict:
    // each key lookup would scan 200,000 items. The decoder charges a dict's size on
    // every visit, so this is refused in linear time instead of 10^11 steps.
    let mut p = vec![0x80, 4, b'}'];
    p.extend_from_slice(b"\x8c\x08segments]s\x8c\x0ddevice_traces](]}q\x01(");
    for i in 0..200_000u32 {
        p.push(b'J');
        p.extend_from_slice(&i.to_le_bytes());
        p.extend_from_slice(b"N");
    }
    p.extend_from_slice(b"\x8c\x06action\x8c\x05allocu0("); // D done and popped
    for _ in 0..100_000 {
        p.extend_from_slice(b"h\x01");
    }
    p.extend_from_slice(b"ees."); // fill the entry list, put it in device_traces
    let e = snapshot_from_bytes(Path::new("bigdict"), &p).unwrap_err();
    assert!(e.to_string().contains("refused as hostile"), "{e}");
}

#[test]
fn every_truncation_of_every_fixture_fails_cleanly() {
    for (name, bytes) in fixtures() {
        for n in 0..bytes.len() {
            let r = snapshot_from_bytes(Path::new(&name), &bytes[..n]);
            // Too short to look like a pickle (n < 2), or a pickle cut short.
            assert!(
                matches!(
                    r,
                    Err(TraceError::Malformed { .. } | TraceError::NotA { .. })
                ),
                "{name} cut at {n}: {r:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let mut p = vec![0x80, 4];
        p.extend(bytes);
        let _ = snapshot_from_bytes(Path::new("random"), &p);
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
    ) {
        let (_, mut bytes) = fixtures().swap_remove(which);
        for (i, b) in edits {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let _ = snapshot_from_bytes(Path::new("mutated"), &bytes);
    }

    #[test]
    fn spliced_fixtures_never_panic(
        which in 0usize..5,
        at in any::<prop::sample::Index>(),
        insert in proptest::collection::vec(any::<u8>(), 1..64),
    ) {
        let (_, mut bytes) = fixtures().swap_remove(which);
        let i = at.index(bytes.len());
        bytes.splice(i..i, insert);
        let _ = snapshot_from_bytes(Path::new("spliced"), &bytes);
    }
}

#[test]
fn a_pickle_over_the_memory_budget_is_an_error_not_an_abort() {
    // 200,000 empty lists on the stack, then a list of them: a few hundred KB of pickle
    // whose values need several MB.
    let mut p = vec![0x80, 4];
    p.push(b'(');
    p.resize(p.len() + 200_000, b']');
    p.extend_from_slice(b"l.");
    let read = |limit: u64| {
        let opts = kinetoscope_trace::read::ReadOptions {
            budget: kinetoscope_trace::MemoryBudget::new(Some(limit)),
            ..Default::default()
        };
        kinetoscope_trace::read::sniff_bytes(Path::new("lists.pickle"), &p)
            .unwrap()
            .read_snapshot(&opts)
    };
    let e = read(1 << 20).unwrap_err();
    assert!(
        matches!(e, kinetoscope_trace::TraceError::OutOfMemory { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("lists.pickle: byte "), "{e}");
    // With room, the same pickle reaches the schema check (it is not a snapshot).
    let e = read(256 << 20).unwrap_err();
    assert!(
        !matches!(e, kinetoscope_trace::TraceError::OutOfMemory { .. }),
        "{e}"
    );
}

/// Real snapshots recorded by `kinetoscope.capture` on an H100 (PyTorch 2.11, CUDA 13,
/// one of them dumped by torch's out-of-memory observer): what the reader finds equals
/// what Python's own `pickle` finds in the same files (`h100-torch2.11/reference.json`,
/// made by `make_reference.py` there): segments, their sizes summed, blocks by state,
/// the recorded history's actions, the OOM entry's size and the device's free memory.
#[test]
fn real_h100_snapshots_read_as_python_reads_them() {
    let dir = dir().join("h100-torch2.11");
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
    let want = reference.as_object().unwrap();
    assert_eq!(want.len(), 3);
    for (name, want) in want {
        let s = read_snapshot(&dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut blocks: BTreeMap<String, u64> = BTreeMap::new();
        for b in s.segments.iter().flat_map(|g| &g.blocks) {
            *blocks.entry(text(&b.state)).or_default() += 1;
        }
        let entries: Vec<&TraceEntry> = s.device_traces.iter().flatten().flatten().collect();
        let mut actions: BTreeMap<String, u64> = BTreeMap::new();
        for e in &entries {
            *actions.entry(text(&e.action)).or_default() += 1;
        }
        let oom = entries.iter().rev().find(|e| e.action == Action::Oom);
        let got = serde_json::json!({
            "segments": s.segments.len(),
            "total_size": s.segments.iter().map(|g| g.total_size).sum::<u64>(),
            "allocated_size": s.segments.iter().map(|g| g.allocated_size).sum::<u64>(),
            "active_size": s.segments.iter().map(|g| g.active_size).sum::<u64>(),
            "blocks_by_state": blocks,
            "history_entries": entries.len(),
            "actions": actions,
            "last_action": entries.last().map(|e| text(&e.action)),
            "oom_size": oom.map(|e| e.size),
            "oom_device_free": oom.and_then(|e| e.device_free),
        });
        assert_eq!(&got, want, "{name}");
    }
}

/// An enum's name as the snapshot writes it (`active_allocated`, `segment_free`).
fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .expect("a known name")
        .to_owned()
}
