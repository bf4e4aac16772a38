//! GPU rules and MFU on a small synthetic H100 trace whose numbers are known by
//! construction: four 10 ms steps, each with one BF16 4096³ GEMM running 5 ms, a
//! `cudaMalloc`, and `[memory]` records at 30 GiB allocated / 78 GiB reserved on an 80 GiB
//! device.

use std::path::Path;

use kinetoscope_advisor::{advise_trace, Config, Severity, TraceReport};
use kinetoscope_trace::read::{read_trace_bytes, ReadOptions};

const GIB: u64 = 1 << 30;

fn trace_json() -> String {
    let mut ev = Vec::new();
    for n in 0..4u64 {
        let t = 1_000_000 + n * 10_000; // µs
        let (ext, corr) = (100 + n, 500 + n);
        ev.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{n}","pid":100,"tid":100,"ts":{t},"dur":10000}}"#
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":100,"tid":100,"ts":{},"dur":50,"args":{{"External id":{ext},"Input Dims":[[4096,4096],[4096,4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}}}}"#,
            t + 100
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":{},"dur":5,"args":{{"External id":{ext},"correlation":{corr}}}}}"#,
            t + 110
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n","pid":0,"tid":7,"ts":{},"dur":5000,"args":{{"External id":{ext},"correlation":{corr},"device":0,"stream":7}}}}"#,
            t + 200
        ));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaMalloc","pid":100,"tid":100,"ts":{},"dur":100}}"#,
            t + 300
        ));
        ev.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":100,"tid":100,"ts":{},"args":{{"Device Type":1,"Device Id":0,"Addr":{},"Bytes":1024,"Total Allocated":{},"Total Reserved":{}}}}}"#,
            t + 120,
            4096 + n,
            30 * GIB,
            78 * GIB
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"deviceProperties":[{{"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":{},"computeMajor":9,"computeMinor":0,"numSms":132,"maxThreadsPerMultiProcessor":2048}}],"traceEvents":[{}]}}"#,
        80 * GIB,
        ev.join(",\n")
    )
}

fn report(config: &Config) -> TraceReport {
    let text = trace_json();
    let trace = read_trace_bytes(
        Path::new("synthetic_h100.json"),
        text.as_bytes(),
        &ReadOptions::default(),
    )
    .expect("synthetic trace reads");
    advise_trace(&trace, config)
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
    let find = |id: &str| {
        r.findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("{id} missing: {:?}", r.findings))
    };
    // 78 / 80 GiB = 97.5 % > 95 %: critical, gated to a warning with 4 steps.
    let p = find("ME002");
    assert_eq!(p.severity, Severity::Warning);
    assert!(p.title.contains("97.5 %"), "{}", p.title);
    assert!(p.details.contains("gating.min_steps_critical"));
    // 78 / 30 = 2.6 ≥ 2 and 97.5 % ≥ 30 % of the device.
    assert!(find("ME004").title.contains("2.6×"));
    // cudaMalloc in the 3 steps after the first, 0.1 ms each.
    let a = find("ME005");
    assert_eq!(a.confidence.steps, 3);
    assert!(
        (a.impact_ms_per_step - 0.1).abs() < 1e-9,
        "{}",
        a.impact_ms_per_step
    );
    // GPU busy 5 of 10 ms.
    let u = find("GP001");
    assert!(u.title.contains("50.0 %"), "{}", u.title);
    assert!((u.impact_ms_per_step - 5.0).abs() < 1e-6);
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
    assert!(r.findings[..p].iter().all(|f| f.impact_ms_per_step > 0.0));
    assert!(r.findings[p + 1..]
        .iter()
        .all(|f| f.impact_ms_per_step == 0.0));
}

#[test]
fn data_parallel_on_two_gpus() {
    let mut text = trace_json();
    let dev =
        r#""computeMajor":9,"computeMinor":0,"numSms":132,"maxThreadsPerMultiProcessor":2048}"#;
    text = text.replacen(
        dev,
        &format!(
            r#"{dev},{{"id":1,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":{},"computeMajor":9,"computeMinor":0,"numSms":132,"maxThreadsPerMultiProcessor":2048}}"#,
            80 * GIB
        ),
        1,
    );
    let spans: Vec<String> = (0..4u64)
        .map(|n| {
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"DataParallel.forward","pid":100,"tid":100,"ts":{},"dur":80}}"#,
                1_000_000 + n * 10_000 + 90
            )
        })
        .collect();
    text = text.replacen(
        "\"traceEvents\":[",
        &format!("\"traceEvents\":[{},", spans.join(",")),
        1,
    );
    let trace = read_trace_bytes(
        Path::new("dp.json"),
        text.as_bytes(),
        &ReadOptions::default(),
    )
    .unwrap();
    let r = advise_trace(&trace, &Config::default());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "DI002")
        .unwrap_or_else(|| panic!("{:?}", r.findings));
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.confidence.steps, 4);
    // One GPU: no finding.
    assert!(report(&Config::default())
        .findings
        .iter()
        .all(|f| f.id != "DI002"));
}
