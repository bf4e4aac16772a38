//! The timeline's window queries on a real H100 trace (TraceLens fixture): every span of
//! a window accounted for (busy time and count per track, against a scan of the event
//! table), the payload bounded by the width, spans narrower than a pixel merged, lanes
//! that never overlap, flows, event details and name search.

use kinetoscope_analysis::timeline::{TimelineIndex, TrackSlices, WindowQuery, MAX_LANES};
use kinetoscope_trace::{EventId, Phase, Trace};

use crate::common::{fixtures, read};

fn h100() -> Trace {
    read(&fixtures().join("tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"))
}

/// Spans of model track `track` in `[start, end)` (absolute ns) by a scan of the event
/// table: `(count, busy ns)`, with the window's rule (a span counts when it ends after
/// the start or starts at it, and starts before the end).
fn scan(trace: &Trace, track: u32, start: i64, end: i64) -> (u64, i64) {
    let e = &trace.events;
    let mut n = 0;
    let mut busy = 0;
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || e.dur_ns.at(i) < 0 || e.track[i].0 != track {
            continue;
        }
        let (s, d) = (e.ts_ns[i], e.dur_ns.at(i));
        if (s + d > start || s >= start) && s < end {
            n += 1;
            busy += d;
        }
    }
    (n, busy)
}

fn rows(t: &TrackSlices) -> usize {
    t.slices.start_ns.len()
}

#[test]
fn every_span_of_a_window_is_accounted_for() {
    let trace = h100();
    let idx = TimelineIndex::build(&trace);
    let tracks = idx.tracks();
    let t0 = tracks.t0_ns;
    let full = tracks.t1_ns;
    assert!(tracks.tracks.iter().any(|t| t.max_depth > 3));
    let windows = [
        (0, full + 1, 1600),
        (0, full + 1, 37),
        (full / 3, full / 3 + full / 50, 1600),
        (full / 2, full / 2 + 20_000, 800),
        (full / 5, full / 5 + 2_000_000, 3),
    ];
    for (start, end, width) in windows {
        let w = idx
            .window(
                &trace,
                &WindowQuery {
                    start_ns: start,
                    end_ns: end,
                    width_px: width,
                    tracks: None,
                },
            )
            .unwrap();
        assert_eq!(w.tracks.len(), tracks.tracks.len());
        for t in &w.tracks {
            let (n, busy) = scan(&trace, t.id, t0 + start, t0 + end);
            let got_n: u64 = t.slices.count.iter().map(|&c| u64::from(c)).sum();
            let got_busy: i64 = t.slices.busy_ns.iter().sum();
            assert_eq!(
                (got_n, got_busy),
                (n, busy),
                "track {} window {start}..{end}",
                t.id
            );
        }
    }
}

#[test]
fn narrow_spans_merge_and_the_payload_is_bounded_by_the_width() {
    let trace = h100();
    let idx = TimelineIndex::build(&trace);
    let full = idx.tracks().t1_ns + 1;
    let width = 200u32;
    let w = idx
        .window(
            &trace,
            &WindowQuery {
                start_ns: 0,
                end_ns: full,
                width_px: width,
                tracks: None,
            },
        )
        .unwrap();
    let mut merged = 0;
    for t in &w.tracks {
        let info = idx.tracks().tracks.iter().find(|i| i.id == t.id).unwrap();
        let lanes = (info.max_depth as usize).min(MAX_LANES);
        assert!(
            rows(t) <= 2 * (width as usize + 1) * lanes,
            "track {}",
            t.id
        );
        for k in 0..rows(t) {
            let is_bucket = t.slices.event[k] < 0;
            assert_eq!(is_bucket, t.slices.count[k] > 1);
            if is_bucket {
                merged += 1;
                // A bucket is made of spans narrower than a pixel.
                assert!(t.slices.busy_ns[k] <= t.slices.dur_ns[k]);
            }
        }
    }
    assert!(merged > 0, "a 200 px view of the whole trace merges spans");
    let events: usize = idx.tracks().tracks.iter().map(|t| t.events as usize).sum();
    let shown: usize = w.tracks.iter().map(rows).sum();
    assert!(shown < events / 4, "{shown} rows for {events} spans");
}

#[test]
fn a_zoomed_window_shows_real_spans_in_lanes_that_never_overlap() {
    let trace = h100();
    let idx = TimelineIndex::build(&trace);
    let t0 = idx.tracks().t0_ns;
    let mid = idx.tracks().t1_ns / 2;
    let w = idx
        .window(
            &trace,
            &WindowQuery {
                start_ns: mid,
                end_ns: mid + 200_000,
                width_px: 8000,
                tracks: None,
            },
        )
        .unwrap();
    let e = &trace.events;
    let mut real = 0;
    for t in &w.tracks {
        let mut last_end_at_depth = std::collections::HashMap::new();
        for k in 0..rows(t) {
            let (start, dur, depth) = (t.slices.start_ns[k], t.slices.dur_ns[k], t.slices.depth[k]);
            if let Some(&end) = last_end_at_depth.get(&depth) {
                assert!(start >= end, "overlap at depth {depth} on track {}", t.id);
            }
            last_end_at_depth.insert(depth, start + dur);
            if t.slices.event[k] >= 0 {
                real += 1;
                let i = t.slices.event[k] as usize;
                assert_eq!(
                    (e.ts_ns[i] - t0, e.dur_ns.at(i), e.track[i].0),
                    (start, dur, t.id)
                );
                assert_eq!(
                    w.names[t.slices.name[k] as usize],
                    trace.name(EventId(i as u32))
                );
            }
        }
    }
    assert!(real > 10);
    assert!(!w.flows_truncated);
    assert!(!w.flows.is_empty(), "launches and kernels in 200 µs");
    for f in &w.flows {
        let (a, b) = (f.from_event as usize, f.to_event as usize);
        assert_eq!(e.correlation.at(a), e.correlation.at(b));
        assert_ne!(e.correlation.at(a), 0);
        assert!(trace.kind(EventId(b as u32)).is_gpu());
    }
}

#[test]
fn event_details_search_and_errors() {
    let trace = h100();
    let idx = TimelineIndex::build(&trace);
    let e = &trace.events;
    let index = trace.correlation_index();
    let kernel = (0..e.len())
        .find(|&i| {
            trace.kind(EventId(i as u32)) == kinetoscope_trace::CategoryKind::Kernel
                && index.launch(e.correlation.at(i)).is_some()
        })
        .expect("a kernel with its launch");
    let d = idx.event(&trace, kernel as u64).unwrap();
    assert_eq!(d.name, trace.name(EventId(kernel as u32)));
    assert!(d.args.contains_key("grid"));
    assert_eq!(d.flows.len(), 1);
    assert_eq!(d.flows[0].to_event as usize, kernel);
    let launch = idx.event(&trace, u64::from(d.flows[0].from_event)).unwrap();
    assert!(launch.flows.iter().any(|f| f.to_event as usize == kernel));

    let lower = idx.search(&trace, "gemm", 5);
    let upper = idx.search(&trace, "GEMM", 5);
    assert_eq!(lower, upper);
    let want = (0..e.len())
        .filter(|&i| e.phase[i] == Phase::Complete && e.dur_ns.at(i) >= 0)
        .filter(|&i| {
            trace
                .name(EventId(i as u32))
                .to_lowercase()
                .contains("gemm")
        })
        .count() as u64;
    assert!(want > 5);
    assert_eq!(lower.total, want);
    assert!(lower.truncated);
    assert_eq!(lower.matches.len(), 5);
    assert!(lower
        .matches
        .windows(2)
        .all(|m| m[0].start_ns <= m[1].start_ns));

    use kinetoscope_analysis::timeline::QueryError;
    let q = |start_ns, end_ns, tracks| WindowQuery {
        start_ns,
        end_ns,
        width_px: 100,
        tracks,
    };
    assert!(matches!(
        idx.window(&trace, &q(5, 5, None)),
        Err(QueryError::EmptyWindow { .. })
    ));
    assert_eq!(
        idx.window(&trace, &q(0, 10, Some(vec![u32::MAX]))),
        Err(QueryError::UnknownTrack { id: u32::MAX })
    );
    assert_eq!(
        idx.event(&trace, e.len() as u64),
        Err(QueryError::UnknownEvent { id: e.len() as u64 })
    );
}

#[test]
fn deep_nesting_and_many_tracks_stay_bounded() {
    use kinetoscope_analysis::timeline::{QueryError, MAX_TRACKS};
    // 300 nested spans on one thread: lanes beyond MAX_LANES are left out, and said so.
    let nested: Vec<String> = (0..300)
        .map(|i| {
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"n{i}","pid":1,"tid":1,"ts":{i},"dur":{}}}"#,
                1000 - 2 * i
            )
        })
        .collect();
    let trace = crate::common::trace_of_events(&nested);
    let idx = TimelineIndex::build(&trace);
    assert_eq!(idx.tracks().tracks[0].max_depth, 300);
    let q = WindowQuery {
        start_ns: 0,
        end_ns: 1_000_000,
        width_px: 100,
        tracks: None,
    };
    let w = idx.window(&trace, &q).unwrap();
    assert!(w.tracks[0].depth_truncated);
    assert_eq!(rows(&w.tracks[0]), MAX_LANES);
    assert!(w.tracks[0]
        .slices
        .depth
        .iter()
        .all(|&d| (d as usize) < MAX_LANES));

    // A track per span: a window answers at most MAX_TRACKS of them.
    let n = MAX_TRACKS + 10;
    let spread: Vec<String> = (0..n)
        .map(|i| {
            format!(r#"{{"ph":"X","cat":"cpu_op","name":"s","pid":1,"tid":{i},"ts":{i},"dur":1}}"#)
        })
        .collect();
    let trace = crate::common::trace_of_events(&spread);
    let idx = TimelineIndex::build(&trace);
    assert_eq!(idx.tracks().tracks.len(), n);
    let w = idx
        .window(
            &trace,
            &WindowQuery {
                end_ns: 100_000,
                ..q.clone()
            },
        )
        .unwrap();
    assert_eq!(w.tracks.len(), MAX_TRACKS);
    let all: Vec<u32> = idx.tracks().tracks.iter().map(|t| t.id).collect();
    let too_many = WindowQuery {
        end_ns: 100_000,
        tracks: Some(all),
        ..q
    };
    assert_eq!(
        idx.window(&trace, &too_many),
        Err(QueryError::TooManyTracks { asked: n })
    );
}

/// Every TraceLens trace of `../shared` (real CUDA and ROCm, eager, compiled and graph
/// runs): the whole trace at 1600 px and a zoomed window account for every span of
/// every track.
#[test]
#[ignore = "reads ../shared"]
fn every_shared_tracelens_trace_accounts_for_every_span() {
    let dir = crate::common::shared_dir().join("external/tracelens");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("tracelens folder") {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".json.gz") {
            continue;
        }
        let trace = read(&path);
        let idx = TimelineIndex::build(&trace);
        let t = idx.tracks();
        for (start, end) in [
            (0, t.t1_ns + 1),
            (t.t1_ns / 3, t.t1_ns / 3 + t.t1_ns / 40 + 1),
        ] {
            let q = WindowQuery {
                start_ns: start,
                end_ns: end,
                width_px: 1600,
                tracks: None,
            };
            let w = idx.window(&trace, &q).unwrap();
            for tr in &w.tracks {
                let busy: i64 = tr.slices.busy_ns.iter().sum();
                let count: u64 = tr.slices.count.iter().map(|&c| u64::from(c)).sum();
                let want = scan(&trace, tr.id, t.t0_ns + start, t.t0_ns + end);
                assert_eq!((count, busy), want, "{} track {}", path.display(), tr.id);
            }
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} traces in {}", dir.display());
}
