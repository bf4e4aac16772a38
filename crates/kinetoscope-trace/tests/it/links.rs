//! The launch link (runtime call → operator) the reader decides: the `External id` when
//! the call lies inside that operator on its thread, else the innermost operator or
//! annotation around the call, with the repairs counted in the read report.

use std::path::Path;

use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};
use kinetoscope_trace::{CategoryKind, EventId, Launcher, LinkRepairs, Phase, Trace};

use crate::common::fixture;

/// A host span (`cpu_op` or `user_annotation`) on thread `tid`.
fn span(cat: &str, name: &str, tid: u32, ts: u32, dur: u32, ext: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{"External id": {ext}}}}}"#
    )
}

/// A `cudaLaunchKernel` call on thread `tid`.
fn call(tid: u32, ts: u32, ext: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": {tid}, "ts": {ts}, "dur": 2, "args": {{"External id": {ext}, "correlation": {corr}}}}}"#
    )
}

/// A kernel on stream 7.
fn kernel(ts: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 5, "args": {{"device": 0, "stream": 7, "correlation": {corr}}}}}"#
    )
}

fn read(events: &[String]) -> Trace {
    let json = format!("{{\"traceEvents\": [\n{}\n]}}", events.join(",\n"));
    read_trace_bytes(
        Path::new("inline.json"),
        json.as_bytes(),
        &ReadOptions::default(),
    )
    .unwrap()
}

/// A fixture, read with the default options.
fn read_fixture(name: &str) -> Trace {
    kinetoscope_trace::read::read_trace(&fixture(name), &ReadOptions::default()).unwrap()
}

/// The launcher of the call with correlation `corr`, by the launching span's name.
fn launcher_name(t: &Trace, corr: i64) -> String {
    match t.launch_links().of_correlation(t, corr).unwrap().1 {
        Launcher::Span(op) => t.name(op).to_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn ids_that_agree_with_time_are_kept() {
    let t = read(&[
        span("cpu_op", "aten::mm", 1, 0, 100, 5),
        span("cpu_op", "aten::view", 1, 10, 20, 6),
        // Inside aten::mm (but not inside the aten::view it follows) and named by id.
        call(1, 40, 5, 100),
        kernel(50, 100),
        // External id 0: outside any operator.
        call(1, 200, 0, 101),
    ]);
    assert_eq!(launcher_name(&t, 100), "aten::mm");
    assert_eq!(launcher_name(&t, 101), "Outside");
    assert_eq!(t.report.launch_links, LinkRepairs::default());
    // The kernel's link goes through its correlation to the call's operator.
    let kernel = EventId(3);
    let links = t.launch_links();
    assert_eq!(
        links.operator_of_gpu(&t, kernel).map(|op| t.name(op)),
        Some("aten::mm")
    );
    assert_eq!(links.len(), 2);
    assert_eq!(
        links.of_call(EventId(2)),
        links.of_correlation(&t, 100).map(|l| l.1)
    );
    assert_eq!(links.of_call(kernel), None);
}

/// Operator ids and runtime ids numbered apart (as in the param `linear` trace): a call
/// whose id names an operator on another thread, or one it is not inside, goes to the
/// innermost operator around it; an id that names no operator too; with nothing around
/// it, to none.
#[test]
fn ids_that_disagree_with_time_are_repaired_by_nesting() {
    let t = read(&[
        span("cpu_op", "aten::linear", 1, 0, 100, 1),
        span("cpu_op", "aten::addmm", 1, 10, 80, 2),
        span("user_annotation", "Optimizer.step#SGD.step", 1, 200, 100, 3),
        span("cpu_op", "aten::add_", 1, 210, 20, 4),
        span("cpu_op", "aten::view", 2, 0, 1000, 5),
        // Names aten::view, which runs on thread 2: relinked to aten::addmm.
        call(1, 20, 5, 100),
        // Names aten::add_, which it is not inside: relinked to the annotation.
        call(1, 250, 4, 101),
        // Names nothing: linked to the innermost operator around it.
        call(1, 212, 77, 102),
        // Names aten::linear but runs after everything on its thread: linked to none.
        call(1, 500, 1, 103),
        // Names nothing and nothing is around it: unknown, not counted as repaired.
        call(1, 600, 78, 104),
    ]);
    assert_eq!(launcher_name(&t, 100), "aten::addmm");
    assert_eq!(launcher_name(&t, 101), "Optimizer.step#SGD.step");
    assert_eq!(launcher_name(&t, 102), "aten::add_");
    assert_eq!(launcher_name(&t, 103), "Unknown");
    assert_eq!(launcher_name(&t, 104), "Unknown");
    assert_eq!(
        t.report.launch_links,
        LinkRepairs {
            relinked: 2,
            unlinked: 1,
            nested: 1,
        }
    );
}

/// Spans that overlap without nesting, zero-length calls at span edges and hostile
/// durations neither panic nor link a call to a span that does not contain it.
#[test]
fn odd_spans_never_link_outside_their_time() {
    let t = read(&[
        span("cpu_op", "a", 1, 0, 100, 1),
        span("cpu_op", "b", 1, 50, 100, 2),
        span("cpu_op", "c", 1, 60, 10, 3),
        span("cpu_op", "huge", 1, 1000, u32::MAX, 4),
        r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100, "dur": 0, "args": {"External id": 9, "correlation": 100}}"#.to_owned(),
        call(1, 90, 9, 101),
        call(1, 62, 9, 102),
        call(1, 5000, 9, 103),
    ]);
    // [100, 100] is inside a (ends at 100) and b.
    assert_eq!(launcher_name(&t, 100), "b");
    assert_eq!(launcher_name(&t, 101), "b");
    assert_eq!(launcher_name(&t, 102), "c");
    assert_eq!(launcher_name(&t, 103), "huge");
    for (call, launcher) in t.launch_links().iter() {
        if let Launcher::Span(op) = launcher {
            let e = &t.events;
            assert!(e.ts_ns[op.index()] <= e.ts_ns[call.index()]);
            assert!(e.end_ns(call) <= e.end_ns(op));
        }
    }
}

/// The fixtures whose ids agree with time need no repair; the ROCm one has a call whose
/// id names no operator and that no operator encloses.
#[test]
fn fixtures_need_no_repair() {
    for name in [
        "worker0.1623143089861.pt.trace.json.gz",
        "gpu_metrics_input.json",
        "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "triton_example.json.gz",
    ] {
        let t = read_fixture(name);
        assert_eq!(t.report.launch_links, LinkRepairs::default(), "{name}");
    }
}

/// The correlation index groups calls and GPU activities by id the same way whether the
/// ids are dense (grouped through one slot per id) or sparse (grouped by sorting):
/// checked against a direct reading of the events, with repeated calls, several
/// kernels per id, kernels without a call and calls without a kernel; so does the count
/// of kernels without a call.
#[test]
fn correlation_index_agrees_with_the_events_for_dense_and_sparse_ids() {
    use std::collections::BTreeMap;
    for scale in [1i64, 3, 1 << 33] {
        let mut events = Vec::new();
        // (id, is GPU) per event, in file order.
        let mut linked: Vec<(i64, bool)> = Vec::new();
        let mut x = 12345u64;
        for k in 0..400i64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = 10 + (x >> 33) as i64 % 120 * scale;
            let gpu = k % 3 != 0;
            let ts = 1000 + k * 10;
            events.push(if gpu {
                format!(
                    r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 5, "args": {{"device": 0, "stream": 7, "correlation": {id}}}}}"#
                )
            } else {
                format!(
                    r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"External id": 0, "correlation": {id}}}}}"#
                )
            });
            linked.push((id, gpu));
        }
        let t = read(&events);
        let index = t.correlation_index();
        let mut want: BTreeMap<i64, (Option<EventId>, Vec<EventId>)> = BTreeMap::new();
        for (i, &(id, gpu)) in linked.iter().enumerate() {
            let entry = want.entry(id).or_default();
            let event = EventId(i as u32);
            assert_eq!(t.events.correlation.at(i), id, "scale {scale}: event order");
            if gpu {
                entry.1.push(event);
            } else {
                entry.0 = Some(event);
            }
        }
        for (&id, (call, gpu)) in &want {
            assert_eq!(index.launch(id), *call, "scale {scale}, id {id}");
            assert_eq!(index.gpu(id), gpu.as_slice(), "scale {scale}, id {id}");
        }
        for (i, &(id, gpu)) in linked.iter().enumerate() {
            let of_call = index.gpu_of_call(EventId(i as u32));
            let kept = !gpu && want[&id].0 == Some(EventId(i as u32));
            let expected: &[EventId] = if kept { &want[&id].1 } else { &[] };
            assert_eq!(of_call, expected, "scale {scale}, event {i}");
        }
        let without: usize = want
            .values()
            .filter(|(call, _)| call.is_none())
            .map(|(_, gpu)| gpu.len())
            .sum();
        assert!(without > 0 && without < 200, "scale {scale}: {without}");
        assert_eq!(
            t.launch_links().count_without_launch(&t),
            without as u64,
            "scale {scale}: kernels without a launch call"
        );
        assert_eq!(
            t.report.gpu_without_launch, without as u64,
            "scale {scale}: kernels without a launch call, as counted while reading"
        );
        assert_eq!(index.launch(11 + 121 * scale), None);
        assert!(index.gpu(9).is_empty());
        let got: Vec<(Option<EventId>, Vec<EventId>)> =
            index.iter().map(|(c, g)| (c, g.to_vec())).collect();
        let expected: Vec<(Option<EventId>, Vec<EventId>)> = want.into_values().collect();
        assert_eq!(got, expected, "scale {scale}: links in id order");
    }
}

/// Two operators; id 100 launched by a call inside the first, then carried by an
/// instant of a runtime category; id 101 by two calls inside the second.
fn ids_with_an_instant_and_a_repeat() -> Vec<String> {
    vec![
        span("cpu_op", "aten::mm", 1, 0, 100, 5),
        span("cpu_op", "aten::add", 1, 200, 100, 6),
        call(1, 40, 5, 100),
        kernel(50, 100),
        r#"{"ph": "i", "s": "t", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 60, "args": {"correlation": 100}}"#.to_owned(),
        call(1, 210, 6, 101),
        call(1, 220, 6, 101),
    ]
}

/// A correlation id's call is the last complete runtime call with it, even when a later
/// event of a runtime category carries the same id without being a call (an instant, in
/// a hostile trace), and the last of two calls with one id.
#[test]
fn the_link_by_correlation_skips_events_that_are_not_calls() {
    let t = read(&ids_with_an_instant_and_a_repeat());
    let (call, launcher) = t.launch_links().of_correlation(&t, 100).unwrap();
    assert_eq!(
        (call, t.name(launcher_span(launcher))),
        (EventId(2), "aten::mm")
    );
    let (call, launcher) = t.launch_links().of_correlation(&t, 101).unwrap();
    assert_eq!(
        (call, t.name(launcher_span(launcher))),
        (EventId(6), "aten::add")
    );
    assert_eq!(t.launch_links().of_correlation(&t, 102), None);
    assert_eq!(t.launch_links().of_correlation(&t, 0), None);
}

/// The launcher of a GPU activity found by position (`of_activity`) is the launcher of
/// its correlation id (`of_correlation`) for every activity: on the hostile trace above
/// (an id whose last runtime event is an instant, a repeated id, an id without a call,
/// id 0) and on real traces whose ids agree with time (CUDA, ROCm) or needed repair.
#[test]
fn the_launcher_of_an_activity_is_the_launcher_of_its_id() {
    let mut events = ids_with_an_instant_and_a_repeat();
    // Two kernels of the repeated id, one of an id without a call, one without an id.
    events.extend([
        kernel(215, 101),
        kernel(230, 101),
        kernel(240, 102),
        kernel(250, 0),
    ]);
    let hostile = read(&events);
    let mut traces = vec![("hostile".to_owned(), hostile)];
    for name in [
        "worker0.1623143089861.pt.trace.json.gz",
        "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "step_based_trace_2543932.json.gz",
        "event_sync_trace.json.gz",
    ] {
        traces.push((name.to_owned(), read_fixture(name)));
    }
    for (name, t) in &traces {
        let mut checked = 0;
        let links = t.launch_links();
        let e = &t.events;
        for i in 0..e.len() {
            if !t.categories.kind(e.cat[i]).is_gpu() {
                continue;
            }
            let id = EventId(i as u32);
            let by_id = links.of_correlation(t, e.correlation.at(i)).map(|l| l.1);
            assert_eq!(links.of_activity(t, id), by_id, "{name}: event {i}");
            checked += usize::from(by_id.is_some());
        }
        assert!(checked > 0, "{name}: no activity had a launcher");
    }
}

fn launcher_span(l: Launcher) -> EventId {
    match l {
        Launcher::Span(op) => op,
        other => panic!("not a span: {other:?}"),
    }
}

/// With two threads the operators' nesting is built beside the links by id, and thrown
/// away when no link needs it; the links and repairs are those of one thread, on traces
/// that need repairs (PARAM-era ids, hundreds of calls) and on one that needs none.
#[test]
fn links_on_two_threads_are_those_of_one() {
    for (name, repaired) in [
        ("ranks/sampled_rank-0.json.gz", true),
        ("event_sync_trace.json.gz", true),
        ("worker0.1623143089861.pt.trace.json.gz", false),
    ] {
        let read = |threads| {
            kinetoscope_trace::read::read_trace(&fixture(name), &crate::common::lenient(threads))
                .unwrap()
        };
        let (one, two) = (read(1), read(2));
        assert_eq!(!one.report.launch_links.is_empty(), repaired, "{name}");
        assert_eq!(one.report.launch_links, two.report.launch_links, "{name}");
        let links = |t: &Trace| t.launch_links().iter().collect::<Vec<_>>();
        assert_eq!(links(&one), links(&two), "{name}");
        assert_eq!(
            one.report.gpu_without_launch, two.report.gpu_without_launch,
            "{name}"
        );
    }
}

/// The nesting keeps each track's host spans in start order, longest first, then in
/// file order: checked against a sort of the columns, on real fixtures and on spans
/// that tie in start and in length.
#[test]
fn the_nesting_order_is_each_tracks_spans_sorted_by_start_then_length() {
    let ties = read(&[
        span("cpu_op", "aten::a", 1, 10, 50, 1),
        span("cpu_op", "aten::b", 1, 10, 80, 2),
        span("cpu_op", "aten::c", 1, 10, 50, 3),
        span("cpu_op", "aten::d", 1, 5, 200, 4),
        span("user_annotation", "ProfilerStep#1", 1, 0, 300, 5),
        span("cpu_op", "aten::e", 2, 10, 50, 6),
        call(1, 20, 1, 100),
        kernel(40, 100),
    ]);
    let mut checked = 0;
    for (name, t) in [
        ("ties", ties),
        (
            "PyTorch 1.8",
            read_fixture("worker0.1623143089861.pt.trace.json.gz"),
        ),
        (
            "ROCm",
            read_fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
        ),
    ] {
        let e = &t.events;
        let nesting = t.nesting();
        // The host spans: complete events neither on the GPU nor the trace's own span.
        let is_span = |i: usize| {
            let kind = t.categories.kind(e.cat[i]);
            e.phase[i] == Phase::Complete && !kind.is_gpu() && kind != CategoryKind::TraceSpan
        };
        let mut in_order = 0;
        for track in 0..t.tracks.len() {
            let mut want: Vec<u32> = (0..e.len())
                .filter(|&i| is_span(i) && e.track[i].index() == track)
                .map(|i| i as u32)
                .collect();
            want.sort_by_key(|&i| {
                let i = i as usize;
                (e.ts_ns[i], std::cmp::Reverse(e.dur_ns.at(i)), i)
            });
            assert_eq!(
                nesting.in_start_order(track),
                &want[..],
                "{name}: track {track}"
            );
            in_order += want.len();
        }
        assert_eq!(in_order, nesting.order.items().len(), "{name}");
        checked += in_order;
    }
    assert!(checked > 1000, "{checked} spans checked");
}
