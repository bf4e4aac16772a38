//! The timeline through the API on a real H100 trace: the busy time of every track in a
//! window equals a scan of the model, the payload stays bounded by the width, details
//! and search answer.

use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::Phase;

use crate::common::{copy, h100, serve};

#[test]
fn windows_account_for_every_span_within_a_bounded_payload() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy(&h100(), dir.path(), "h100.pt.trace.json.gz");
    let trace = read_trace(&file, &ReadOptions::default()).unwrap();
    let s = serve(&[dir.path().to_owned()]);
    let run = s.run_id(None);
    let tracks = s.get_json(&format!("/api/v1/runs/{run}/timeline/tracks"));
    let t0 = tracks["t0_ns"].as_i64().unwrap();
    let t1 = tracks["t1_ns"].as_i64().unwrap();
    let e = &trace.events;
    for (start, end, width) in [
        (0, t1 + 1, 1600),
        (t1 / 4, t1 / 4 + t1 / 100, 1000),
        (t1 / 2, t1 / 2 + 50_000, 400),
    ] {
        let r = s.get(&format!(
            "/api/v1/runs/{run}/timeline?start_ns={start}&end_ns={end}&width_px={width}"
        ));
        assert_eq!(r.status, 200);
        let w = r.json();
        for t in w["tracks"].as_array().unwrap() {
            let id = t["id"].as_u64().unwrap() as u32;
            let busy: i64 = t["slices"]["busy_ns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .sum();
            let rows = t["slices"]["start_ns"].as_array().unwrap().len();
            let want: i64 = (0..e.len())
                .filter(|&i| {
                    e.phase[i] == Phase::Complete && e.dur_ns.at(i) >= 0 && e.track[i].0 == id
                })
                .filter(|&i| {
                    let (s0, d) = (e.ts_ns[i] - t0, e.dur_ns.at(i));
                    (s0 + d > start || s0 >= start) && s0 < end
                })
                .map(|i| e.dur_ns.at(i))
                .sum();
            assert_eq!(busy, want, "track {id} in {start}..{end}");
            let depth = tracks["tracks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["id"] == id)
                .unwrap()["max_depth"]
                .as_u64()
                .unwrap() as usize;
            assert!(rows <= 2 * (width + 1) * depth, "track {id}: {rows} rows");
        }
    }
    // The first paint (defaults: everything at 1600 px) merges spans.
    let first = s.get(&format!("/api/v1/runs/{run}/timeline"));
    assert_eq!(first.json()["width_px"], 1600);
    let buckets = first.json()["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["slices"]["event"].as_array().unwrap().clone())
        .filter(|v| v.as_i64() == Some(-1))
        .count();
    assert!(buckets > 0);
}

#[test]
fn details_and_search() {
    let dir = tempfile::tempdir().unwrap();
    copy(&h100(), dir.path(), "h100.pt.trace.json.gz");
    let s = serve(&[dir.path().to_owned()]);
    let run = s.run_id(None);
    let found = s.get_json(&format!("/api/v1/runs/{run}/search?q=GEMM&limit=3"));
    assert_eq!(found["matches"].as_array().unwrap().len(), 3);
    assert_eq!(found["truncated"], true);
    let m = &found["matches"][0];
    assert!(m["name"].as_str().unwrap().to_lowercase().contains("gemm"));
    let ev = m["event"].as_u64().unwrap();
    let d = s.get_json(&format!("/api/v1/runs/{run}/events/{ev}"));
    assert_eq!(d["name"], m["name"]);
    assert_eq!(d["start_ns"], m["start_ns"]);
    assert_eq!(d["track"], m["track"]);
    assert!(d["args"]["grid"].is_array());
    assert_eq!(
        s.get(&format!("/api/v1/runs/{run}/events/999999999"))
            .status,
        404
    );
    assert_eq!(
        s.get(&format!("/api/v1/runs/{run}/timeline?tracks=4000000"))
            .status,
        404
    );
}
