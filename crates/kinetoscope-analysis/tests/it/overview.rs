//! `kinetoscope overview` against the TensorBoard plugin: every trace covered by the
//! plugin reference outputs (fixtures in `tests/fixtures/tb_plugin/`, see `SOURCE.md`
//! there), the plugin's own unit-test traces (docs/metrics.md A.4–A.7, A.16), and one
//! test per documented difference (docs/tb-plugin-differences.md).

use std::path::{Path, PathBuf};

use kinetoscope_analysis::overview::tensor_cores::{plugin_uses_tensor_cores, uses_tensor_cores};
use kinetoscope_analysis::overview::{overview, TraceOverview};
use kinetoscope_analysis::steps::StepSource;

use crate::common::{fixtures, read, trace_of_events};

/// The plugin's traces and reference outputs (`fixtures/tb_plugin`).
fn tb_plugin() -> PathBuf {
    fixtures().join("tb_plugin")
}

/// The fixture trace behind a reference key's run (`r0_span1:pypi:worker0_span1`).
fn trace_of_key(key: &str) -> PathBuf {
    let run = key.split(':').next().unwrap();
    let file = match run {
        "r0_span1" => "r0_span1/worker0.1623143089861.pt.trace.json.gz",
        "r0_span2" => "r0_span2/worker0.1623143566756.pt.trace.json.gz",
        "hist_profiler_api_w0" => "hist_profiler_api_w0/worker0.pt.trace.json.gz",
        other => panic!("no fixture for run {other}"),
    };
    tb_plugin().join(file)
}

fn overview_of_file(path: &Path) -> TraceOverview {
    overview(&read(path))
}

/// Rows of a reference CSV as header → value maps.
fn csv_rows(path: &Path) -> Vec<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_owned))
                .collect()
        })
        .collect()
}

fn field<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    &row.iter().find(|(k, _)| k == name).unwrap().1
}

/// Plugin column names in priority order, as in its CSV files.
const PLUGIN_COLUMNS: [&str; 8] = [
    "Kernel",
    "Memcpy",
    "Memset",
    "Communication",
    "Runtime",
    "DataLoader",
    "CPU Exec",
    "Other",
];

/// Our step (µs, exact: the 2021 traces have integer µs) as `[parts…, total]`.
fn step_us(s: &kinetoscope_analysis::overview::StepBreakdown) -> Vec<i64> {
    let mut v: Vec<i64> = s
        .breakdown_ns
        .to_array()
        .iter()
        .map(|ns| ns / 1000)
        .collect();
    assert!(s.breakdown_ns.to_array().iter().all(|ns| ns % 1000 == 0));
    v.push(s.dur_ns / 1000);
    v
}

#[test]
fn step_breakdown_matches_plugin_reference() {
    let rows = csv_rows(&tb_plugin().join("reference/reference_steps_all.csv"));
    let mut keys: Vec<&str> = rows.iter().map(|r| field(r, "key")).collect();
    keys.dedup();
    assert_eq!(keys.len(), 4);
    for key in keys {
        let ours = overview_of_file(&trace_of_key(key));
        let expected: Vec<_> = rows.iter().filter(|r| field(r, "key") == key).collect();
        assert_eq!(ours.steps.len(), expected.len(), "{key}: kept steps");
        for (s, row) in ours.steps.iter().zip(&expected) {
            assert_eq!(s.number.unwrap().to_string(), field(row, "step"), "{key}");
            let want: Vec<i64> = PLUGIN_COLUMNS
                .iter()
                .chain(&["Total"])
                .map(|c| field(row, c).parse().unwrap())
                .collect();
            assert_eq!(step_us(s), want, "{key} step {}", s.name);
            let sum: i64 = s.breakdown_ns.to_array().iter().sum();
            assert_eq!(sum, s.dur_ns, "parts add up to the step");
        }
        // The average is the plain mean of the rows.
        let avg = ours.average.as_ref().unwrap();
        let n = expected.len() as f64;
        let mean = |c: &str| {
            expected
                .iter()
                .map(|r| field(r, c).parse::<f64>().unwrap())
                .sum::<f64>()
                / n
        };
        assert!((avg.dur_ns / 1e3 - mean("Total")).abs() < 1e-9, "{key}");
        for (v, c) in avg.breakdown_ns.to_array().iter().zip(PLUGIN_COLUMNS) {
            let v = v / 1e3;
            assert!((v - mean(c)).abs() < 1e-9, "{key} {c}: {v} vs {}", mean(c));
        }
    }
}

#[test]
fn per_run_step_csvs_match_too() {
    for (dir, key) in [
        ("r0_span1/pypi/worker0_span1", "r0_span1"),
        ("r0_span1/final/worker0_span1", "r0_span1"),
        ("r0_span2/pypi/worker0_span1", "r0_span2"),
        (
            "hist_profiler_api_w0/pypi/worker0_spanNone",
            "hist_profiler_api_w0",
        ),
    ] {
        let rows = csv_rows(&tb_plugin().join(format!("reference/{dir}_steps_breakdown_us.csv")));
        let ours = overview_of_file(&trace_of_key(key));
        let got: Vec<Vec<i64>> = ours.steps.iter().map(step_us).collect();
        let want: Vec<Vec<i64>> = rows
            .iter()
            .map(|r| {
                PLUGIN_COLUMNS
                    .iter()
                    .chain(&["Total"])
                    .map(|c| field(r, c).parse().unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(got, want, "{dir}");
    }
}

/// Largest absolute difference seen per metric, printed with `--nocapture`.
#[test]
fn gpu_metrics_match_plugin_reference() {
    let rows = csv_rows(&tb_plugin().join("reference/reference_gpu_metrics_all.csv"));
    assert_eq!(rows.len(), 4);
    for row in rows {
        let key = field(&row, "key");
        let ours = overview_of_file(&trace_of_key(key));
        let id: i64 = field(&row, "gpu_id").parse().unwrap();
        let gpu = ours.gpus.iter().find(|g| g.id == id).expect("gpu");
        let opt = |c: &str| {
            let v = field(&row, c);
            (!v.is_empty()).then(|| v.parse::<f64>().unwrap())
        };
        let util = opt("gpu_utilization").unwrap();
        let d_util = (gpu.utilization.unwrap() - util).abs();
        assert!(
            d_util < 1e-12,
            "{key} utilization {:?} vs {util}",
            gpu.utilization
        );
        match opt("est_sm_efficiency") {
            Some(want) => {
                let d = (gpu.sm_efficiency.unwrap() - want).abs();
                eprintln!(
                    "{key}: sm_efficiency {} vs {want} (|Δ| {d:e})",
                    gpu.sm_efficiency.unwrap()
                );
                assert!(d < 1e-9, "{key} sm_efficiency");
            }
            None => assert_eq!(gpu.sm_efficiency, None, "{key}"),
        }
        match opt("est_achieved_occupancy_pct") {
            Some(want) => {
                let got = gpu.achieved_occupancy.unwrap() * 100.0;
                let d = (got - want).abs();
                eprintln!("{key}: occupancy {got} % vs {want} % (|Δ| {d:e})");
                assert!(d < 1e-9, "{key} occupancy");
            }
            None => assert_eq!(gpu.achieved_occupancy, None, "{key}"),
        }
        // FP32 V100 runs: no tensor-core kernel under either list.
        let tc = opt("tensor_core_kernel_time_ratio(overview)").unwrap();
        assert_eq!(gpu.tensor_core_ratio, Some(tc), "{key}");
        eprintln!("{key}: utilization |Δ| {d_util:e}");
    }
}

#[test]
fn reference_average_percentages() {
    // docs/metrics.md A.17: r0 span 1 averages and their share of the step.
    let ours = overview_of_file(&trace_of_key("r0_span1"));
    let avg = ours.average.unwrap();
    assert_eq!(format!("{:.0}", avg.dur_ns / 1e3), "177592");
    let pct: Vec<String> = avg
        .share
        .to_array()
        .iter()
        .map(|p| format!("{:.2}", 100.0 * p))
        .collect();
    assert_eq!(
        pct,
        ["55.51", "1.08", "0.05", "0.00", "1.64", "33.37", "7.70", "0.65"]
    );
    assert_eq!(ours.worker, "worker0");
    assert_eq!(ours.span.as_deref(), Some("1623143089861"));
    assert_eq!(ours.devices[0].name, "Tesla V100-DGXS-32GB");
    assert_eq!(ours.gpus[0].name.as_deref(), Some("Tesla V100-DGXS-32GB"));
    assert!(ours.dropped_steps.is_empty());
}

// ---------------------------------------------------------------------------------------
// Small inline traces: the plugin's own unit tests (tb_plugin/test/test_profiler.py),
// keeping the fields the overview reads.

/// One complete event.
fn ev(cat: &str, name: &str, pid: i64, tid: &str, ts: i64, dur: i64, args: &str) -> String {
    format!(
        r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": "{tid}", "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
    )
}

/// A host event of the plugin tests' process (pid 13721).
fn host(cat: &str, name: &str, tid: &str, ts: i64, dur: i64, ext: i64) -> String {
    ev(
        cat,
        name,
        13721,
        tid,
        ts,
        dur,
        &format!(r#""External id": {ext}"#),
    )
}

/// A runtime call (1.8-era category `Runtime`).
fn rt(name: &str, tid: &str, ts: i64, dur: i64, corr: i64, ext: i64) -> String {
    ev(
        "Runtime",
        name,
        13721,
        tid,
        ts,
        dur,
        &format!(r#""correlation": {corr}, "external id": {ext}"#),
    )
}

/// A GPU activity on device 0, stream 7.
fn dev(cat: &str, name: &str, ts: i64, dur: i64, corr: i64, ext: i64) -> String {
    ev(
        cat,
        name,
        0,
        "stream 7",
        ts,
        dur,
        &format!(r#""correlation": {corr}, "external id": {ext}, "device": 0"#),
    )
}

fn overview_of(events: &[String]) -> TraceOverview {
    overview(&trace_of_events(events))
}

/// `[kernel, memcpy, memset, communication, runtime, dataloader, cpu_exec, other, total]`,
/// µs, per step.
fn costs(o: &TraceOverview) -> Vec<[i64; 9]> {
    o.steps
        .iter()
        .map(|s| {
            let v = step_us(s);
            let mut a = [0; 9];
            a.copy_from_slice(&v);
            a
        })
        .collect()
}

const NLL: &str = "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>";

#[test]
fn plugin_test_all_categories() {
    let o = overview_of(&[
        host(
            "Operator",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            "123",
            100,
            180,
            2,
        ),
        host("Operator", "aten::to", "123", 200, 60, 3),
        host("Operator", "aten::nll_loss_backward", "456", 340, 70, 4),
        host("Operator", "ProfilerStep#1", "123", 50, 400, 1),
        dev(
            "Memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            405,
            10,
            334,
            4,
        ),
        rt("cudaMemcpyAsync", "456", 360, 20, 334, 4),
        dev("Memset", "Memset (Device)", 420, 5, 40344, 4),
        rt("cudaMemsetAsync", "456", 390, 10, 40344, 4),
        dev("Kernel", NLL, 430, 15, 40348, 4),
        rt("cudaLaunchKernel", "456", 405, 5, 40348, 4),
    ]);
    // docs/metrics.md A.5 worked example.
    assert_eq!(costs(&o), vec![[15, 10, 5, 0, 30, 180, 35, 125, 400]]);
    assert_eq!(o.step_source, StepSource::ProfilerStep);
}

#[test]
fn plugin_test_runtime_called_by_profilerstep() {
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "456", 100, 300, 2),
        rt("cudaLaunchKernel", "456", 130, 20, 335, 2),
        dev("Kernel", "void gemmSN_TN_kernel_64addr", 220, 8, 335, 2),
    ]);
    assert_eq!(costs(&o), vec![[8, 0, 0, 0, 20, 0, 0, 300 - 8 - 20, 300]]);
}

#[test]
fn plugin_test_no_profilerstep() {
    let o = overview_of(&[
        host("Operator", "aten::to", "123", 100, 60, 3),
        host("Operator", "aten::nll_loss_backward", "456", 300, 70, 4),
        dev("Kernel", NLL, 320, 100, 40348, 4),
        rt("cudaLaunchKernel", "456", 310, 20, 40348, 4),
    ]);
    // One step over the operators' host span, stretched to the kernel's end.
    assert_eq!(
        costs(&o),
        vec![[
            100,
            0,
            0,
            0,
            320 - 310,
            0,
            60 + (310 - 300),
            300 - (100 + 60),
            (320 + 100) - 100
        ]]
    );
    assert_eq!(o.step_source, StepSource::WholeTrace);
    assert_eq!(o.steps[0].name, "(whole trace)");
}

fn two_steps(kernel_before: bool, memcpy_dur: i64) -> Vec<String> {
    let mut v = vec![
        host("Operator", "ProfilerStep#1", "123", 100, 200, 1),
        host("Operator", "aten::to", "123", 200, 60, 2),
        host("Operator", "ProfilerStep#2", "123", 350, 150, 3),
        host("Operator", "aten::mm", "123", 360, 50, 4),
        dev(
            "Memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            280,
            memcpy_dur,
            334,
            2,
        ),
        rt("cudaMemcpyAsync", "123", 250, 5, 334, 2),
        dev("Kernel", NLL, 410, 200, 40348, 4),
        rt("cudaLaunchKernel", "123", 400, 5, 40348, 4),
    ];
    if kernel_before {
        v.push(dev("Kernel", NLL, 150, 90, 123, 0));
    }
    v
}

#[test]
fn plugin_test_multiple_profilersteps_no_overlap() {
    let o = overview_of(&two_steps(false, 40));
    assert_eq!(
        costs(&o),
        vec![
            [0, 40, 0, 0, 5, 0, 60 - 5, 200 - 60 - 20, 320 - 100],
            [200, 0, 0, 0, 5, 0, 50 - 5, 360 - 350, 610 - 350],
        ]
    );
    let avg = o.average.unwrap();
    assert_eq!(avg.dur_ns / 1e3, ((320 - 100) + (610 - 350)) as f64 / 2.0);
}

#[test]
fn plugin_test_multiple_profilersteps_with_overlap() {
    // A kernel launched before step 1 that ends inside it moves step 1's start; the
    // memcpy of step 1 that ends inside step 2 moves step 2's start.
    let o = overview_of(&two_steps(true, 100));
    assert_eq!(
        costs(&o),
        vec![
            [
                0,
                100,
                0,
                0,
                5,
                0,
                (200 + 60) - (150 + 90) - 5,
                280 - (200 + 60),
                (280 + 100) - (150 + 90)
            ],
            [
                200,
                0,
                0,
                0,
                5,
                0,
                (280 + 100) - 360 + (410 - 405),
                0,
                610 - (280 + 100)
            ],
        ]
    );
}

#[test]
fn a_launch_counts_in_the_first_step_still_open_when_host_steps_overlap() {
    // Step 1 holds step 2 (two threads' step markers): a launch inside both counts in
    // step 1, the first whose span ends after it starts, as a time-ordered walk of
    // launches and steps meets it; step 3's launch counts in step 3.
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "1", 100, 500, 1),
        host("Operator", "ProfilerStep#2", "2", 200, 100, 2),
        host("Operator", "ProfilerStep#3", "1", 650, 150, 3),
        rt("cudaLaunchKernel", "2", 250, 10, 11, 0),
        dev("Kernel", NLL, 270, 20, 11, 0),
        rt("cudaLaunchKernel", "1", 700, 10, 12, 0),
        dev("Kernel", NLL, 720, 20, 12, 0),
    ]);
    let launched: Vec<(&str, u64)> = o
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.device_events))
        .collect();
    assert_eq!(
        launched,
        [
            ("ProfilerStep#1", 1),
            ("ProfilerStep#2", 0),
            ("ProfilerStep#3", 1)
        ]
    );
}

#[test]
fn plugin_test_last_steps_no_kernel() {
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "123", 100, 200, 1),
        host("Operator", "aten::to", "123", 120, 10, 2),
        host("Operator", "ProfilerStep#2", "123", 300, 100, 3),
        host("Operator", "ProfilerStep#3", "123", 400, 50, 4),
        dev("Kernel", NLL, 90, 20, 123, 0),
        rt("cudaMemcpyAsync", "123", 125, 5, 334, 2),
        dev("Kernel", NLL, 150, 180, 334, 2),
    ]);
    assert_eq!(o.steps.len(), 1);
    assert_eq!(costs(&o)[0][8], (150 + 180) - (90 + 20));
    assert_eq!(o.dropped_steps, ["ProfilerStep#2", "ProfilerStep#3"]);
}

#[test]
fn tail_step_with_too_few_kernels_is_dropped() {
    // docs/metrics.md A.4 rule 3: the last step launched < 0.8 × the kernels of the one
    // before it.
    let mut v = vec![
        host("Operator", "ProfilerStep#1", "1", 0, 100, 1),
        host("Operator", "ProfilerStep#2", "1", 100, 100, 2),
    ];
    for k in 0..5 {
        v.push(rt("cudaLaunchKernel", "1", 10 + k, 1, 100 + k, 1));
        v.push(dev("Kernel", "k", 20 + 2 * k, 1, 100 + k, 1));
    }
    for k in 0..3 {
        v.push(rt("cudaLaunchKernel", "1", 110 + k, 1, 200 + k, 2));
        v.push(dev("Kernel", "k", 120 + 2 * k, 1, 200 + k, 2));
    }
    let o = overview_of(&v);
    assert_eq!(o.steps.len(), 1);
    assert_eq!(o.steps[0].device_events, 5);
    assert_eq!(o.dropped_steps, ["ProfilerStep#2"]);
}

#[test]
fn plugin_test_pure_cpu() {
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "123", 100, 200, 1),
        host("Operator", "aten::to", "123", 120, 10, 2),
        host("Operator", "ProfilerStep#2", "123", 300, 100, 3),
        host("Operator", "aten::mm", "123", 350, 40, 4),
    ]);
    assert_eq!(
        costs(&o),
        vec![
            [0, 0, 0, 0, 0, 0, 10, 190, 200],
            [0, 0, 0, 0, 0, 0, 40, 60, 100]
        ]
    );
    assert!(o.gpus.is_empty());
}

/// A kernel on GPU 1 with `blocks per SM` and occupancy.
fn k1(
    name: &str,
    stream: &str,
    (ts, dur): (i64, i64),
    (corr, ext): (i64, i64),
    (bps, occ): (f64, f64),
) -> String {
    ev(
        "Kernel",
        name,
        1,
        stream,
        ts,
        dur,
        &format!(
            r#""correlation": {corr}, "external id": {ext}, "device": 1, "blocks per SM": {bps}, "est. achieved occupancy %": {occ}"#
        ),
    )
}

#[test]
fn plugin_test_gpu_utilization() {
    let gemm = "void gemmSN_TN_kernel_64addr";
    let o = overview_of(&[
        host("Operator", "aten::mat_mul", "456", 100, 100, 2),
        host("Operator", "aten::mm", "456", 120, 70, 4),
        k1(NLL, "stream 7", (130, 10), (334, 4), (0.5, 0.6)),
        rt("cudaLaunchKernel", "456", 120, 0, 334, 4),
        k1(gemm, "stream 8", (135, 15), (335, 2), (0.6, 0.1)),
        k1(gemm, "stream 8", (150, 0), (335, 2), (0.3, 0.2)),
        rt("cudaLaunchKernel", "456", 120, 0, 335, 2),
        k1(NLL, "stream 7", (145, 25), (336, 4), (0.3, 1.0)),
        rt("cudaLaunchKernel", "456", 125, 3, 336, 4),
        k1(NLL, "stream 7", (200, 20), (337, 2), (10.5, 0.3)),
        rt("cudaLaunchKernel", "456", 195, 1, 337, 2),
    ]);
    // docs/metrics.md A.6 worked example: one step [100, 220) after stretching.
    assert_eq!(costs(&o)[0][8], 120);
    assert_eq!(o.gpus.len(), 1);
    let g = &o.gpus[0];
    assert_eq!(g.id, 1);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-7;
    assert!(close(g.utilization.unwrap(), (40.0 + 20.0) / 120.0));
    let sm = (0.5 * 5.0 + 1.0 * 5.0 + 0.6 * 5.0 + 0.9 * 5.0 + 0.3 * 20.0 + 1.0 * 20.0) / 120.0;
    assert!(
        close(g.sm_efficiency.unwrap(), sm),
        "{:?} vs {sm}",
        g.sm_efficiency
    );
    // The plugin's occupancy here is in percent units (0.6 %, …); ours is a fraction.
    let occ = (0.6 * 10.0 + 0.1 * 15.0 + 1.0 * 25.0 + 0.3 * 20.0) / (10.0 + 15.0 + 25.0 + 20.0);
    assert!(close(g.achieved_occupancy.unwrap() * 100.0, occ));
}

#[test]
fn plugin_test_gpu_utilization_kernel_out_of_step() {
    let o = overview_of(&[
        host("Operator", "aten::mat_mul", "456", 10, 10, 1),
        host("Operator", "aten::mm", "456", 120, 70, 3),
        host("Operator", "aten::mm", "456", 220, 20, 4),
        host("Operator", "ProfilerStep#2", "456", 100, 100, 2),
        k1(NLL, "stream 7", (60, 20), (334, 1), (0.5, 0.6)),
        rt("cudaLaunchKernel", "456", 15, 5, 334, 1),
        k1(NLL, "stream 7", (240, 25), (337, 4), (10.5, 0.3)),
        rt("cudaLaunchKernel", "456", 230, 10, 337, 4),
    ]);
    let g = &o.gpus[0];
    assert_eq!(g.utilization, Some(0.0));
    assert_eq!(g.sm_efficiency, None);
    assert_eq!(g.achieved_occupancy, None);
}

#[test]
fn plugin_test_tensor_core() {
    let o = overview_of(&[
        host("Operator", "aten::conv2d", "123", 200, 100, 3),
        host("Operator", "op_no_tc", "123", 205, 10, 4),
        host("Operator", "aten::cudnn_convolution", "123", 215, 10, 5),
        dev("Kernel", "kernel_no_tc", 210, 10, 1000, 4),
        rt("cudaLaunchKernel", "123", 205, 5, 1000, 4),
        dev(
            "Kernel",
            "volta_fp16_s884cudnn_fp16_128x128_ldg8_splitK_relu_f2f_exp_small_nhwc_tn_v1",
            220,
            15,
            1001,
            5,
        ),
        rt("cudaLaunchKernel", "123", 215, 5, 1001, 5),
    ]);
    // docs/metrics.md A.7: 15 / (15 + 10).
    assert_eq!(o.gpus[0].tensor_core_ratio, Some(15.0 / 25.0));
}

/// The distributed tests' traces: `[kernel or op, ...]` with `cpu_op` and `Kernel` events.
fn cpu_op(name: &str, tid: &str, ts: i64, dur: i64, ext: i64) -> String {
    ev(
        "cpu_op",
        name,
        23803,
        tid,
        ts,
        dur,
        &format!(r#""External id": {ext}"#),
    )
}

fn k0(name: &str, stream: &str, ts: i64, dur: i64, corr: i64, ext: i64) -> String {
    ev(
        "Kernel",
        name,
        0,
        stream,
        ts,
        dur,
        &format!(r#""device": 0, "correlation": {corr}, "external id": {ext}"#),
    )
}

const BCAST: &str = "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)";
const ADD: &str = "void at::native::vectorized_elementwise_kernel";
const ALLREDUCE: &str = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";

#[test]
fn plugin_test_distributed_nccl() {
    let w0 = overview_of(&[
        cpu_op("nccl:broadcast", "23803", 0, 75, 146),
        k0(BCAST, "stream 16", 16, 16, 28506, 146),
        cpu_op("aten::add_", "23803", 100, 20, 24504),
        k0(ADD, "stream 7", 130, 161, 99765, 24504),
        cpu_op("nccl:all_reduce", "25166", 160, 75, 2513),
        k0(ALLREDUCE, "stream 16", 162, 1556, 33218, 2513),
    ]);
    assert_eq!(costs(&w0), vec![[105, 0, 0, 75, 0, 0, 20, 35, 235]]);
    let w1 = overview_of(&[
        cpu_op("nccl:broadcast", "23803", 0, 20, 146),
        k0(BCAST, "stream 16", 8, 31, 28506, 146),
        cpu_op("aten::add_", "23803", 25, 20, 24504),
        k0(ADD, "stream 7", 30, 161, 99765, 24504),
        cpu_op("nccl:all_reduce", "25166", 160, 75, 2513),
        k0(ALLREDUCE, "stream 16", 562, 1058, 33218, 2513),
    ]);
    assert_eq!(costs(&w1)[0][3], 74);
}

fn gloo(with_kernel: bool, w: usize) -> Vec<String> {
    let (b, a, extra) = if w == 0 {
        (
            [(16, 38, 165), (25, 36, 166), (66, 18, 167)],
            [(110, 18, 2513), (120, 36, 2516)],
            (0, 20, 30, 101),
        )
    } else {
        (
            [(20, 28, 256), (28, 30, 257), (77, 6, 258)],
            [(88, 38, 2513), (130, 16, 2516)],
            (0, 30, 70, 70),
        )
    };
    let tids = ["23803", "23805", "23803"];
    let mut v: Vec<String> = b
        .iter()
        .zip(tids)
        .map(|(&(ts, d, x), tid)| cpu_op("gloo:broadcast", tid, ts, d, x))
        .collect();
    v.push(cpu_op("aten::add_", "23800", extra.0, extra.1, 24504));
    if with_kernel {
        v.push(k0(ADD, "stream 7", extra.2, extra.3, 99765, 24504));
    } else {
        v.push(cpu_op("aten::mul", "23800", extra.2, extra.3, 24505));
    }
    v.push(cpu_op("gloo:all_reduce", "23805", a[0].0, a[0].1, a[0].2));
    v.push(cpu_op("gloo:all_reduce", "23803", a[1].0, a[1].1, a[1].2));
    v
}

#[test]
fn plugin_test_distributed_gloo_gpu_and_cpu() {
    assert_eq!(
        costs(&overview_of(&gloo(true, 0))),
        vec![[101, 0, 0, 39, 0, 0, 16, 0, 156]]
    );
    assert_eq!(
        costs(&overview_of(&gloo(true, 1))),
        vec![[70, 0, 0, 44, 0, 0, 20, 12, 146]]
    );
    assert_eq!(
        costs(&overview_of(&gloo(false, 0))),
        vec![[0, 0, 0, 109, 0, 0, 47, 0, 156]]
    );
    assert_eq!(
        costs(&overview_of(&gloo(false, 1))),
        vec![[0, 0, 0, 98, 0, 0, 36, 12, 146]]
    );
}

#[test]
fn plugin_test_datapipe() {
    let o = overview_of(&[ev(
        "cpu_op",
        "enumerate(DataPipe)#ShufflerIterDataPipe",
        7557,
        "7557",
        100,
        23,
        r#""External id": 34"#,
    )]);
    assert_eq!(costs(&o), vec![[0, 0, 0, 0, 0, 23, 0, 0, 23]]);
}

#[test]
fn plugin_test_nccl_user_annotation_has_communication() {
    // pytorch/kineto#640. A trace with no CPU operator at all: the plugin's fallback step
    // is empty (its min > max); ours is the trace's span (difference 8).
    let o = overview_of(&[ev(
        "user_annotation",
        "nccl:all_reduce",
        128,
        "999",
        1686070155939447,
        71,
        r#""External id": 647"#,
    )]);
    assert_eq!(costs(&o), vec![[0, 0, 0, 71, 0, 0, 0, 0, 71]]);
}

// ---------------------------------------------------------------------------------------
// One test per documented difference from the plugin (docs/tb-plugin-differences.md).

/// A modern host event (pid 1, thread 1).
fn modern(cat: &str, name: &str, ts: i64, dur: i64, args: &str) -> String {
    ev(cat, name, 1, "1", ts, dur, args)
}

fn launch(cat: &str, ts: i64, dur: i64, corr: i64, ext: i64) -> String {
    let name = if cat == "cuda_driver" {
        "cuLaunchKernel"
    } else {
        "cudaLaunchKernel"
    };
    modern(
        cat,
        name,
        ts,
        dur,
        &format!(r#""correlation": {corr}, "External id": {ext}"#),
    )
}

fn kernel(name: &str, ts: i64, dur: i64, corr: i64, ext: i64) -> String {
    ev(
        "kernel",
        name,
        0,
        "7",
        ts,
        dur,
        &format!(r#""correlation": {corr}, "External id": {ext}, "device": 0"#),
    )
}

#[test]
fn difference_1_every_runtime_category_counts() {
    // `cuda_runtime` (PyTorch ≥ 1.11; ignored by 0.4.3) and `cuda_driver` (ignored by
    // every plugin version) both launch GPU work, stretch steps and count as Runtime.
    let o = overview_of(&[
        modern(
            "user_annotation",
            "ProfilerStep#1",
            100,
            100,
            r#""External id": 1"#,
        ),
        modern("cpu_op", "aten::mm", 110, 80, r#""External id": 5"#),
        launch("cuda_runtime", 150, 10, 1, 5),
        kernel("void gemm_kernel", 170, 130, 1, 5),
        launch("cuda_driver", 180, 5, 2, 5),
        kernel("triton_poi_fused_add_0", 300, 50, 2, 5),
    ]);
    // 0.4.3 would give a 100 µs step with no Runtime; the final plugin a 200 µs step.
    assert_eq!(costs(&o), vec![[180, 0, 0, 0, 10, 0, 50, 10, 250]]);
    assert_eq!(o.steps[0].device_events, 2);
}

#[test]
fn difference_2_gpu_user_annotations_are_ignored() {
    // The final plugin turns `gpu_user_annotation` spans into host annotations: a GPU
    // `ProfilerStep#1` becomes a second step, and `## forward ##` CPU Exec time.
    let o = overview_of(&[
        modern(
            "user_annotation",
            "ProfilerStep#1",
            100,
            200,
            r#""External id": 1"#,
        ),
        modern("cpu_op", "aten::mm", 110, 20, r#""External id": 2"#),
        ev(
            "gpu_user_annotation",
            "ProfilerStep#1",
            0,
            "7",
            120,
            170,
            r#""External id": 1"#,
        ),
        ev(
            "gpu_user_annotation",
            "## forward ##",
            0,
            "7",
            125,
            155,
            r#""External id": 3"#,
        ),
    ]);
    assert_eq!(costs(&o), vec![[0, 0, 0, 0, 0, 0, 20, 180, 200]]);
}

#[test]
fn difference_3_modern_tensor_core_kernel_names() {
    // cuDNN's Ampere+ convolution kernels (the plugin's `xmma_*` patterns only match
    // `…xmma_gemm…`-style names) and cuBLAS's Hopper `nvjet` kernels.
    let xmma =
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4";
    let nvjet = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN";
    assert!(!plugin_uses_tensor_cores(xmma) && !plugin_uses_tensor_cores(nvjet));
    assert!(uses_tensor_cores(xmma) && uses_tensor_cores(nvjet));
    let o = overview_of(&[
        modern(
            "user_annotation",
            "ProfilerStep#1",
            0,
            100,
            r#""External id": 1"#,
        ),
        modern("cpu_op", "aten::mm", 10, 80, r#""External id": 2"#),
        launch("cuda_runtime", 20, 5, 1, 2),
        kernel(xmma, 40, 30, 1, 2),
        launch("cuda_runtime", 30, 5, 2, 2),
        kernel(nvjet, 70, 10, 2, 2),
        launch("cuda_runtime", 35, 5, 3, 2),
        kernel(
            "void at::native::vectorized_elementwise_kernel<4>",
            80,
            10,
            3,
            2,
        ),
    ]);
    // The plugin's list reads 0 here.
    assert_eq!(o.gpus[0].tensor_core_ratio, Some(40.0 / 50.0));
}

#[test]
fn difference_4_tensor_core_ratio_counts_all_kernels_in_the_window() {
    let h884 = "volta_h884gemm_64x64_ldg8_nn";
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "1", 100, 100, 1),
        // Launched directly under the step (no operator): the plugin skips it.
        rt("cudaLaunchKernel", "1", 110, 5, 1, 0),
        dev("Kernel", h884, 120, 20, 1, 0),
        host("Operator", "aten::add", "1", 150, 30, 7),
        rt("cudaLaunchKernel", "1", 155, 5, 2, 7),
        dev("Kernel", "vectorized_elementwise_kernel", 160, 10, 2, 7),
        // Before the first step: outside the window, counted by neither.
        dev("Kernel", h884, 50, 10, 99, 0),
    ]);
    // The final plugin: 0 / 10 (operator-launched kernels only).
    assert_eq!(o.gpus[0].tensor_core_ratio, Some(20.0 / 30.0));
    assert_eq!(o.window_ns, Some([100_000, 200_000]));
}

#[test]
fn difference_5_communication_by_kernel_name_and_all_collectives() {
    let o = overview_of(&[
        modern(
            "user_annotation",
            "ProfilerStep#1",
            0,
            1000,
            r#""External id": 1"#,
        ),
        modern(
            "cpu_op",
            "c10d::allreduce_",
            100,
            100,
            r#""External id": 10"#,
        ),
        modern(
            "cpu_op",
            "record_param_comms",
            105,
            90,
            r#""External id": 11"#,
        ),
        modern(
            "user_annotation",
            "nccl:all_reduce",
            110,
            80,
            r#""External id": 12"#,
        ),
        // pytorch/kineto#782: the launch's External id is its correlation id, so the
        // plugin cannot link the NCCL kernel to `nccl:all_reduce`.
        launch("cuda_runtime", 150, 10, 5, 5),
        kernel(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            300,
            200,
            5,
            5,
        ),
        modern(
            "user_annotation",
            "nccl:send",
            600,
            50,
            r#""External id": 13"#,
        ),
        modern("cpu_op", "aten::mul", 700, 50, r#""External id": 14"#),
        launch("cuda_runtime", 710, 10, 6, 14),
        kernel(
            "void at::native::vectorized_elementwise_kernel<4>",
            760,
            40,
            6,
            14,
        ),
    ]);
    // The final plugin: Kernel 240, Communication 80, CPU Exec 130.
    assert_eq!(costs(&o), vec![[40, 0, 0, 350, 10, 0, 40, 560, 1000]]);
}

#[test]
fn difference_6_parts_add_up_when_kernels_cover_a_step() {
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "1", 0, 100, 1),
        rt("cudaLaunchKernel", "1", 0, 1, 1, 1),
        dev("Kernel", "k", 0, 100, 1, 1),
        rt("cudaMemcpyAsync", "1", 1, 1, 2, 1),
        dev("Memcpy", "Memcpy HtoD (Pageable -> Device)", 20, 10, 2, 1),
    ]);
    // The plugin restarts from the whole step once nothing is left after Kernel, and
    // reports Memcpy 10 on top of Kernel 100 in a 100 µs step.
    assert_eq!(costs(&o), vec![[100, 0, 0, 0, 0, 0, 0, 0, 100]]);
}

#[test]
fn difference_7_kernel_without_device_arg_uses_its_stream() {
    let o = overview_of(&[
        host("Operator", "ProfilerStep#1", "1", 0, 100, 1),
        rt("cudaLaunchKernel", "1", 10, 10, 1, 1),
        ev(
            "Kernel",
            "k",
            3,
            "stream 7",
            30,
            50,
            r#""correlation": 1, "external id": 1"#,
        ),
    ]);
    // The plugin drops kernels without `device` from the GPU metrics.
    assert_eq!(o.gpus.len(), 1);
    assert_eq!(o.gpus[0].id, 3);
    assert_eq!(o.gpus[0].utilization, Some(0.5));
}
