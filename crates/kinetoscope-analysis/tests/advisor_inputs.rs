//! The analysis results the advisor's rules take their numbers from: the GPU-wide
//! host-wait gaps (HTA's idle classification over all streams as one queue), and the
//! kernel table over step windows.

use std::path::Path;

use kinetoscope_analysis::gpu_time::idle::{device_host_wait, idle_of, IdleCategory};
use kinetoscope_analysis::gpu_time::{select, Compat};
use kinetoscope_analysis::kernels::{analyze_kernels, analyze_kernels_in, KernelGroupBy};
use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};
use kinetoscope_trace::Trace;

fn launch(ts: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"correlation": {corr}}}}}"#
    )
}

fn kernel(name: &str, stream: u32, ts: u32, dur: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur}, "args": {{"device": 0, "stream": {stream}, "correlation": {corr}}}}}"#
    )
}

/// Stream 7: `a` `[10,20)` and `[50,60)` (launched at 5 and 40); stream 8: `b` `[30,35)`
/// and `[70,80)` (launched at 25 and 65). Both later kernels were launched after their
/// stream drained: host-wait gaps `[20,50)` on stream 7 and `[35,70)` on stream 8.
fn two_streams() -> Trace {
    let ev = [
        launch(5, 1),
        kernel("a", 7, 10, 10, 1),
        launch(25, 3),
        kernel("b", 8, 30, 5, 3),
        launch(40, 2),
        kernel("a", 7, 50, 10, 2),
        launch(65, 4),
        kernel("b", 8, 70, 10, 4),
    ];
    let json = format!(
        "{{\"schemaVersion\": 1, \"traceEvents\": [\n{}\n]}}",
        ev.join(",\n")
    );
    let bytes: &'static [u8] = Box::leak(json.into_bytes().into_boxed_slice());
    read_trace_bytes(Path::new("inline.json"), bytes, &ReadOptions::default()).unwrap()
}

#[test]
fn device_host_wait_is_the_idle_classification_over_one_queue() {
    let t = two_streams();
    let rows = select(&t, Compat::Kinetoscope, false);
    // Per stream (HTA): host wait [20,50) on stream 7 and [35,70) on stream 8.
    let idle = idle_of(&t, &rows, 30_000);
    let per_stream: Vec<(i64, IdleCategory, i64)> = idle
        .streams
        .iter()
        .map(|s| {
            (
                s.stream,
                s.categories[0].category,
                s.categories[0].idle_ns / 1000,
            )
        })
        .collect();
    assert_eq!(
        per_stream,
        [
            (7, IdleCategory::HostWait, 30),
            (8, IdleCategory::HostWait, 35)
        ]
    );
    // The GPU as one queue: it drains at 20, 35 and 60, and each next row (on either
    // stream) was launched after that: [20,30) + [35,50) + [60,70).
    let wide: Vec<(i64, i64, i64)> = device_host_wait(&t, &rows)
        .iter()
        .map(|g| (g.stream, g.start_ns / 1000, g.end_ns / 1000))
        .collect();
    assert_eq!(wide, [(8, 20, 30), (7, 35, 50), (8, 60, 70)]);
    assert!(device_host_wait(&t, &rows)
        .iter()
        .all(|g| g.launch.is_some()));
    assert_eq!(idle.device_host_wait_ns, 35_000);
}

#[test]
fn kernel_table_over_windows() {
    let t = two_streams();
    let all = analyze_kernels(&t, KernelGroupBy::Name);
    assert_eq!(all.rows.len(), 2);
    assert!(all
        .rows
        .iter()
        .all(|r| r.calls == 2 && r.windows.is_empty()));
    let w = analyze_kernels_in(
        &t,
        KernelGroupBy::Name,
        Some(&[(0, 40_000), (40_000, 65_000)]),
    );
    // `b` at 70 is outside both windows.
    let rows: Vec<(&str, u64, Vec<u32>)> = w
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.calls, r.windows.clone()))
        .collect();
    assert_eq!(rows, [("a", 2, vec![0, 1]), ("b", 1, vec![0])]);
    assert_eq!(w.total_kernel_ns, 25_000);
}
