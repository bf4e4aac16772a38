//! The critical path (docs/metrics.md B.17) on small inline traces computed by hand: every
//! event's start and end, the edge taken at each point of the backward walk, the time per
//! category and the events on the path are worked out in the comments and asserted
//! exactly. Times are µs after `T0` in the comments; the analysis works in epoch ns.

use kinetoscope_analysis::critical_path::{
    critical_path, CategoryTime, CriticalPath, CriticalPathOptions, PathCategory, PathEvent,
};
use kinetoscope_trace::Trace;

use crate::common::trace_of_events;

/// Start of every trace here, µs (so no timestamp is 0).
const T0: u64 = 1_000;

/// A host span (`cpu_op`, `user_annotation`) on thread 1, at `T0 + ts` µs.
fn host(cat: &str, name: &str, ts: u64, dur: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": 1, "ts": {}, "dur": {dur}}}"#,
        T0 + ts
    )
}

/// A CUDA runtime call on thread 1 with correlation id `corr` (0: none).
fn runtime(name: &str, ts: u64, dur: u64, corr: u64) -> String {
    let args = if corr == 0 {
        String::new()
    } else {
        format!(r#", "args": {{"correlation": {corr}}}"#)
    };
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": 1, "tid": 1, "ts": {}, "dur": {dur}{args}}}"#,
        T0 + ts
    )
}

/// A kernel on GPU 0, stream `stream`, launched by the call with correlation id `corr`.
fn kernel(name: &str, stream: u64, ts: u64, dur: u64, corr: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {}, "dur": {dur}, "args": {{"device": 0, "stream": {stream}, "correlation": {corr}}}}}"#,
        T0 + ts
    )
}

/// `(category, µs, %)` rows, as the analysis reports them (ns, 0–1 share).
fn categories(rows: &[(PathCategory, i64, f64)]) -> Vec<CategoryTime> {
    rows.iter()
        .map(|&(category, time_us, pct)| CategoryTime {
            category,
            time_ns: time_us * 1_000,
            share: pct / 100.0,
        })
        .collect()
}

/// `(name, category, µs, pieces)` rows, as the analysis reports them (ns).
fn events(rows: &[(&str, PathCategory, i64, u64)]) -> Vec<PathEvent> {
    rows.iter()
        .map(|&(name, category, time_us, pieces)| PathEvent {
            name: name.to_owned(),
            category,
            time_ns: time_us * 1_000,
            pieces,
        })
        .collect()
}

/// Every event of the path (`top: 0`).
const ALL: CriticalPathOptions = CriticalPathOptions { step: None, top: 0 };

/// One step; thread 1 launches three kernels on two streams of GPU 0, makes stream 7
/// wait for stream 8, and synchronises.
///
/// ```text
/// thread 1   ProfilerStep#1 [0, 100]
///              aten::linear [5, 25]
///                cudaLaunchKernel [8, 12]   corr 1 → gemm_a
///                cudaLaunchKernel [15, 19]  corr 2 → gemm_b
///              cudaLaunchKernel [27, 31]    corr 3 → add_c
///              cudaStreamWaitEvent [32, 34]
///              cudaStreamSynchronize [36, 75]
///              aten::add_ [80, 92]
/// stream 8   gemm_a [14, 30]   gemm_b [33, 55]   (gemm_b queued behind gemm_a: gap 30→33)
/// stream 7   add_c [58, 70]                      (waits for gemm_b: starts 3 µs after it)
/// ```
///
/// The step window is [0, 100]: its GPU work ends at 70, before the host span does, so
/// stretching changes nothing. The walk starts on the host (the step's span ends at 100,
/// after the GPU's last end at 70) and goes back from t = 100:
///
/// | t from → to | where | edge / piece | category |
/// |---|---|---|---|
/// | 100 → 92 | thread 1 | ProfilerStep#1 self time after its last child `aten::add_` | CPU |
/// | 92 → 80 | thread 1 | `aten::add_` (no children) | CPU |
/// | 80 → 75 | thread 1 | ProfilerStep#1 self time after `cudaStreamSynchronize` | CPU |
/// | 75 → 70 | thread 1 | the sync returns when the last GPU work inside it (add_c, ends 70) ends; jump to stream 7 | sync |
/// | 70 → 58 | stream 7 | add_c runs | GPU compute |
/// | 58 → 55 | stream 7 → 8 | add_c's prerequisites: launch issued at min(31, 58) = 31, no stream predecessor; gemm_b on stream 8 ends at 55, later than 31 and within 5 µs of 58: a wait between streams | stream wait |
/// | 55 → 33 | stream 8 | gemm_b runs | GPU compute |
/// | 33 → 30 | stream 8 | gemm_b's prerequisites: stream predecessor gemm_a ends at 30, launch issued at 19 < 30, nothing on stream 7 ends before 33: kernel-to-kernel gap | kernel gap |
/// | 30 → 14 | stream 8 | gemm_a runs | GPU compute |
/// | 14 → 12 | stream 8 → thread 1 | gemm_a's prerequisites: launch issued at min(12, 14) = 12, nothing before it on either stream: launch delay | launch delay |
/// | 12 → 8 | thread 1 | its `cudaLaunchKernel` | CUDA runtime |
/// | 8 → 5 | thread 1 | `aten::linear` self time before its first child | CPU |
/// | 5 → 0 | thread 1 | ProfilerStep#1 self time before `aten::linear` | CPU |
///
/// Off the path: the launches of gemm_b and add_c (their kernels waited for the GPU, not
/// for them), `cudaStreamWaitEvent`, and the host's wait inside the sync before 70.
///
/// Per category: GPU compute 12 + 22 + 16 = 50; CPU 8 + 12 + 5 + 3 + 5 = 33; sync 5;
/// CUDA runtime 4; kernel gap 3; stream wait 3; launch delay 2; total 100 = the window,
/// in 13 pieces. Ties are ordered by category (kernel gap before stream wait); events by
/// time, then name.
fn one_step() -> Trace {
    trace_of_events(&[
        host("user_annotation", "ProfilerStep#1", 0, 100),
        host("cpu_op", "aten::linear", 5, 20),
        runtime("cudaLaunchKernel", 8, 4, 1),
        kernel("gemm_a", 8, 14, 16, 1),
        runtime("cudaLaunchKernel", 15, 4, 2),
        kernel("gemm_b", 8, 33, 22, 2),
        runtime("cudaLaunchKernel", 27, 4, 3),
        kernel("add_c", 7, 58, 12, 3),
        runtime("cudaStreamWaitEvent", 32, 2, 0),
        runtime("cudaStreamSynchronize", 36, 39, 0),
        host("cpu_op", "aten::add_", 80, 12),
    ])
}

#[test]
fn one_step_path_computed_by_hand() {
    use PathCategory::*;
    let cp = critical_path(&one_step(), ALL);
    let t0 = T0 as i64 * 1_000;
    let expected = CriticalPath {
        path: "inline.json".into(),
        step: Some("ProfilerStep#1".into()),
        steps: vec!["ProfilerStep#1".into()],
        window_ns: Some([t0, t0 + 100_000]),
        length_ns: 100_000,
        categories: categories(&[
            (GpuCompute, 50, 50.0),
            (Cpu, 33, 33.0),
            (Sync, 5, 5.0),
            (CudaRuntime, 4, 4.0),
            (GpuKernelGap, 3, 3.0),
            (StreamWait, 3, 3.0),
            (KernelLaunchDelay, 2, 2.0),
        ]),
        top_events: events(&[
            ("gemm_b", GpuCompute, 22, 1),
            ("ProfilerStep#1", Cpu, 18, 3),
            ("gemm_a", GpuCompute, 16, 1),
            ("add_c", GpuCompute, 12, 1),
            ("aten::add_", Cpu, 12, 1),
            ("cudaStreamSynchronize", Sync, 5, 1),
            ("cudaLaunchKernel", CudaRuntime, 4, 1),
            ("GPU kernel-to-kernel gap", GpuKernelGap, 3, 1),
            ("aten::linear", Cpu, 3, 1),
            ("wait on another stream", StreamWait, 3, 1),
            ("kernel launch delay", KernelLaunchDelay, 2, 1),
        ]),
        pieces: 13,
        warnings: vec![],
    };
    assert_eq!(cp, expected);

    // `top` keeps the events with the most time; the totals do not change.
    let top2 = critical_path(&one_step(), CriticalPathOptions { step: None, top: 2 });
    assert_eq!(top2.top_events, expected.top_events[..2]);
    assert_eq!(top2.categories, expected.categories);
    // The step by number gives the same path; a missing one only a warning.
    let by_number = critical_path(
        &one_step(),
        CriticalPathOptions {
            step: Some(1),
            top: 0,
        },
    );
    assert_eq!(by_number, expected);
    let missing = critical_path(
        &one_step(),
        CriticalPathOptions {
            step: Some(2),
            top: 0,
        },
    );
    assert_eq!(missing.step, None);
    assert_eq!(
        missing.warnings,
        [kinetoscope_analysis::note::Note::NoSuchStep { step: Some(2) }]
    );
}

/// No `ProfilerStep#` marker: the step is the whole trace, the span of the CPU operators
/// stretched to the end of the GPU work they launched, and the walk has no step thread to
/// come back to. It used to index the thread table with `u32::MAX` (a panic) as soon as
/// it reached host time outside every event.
///
/// ```text
/// thread 1   aten::mm [0, 10]
///              cudaLaunchKernel [2, 4]   corr 1 → gemm
///            cudaLaunchKernel [20, 24]   corr 2 → relu   (outside any operator)
///            aten::add_ [26, 28]
/// stream 7   gemm [5, 8]   relu [30, 40]
/// ```
///
/// Window: the operators span [0, 28], stretched to the GPU's end: [0, 40]. The GPU ends
/// last (40, no step thread), so the walk starts on stream 7 at t = 40:
///
/// | t from → to | where | piece | category |
/// |---|---|---|---|
/// | 40 → 30 | stream 7 | relu runs | GPU compute |
/// | 30 → 24 | stream 7 → thread 1 | launch issued at min(24, 30) = 24, after gemm's end (8): launch delay | launch delay |
/// | 24 → 20 | thread 1 | the `cudaLaunchKernel` | CUDA runtime |
/// | 20 → 10 | thread 1 | no event (after `aten::mm` ended): the thread the walk stays on is the one whose work ends last (here the only one) | CPU, untraced |
/// | 10 → 4 | thread 1 | `aten::mm` self time after its child | CPU |
/// | 4 → 2 | thread 1 | its `cudaLaunchKernel` | CUDA runtime |
/// | 2 → 0 | thread 1 | `aten::mm` self time before it | CPU |
///
/// Per category: GPU compute 10, CPU untraced 10, CPU 6 + 2 = 8, launch delay 6, CUDA
/// runtime 4 + 2 = 6; total 40 = the window, in 7 pieces; `aten::add_` and gemm are off
/// the path.
#[test]
fn without_profiler_steps_the_whole_trace_is_walked_without_panic() {
    use PathCategory::*;
    let trace = trace_of_events(&[
        host("cpu_op", "aten::mm", 0, 10),
        runtime("cudaLaunchKernel", 2, 2, 1),
        kernel("gemm", 7, 5, 3, 1),
        runtime("cudaLaunchKernel", 20, 4, 2),
        kernel("relu", 7, 30, 10, 2),
        host("cpu_op", "aten::add_", 26, 2),
    ]);
    let cp = critical_path(&trace, ALL);
    let t0 = T0 as i64 * 1_000;
    let expected = CriticalPath {
        path: "inline.json".into(),
        step: Some("(whole trace)".into()),
        steps: vec!["(whole trace)".into()],
        window_ns: Some([t0, t0 + 40_000]),
        length_ns: 40_000,
        categories: categories(&[
            (GpuCompute, 10, 25.0),
            (CpuUntraced, 10, 25.0),
            (Cpu, 8, 20.0),
            (KernelLaunchDelay, 6, 15.0),
            (CudaRuntime, 6, 15.0),
        ]),
        top_events: events(&[
            ("CPU, untraced", CpuUntraced, 10, 1),
            ("relu", GpuCompute, 10, 1),
            ("aten::mm", Cpu, 8, 2),
            ("cudaLaunchKernel", CudaRuntime, 6, 2),
            ("kernel launch delay", KernelLaunchDelay, 6, 1),
        ]),
        pieces: 7,
        warnings: vec![],
    };
    assert_eq!(cp, expected);
}

/// A span of category `cat` on GPU 0's stream 7 track (pid 0, tid 7), where only GPU
/// activities belong.
fn on_stream_7(cat: &str, name: &str, ts: u64, dur: u64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": 7, "ts": {}, "dur": {dur}}}"#,
        T0 + ts
    )
}

/// Step markers on a GPU track: the step's span is on stream 7's track, so the step's
/// "thread" is a GPU track holding one host span, and the walk reaches it from the GPU
/// through another thread. The walk names threads and streams only by indexes checked
/// when the window is built, so no index can be a `u32::MAX` sentinel.
///
/// ```text
/// stream 7   ProfilerStep#1 [0, 30] (user_annotation)   k1 [10, 40]
/// thread 1   aten::mm [2, 8]
///              cudaLaunchKernel [4, 6]   corr 1 → k1
/// ```
///
/// Window: the step [0, 30] stretched to k1's end: [0, 40]. The GPU ends last (40 ≥ the
/// step's 30), so the walk starts on stream 7 at t = 40:
///
/// | t from → to | where | piece | category |
/// |---|---|---|---|
/// | 40 → 10 | stream 7 | k1 runs | GPU compute |
/// | 10 → 6 | stream 7 → thread 1 | launch issued at min(6, 10) = 6, no stream predecessor | launch delay |
/// | 6 → 4 | thread 1 | the `cudaLaunchKernel` | CUDA runtime |
/// | 4 → 2 | thread 1 | `aten::mm` self time before it | CPU |
/// | 2 → 0 | thread 1 idle → the step's track | ProfilerStep#1 self time | CPU |
///
/// Total 40 = the window, in 5 pieces.
#[test]
fn step_markers_on_a_gpu_track() {
    use PathCategory::*;
    let trace = trace_of_events(&[
        on_stream_7("user_annotation", "ProfilerStep#1", 0, 30),
        kernel("k1", 7, 10, 30, 1),
        host("cpu_op", "aten::mm", 2, 6),
        runtime("cudaLaunchKernel", 4, 2, 1),
    ]);
    let cp = critical_path(&trace, ALL);
    let t0 = T0 as i64 * 1_000;
    let expected = CriticalPath {
        path: "inline.json".into(),
        step: Some("ProfilerStep#1".into()),
        steps: vec!["ProfilerStep#1".into()],
        window_ns: Some([t0, t0 + 40_000]),
        length_ns: 40_000,
        categories: categories(&[
            (GpuCompute, 30, 75.0),
            (KernelLaunchDelay, 4, 10.0),
            (Cpu, 4, 10.0),
            (CudaRuntime, 2, 5.0),
        ]),
        top_events: events(&[
            ("k1", GpuCompute, 30, 1),
            ("kernel launch delay", KernelLaunchDelay, 4, 1),
            ("ProfilerStep#1", Cpu, 2, 1),
            ("aten::mm", Cpu, 2, 1),
            ("cudaLaunchKernel", CudaRuntime, 2, 1),
        ]),
        pieces: 5,
        warnings: vec![],
    };
    assert_eq!(cp, expected);
}

/// Step markers only as GPU annotations (`gpu_user_annotation` on stream 7): no host
/// step, so the step is the whole trace — the operators' span [2, 8] stretched to k1's
/// end, [2, 40] — and the walk starts on the GPU with no step thread: k1 (30), the
/// launch delay (4), the launch call (2) and `aten::mm` before it (2): 38 = the window.
#[test]
fn step_markers_only_on_the_gpu() {
    use PathCategory::*;
    let trace = trace_of_events(&[
        on_stream_7("gpu_user_annotation", "ProfilerStep#1", 0, 45),
        kernel("k1", 7, 10, 30, 1),
        host("cpu_op", "aten::mm", 2, 6),
        runtime("cudaLaunchKernel", 4, 2, 1),
    ]);
    let cp = critical_path(&trace, ALL);
    let t0 = T0 as i64 * 1_000;
    assert_eq!(cp.step.as_deref(), Some("(whole trace)"));
    assert_eq!(cp.window_ns, Some([t0 + 2_000, t0 + 40_000]));
    let got: Vec<(PathCategory, i64)> = cp
        .categories
        .iter()
        .map(|c| (c.category, c.time_ns))
        .collect();
    assert_eq!(
        got,
        [
            (GpuCompute, 30_000),
            (KernelLaunchDelay, 4_000),
            (Cpu, 2_000),
            (CudaRuntime, 2_000)
        ]
    );
    for c in &cp.categories {
        assert!((c.share - c.time_ns as f64 / 38_000.0).abs() < 1e-12);
    }
    assert_eq!(cp.length_ns, 38_000);
    assert!(cp.warnings.is_empty(), "{:?}", cp.warnings);
}
