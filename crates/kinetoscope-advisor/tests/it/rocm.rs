//! ROCm traces as PyTorch's ROCm builds write them: kernels on the HSA agent index (2 on
//! a two-socket host) while `deviceProperties` numbers the GPU 0, `[memory]` records of
//! device type 6 (HIP), MFMA kernel names. The report names the GPU, measures memory
//! against its capacity and speaks of matrix cores, CUs and the gfx architecture.

use kinetoscope_advisor::Config;
use kinetoscope_trace::GpuVendor;

use crate::common::{expect_finding, find, TraceBuilder, GIB};

/// An MI300X `deviceProperties` entry as ROCm writes it (HIP 9.4 = gfx942, 304 CUs).
fn mi300x() -> String {
    format!(
        r#"{{"id":0,"name":"AMD Instinct MI300X","totalGlobalMem":{},"computeMajor":9,"computeMinor":4,"numSms":304,"maxThreadsPerMultiprocessor":2048}}"#,
        192 * GIB
    )
}

/// A HIP `[memory]` record (device type 6) on HIP device 0.
fn hip_memory(b: &mut TraceBuilder, ts: u64, addr: u64, allocated: u64, reserved: u64) {
    b.raw(format!(
        r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":100,"tid":100,"ts":{ts},"args":{{"Device Type":6,"Device Id":0,"Addr":{addr},"Bytes":1024,"Total Allocated":{allocated},"Total Reserved":{reserved}}}}}"#
    ));
}

/// Four 10 ms steps on agent 2, each with an FP32 `aten::mm` running `kernel` for 3 ms
/// and 178 GiB reserved (of 192 GiB) by HIP records.
fn rocm_trace(kernel: &str) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.devices.push(mi300x());
    b.top
        .push(r#""roctracer_version":4.1,"hip_runtime_version":60443483"#.to_owned());
    b.device = 2;
    b.steps(4, 10_000, |b, n, t| {
        let mm = b.op(
            "aten::mm",
            t + 100,
            40,
            r#""Input Dims":[[4096,4096],[4096,4096]],"Input type":["float","float"]"#,
        );
        b.kernel(mm, t + 110, kernel, t + 200, 3000, "");
        hip_memory(b, t + 120, 4096 + n, 170 * GIB, 178 * GIB);
    });
    b
}

#[test]
fn agents_memory_and_words_are_amd() {
    // A Tensile GEMM without a matrix-instruction field runs on the vector ALUs.
    let r = rocm_trace("Cijk_Ailk_Bljk_SB_MT128x128x8_SN_1LDSB0_APM1_TT8_8_WG16_16_1")
        .report(&Config::default());
    // Agent 2 is GPU 0 of deviceProperties.
    let gpu = &r.summary.gpus[0];
    assert_eq!(
        (gpu.id, gpu.name.as_deref(), gpu.vendor),
        (0, Some("AMD Instinct MI300X"), GpuVendor::Amd)
    );
    assert_eq!(gpu.tensor_core_ratio, Some(0.0));
    // HIP memory is GPU memory: 178 of 192 GiB reserved is memory pressure.
    let m = &r
        .summary
        .memory
        .iter()
        .find(|m| m.device == "GPU0")
        .unwrap();
    assert_eq!(m.capacity_bytes, Some(192 * GIB));
    let pressure = expect_finding(&r.findings, "ME002");
    assert!(pressure.title.contains("GPU0"), "{}", pressure.title);
    // The FP32 GEMM is said in AMD's words.
    let f = expect_finding(&r.findings, "GP003");
    assert!(f.title.contains("without matrix cores"), "{}", f.title);
    assert!(
        f.evidence[0].starts_with(
            "AMD Instinct MI300X (gfx942): 3.000 ms per step of FP32 GEMM/conv kernels on \
             vector ALUs"
        ),
        "{:?}",
        f.evidence
    );
    assert!(f.fix.contains("matrix cores (MFMA)"), "{}", f.fix);
}

#[test]
fn mfma_gemms_run_on_matrix_cores() {
    let r = rocm_trace(
        "Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB1_AFC1_ISA942",
    )
    .report(&Config::default());
    assert!(find(&r.findings, "GP003").is_none());
    let gpu = &r.summary.gpus[0];
    assert_eq!(gpu.tensor_core_ratio, Some(1.0));
}
