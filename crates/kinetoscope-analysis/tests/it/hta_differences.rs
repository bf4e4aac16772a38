//! One test per difference between kinetoscope's GPU-time defaults and HTA
//! (docs/hta-differences.md), each pinning both behaviours: kinetoscope's default and
//! `--hta-compat` (HTA 0.5.0).

use kinetoscope_analysis::gpu_time::classes::{class_breakdown, classify, ClassRules, KernelClass};
use kinetoscope_analysis::gpu_time::idle::{
    idle_breakdown, stream_gaps, IdleCategory, DEFAULT_KERNEL_WAIT_NS,
};
use kinetoscope_analysis::gpu_time::launches::{is_launch_call, launch_stats, LaunchOptions};
use kinetoscope_analysis::gpu_time::temporal::{temporal, Temporal};
use kinetoscope_analysis::gpu_time::{filter_all, select, step_names, Compat, PerRank};
use kinetoscope_trace::Trace;

use crate::common::{read, trace_fixture, trace_of_events};

fn step(n: u32, ts: u32, dur: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}}}"#
    )
}

fn call(cat: &str, name: &str, ts: u32, dur: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}, "args": {{"correlation": {corr}}}}}"#
    )
}

fn gpu(cat: &str, name: &str, stream: u32, ts: u32, dur: u32, corr: u32) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur}, "args": {{"device": 0, "stream": {stream}, "correlation": {corr}}}}}"#
    )
}

/// Two steps `[0,100)`, `[100,200)`; on stream 7 `gemm_a` `[20,30)` (launched at 10),
/// `triton_k` `[50,52)` (launched by the driver API at 40), a `Stream Wait Event`
/// `[60,65)` (launched at 55), `gemm_b` `[120,130)` (launched at 110, in the last step);
/// on stream 8 an NCCL kernel `[25,45)` with no launch call in the trace.
fn toy() -> Trace {
    let ev = [
        step(1, 0, 100),
        step(2, 100, 100),
        call("cuda_runtime", "cudaLaunchKernel", 10, 5, 1),
        gpu("kernel", "gemm_a", 7, 20, 10, 1),
        call("cuda_driver", "cuLaunchKernel", 40, 3, 3),
        gpu("kernel", "triton_k", 7, 50, 2, 3),
        call("cuda_runtime", "cudaStreamWaitEvent", 55, 2, 4),
        gpu("cuda_sync", "Stream Wait Event", 7, 60, 5, 4),
        call("cuda_runtime", "cudaLaunchKernel", 110, 5, 2),
        gpu("kernel", "gemm_b", 7, 120, 10, 2),
        gpu("kernel", "ncclDevKernel_AllReduce_Sum_f32", 8, 25, 20, 99),
    ];
    trace_of_events(&ev)
}

/// A 0–1 share as HTA's percentage, rounded to 2 decimals.
fn pct2(share: f64) -> f64 {
    (share * 10000.0).round() / 100.0
}

fn us4(t: &Temporal) -> (i64, i64, i64, i64) {
    (
        t.idle_ns / 1000,
        t.compute_ns / 1000,
        t.non_compute_ns / 1000,
        t.total_ns / 1000,
    )
}

/// §1: HTA drops the last step (host events from its start on) and every GPU row whose
/// launch call was dropped or is missing; kinetoscope keeps every GPU row.
#[test]
fn step_filter() {
    let t = toy();
    let hta = temporal(&t, Compat::Hta, true);
    assert!(hta.window.step_filter);
    assert_eq!(hta.window.cut_ns, Some(100_000));
    assert_eq!(
        (hta.window.gpu_rows_total, hta.window.gpu_rows_dropped),
        (5, 2)
    );
    // gemm_a, triton_k, Stream Wait Event (computation in 0.5.0): span [20,65).
    assert_eq!(us4(&hta), (28, 17, 0, 45));

    let ks = temporal(&t, Compat::Kinetoscope, false);
    assert!(!ks.window.step_filter);
    assert_eq!(ks.window.gpu_rows_dropped, 0);
    // All five rows: span [20,130), busy [20,45) + [50,52) + [60,65) + [120,130) = 42,
    // compute gemm_a + triton_k + gemm_b = 22, the sync row is not computation (§3).
    assert_eq!(us4(&ks), (68, 22, 20, 110));

    let l_hta = launch_stats(&t, Compat::Hta, true, LaunchOptions::default());
    let l_ks = launch_stats(&t, Compat::Kinetoscope, false, LaunchOptions::default());
    assert_eq!(
        l_hta.count, 1,
        "only gemm_a: gemm_b is in the last step, cuLaunchKernel not counted"
    );
    assert_eq!(l_ks.count, 3, "gemm_a, triton_k (cuLaunchKernel), gemm_b");
}

/// §1: HTA decides over all ranks: with a single distinct step nothing is filtered; with
/// two distinct names over the ranks, each rank is cut at its own last step even if it
/// has only one.
#[test]
fn step_filter_needs_two_steps_over_all_ranks() {
    let one = |n: u32| {
        let ev = [
            step(n, 0, 100),
            call("cuda_runtime", "cudaLaunchKernel", 10, 5, 1),
            gpu("kernel", "gemm_a", 7, 20, 10, 1),
        ];
        trace_of_events(&ev)
    };
    let (a, b) = (one(1), one(2));
    assert_eq!(step_names(&a), vec!["ProfilerStep#1".to_owned()]);
    let per = |t: &Trace| PerRank::compute(t, Compat::Hta, |f| temporal(t, Compat::Hta, f));
    // One rank, one step: not filtered, same numbers as kinetoscope's.
    let alone = per(&a).pick(filter_all([&step_names(&a)]));
    assert!(!alone.window.step_filter);
    assert_eq!(us4(&alone), (0, 10, 0, 10));
    // Steps #1 and #2 over two ranks: each rank is cut at its only step's start (0), so
    // HTA keeps nothing.
    let names = [step_names(&a), step_names(&b)];
    assert!(filter_all(names.iter()));
    let cut = per(&a).pick(true);
    assert!(cut.window.step_filter);
    assert_eq!(cut.window.gpu_rows_dropped, 1);
    assert_eq!(us4(&cut), (0, 0, 0, 0));
    // kinetoscope never filters.
    assert_eq!(
        us4(&PerRank::compute(&a, Compat::Kinetoscope, |f| temporal(
            &a,
            Compat::Kinetoscope,
            f
        ))
        .pick(true)),
        (0, 10, 0, 10)
    );
}

/// §2: HTA counts host-side Triton launch ops (`cpu_op` with a `stream` arg) as GPU rows;
/// kinetoscope counts only GPU activities, in both modes (the model does not keep the
/// `stream` arg of host ops). HTA 0.5.0 reports 94 µs of compute and a 94 µs span on this
/// trace (docs/metrics.md B.24). §7: HTA mode rounds the kernel `[444.592, 446.352)` µs to
/// `[445, 446)`; kinetoscope keeps its exact 1.76 µs.
#[test]
fn triton_host_ops_are_not_gpu_time_and_hta_rounds_to_us() {
    let t = read(&trace_fixture("triton_example.json.gz"));
    let r = temporal(&t, Compat::Kinetoscope, false);
    assert_eq!((r.compute_ns, r.total_ns, r.idle_ns), (1760, 1760, 0));
    let r = temporal(&t, Compat::Hta, false);
    assert_eq!((r.compute_ns, r.total_ns, r.idle_ns), (1000, 1000, 0));
}

/// §7: HTA's rounding (start up, end down to whole µs) in HTA mode, exact ns by default;
/// a sub-µs kernel straddling no integer gets a negative duration, as in HTA (#317).
#[test]
fn hta_rounds_to_whole_microseconds() {
    let ev = [
        call("cuda_runtime", "cudaLaunchKernel", 1, 2, 1),
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.4, "dur": 5.2, "args": {"device": 0, "stream": 7, "correlation": 1}}"#.to_owned(),
        call("cuda_runtime", "cudaLaunchKernel", 20, 2, 2),
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30.2, "dur": 0.5, "args": {"device": 0, "stream": 7, "correlation": 2}}"#.to_owned(),
    ];
    let t = trace_of_events(&ev);
    let b = class_breakdown(&t, Compat::Kinetoscope, false, 0);
    let k = &b.classes[0].top[0];
    assert_eq!((k.sum_ns, k.min_ns, k.max_ns), (5_700, 500, 5_200));
    let b = class_breakdown(&t, Compat::Hta, false, 0);
    let k = &b.classes[0].top[0];
    // [10.4, 15.6) → [11, 15) = 4 µs; [30.2, 30.7) → [31, 30) = −1 µs.
    assert_eq!((k.sum_ns, k.min_ns, k.max_ns), (3_000, -1_000, 4_000));
    let l = launch_stats(
        &t,
        Compat::Hta,
        false,
        LaunchOptions {
            all: true,
            ..LaunchOptions::default()
        },
    );
    assert_eq!(l.launches[0].delay_ns, 11_000 - 3_000);
}

/// §3: kernel classes. HTA 0.5.0 (`--hta-compat`) classifies `Stream Wait Event` as
/// computation and misses NCCL kernels without `Kernel` in the name; kinetoscope uses the
/// 0.6 rules.
#[test]
fn class_rules() {
    assert_eq!(
        classify("Stream Wait Event", ClassRules::Hta050),
        KernelClass::Computation
    );
    assert_eq!(
        classify("Stream Wait Event", ClassRules::Hta06),
        KernelClass::Other
    );
    assert_eq!(
        classify("ncclAllReduce_sum", ClassRules::Hta050),
        KernelClass::Computation
    );
    assert_eq!(
        classify("ncclAllReduce_sum", ClassRules::Hta06),
        KernelClass::Communication
    );
    assert_eq!(
        classify("rcclDummy", ClassRules::Hta06),
        KernelClass::Computation
    );
    let t = toy();
    let hta = class_breakdown(&t, Compat::Hta, true, 0);
    let comp = hta
        .classes
        .iter()
        .find(|c| c.class == KernelClass::Computation)
        .unwrap();
    assert!(comp.top.iter().any(|k| k.name == "Stream Wait Event"));
    let ks = class_breakdown(&t, Compat::Kinetoscope, false, 0);
    let other = ks
        .classes
        .iter()
        .find(|c| c.class == KernelClass::Other)
        .unwrap();
    assert_eq!(other.top[0].name, "Stream Wait Event");
    let comm = ks
        .classes
        .iter()
        .find(|c| c.class == KernelClass::Communication)
        .unwrap();
    assert_eq!(comm.busy_ns, 20_000);
}

/// §4: launch calls. HTA's launch statistics count `cudaLaunchKernel(ExC)`,
/// `cudaMemcpyAsync`, `cudaMemsetAsync` and MTIA `runFunction` only; kinetoscope also
/// counts the driver API (`cuLaunchKernel(Ex)`) and HIP.
#[test]
fn launch_calls() {
    assert!(!is_launch_call("cuLaunchKernel", Compat::Hta));
    assert!(is_launch_call("cuLaunchKernel", Compat::Kinetoscope));
    assert!(is_launch_call("hipLaunchKernel", Compat::Kinetoscope));
    let t = toy();
    let l = launch_stats(
        &t,
        Compat::Kinetoscope,
        false,
        LaunchOptions {
            all: true,
            ..LaunchOptions::default()
        },
    );
    assert!(l
        .launches
        .iter()
        .any(|x| x.launch == "cuLaunchKernel" && x.kernel == "triton_k"));
    let l = launch_stats(
        &t,
        Compat::Hta,
        false,
        LaunchOptions {
            all: true,
            ..LaunchOptions::default()
        },
    );
    assert!(l.launches.iter().all(|x| x.launch != "cuLaunchKernel"));
}

/// The worked example of docs/metrics.md B.10 (one rank, no steps, so no filter in either
/// mode).
#[test]
fn worked_example() {
    // Times shifted by +100 µs so that A's launch (-5) is positive.
    let ev = [
        call("cuda_runtime", "cudaLaunchKernel", 95, 1, 1),
        gpu("kernel", "A", 7, 100, 10, 1),
        call("cuda_runtime", "cudaLaunchKernel", 108, 1, 2),
        gpu("kernel", "B", 7, 112, 8, 2),
        call("cuda_runtime", "cudaMemcpyAsync", 135, 1, 3),
        gpu(
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            7,
            140,
            5,
            3,
        ),
        call("cuda_runtime", "cudaLaunchKernel", 90, 1, 4),
        gpu(
            "kernel",
            "ncclKernel_AllReduce_RING_LL_Sum_float",
            20,
            105,
            25,
            4,
        ),
    ];
    let t = trace_of_events(&ev);
    for compat in [Compat::Kinetoscope, Compat::Hta] {
        let r = temporal(&t, compat, false);
        assert_eq!(us4(&r), (10, 18, 17, 45));
        assert_eq!(
            (
                pct2(r.idle_share),
                pct2(r.compute_share),
                pct2(r.non_compute_share)
            ),
            (22.22, 40.0, 37.78)
        );
        let b = class_breakdown(&t, compat, false, 0);
        assert_eq!(b.comm_comp_overlap_share.map(pct2), Some(52.0));
        let labels: Vec<(String, i64)> = b
            .overlaps
            .iter()
            .map(|o| (o.label.clone(), o.time_ns / 1000))
            .collect();
        assert_eq!(
            &labels[..2],
            &[
                ("COMPUTATION overlapping COMMUNICATION".to_owned(), 13),
                ("COMMUNICATION".to_owned(), 12)
            ]
        );
        let i = idle_breakdown(&t, compat, false, DEFAULT_KERNEL_WAIT_NS);
        let s7 = i.streams.iter().find(|s| s.stream == 7).unwrap();
        let got: Vec<(IdleCategory, i64, Option<f64>)> = s7
            .categories
            .iter()
            .map(|c| (c.category, c.idle_ns / 1000, c.ratio))
            .collect();
        assert_eq!(
            got,
            vec![
                (IdleCategory::HostWait, 20, Some(0.91)),
                (IdleCategory::KernelWait, 2, Some(0.09)),
                (IdleCategory::Other, 0, Some(0.0)),
            ]
        );
        let s20 = i.streams.iter().find(|s| s.stream == 20).unwrap();
        assert_eq!(s20.categories.len(), 1);
        assert_eq!(
            (s20.categories[0].category, s20.categories[0].ratio),
            (IdleCategory::Other, None)
        );
    }
}

/// §1: HTA's cut is the latest start of any host-side event named like a step, and the
/// `gpu_user_annotation` copy of the last step (drawn on the GPU timeline, where the GPU
/// ran it) counts: on this trace it starts at 300 µs, long after the host step ended, so
/// HTA keeps the kernel launched inside the last host step (at 150) and drops only the one
/// launched after 300.
#[test]
fn hta_cut_is_the_latest_step_event_gpu_annotation_included() {
    let ev = [
        step(1, 0, 100),
        step(2, 100, 100),
        r#"{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#2", "pid": 0, "tid": 7, "ts": 300, "dur": 50}"#.to_owned(),
        call("cuda_runtime", "cudaLaunchKernel", 10, 5, 1),
        gpu("kernel", "gemm_a", 7, 20, 10, 1),
        call("cuda_runtime", "cudaLaunchKernel", 150, 5, 2),
        gpu("kernel", "gemm_b", 7, 320, 10, 2),
        call("cuda_runtime", "cudaLaunchKernel", 310, 5, 3),
        gpu("kernel", "gemm_c", 7, 340, 10, 3),
    ];
    let t = trace_of_events(&ev);
    let hta = temporal(&t, Compat::Hta, true);
    assert_eq!(hta.window.cut_ns, Some(300_000));
    assert_eq!(hta.window.cut_step.as_deref(), Some("ProfilerStep#2"));
    assert_eq!(
        (hta.window.gpu_rows_total, hta.window.gpu_rows_dropped),
        (3, 1)
    );
    // gemm_a [20,30) and gemm_b [320,330): span 310, busy 20.
    assert_eq!(us4(&hta), (290, 20, 0, 310));
    let l = launch_stats(&t, Compat::Hta, true, LaunchOptions::default());
    assert_eq!(l.count, 2);
    // kinetoscope never filters: all three kernels.
    assert_eq!(
        us4(&temporal(&t, Compat::Kinetoscope, false)),
        (300, 30, 0, 330)
    );
}

/// §14: kernels that overlap on one stream. HTA measures each gap from the end of the
/// previous kernel in start order, so `k2` (inside `k1`) gives a gap of −50 µs and `k3`
/// a phantom 10 µs gap while `k1` still runs, both summed as kernel wait; kinetoscope's
/// default measures from the latest end on the stream and clips at zero.
#[test]
fn idle_overlapping_rows_on_one_stream() {
    let ev = [
        call("cuda_runtime", "cudaLaunchKernel", 0, 5, 1),
        gpu("kernel", "k1", 7, 10, 90, 1),
        call("cuda_runtime", "cudaLaunchKernel", 6, 5, 2),
        gpu("kernel", "k2", 7, 50, 10, 2),
        call("cuda_runtime", "cudaLaunchKernel", 12, 5, 3),
        gpu("kernel", "k3", 7, 70, 10, 3),
        call("cuda_runtime", "cudaLaunchKernel", 200, 5, 4),
        gpu("kernel", "k4", 7, 210, 10, 4),
    ];
    let t = trace_of_events(&ev);
    let per_category = |compat| {
        let b = idle_breakdown(&t, compat, false, DEFAULT_KERNEL_WAIT_NS);
        b.streams[0]
            .categories
            .iter()
            .map(|c| {
                let st = c.stats.as_ref();
                (
                    c.category,
                    c.idle_ns / 1000,
                    st.map_or(0, |s| s.count),
                    st.map_or(0, |s| s.min_ns / 1000),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        per_category(Compat::Hta),
        vec![
            (IdleCategory::HostWait, 130, 1, 130),
            (IdleCategory::KernelWait, -40, 2, -50),
            (IdleCategory::Other, 0, 0, 0),
        ]
    );
    assert_eq!(
        per_category(Compat::Kinetoscope),
        vec![
            (IdleCategory::HostWait, 110, 1, 110),
            (IdleCategory::KernelWait, 0, 2, 0),
            (IdleCategory::Other, 0, 0, 0),
        ]
    );
    // The gaps themselves: HTA's run from the previous kernel's end, kinetoscope's from
    // the latest end so far.
    let starts = |compat| {
        let rows = select(&t, compat, false);
        stream_gaps(&t, &rows, DEFAULT_KERNEL_WAIT_NS)
            .iter()
            .map(|g| (g.start_ns / 1000, g.end_ns / 1000, g.idle_ns(compat) / 1000))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        starts(Compat::Hta),
        vec![(100, 50, -50), (60, 70, 10), (80, 210, 130)]
    );
    assert_eq!(
        starts(Compat::Kinetoscope),
        vec![(100, 50, 0), (100, 70, 0), (100, 210, 110)]
    );
}

/// Not a difference: both modes count zero-length rows as no time, and HTA mode
/// counts a row that HTA's rounding turned negative as HTA does. The class sweep adds
/// each class at its merged intervals' starts and subtracts it at their ends (HTA's
/// running sum), so a zero-length memset adds nothing, and HTA's `[41, 40)` memset takes
/// 1 µs out of the computation around it. HTA 0.5.0 on this trace: COMPUTATION 24,
/// MEMORY 10 (and a 0 µs "COMPUTATION overlapping MEMORY" row); temporal idle 15, compute
/// 25, non-compute 10 of 50.
#[test]
fn zero_and_negative_length_rows_in_the_class_sweep() {
    let ev = [
        call("cuda_runtime", "cudaLaunchKernel", 1, 2, 1),
        gpu("kernel", "gemm", 7, 0, 10, 1),
        call("cuda_runtime", "cudaMemsetAsync", 3, 1, 2),
        gpu("gpu_memset", "Memset (Device)", 8, 5, 0, 2),
        call("cuda_runtime", "cudaMemcpyAsync", 12, 1, 3),
        gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 8, 20, 10, 3),
        call("cuda_runtime", "cudaLaunchKernel", 30, 2, 4),
        gpu("kernel", "gemm", 7, 35, 15, 4),
        call("cuda_runtime", "cudaMemsetAsync", 36, 1, 5),
        r#"{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 8, "ts": 40.2, "dur": 0.5, "args": {"device": 0, "stream": 8, "correlation": 5}}"#.to_owned(),
    ];
    let t = trace_of_events(&ev);
    let labels = |compat| {
        class_breakdown(&t, compat, false, 0)
            .overlaps
            .iter()
            .map(|o| (o.label.clone(), o.time_ns))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        labels(Compat::Hta),
        vec![
            ("COMPUTATION".to_owned(), 24_000),
            ("MEMORY".to_owned(), 10_000)
        ]
    );
    assert_eq!(us4(&temporal(&t, Compat::Hta, false)), (15, 25, 10, 50));
    assert_eq!(
        labels(Compat::Kinetoscope),
        vec![
            ("COMPUTATION".to_owned(), 24_500),
            ("MEMORY".to_owned(), 10_000),
            ("COMPUTATION overlapping MEMORY".to_owned(), 500)
        ]
    );
    assert_eq!(
        us4(&temporal(&t, Compat::Kinetoscope, false)),
        (15, 25, 10, 50)
    );
}
