//! `kinetoscope memory SNAPSHOT.pickle`: detection by content, table and JSON output,
//! refused hostile pickles.

use crate::common::{kinetoscope, memory_snapshots};

/// `kinetoscope args` in the snapshots folder: exit code, stdout, stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    kinetoscope(&memory_snapshots(), args).into_parts()
}

#[test]
fn table_report() {
    let (code, out, err) = run(&["memory", "v2_6_full.pickle"]);
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "CUDA memory snapshot, pickle protocol 4",
        "== GPU0 ==",
        "fragmentation",
        "15.8 %",
        "14.5 MiB at entry 31",
        "train.py:42:train_step",
        "OOM at entry 34: asked for 64.0 MiB",
        "leak suspects: allocations never freed",
        "2/2/2/2",
        "0x7f0000000000",
        "roundup_power2_divisions",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn json_document() {
    let (code, out, err) = run(&["memory", "v2_0_no_time.pickle", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "memory_snapshot");
    let s = &v["snapshot"];
    assert_eq!(s["source"], "cuda_snapshot");
    assert_eq!(s["protocol"], 2);
    assert_eq!(s["layout"], "dict");
    let d = &s["devices"][0];
    assert_eq!(d["device"], "GPU0");
    assert_eq!(d["state"]["reserved_bytes"], 22 << 20);
    assert_eq!(d["history"]["peak_active_bytes"], (14 << 20) + (512 << 10));
    assert_eq!(d["top_sites"]["sites"][0]["count"], 8);
    assert_eq!(d["ooms"][0]["requested_bytes"], 64 << 20);
    assert_eq!(d["leak_suspects"][0]["growing"], true);
    assert!(d["leak_suspects"][0]["growth_bytes_per_s"].is_null());
}

#[test]
fn detected_by_content_whatever_the_name() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("memory.json");
    std::fs::copy(memory_snapshots().join("v1_13_bare_list.pickle"), &p).unwrap();
    let (code, out, err) = run(&["memory", p.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("bare-list (1.13)"), "{out}");
    assert!(out.contains("no allocation history"), "{out}");
}

#[test]
fn csv_is_refused_for_snapshots() {
    let (code, _, err) = run(&["memory", "v2_6_full.pickle", "--format", "csv"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("CSV is not available"), "{err}");
}

#[test]
fn a_code_pickle_is_refused_with_opcode_and_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("evil.pickle");
    std::fs::write(
        &p,
        b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.",
    )
    .unwrap();
    let (code, out, err) = run(&["memory", p.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
    assert!(
        err.contains("evil.pickle") && err.contains("byte 2") && err.contains("GLOBAL"),
        "{err}"
    );
}
