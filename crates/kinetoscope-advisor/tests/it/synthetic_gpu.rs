//! GPU rules and MFU on a small synthetic H100 trace whose numbers are known by
//! construction: four 10 ms steps, each with one BF16 4096³ GEMM running 5 ms, a
//! `cudaMalloc`, and `[memory]` records at 30 GiB allocated / 78 GiB reserved on an 80 GiB
//! device.

use kinetoscope_advisor::{Config, Severity, TraceReport};

use crate::common::{expect_finding, find, h100, TraceBuilder, GIB};

/// The trace of the module documentation; `data_parallel` adds a second H100 and a
/// `DataParallel.forward` span per step.
fn trace(data_parallel: bool) -> TraceBuilder {
    let mut b = TraceBuilder::h100();
    b.steps(4, 10_000, |b, _, t| {
        if data_parallel {
            b.op("DataParallel.forward", t + 90, 80, "");
        }
        b.gemm(t + 100, t + 200, 5000);
        b.runtime("cudaMalloc", t + 300, 100);
        b.memory(t + 120, 30 * GIB, 78 * GIB);
    });
    if data_parallel {
        b.devices.push(h100(1));
    }
    b
}

/// The advisor's report on the single-GPU trace.
fn report(config: &Config) -> TraceReport {
    trace(false).report(config)
}

#[test]
fn mfu_against_the_h100_bf16_dense_peak() {
    let r = report(&Config::default());
    assert_eq!(r.summary.steps, 4, "{:?}", r.summary.warnings);
    // 2 · 4096³ FLOPs per step.
    let flops = 2.0 * 4096f64.powi(3);
    assert_eq!(r.flops.flops_per_step, flops);
    // 5 ms of kernel time per GEMM: 27.49 TFLOP/s achieved.
    let gemm = &r.flops.classes[0];
    assert!((gemm.achieved_tflops.unwrap() - flops / 5e-3 / 1e12).abs() < 1e-9);
    // MFU = FLOPs / 10 ms step / 989.4 TFLOP/s (BF16 dense, H100 SXM5).
    let mfu = r.flops.mfu.unwrap();
    let step_s = r.summary.step_stats.as_ref().unwrap().mean_ns / 1e9;
    assert!((mfu - flops / step_s / 989.4e12).abs() < 1e-12, "{mfu}");
    assert_eq!(r.flops.gpu.as_ref().unwrap().model, "H100 SXM5");
    // --peak-tflops overrides the table.
    let c = Config {
        peak_tflops: Some(100.0),
        ..Config::default()
    };
    let r = report(&c);
    assert!((r.flops.mfu.unwrap() - flops / step_s / 100e12).abs() < 1e-12);
}

#[test]
fn memory_and_allocator_rules() {
    let r = report(&Config::default());
    let find = |id: &str| expect_finding(&r.findings, id);
    // 78 / 80 GiB = 97.5 % > 95 %: critical, gated to a warning with 4 steps.
    let p = find("ME002");
    assert_eq!(p.severity, Severity::Warning);
    assert!(p.title.contains("97.5 %"), "{}", p.title);
    assert!(p.details.contains("gating.min_steps_critical"));
    // 78 / 30 = 2.6 ≥ 2 and 97.5 % ≥ 30 % of the device.
    assert!(find("ME004").title.contains("2.6×"));
    // cudaMalloc in the 3 steps after the first, 0.1 ms each, while the GEMM runs: the
    // GPU loses nothing to them.
    let a = find("ME005");
    assert_eq!(a.confidence.steps, 3);
    assert!(
        a.evidence[0].contains("0.100 ms of host time per step"),
        "{:?}",
        a.evidence
    );
    assert_eq!(a.impact_ns_per_step, 0.0);
    // GPU busy 5 of 10 ms; it waits for the host 4.912 ms of them (the GEMM is queued
    // from the end of its launch call, 110 + 2 µs into the step, to its start at 200 µs).
    let u = find("GP001");
    assert!(u.title.contains("utilization 50.0 %"), "{}", u.title);
    assert!(
        (u.impact_ns_per_step / 1e6 - 4.912).abs() < 1e-6,
        "{}",
        u.impact_ns_per_step / 1e6
    );
    // BF16 on tensor cores: no FP32 finding; memory is not underused.
    assert!(r
        .findings
        .iter()
        .all(|f| f.id != "GP003" && f.id != "ME003"));
    let mut c = Config::default();
    c.gating.min_steps_critical = 4;
    let r = report(&c);
    let p = r.findings.iter().position(|f| f.id == "ME002").unwrap();
    assert_eq!(r.findings[p].severity, Severity::Critical);
    // Ranked by recoverable time: memory pressure has no time impact (its cost is the
    // risk of running out of memory), so it follows the findings with one, and leads
    // the other unknown-impact findings by severity.
    assert_eq!(r.findings[0].id, "GP001");
    assert!(r.findings[..p].iter().all(|f| f.impact_ns_per_step > 0.0));
    assert!(r.findings[p + 1..]
        .iter()
        .all(|f| f.impact_ns_per_step == 0.0));
}

#[test]
fn data_parallel_on_two_gpus() {
    let r = trace(true).report(&Config::default());
    let f = expect_finding(&r.findings, "DI002");
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.confidence.steps, 4);
    // One GPU: no finding.
    assert!(find(&report(&Config::default()).findings, "DI002").is_none());
}

/// The operators' `External id`s and the launches' are different numberings (param's
/// `linear` trace, some PyTorch 2.0–2.2 exporters): the launch of the FP32 GEMM's kernel
/// names an `aten::view` it does not run inside. The FP32-GEMM rule and the FLOPs line
/// both take the kernel as the GEMM's, through the trace's launch link.
#[test]
fn fp32_gemm_and_flops_follow_time_when_ids_disagree() {
    let mut b = TraceBuilder::h100();
    b.steps(4, 10_000, |b, _, t| {
        let view = b.op("aten::view", t + 10, 5, "");
        b.op(
            "aten::mm",
            t + 100,
            40,
            r#""Input Dims":[[4096,4096],[4096,4096]],"Input type":["float","float"]"#,
        );
        b.kernel(view, t + 110, "ampere_sgemm_128x64_nn", t + 200, 3000, "");
    });
    let r = b.report(&kinetoscope_advisor::Config::default());
    let gemm = &r.flops.classes[0];
    assert_eq!(gemm.time_ns_per_step, 3_000_000.0);
    let f = expect_finding(&r.findings, "GP003");
    assert!(
        f.evidence[0].contains("3.000 ms per step of FP32 GEMM/conv kernels"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence[1].starts_with("aten::mm: 1.0 calls, 3.000 ms per step"),
        "{:?}",
        f.evidence
    );
}
