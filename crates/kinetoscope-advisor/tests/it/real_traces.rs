//! Real GPU traces (`tests/fixtures/`, sources and licences in its `SOURCE.md`), read as
//! a profiling engineer would: no finding claims time the GPU did not lose, none
//! advises what the trace shows is already done.

use std::path::{Path, PathBuf};

use kinetoscope_advisor::{Config, TraceReport};
use kinetoscope_analysis::note::Note;

use crate::common::{assert_findings_fit, expect_finding, find, ids, report_file};

/// A file of the advisor's fixtures.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn report(name: &str) -> TraceReport {
    let r = report_file(&fixture(name), &Config::default());
    assert_findings_fit(&r, name);
    r
}

#[test]
fn vllm_graph_replay_is_not_called_launch_bound() {
    // 421 of 425 kernels replayed from one hipGraphLaunch; the GPU runs them back to
    // back once they start (~8 ms after the host queued them).
    let r = report("inference__vllm_decode_full__graph_execution.json.gz");
    let g = r.summary.graphs.as_ref().expect("graph replay");
    assert_eq!((g.launches, g.kernels), (1, 421));
    assert!(g.kernel_share > 0.95, "{}", g.kernel_share);
    for id in ["GP001", "GP002", "GP005"] {
        assert!(
            find(&r.findings, id).is_none(),
            "{id}: {:?}",
            ids(&r.findings)
        );
    }
    for f in &r.findings {
        assert!(
            !f.fix.contains("CUDA graphs (") && !f.fix.contains("capture CUDA graphs"),
            "{}: {}",
            f.id,
            f.fix
        );
        assert!(f.impact_share < 0.01, "{}: {}", f.id, f.impact_share);
    }
}

#[test]
fn sglang_blocking_copy_is_a_sync_that_left_the_gpu_its_queued_work() {
    // The host waits 463 ms in hipMemcpyWithStream while the kernels it had queued wait
    // to start: the GPU (as recorded) idles 98 % of the trace, but not for the host.
    let r = report("inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz");
    let s = expect_finding(&r.findings, "SY001");
    assert!(
        s.evidence[0].contains("1 blocking copies"),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence[0].contains("host blocked 463.064 ms"),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence[1].starts_with("the GPU had work (running or queued) 100.0 %"),
        "{:?}",
        s.evidence
    );
    assert!(s.fix.starts_with("Copy asynchronously"), "{}", s.fix);
    assert!(r.summary.graphs.is_some());
    for f in &r.findings {
        assert!(f.impact_share < 0.01, "{}: {}", f.id, f.impact_share);
    }
}

#[test]
fn rocm_device_synchronize_under_a_busy_gpu_costs_little() {
    // hipDeviceSynchronize: 21.8 % of the MI210 trace and 90.5 % of the torch.compile
    // one, with the GPU running throughout.
    for (name, blocked) in [
        ("mi210__gpu_only_trace__gpu_only_trace.json.gz", "1.332 ms"),
        ("torch_compile_triton__trace.json.gz", "11.871 ms"),
    ] {
        let r = report(name);
        let s = expect_finding(&r.findings, "SY001");
        assert!(
            s.evidence[0].contains(&format!("host blocked {blocked}")),
            "{name}: {:?}",
            s.evidence
        );
        assert!(s.impact_share < 0.01, "{name}: {}", s.impact_share);
    }
}

#[test]
fn cupti_range_profiler_trace_says_device_activity_is_missing() {
    // Recorded with the CUPTI range profiler: 77 kernel launches, no kernel event.
    let r = report("benchmark_result_924719_1679055439_trace.json.gz");
    assert!(
        r.summary
            .warnings
            .iter()
            .any(|w| matches!(w, Note::NoDeviceActivity { launch_calls } if *launch_calls >= 77)),
        "{:?}",
        r.summary.warnings
    );
    let s = expect_finding(&r.findings, "SY001");
    assert!(s.title.contains("device activity missing"), "{}", s.title);
    assert!(s.evidence.iter().all(|e| !e.contains("CPU-only")));
    assert!(r.flops.mfu.is_none() && r.flops.tflops_per_s.is_none());
}

/// The advisor's threads take the rules, the summary and the FLOPs estimate from a
/// shared queue; whichever thread ran each, the report is what running them one after
/// another on one thread gives: findings in rule order before ranking, the same summary
/// and FLOPs.
#[test]
fn threads_taking_rules_in_turn_give_what_one_thread_gives() {
    use kinetoscope_advisor::facts::Facts;
    use kinetoscope_advisor::{advise_trace, flops, rank_findings, rules, summary};
    let config = Config::default();
    for path in [
        fixture("inference__vllm_decode_full__graph_execution.json.gz"),
        crate::common::fixtures().join("inference_rank_1.json.gz"),
        crate::common::fixtures().join("mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
    ] {
        let trace = crate::common::read_file(&path);
        let report = advise_trace(&trace, &config);
        let facts = Facts::new(&trace);
        let mut findings: Vec<_> = rules::all()
            .iter()
            .flat_map(|r| r.check(&facts, &config))
            .collect();
        rank_findings(&mut findings);
        assert!(!findings.is_empty(), "{}: no findings", path.display());
        assert_eq!(report.findings, findings, "{}", path.display());
        assert_eq!(
            report.summary,
            summary::summarize(&facts),
            "{}",
            path.display()
        );
        assert_eq!(
            report.flops,
            flops::estimate(&facts, config.peak_tflops),
            "{}",
            path.display()
        );
    }
}

#[test]
fn events_by_kind_and_name_agree_with_a_scan_of_the_columns() {
    use kinetoscope_advisor::facts::Facts;
    use kinetoscope_trace::{CategoryKind, Phase};
    let kinds: [&[CategoryKind]; 4] = [
        &[CategoryKind::CpuOp, CategoryKind::UserAnnotation],
        &[CategoryKind::Kernel],
        &[CategoryKind::PythonFunction],
        &[CategoryKind::GpuMemcpy, CategoryKind::CudaRuntime],
    ];
    let mut checked = 0;
    for name in [
        "torch_compile_triton__trace.json.gz",
        "mi210__gpu_only_trace__gpu_only_trace.json.gz",
    ] {
        let trace = crate::common::read_file(&fixture(name));
        let facts = Facts::new(&trace);
        let e = &trace.events;
        for kinds in kinds {
            for pred in [|_: &str| true, |n: &str| n.starts_with("aten::")] {
                let scan: Vec<usize> = (0..e.len())
                    .filter(|&i| {
                        e.phase[i] == Phase::Complete
                            && kinds.contains(&trace.categories.kind(e.cat[i]))
                            && pred(trace.strings.get(e.name[i]))
                    })
                    .collect();
                assert_eq!(facts.events(kinds, pred), scan, "{name} {kinds:?}");
                let one_by_one: Vec<usize> = facts.each_event(kinds, pred).collect();
                assert_eq!(one_by_one, scan, "{name} {kinds:?}");
                assert_eq!(facts.has_event(kinds, pred), !scan.is_empty(), "{name}");
                checked += scan.len();
            }
        }
    }
    assert!(checked > 1000, "{checked} events checked");
}
