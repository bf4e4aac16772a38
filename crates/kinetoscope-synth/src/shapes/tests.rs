use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::*;

/// The events of a generated trace.
fn events(shape: Shape, units: u64, steps: u64) -> Vec<Value> {
    let mut out = Vec::new();
    let stats = write_shape_to(
        &mut out,
        &ShapeOptions {
            shape,
            units,
            steps,
        },
    )
    .expect("write to memory");
    assert_eq!(stats.json_bytes, out.len() as u64);
    let v: Value = serde_json::from_slice(&out).expect("valid JSON");
    let ev = v["traceEvents"].as_array().expect("traceEvents").clone();
    assert_eq!(ev.len() as u64, stats.events);
    ev
}

/// `[start, end)` in ns of a complete event (the writer's µs have 3 decimals).
fn span(e: &Value) -> (i64, i64) {
    let ns = |k: &str| (e[k].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
    let ts = ns("ts");
    (ts, ts + ns("dur"))
}

fn host_spans(ev: &[Value]) -> Vec<&Value> {
    ev.iter()
        .filter(|e| {
            e["ph"] == "X"
                && e["cat"] != "kernel"
                && !e["cat"].as_str().unwrap().starts_with("gpu_")
        })
        .collect()
}

#[test]
fn names_round_trip() {
    for s in Shape::ALL {
        assert_eq!(s.name().parse::<Shape>(), Ok(s));
    }
    assert!("cubic"
        .parse::<Shape>()
        .unwrap_err()
        .contains("deep-nesting"));
}

#[test]
fn every_kind_appears_with_its_events() {
    let n = KINDS.len() as u64;
    let ev = events(Shape::OneTrack, n, 1);
    let names: BTreeSet<&str> = ev.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for k in KINDS {
        assert!(names.contains(k.name), "{}", k.name);
        assert!(k.call.is_none_or(|c| names.contains(c)));
        assert!(k.gpu.is_none_or(|g| names.contains(g.1)));
    }
    let memory = ev.iter().filter(|e| e["name"] == "[memory]").count() as u64;
    assert_eq!(memory, 2 * n);
    let steps = ev
        .iter()
        .filter(|e| e["name"].as_str().unwrap().starts_with("ProfilerStep#"));
    assert_eq!(steps.count(), 1);
}

#[test]
fn same_timestamp_puts_every_event_at_one_time() {
    let ev = events(Shape::SameTimestamp, 40, 3);
    let times: BTreeSet<i64> = ev.iter().map(|e| span(e).0).collect();
    assert_eq!(times.len(), 1);
}

#[test]
fn deep_nesting_nests_each_level_in_the_one_before() {
    let depth = 50;
    let ev = events(Shape::DeepNesting, depth, 1);
    let ops: Vec<(i64, i64)> = host_spans(&ev)
        .into_iter()
        .filter(|e| {
            e["cat"] != "cuda_runtime" && !e["name"].as_str().unwrap().starts_with("ProfilerStep")
        })
        .map(span)
        .collect();
    assert_eq!(ops.len() as u64, depth);
    for w in ops.windows(2) {
        assert!(
            w[0].0 < w[1].0 && w[1].1 < w[0].1,
            "{:?} does not hold {:?}",
            w[0],
            w[1]
        );
    }
    // Each call lies in its own level and before the next level starts.
    let calls: Vec<(i64, i64)> = ev
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .map(span)
        .collect();
    let level_of = |c: (i64, i64)| ops.iter().rposition(|o| o.0 <= c.0 && c.1 <= o.1);
    for (i, c) in calls.iter().enumerate() {
        let owner = level_of(*c).expect("a call inside a level");
        assert!(owner < depth as usize);
        assert!(i == 0 || owner >= level_of(calls[i - 1]).unwrap());
    }
}

#[test]
fn track_per_event_gives_every_event_a_track() {
    let ev = events(Shape::TrackPerEvent, 40, 2);
    let tracks: BTreeSet<(i64, i64)> = ev
        .iter()
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(tracks.len(), ev.len());
}

#[test]
fn one_track_puts_every_event_on_one_track() {
    let ev = events(Shape::OneTrack, 40, 2);
    let tracks: BTreeSet<(i64, i64)> = ev
        .iter()
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(tracks.len(), 1);
}

#[test]
fn distinct_names_repeats_no_name_but_memory_records() {
    let ev = events(Shape::DistinctNames, 60, 2);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &ev {
        *seen.entry(e["name"].as_str().unwrap()).or_default() += 1;
    }
    assert!(
        seen.iter().all(|(n, c)| *c == 1 || *n == "[memory]"),
        "{seen:?}"
    );
}

#[test]
fn overlap_spans_overlap_without_containing_each_other() {
    let m = 30;
    let ev = events(Shape::Overlap, m, 1);
    let ops: Vec<(i64, i64)> = host_spans(&ev)
        .into_iter()
        .filter(|e| e["cat"] == "cpu_op")
        .map(span)
        .collect();
    for (i, a) in ops.iter().enumerate() {
        for b in &ops[i + 1..] {
            assert!(a.0 < b.0 && b.0 < a.1 && a.1 < b.1, "{a:?} {b:?}");
        }
    }
}

#[test]
fn step_per_unit_makes_a_step_of_each_unit() {
    let ev = events(Shape::StepPerUnit, 25, 3);
    let steps: Vec<(i64, i64)> = ev
        .iter()
        .filter(|e| e["name"].as_str().unwrap().starts_with("ProfilerStep#"))
        .map(span)
        .collect();
    assert_eq!(steps.len(), 25);
    assert!(steps.windows(2).all(|w| w[0].1 <= w[1].0));
}

#[test]
fn write_shape_writes_gzip_and_refuses_zero_units() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.json.gz");
    let opts = ShapeOptions {
        shape: Shape::Overlap,
        units: 10,
        steps: 2,
    };
    let stats = write_shape(&opts, &out).unwrap();
    assert!(crate::is_gzip(&std::fs::read(&out).unwrap()));
    assert!(stats.file_bytes < stats.stats.json_bytes);
    assert!(write_shape(&ShapeOptions { units: 0, ..opts }, &out).is_err());
}
