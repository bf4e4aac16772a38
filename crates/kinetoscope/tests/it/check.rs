//! `kinetoscope check`: every check against an independent count over the raw JSON of
//! real traces (serde_json, no kinetoscope code), and tiny synthetic traces with one
//! planted defect each (written here; said so where used) to show each check fires and
//! a clean trace stays clean; exit codes, formats.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{fixtures, json as run_json, kinetoscope, rank_folder};

/// The analysis crate's fixtures (real traces with their licences and SOURCE.md).
fn analysis_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-analysis/tests/fixtures")
}

/// A trace file's JSON (plain or gzip).
fn raw(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    };
    serde_json::from_str(&text).unwrap()
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().unwrap()
}

/// `check PATH --format json` (exit code not asserted: defects may make it 1).
fn check_json(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["check", path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let run = kinetoscope(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("JSON")
}

/// The count of `kind` in a trace's (or the folder's) defects; 0 when absent.
fn count(defects: &Value, kind: &str) -> u64 {
    defects
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == kind)
        .map_or(0, |d| d["count"].as_u64().unwrap())
}

fn defect<'a>(defects: &'a Value, kind: &str) -> &'a Value {
    defects
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {defects}"))
}

/// A `ts` or `dur` in µs as ns, from serde_json's shortest text of the number (an
/// `f64` of epoch µs × 1000 would lose nanoseconds): the integer part × 1000 plus three
/// fraction digits. Exact where the file's number fits an `f64` (16 significant digits:
/// epoch µs with at most one or two decimals); finer digits are lost.
fn ns(v: &Value) -> i64 {
    let text = v.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac: String = frac.chars().chain("000".chars()).take(3).collect();
    int.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

fn is_activity(e: &Value) -> bool {
    e["ph"] == "X"
        && matches!(
            e["cat"].as_str(),
            Some("kernel" | "gpu_memcpy" | "gpu_memset")
        )
}

#[test]
fn stream_overlaps_on_b200_match_an_independent_sweep() {
    // Real B200 eager trace (TraceLens, MIT): MoE kernels overlap on one stream.
    let path = analysis_fixtures().join("tracelens/b200__eager_trace.json.gz");
    let v = raw(&path);
    let base = v["baseTimeNanoseconds"].as_i64().unwrap_or(0);
    let mut streams: BTreeMap<(String, String), Vec<(i64, i64)>> = BTreeMap::new();
    for e in events(&v).iter().filter(|e| is_activity(e)) {
        let key = (e["pid"].to_string(), e["tid"].to_string());
        let ts = base + ns(&e["ts"]);
        streams
            .entry(key)
            .or_default()
            .push((ts, ts + ns(&e["dur"])));
    }
    let (mut overlaps, mut first) = (0u64, i64::MAX);
    for spans in streams.values_mut() {
        spans.sort();
        let mut latest_end: Option<i64> = None;
        for &(s, e) in spans.iter() {
            if latest_end.is_some_and(|l| s < l) {
                overlaps += 1;
                first = first.min(s);
            }
            latest_end = Some(latest_end.map_or(e, |l| l.max(e)));
        }
    }
    assert!(overlaps > 0, "the B200 trace has overlapping kernels");
    let doc = check_json(&path, &[]);
    let d = defect(&doc["traces"][0]["defects"], "gpu_stream_overlap");
    assert_eq!(d["count"].as_u64().unwrap(), overlaps);
    assert_eq!(d["severity"], "warning");
    assert_eq!(d["examples"][0]["ts_ns"].as_i64().unwrap(), first);
    assert!(d["examples"][0]["amount_ns"].as_i64().unwrap() > 0);
    assert_eq!(d["examples"].as_array().unwrap().len(), 3);

    // A warning: the default gate (error) passes, `--fail-on warning` trips.
    let p = path.to_str().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(kinetoscope(here, &["check", p]).code, Some(0));
    assert_eq!(
        kinetoscope(here, &["check", p, "--fail-on", "warning"]).code,
        Some(1)
    );
    let none = kinetoscope(here, &["check", p, "--fail-on", "none", "--examples", "1"]);
    assert_eq!(none.code, Some(0));
    assert!(
        none.stdout
            .contains("overlapping GPU activities on a stream"),
        "{}",
        none.stdout
    );
}

/// (start ns, correlation id) of events.
type Stamped = Vec<(i64, i64)>;

/// Launch calls (`gpu_time::launches` names), the correlation ids of every runtime
/// call, and activities.
fn launches_and_activities(v: &Value) -> (Stamped, HashSet<i64>, Stamped) {
    const LAUNCH: [&str; 11] = [
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "runFunction",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "hipLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipMemcpyAsync",
        "hipMemsetAsync",
    ];
    let corr = |e: &Value| e["args"]["correlation"].as_i64().unwrap_or(0);
    let mut launches = Vec::new();
    let mut calls = HashSet::new();
    let mut activities = Vec::new();
    for e in events(v) {
        let cat = e["cat"].as_str().unwrap_or("").to_ascii_lowercase();
        if e["ph"] != "X" {
            continue;
        }
        if matches!(cat.as_str(), "cuda_runtime" | "cuda_driver" | "runtime") {
            calls.insert(corr(e));
            let name = e["name"].as_str().unwrap_or("");
            if corr(e) != 0 && (LAUNCH.contains(&name) || name.contains("GraphLaunch")) {
                launches.push((ns(&e["ts"]), corr(e)));
            }
        } else if matches!(cat.as_str(), "kernel" | "gpu_memcpy" | "gpu_memset") {
            activities.push((ns(&e["ts"]), corr(e)));
        }
    }
    calls.remove(&0);
    (launches, calls, activities)
}

#[test]
fn launches_without_activity_match_the_raw_json() {
    // Real HTA trace recorded in CUPTI profiler mode (MIT): kernels are recorded as
    // counter ranges without correlation, copies and sets not at all, so no launch has
    // its activity.
    let path = fixtures()
        .join("../../../kinetoscope-advisor/tests/fixtures")
        .join("benchmark_result_924719_1679055439_trace.json.gz");
    let v = raw(&path);
    let (launches, _, activities) = launches_and_activities(&v);
    let with: HashSet<i64> = activities.iter().map(|a| a.1).collect();
    let linked: Vec<_> = launches.iter().filter(|l| with.contains(&l.1)).collect();
    let last_ts = linked.iter().map(|l| l.0).max();
    let last_id = linked.iter().map(|l| l.1).max();
    let orphans: Vec<_> = launches.iter().filter(|l| !with.contains(&l.1)).collect();
    // Cut by the window's end: later (in time or id) than the last launch with activity.
    let cut = orphans
        .iter()
        .filter(|l| last_ts.is_some_and(|t| l.0 > t) || last_id.is_some_and(|c| l.1 > c))
        .count() as u64;
    let kept = orphans.len() as u64 - cut;
    assert!(kept > 0);
    let doc = check_json(&path, &[]);
    let defects = &doc["traces"][0]["defects"];
    assert_eq!(count(defects, "launch_without_activity"), kept);
    assert_eq!(count(defects, "launch_cut_at_end"), cut);
}

#[test]
fn lost_memsets_of_a_real_ddp_rank() {
    // Real HTA `ns_resolution_trace` rank 0 (MIT): memset activities missing mid-trace.
    let path = analysis_fixtures().join("hta_traces/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    let v = raw(&path);
    let (launches, _, activities) = launches_and_activities(&v);
    let with: HashSet<i64> = activities.iter().map(|a| a.1).collect();
    let last_linked = launches
        .iter()
        .filter(|l| with.contains(&l.1))
        .max()
        .unwrap();
    let orphans: Vec<_> = launches.iter().filter(|l| !with.contains(&l.1)).collect();
    assert!(orphans
        .iter()
        .all(|l| l.0 < last_linked.0 && l.1 < last_linked.1));
    let memsets = events(&v)
        .iter()
        .filter(|e| e["name"] == "cudaMemsetAsync")
        .filter(|e| !with.contains(&e["args"]["correlation"].as_i64().unwrap()))
        .count();
    assert_eq!(memsets, orphans.len(), "every orphan launch is a memset");
    let doc = check_json(&path, &[]);
    let d = defect(&doc["traces"][0]["defects"], "launch_without_activity");
    assert_eq!(d["count"].as_u64().unwrap(), orphans.len() as u64);
    assert_eq!(d["examples"][0]["name"], "cudaMemsetAsync");
    // This file writes epoch µs with three decimals, more than an f64 holds: within 1 µs.
    let first = orphans.iter().map(|l| l.0).min().unwrap();
    assert!((d["examples"][0]["ts_ns"].as_i64().unwrap() - first).abs() < 1000);
}

#[test]
fn crossing_slices_of_a_real_mtia_trace() {
    // Real HTA `mtia_inference_trace` (MIT): `gif_remote` runtime slices overlap without
    // nesting on their threads. The count is the stack sweep `docs/check.md` defines,
    // redone here over the raw JSON; every slice it counts crosses some slice, so the
    // count is at most the (quadratic) count of slices crossing any other.
    let path = analysis_fixtures().join("hta_traces/mtia_inference_rank_0.json.gz");
    let v = raw(&path);
    let mut threads: BTreeMap<(String, String), Vec<(i64, i64)>> = BTreeMap::new();
    for e in events(&v)
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] != "Trace")
    {
        let ts = ns(&e["ts"]);
        let key = (e["pid"].to_string(), e["tid"].to_string());
        threads
            .entry(key)
            .or_default()
            .push((ts, ts + ns(&e["dur"])));
    }
    let (mut swept, mut any) = (0u64, 0u64);
    for spans in threads.values_mut() {
        spans.sort_by_key(|&(s, e)| (s, -(e - s)));
        let mut open: Vec<i64> = Vec::new();
        for &(s, e) in spans.iter() {
            while open.last().is_some_and(|&end| s >= end) {
                open.pop();
            }
            match open.last() {
                Some(&end) if e > end => swept += 1,
                _ => open.push(e),
            }
        }
        any += spans
            .iter()
            .filter(|&&(s, e)| spans.iter().any(|&(ps, pe)| ps < s && s < pe && pe < e))
            .count() as u64;
    }
    assert!(swept > 0 && swept <= any, "{swept} {any}");
    let doc = check_json(&path, &["--examples", "50"]);
    let d = defect(&doc["traces"][0]["defects"], "host_slice_crossing");
    assert_eq!(d["count"].as_u64().unwrap(), swept);
    for ex in d["examples"].as_array().unwrap() {
        assert!(ex["other_ts_ns"].as_i64() < ex["ts_ns"].as_i64(), "{ex}");
        assert!(ex["amount_ns"].as_i64().unwrap() > 0, "{ex}");
    }
}

#[test]
fn activities_launched_before_the_window_are_told_apart() {
    // Real PARAM DLRM rank 1 (MIT): its first stream drains 64 activities queued before
    // the window opened; their correlation ids are below every launch call's.
    let path = analysis_fixtures()
        .join("param/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz");
    let v = raw(&path);
    let (_, calls, activities) = launches_and_activities(&v);
    let lowest_call = *calls.iter().min().unwrap();
    let lost: Vec<_> = activities
        .iter()
        .filter(|a| !calls.contains(&a.1))
        .collect();
    assert!(!lost.is_empty());
    assert!(lost.iter().all(|a| a.1 < lowest_call));
    let doc = check_json(&path, &[]);
    let defects = &doc["traces"][0]["defects"];
    assert_eq!(count(defects, "activity_cut_at_start"), lost.len() as u64);
    assert_eq!(count(defects, "activity_without_launch"), 0);
    // The earliest examples are the earliest lost activities.
    let mut starts: Vec<i64> = lost.iter().map(|a| a.0).collect();
    starts.sort();
    let ex = &defect(defects, "activity_cut_at_start")["examples"];
    assert_eq!(ex[0]["ts_ns"].as_i64().unwrap(), starts[0]);
}

#[test]
fn unpaired_flows_match_the_raw_json() {
    // Real H100 trace (TraceLens, MIT): finish-only `ac2g` flows on kernels launched
    // before the window, and Kineto's lone finishes on runtime calls that launch
    // nothing.
    let path = analysis_fixtures().join("tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    let v = raw(&path);
    let mut ends: HashMap<(String, u64), (u32, u32, Value)> = HashMap::new();
    for e in events(&v)
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
    {
        let key = (e["cat"].to_string(), e["id"].as_u64().unwrap());
        let entry = ends.entry(key).or_insert((0, 0, e.clone()));
        if e["ph"] == "s" {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
    }
    let slices: HashMap<(String, String, i64), String> = events(&v)
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let key = (e["pid"].to_string(), e["tid"].to_string(), ns(&e["ts"]));
            (key, e["cat"].as_str().unwrap_or("").to_owned())
        })
        .collect();
    let unpaired: Vec<&Value> = ends
        .values()
        .filter(|(s, f, _)| (*s == 0) != (*f == 0))
        .map(|(_, _, e)| e)
        .collect();
    let on_call = unpaired
        .iter()
        .filter(|e| {
            let key = (e["pid"].to_string(), e["tid"].to_string(), ns(&e["ts"]));
            e["ph"] == "f" && slices.get(&key).is_some_and(|c| c == "cuda_runtime")
        })
        .count() as u64;
    let doc = check_json(&path, &[]);
    let defects = &doc["traces"][0]["defects"];
    assert_eq!(count(defects, "lone_flow_on_call"), on_call);
    let all = count(defects, "unpaired_flow")
        + count(defects, "flow_cut_by_window")
        + count(defects, "lone_flow_on_call");
    assert_eq!(all, unpaired.len() as u64);
    // Every flow cut by the window ends on an activity launched before it.
    assert_eq!(
        count(defects, "flow_cut_by_window"),
        count(defects, "activity_cut_at_start") + 1,
        "one cut flow binds to the window's first memset and its kernel"
    );
}

#[test]
fn missing_ranks_of_the_real_rank_folder() {
    // HTA's `trace_filter` (MIT): ranks 0 and 1 of a job whose distributedInfo says 128.
    let world: i64 = ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"]
        .iter()
        .map(|f| {
            raw(&rank_folder().join(f))["distributedInfo"]["world_size"]
                .as_i64()
                .unwrap()
        })
        .max()
        .unwrap();
    let doc = check_json(&rank_folder(), &[]);
    assert_eq!(count(&doc["ranks"], "missing_ranks"), (world - 2) as u64);
    let ex = &defect(&doc["ranks"], "missing_ranks")["examples"];
    assert_eq!(ex[0]["rank"], 2);
    assert_eq!(ex[0]["number"], world);
}

#[test]
fn clock_skew_planted_in_a_real_rank() {
    // Two copies of a real rank (kinetoscope-synth), the second's clock moved 3 ms by a
    // `baseTimeNanoseconds` the reader adds to every timestamp.
    let dir = tempfile::tempdir().unwrap();
    let src_path = rank_folder().join("sampled_rank-0.json.gz");
    let src = kinetoscope_synth::load_source(&src_path, &Default::default()).unwrap();
    kinetoscope_synth::write_ranks(
        &src,
        Some(&src_path),
        dir.path(),
        &kinetoscope_synth::RankOptions {
            ranks: 2,
            gzip: false,
            slow: None,
            target: kinetoscope_synth::Target::Copies(1),
            jobs: 1,
        },
    )
    .unwrap();
    let clean = check_json(dir.path(), &[]);
    assert_eq!(
        count(&clean["ranks"], "clock_skew"),
        0,
        "{}",
        clean["ranks"]
    );
    let one = dir.path().join("rank-1.pt.trace.json");
    let text = std::fs::read_to_string(&one).unwrap();
    let moved = text.replacen("{", "{\"baseTimeNanoseconds\": 3000000, ", 1);
    std::fs::write(&one, moved).unwrap();
    let doc = check_json(dir.path(), &[]);
    let d = defect(&doc["ranks"], "clock_skew");
    assert_eq!(d["count"], 1);
    assert_eq!(d["examples"][0]["rank"], 1);
    assert_eq!(d["examples"][0]["amount_ns"], 3_000_000);
}

// --- Synthetic traces, one planted defect each -----------------------------------------

/// A host op with its launch call, the kernel it launched and their flow: correlation
/// `c`, host at `t` µs (2 µs op), kernel at `t + k` µs (1 µs).
fn launch(c: i64, t: f64, k: f64) -> Vec<Value> {
    vec![
        json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": t, "dur": 2, "args": {"External id": c}}),
        json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": t + 0.5, "dur": 1, "args": {"External id": c, "correlation": c}}),
        json!({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t + k,
               "dur": 1, "args": {"External id": c, "correlation": c, "device": 0, "stream": 7}}),
        json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 1, "tid": 1,
               "ts": t + 0.5}),
        json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 0, "tid": 7,
               "ts": t + k, "bp": "e"}),
    ]
}

fn step(n: i64, t: f64, dur: f64) -> Value {
    json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{n}"),
           "pid": 1, "tid": 1, "ts": t, "dur": dur})
}

/// Three steps of three launches each: a clean synthetic trace.
fn clean_events() -> Vec<Value> {
    let mut ev = Vec::new();
    for s in 0..3 {
        let t0 = 1000.0 + 100.0 * s as f64;
        ev.push(step(s + 1, t0, 90.0));
        for j in 0..3 {
            ev.extend(launch(10 + 3 * s + j, t0 + 10.0 + 20.0 * j as f64, 5.0));
        }
    }
    ev
}

fn write_trace(dir: &Path, name: &str, events: Vec<Value>, rank: Option<(i64, i64)>) -> PathBuf {
    let mut doc = json!({"schemaVersion": 1, "traceEvents": events});
    if let Some((rank, world)) = rank {
        doc["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": world});
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

#[test]
fn a_clean_synthetic_trace_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_trace(dir.path(), "clean.json", clean_events(), None);
    let doc = check_json(&path, &[]);
    assert_eq!(doc["traces"][0]["defects"], json!([]));
    assert_eq!(doc["counts"], json!({"error": 0, "warning": 0, "info": 0}));
    assert!(doc.get("worst").is_none());
    let run = kinetoscope(dir.path(), &["check", "clean.json", "--fail-on", "warning"]);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("no defects found"), "{}", run.stdout);
}

/// `check` of the clean trace with `edit` applied: the defects.
fn planted(edit: impl FnOnce(&mut Vec<Value>)) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut ev = clean_events();
    edit(&mut ev);
    let path = write_trace(dir.path(), "planted.json", ev, None);
    check_json(&path, &[])["traces"][0]["defects"].clone()
}

#[test]
fn each_planted_defect_is_found() {
    // Synthetic. A second kernel on stream 7 starting 0.25 µs before the previous ends.
    let d = planted(|ev| {
        ev.push(
            json!({"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7,
                       "ts": 1015.75, "dur": 1, "args": {"correlation": 0, "stream": 7}}),
        )
    });
    let o = defect(&d, "gpu_stream_overlap");
    assert_eq!(o["count"], 1);
    assert_eq!(o["examples"][0]["name"], "late");
    assert_eq!(o["examples"][0]["other"], "gemm");
    assert_eq!(o["examples"][0]["amount_ns"], 250);

    // Synthetic. A host op that starts inside the first launch call (1010.5–1011.5 µs,
    // in aten::mm) and ends 3.5 µs after it.
    let d = planted(|ev| {
        ev.push(
            json!({"ph": "X", "cat": "cpu_op", "name": "aten::crossing", "pid": 1,
                       "tid": 1, "ts": 1011, "dur": 4}),
        )
    });
    let c = defect(&d, "host_slice_crossing");
    assert_eq!(
        (c["count"].as_u64(), c["examples"][0]["amount_ns"].as_i64()),
        (Some(1), Some(3500))
    );
    assert_eq!(c["examples"][0]["other"], "cudaLaunchKernel");

    // Synthetic. The second launch's kernel moved before its launch call (1030.5 µs).
    let d = planted(|ev| {
        let k = ev
            .iter_mut()
            .find(|e| e["cat"] == "kernel" && e["args"]["correlation"] == 11);
        k.unwrap()["ts"] = json!(1030.0);
    });
    let n = defect(&d, "negative_launch_latency");
    assert_eq!(
        (n["count"].as_u64(), n["examples"][0]["amount_ns"].as_i64()),
        (Some(1), Some(-500))
    );

    // Synthetic. The fifth kernel (mid-trace) lost, and its flow finish with it.
    let d = planted(|ev| {
        ev.retain(|e| !(e["args"]["correlation"] == 14 && e["cat"] == "kernel"));
        ev.retain(|e| !(e["id"] == 14 && e["ph"] == "f"));
    });
    assert_eq!(count(&d, "launch_without_activity"), 1);
    assert_eq!(count(&d, "unpaired_flow"), 1);
    assert_eq!(count(&d, "launch_cut_at_end"), 0);

    // Synthetic. The last kernel lost: the window closed before it ran.
    let d = planted(|ev| {
        ev.retain(|e| !(e["args"]["correlation"] == 18 && e["cat"] == "kernel"));
        ev.retain(|e| !(e["id"] == 18 && e["ph"] == "f"));
    });
    assert_eq!(count(&d, "launch_cut_at_end"), 1);
    assert_eq!(count(&d, "flow_cut_by_window"), 1);
    assert_eq!(count(&d, "launch_without_activity"), 0);

    // Synthetic. A flow finish on stream 7 where no kernel is.
    let d = planted(|ev| {
        ev.push(
            json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 1, "tid": 1,
                       "ts": 1010.5}),
        );
        ev.push(
            json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 0, "tid": 7,
                       "ts": 1050, "bp": "e"}),
        );
    });
    // A finish binds to the enclosing or the next slice: 1050 has a next kernel (1055).
    assert_eq!(count(&d, "unbound_flow"), 0);
    let d = planted(|ev| {
        ev.push(
            json!({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 1, "tid": 1,
                       "ts": 5000}),
        );
        ev.push(
            json!({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 99, "pid": 0, "tid": 7,
                       "ts": 5000, "bp": "e"}),
        );
    });
    assert_eq!(count(&d, "unbound_flow"), 2);

    // Synthetic. Step 2 renumbered 5: steps 2, 3 and 4 missing between 1 and 5.
    let d = planted(|ev| {
        ev.iter_mut()
            .find(|e| e["name"] == "ProfilerStep#3")
            .unwrap()["name"] = json!("ProfilerStep#5");
    });
    let m = defect(&d, "missing_steps");
    assert_eq!(
        (m["count"].as_u64(), m["examples"][0]["number"].as_i64()),
        (Some(2), Some(2))
    );
    assert_eq!(m["examples"][0]["name"], "ProfilerStep#5");

    // Synthetic. A negative duration (the second element), read as 0 and counted.
    let d = planted(|ev| ev[1]["dur"] = json!(-3));
    let n = defect(&d, "negative_duration");
    assert_eq!(
        (n["count"].as_u64(), n["severity"].as_str()),
        (Some(1), Some("warning"))
    );
    assert_eq!(n["examples"][0]["element"], 1);
}

#[test]
fn errors_trip_the_default_gate_and_read_failures_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    // Synthetic: the clean trace cut in its last event (a truncated write).
    let path = write_trace(dir.path(), "cut.json", clean_events(), None);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 30]).unwrap();
    let run = kinetoscope(dir.path(), &["check", "cut.json", "--format", "json"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let t = defect(&doc["traces"][0]["defects"], "truncated_tail");
    assert_eq!(t["severity"], "error");
    assert!(t["examples"][0]["byte_offset"].as_u64().unwrap() > 0);
    assert_eq!(doc["worst"], "error");
    assert_eq!(
        kinetoscope(dir.path(), &["check", "cut.json", "--fail-on", "none"]).code,
        Some(0)
    );

    std::fs::write(dir.path().join("not.json"), "[1, 2").unwrap();
    assert_eq!(
        kinetoscope(dir.path(), &["check", "not.json"]).code,
        Some(2)
    );
}

#[test]
fn rank_folder_checks_on_synthetic_ranks() {
    // Synthetic: ranks 0, 1 and 3 of 4; rank 1 lacks step 2 (which ranks 0 and 3 have).
    let dir = tempfile::tempdir().unwrap();
    for r in [0, 1, 3] {
        let mut ev = clean_events();
        if r == 1 {
            ev.retain(|e| e["name"] != "ProfilerStep#2");
        }
        write_trace(dir.path(), &format!("rank-{r}.json"), ev, Some((r, 4)));
    }
    let doc = check_json(dir.path(), &[]);
    let ranks = &doc["ranks"];
    let missing = defect(ranks, "missing_ranks");
    assert_eq!(
        (
            missing["count"].as_u64(),
            missing["examples"][0]["rank"].as_i64()
        ),
        (Some(1), Some(3 - 1))
    );
    let steps = defect(ranks, "step_missing_on_rank");
    assert_eq!(steps["count"], 1);
    assert_eq!(
        (
            steps["examples"][0]["rank"].as_i64(),
            steps["examples"][0]["number"].as_i64()
        ),
        (Some(1), Some(2))
    );
    // Rank 1's own numbering skips 2 as well.
    assert_eq!(count(&doc["traces"][1]["defects"], "missing_steps"), 1);
}

#[test]
fn table_and_csv() {
    let path = analysis_fixtures()
        .join("param/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz");
    let p = path.to_str().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = run_json(here, &["check", p, "--format", "json", "--examples", "2"]);
    let defects = doc["traces"][0]["defects"].as_array().unwrap();
    let csv = kinetoscope(here, &["check", p, "--format", "csv", "--examples", "2"]);
    assert_eq!(csv.code, Some(0), "{}", csv.stderr);
    let mut rows = csv::Reader::from_reader(csv.stdout.as_bytes());
    let headers = rows.headers().unwrap().clone();
    assert_eq!(&headers[0], "trace");
    assert_eq!(&headers[3], "check");
    let records: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
    let expected: usize = defects
        .iter()
        .map(|d| d["examples"].as_array().unwrap().len().max(1))
        .sum();
    assert_eq!(records.len(), expected);
    for d in defects {
        let kind = d["kind"].as_str().unwrap();
        assert!(records
            .iter()
            .any(|r| &r[3] == kind && r[4].parse::<u64>().ok() == d["count"].as_u64()));
    }
    let table = kinetoscope(here, &["check", p]);
    assert!(table
        .stdout
        .contains("GPU activities launched before the window"));
    assert!(table.stdout.contains("0 errors, "), "{}", table.stdout);
}
