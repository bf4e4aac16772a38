//! GP006 `ConvLayoutTransposes`, GP007 `GemmDimsNotAligned`, GP008 `LowOccupancy` (with
//! Kineto's 0 % occupancy, block-scaled GEMMs and symmetric-memory collectives),
//! DI003 `NonNcclBackend` and DI004 `RankMemoryImbalance` on small inline traces whose numbers are known by
//! construction: four 10 ms steps on an H100.

use kinetoscope_advisor::{Config, Severity};

use crate::common::{advise_rank_traces, close, expect_finding, find, TraceBuilder};

/// Four 10 ms steps on an H100; `each(builder, start)` fills each step.
fn steps(mut each: impl FnMut(&mut TraceBuilder, u64)) -> TraceBuilder {
    let mut b = TraceBuilder::h100();
    b.steps(4, 10_000, |b, _, t| each(b, t));
    b
}

/// Per step: a conv2d → cudnn_convolution launching nchwToNhwc (`pre` µs), the
/// convolution (2000 µs) and nhwcToNchw (`post` µs); plus a transpose kernel under a
/// non-convolution operator (1000 µs) that must not count.
pub(crate) fn conv_trace(pre: u64, post: u64) -> TraceBuilder {
    steps(|b, t| {
        b.op("aten::conv2d", t + 100, 500, "");
        let ext = b.op("aten::cudnn_convolution", t + 110, 400, "");
        let mut k = t + 1000;
        if pre > 0 {
            b.kernel(
                ext,
                t + 120,
                "void nchwToNhwcKernel<float, float, float, true, false>",
                k,
                pre,
                "",
            );
            k += pre;
        }
        b.kernel(
            ext,
            t + 130,
            "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc",
            k,
            2000,
            "",
        );
        k += 2000;
        if post > 0 {
            b.kernel(
                ext,
                t + 140,
                "void nhwcToNchwKernel<float, float, float, true, false>",
                k,
                post,
                "",
            );
            k += post;
        }
        let tr = b.op("aten::copy_", t + 600, 100, "");
        b.kernel(
            tr,
            t + 610,
            "void at::native::transpose_kernel<float>",
            k + 100,
            1000,
            "",
        );
    })
}

#[test]
fn gp006_conv_layout_transposes() {
    let r = conv_trace(300, 300).report(&Config::default());
    let f = expect_finding(&r.findings, "GP006");
    // 600 of 2600 µs of convolution kernels are transposes: 23 % > 10 %; 6 % of the step.
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        close(f.impact_ns_per_step / 1e6, 0.6),
        "{}",
        f.impact_ns_per_step / 1e6
    );
    assert!(f.title.contains("23 %"), "{}", f.title);
    assert_eq!(f.confidence.steps, 4);
    assert!(f.evidence[0].contains("2.600 ms"), "{:?}", f.evidence);
    assert!(f.evidence.iter().any(|e| e.contains("nchwToNhwcKernel")));
    assert!(f
        .evidence
        .iter()
        .any(|e| e.contains("aten::cudnn_convolution")));
    // The transpose under aten::copy_ is not a convolution's.
    assert!(f.evidence.iter().all(|e| !e.contains("transpose_kernel")));
    assert!(f.fix.contains("channels_last"));
    // Channels-last: no transposes, no finding; 100 of 2100 µs (4.8 %) is under 10 %.
    let r = conv_trace(0, 0).report(&Config::default());
    assert!(find(&r.findings, "GP006").is_none());
    let r = conv_trace(100, 0).report(&Config::default());
    assert!(find(&r.findings, "GP006").is_none());
    // The threshold comes from the config.
    let c = Config::from_toml("", &["conv_layout.max_transpose_share_pct=30".into()]).unwrap();
    assert!(find(&conv_trace(300, 300).report(&c).findings, "GP006").is_none());
}

/// Per step: a BF16 linear (vocabulary 50257) over its addmm, 2 ms of kernel; an
/// aligned BF16 mm, 1 ms; a misaligned FP32 mm, 1 ms (GP003's business, not GP007's).
fn gemm_trace() -> TraceBuilder {
    gemm_trace_with(50257)
}

/// [`gemm_trace`] with a vocabulary of `vocab` for the linear.
pub(crate) fn gemm_trace_with(vocab: u64) -> TraceBuilder {
    let bf16 = r#""c10::BFloat16""#;
    steps(|b, t| {
        b.op(
            "aten::linear",
            t + 100,
            300,
            &format!(r#""Input Dims":[[8,512,1000],[{vocab},1000],[{vocab}]],"Input type":[{bf16},{bf16},{bf16}]"#),
        );
        let ext = b.op(
            "aten::addmm",
            t + 110,
            200,
            &format!(r#""Input Dims":[[{vocab}],[4096,1000],[1000,{vocab}]],"Input type":[{bf16},{bf16},{bf16}]"#),
        );
        b.kernel(
            ext,
            t + 120,
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
            t + 1000,
            2000,
            "",
        );
        let ext = b.op(
            "aten::mm",
            t + 500,
            100,
            &format!(r#""Input Dims":[[64,4096],[4096,4096]],"Input type":[{bf16},{bf16}]"#),
        );
        b.kernel(
            ext,
            t + 510,
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
            t + 3100,
            1000,
            "",
        );
        let ext = b.op(
            "aten::mm",
            t + 700,
            100,
            r#""Input Dims":[[63,4095],[4095,17]],"Input type":["float","float"]"#,
        );
        b.kernel(ext, t + 710, "ampere_sgemm_128x64_nn", t + 4200, 1000, "");
    })
}

#[test]
fn gp007_gemm_dims_not_aligned() {
    let r = gemm_trace().report(&Config::default());
    let f = expect_finding(&r.findings, "GP007");
    // Only the linear (counted once, over its addmm): 2 ms of 10 ms per step.
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("20.0 %"), "{}", f.title);
    assert!(f.evidence[0].contains("2.000 ms") && f.evidence[0].contains("1 GEMM shape"));
    assert!(
        f.evidence[1].contains("aten::linear BF16 M=4096 N=50257 K=1000")
            && f.evidence[1].contains("N=50257 not a multiple of 8")
            && !f.evidence[1].contains("K=1000 not"),
        "{:?}",
        f.evidence
    );
    // Impact: 25 % of the misaligned time (proposal), configurable.
    assert!(
        close(f.impact_ns_per_step / 1e6, 0.5),
        "{}",
        f.impact_ns_per_step / 1e6
    );
    let c = Config::from_toml("[gemm_alignment]\nrecoverable_pct = 50.0\n", &[]).unwrap();
    let f2 = gemm_trace().report(&c);
    assert!(close(
        find(&f2.findings, "GP007").unwrap().impact_ns_per_step / 1e6,
        1.0
    ));
    // With a multiple of 1 nothing is misaligned.
    let c = Config::from_toml("", &["gemm_alignment.multiple_16bit=1".into()]).unwrap();
    assert!(find(&gemm_trace().report(&c).findings, "GP007").is_none());
}

/// Per step: a tensor-core GEMM (4 ms, occupancy 10 %, `gemm_bpsm` blocks per SM: judged
/// on blocks per SM only), an elementwise kernel (3 ms, occupancy `occ` %, 0.5 blocks per
/// SM), a reduction (0.3 ms, occupancy 5 %, outside the dominant 80 %) and an NCCL
/// kernel (5 ms, 3 %, not judged).
fn occupancy_trace_with(occ: u32, gemm_bpsm: f64) -> TraceBuilder {
    steps(|b, t| {
        let ext = b.op("aten::mm", t + 100, 50, "");
        b.kernel(
            ext,
            t + 110,
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
            t + 500,
            4000,
            &format!(r#""blocks per SM":{gemm_bpsm},"est. achieved occupancy %":10"#),
        );
        let ext = b.op("aten::add", t + 200, 50, "");
        b.kernel(
            ext,
            t + 210,
            "void at::native::vectorized_elementwise_kernel<4, AddFunctor>",
            t + 4600,
            3000,
            &format!(
                r#""grid":[66,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":0,"blocks per SM":0.5,"est. achieved occupancy %":{occ}"#
            ),
        );
        let ext = b.op("aten::sum", t + 300, 50, "");
        b.kernel(
            ext,
            t + 310,
            "void at::native::reduce_kernel<512, 1>",
            t + 7700,
            300,
            r#""est. achieved occupancy %":5"#,
        );
        let ext = b.op("nccl:all_reduce", t + 400, 50, "");
        b.kernel(
            ext,
            t + 410,
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            t + 500,
            5000,
            r#""est. achieved occupancy %":3"#,
        );
    })
}

pub(crate) fn occupancy_trace(occ: u32) -> TraceBuilder {
    occupancy_trace_with(occ, 1.0)
}

#[test]
fn gp008_low_occupancy() {
    let r = occupancy_trace(12).report(&Config::default());
    let f = expect_finding(&r.findings, "GP008");
    // Only the elementwise kernel: 3 ms of 10 ms per step at 12 %.
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.title.contains("12 %") && f.title.contains("30.0 %"),
        "{}",
        f.title
    );
    assert!(
        f.evidence[0].starts_with("1 of the 2 kernel(s)"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence[1].contains("vectorized_elementwise_kernel")
            && f.evidence[1].contains("0.50 blocks per SM (grid smaller than the SM count)")
            && f.evidence[1].contains("block 128×1×1, 32 registers/thread"),
        "{:?}",
        f.evidence
    );
    assert!(f
        .evidence
        .iter()
        .all(|e| !e.contains("reduce_kernel") && !e.contains("nccl")));
    assert!(f.fix.contains("split-K"));
    // Impact: 3 ms × (1 − 12 / 25).
    assert!(
        close(f.impact_ns_per_step / 1e6, 3.0 * (1.0 - 12.0 / 25.0)),
        "{}",
        f.impact_ns_per_step / 1e6
    );
    // At 50 % occupancy, or with a 10 % threshold, nothing is flagged.
    assert!(find(
        &occupancy_trace(50).report(&Config::default()).findings,
        "GP008"
    )
    .is_none());
    let c = Config::from_toml("[low_occupancy]\nwarning_below_pct = 10.0\n", &[]).unwrap();
    assert!(find(&occupancy_trace(12).report(&c).findings, "GP008").is_none());
    // A tensor-core GEMM on half the SMs is flagged for its grid, not its occupancy:
    // impact 4 ms × (1 − 0.5) + 3 ms × (1 − 12 / 25); occupancy (10·4 + 12·3) / 7.
    let r = occupancy_trace_with(12, 0.5).report(&Config::default());
    let f = find(&r.findings, "GP008").unwrap();
    assert!(
        f.evidence[0].starts_with("2 of the 2 kernel(s)"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence[1].contains("sm90_xmma_gemm") && f.evidence[1].contains("0.50 blocks per SM")
    );
    assert!(
        f.title.contains("11 %") && f.title.contains("70.0 %"),
        "{}",
        f.title
    );
    assert!(
        close(f.impact_ns_per_step / 1e6, 2.0 + 3.0 * (1.0 - 12.0 / 25.0)),
        "{}",
        f.impact_ns_per_step / 1e6
    );
}

/// Per step the dominant kernels of a Blackwell MoE step: a block-scaled GEMM (3 ms,
/// Kineto's occupancy 0 — not computed — on 18.5 blocks per SM), a symmetric-memory
/// all-reduce (2 ms, 3 %, 0.05 blocks per SM) and an elementwise kernel (2 ms,
/// occupancy 0 on `elementwise_bpsm` blocks per SM).
fn blackwell_trace(elementwise_bpsm: f64) -> TraceBuilder {
    steps(|b, t| {
        let ext = b.op("aten::bmm", t + 100, 50, "");
        b.kernel(
            ext,
            t + 110,
            "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16",
            t + 500,
            3000,
            r#""blocks per SM":18.5,"est. achieved occupancy %":0"#,
        );
        let ext = b.op("symm_mem::multimem_all_reduce_", t + 200, 50, "");
        b.kernel(
            ext,
            t + 210,
            "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)",
            t + 3600,
            2000,
            r#""blocks per SM":0.05,"est. achieved occupancy %":3"#,
        );
        let ext = b.op("aten::add", t + 300, 50, "");
        b.kernel(
            ext,
            t + 310,
            "void at::native::vectorized_elementwise_kernel<4, AddFunctor>",
            t + 5700,
            2000,
            &format!(r#""blocks per SM":{elementwise_bpsm},"est. achieved occupancy %":0"#),
        );
    })
}

#[test]
fn gp008_reads_occupancy_zero_as_unknown() {
    // A 0 % occupancy on a full grid is Kineto's "not computed"; the block-scaled GEMM
    // is a tuned library kernel; the symmetric-memory all-reduce is communication.
    let r = blackwell_trace(4.0).report(&Config::default());
    assert!(
        find(&r.findings, "GP008").is_none(),
        "{:?}",
        find(&r.findings, "GP008")
    );
    // A 0 % occupancy on a grid far smaller than the GPU is real (truncated): flagged
    // for its grid.
    let r = blackwell_trace(0.0125).report(&Config::default());
    let f = expect_finding(&r.findings, "GP008");
    assert!(
        f.evidence[0].starts_with("1 of the 2 kernel(s)"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence[1].contains("vectorized_elementwise_kernel")
            && f.evidence[1].contains("0.01 blocks per SM (grid smaller than the SM count)"),
        "{:?}",
        f.evidence
    );
    assert!(f
        .evidence
        .iter()
        .all(|e| !e.contains("multimem") && !e.contains("bmm_Mx")));
}

/// Rank 0 of a `world`-rank job on `backend`: per step a 5 ms GEMM and a 1 ms
/// `gloo:all_reduce` on the host.
pub(crate) fn gloo_trace(backend: &str, world: i64) -> TraceBuilder {
    let mut b = steps(|b, t| {
        let ext = b.op("aten::mm", t + 100, 50, "");
        b.kernel(ext, t + 110, "ampere_sgemm_128x64_nn", t + 200, 5000, "");
        b.op("gloo:all_reduce", t + 6000, 1000, "");
    });
    b.top.push(format!(
        r#""distributedInfo":{{"backend":"{backend}","rank":0,"world_size":{world}}}"#
    ));
    b
}

#[test]
fn di003_non_nccl_backend() {
    let r = gloo_trace("gloo", 2).report(&Config::default());
    let f = expect_finding(&r.findings, "DI003");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("gloo"));
    assert!(
        close(f.impact_ns_per_step / 1e6, 1.0),
        "{}",
        f.impact_ns_per_step / 1e6
    );
    assert!(f.evidence[0].contains("world size 2") && f.evidence[1].contains("gloo:*"));
    assert!(f.fix.contains("backend=\"nccl\""));
    assert!(find(
        &gloo_trace("nccl", 2).report(&Config::default()).findings,
        "DI003"
    )
    .is_none());
    assert!(find(
        &gloo_trace("gloo", 1).report(&Config::default()).findings,
        "DI003"
    )
    .is_none());
    // No GPU in deviceProperties: gloo is the right backend.
    let mut no_gpu = gloo_trace("gloo", 2);
    no_gpu.devices.clear();
    assert!(find(&no_gpu.report(&Config::default()).findings, "DI003").is_none());
}

/// The new ranking on a real mix: largest recoverable time first, whatever the
/// severity.
#[test]
fn findings_are_ranked_by_recoverable_time() {
    let r = occupancy_trace(12).report(&Config::default());
    assert!(r.findings.len() >= 2, "{:?}", r.findings);
    for w in r.findings.windows(2) {
        assert!(
            w[0].impact_ns_per_step > w[1].impact_ns_per_step
                || (w[0].impact_ns_per_step == w[1].impact_ns_per_step
                    && w[0].severity >= w[1].severity),
            "{:?}",
            r.findings
                .iter()
                .map(|f| (f.id.as_str(), f.severity, f.impact_ns_per_step / 1e6))
                .collect::<Vec<_>>()
        );
    }
}

/// One rank's trace: a 5 ms GEMM per step and a `[memory]` record at `gib` GiB
/// allocated on an 80 GiB H100.
pub(crate) fn rank_trace(rank: i64, gib: u64) -> TraceBuilder {
    let mut b = steps(|b, t| {
        b.gemm(t + 100, t + 200, 5000);
        b.memory(t + 120, gib << 30, gib << 30);
    });
    b.top.push(format!(
        r#""distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":2}}"#
    ));
    b
}

#[test]
fn di004_rank_memory_imbalance() {
    let traces = [rank_trace(0, 76).trace(), rank_trace(1, 50).trace()];
    let f = advise_rank_traces(&traces, &Config::default(), "job");
    let f = expect_finding(&f, "DI004");
    // (76 − 50) / 76 = 34 % ≥ 30 %: critical, gated to a warning with 4 steps; rank 0
    // is at 95 % of its 80 GiB.
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.details.contains("gating.min_steps_critical"),
        "{}",
        f.details
    );
    assert_eq!(f.rank, Some(0));
    assert!(f.title.contains("34 %"), "{}", f.title);
    assert_eq!(f.confidence.ranks, 2);
    assert_eq!(f.impact_ns_per_step, 0.0);
    assert!(f.evidence[1].contains("rank 0: peak allocated 76.00 GiB (95.0 %"));
    // Small skew, or no memory pressure: nothing.
    let none = |a, b| {
        advise_rank_traces(
            &[rank_trace(0, a).trace(), rank_trace(1, b).trace()],
            &Config::default(),
            "job",
        )
        .iter()
        .all(|f| f.id != "DI004")
    };
    assert!(none(76, 70));
    assert!(none(40, 20));
}

/// Per 10 ms step an `aten::mul` of two BF16 [16, 559, 1024] tensors (55 MB moved, 16 µs
/// at the H100's 3.35 TB/s) whose kernel takes `dur` µs; inside `Optimizer.step#SGD.step`
/// when `in_optimizer`.
pub(crate) fn roofline_trace(dur: u64, in_optimizer: bool) -> TraceBuilder {
    let bf16 = r#""c10::BFloat16""#;
    steps(|b, t| {
        if in_optimizer {
            b.annotation("Optimizer.step#SGD.step", t + 50, 300);
        }
        let ext = b.op(
            "aten::mul",
            t + 100,
            100,
            &format!(r#""Input Dims":[[16,559,1024],[16,559,1024]],"Input type":[{bf16},{bf16}]"#),
        );
        b.kernel(
            ext,
            t + 110,
            "void at::native::vectorized_elementwise_kernel<4, MulFunctor>",
            t + 1000,
            dur,
            "",
        );
    })
}

#[test]
fn gp009_roofline_gap() {
    let r = roofline_trace(1500, false).report(&Config::default());
    let f = expect_finding(&r.findings, "GP009");
    // 54,951,936 bytes need 16.4 µs at 3.35 TB/s: 1483.6 µs of each 10 ms step lost.
    assert_eq!(f.severity, Severity::Warning);
    let lost_us = 1500.0 - 54_951_936.0 / 3.35e12 * 1e6;
    assert!(
        (f.impact_ns_per_step - lost_us * 1e3).abs() < 1.0,
        "{}",
        f.impact_ns_per_step
    );
    assert!(
        f.evidence[1].contains("aten::mul") && f.evidence[1].contains("(memory-bound)"),
        "{:?}",
        f.evidence
    );
    assert!(f.fix.starts_with("Fuse the memory-bound"), "{}", f.fix);
    // The optimizer rules claim the time inside Optimizer.step: GP009 never counts it.
    let r = roofline_trace(1500, true).report(&Config::default());
    assert!(find(&r.findings, "GP009").is_none());
    // Nor a host-to-device copy under `aten::copy_` (the transfer rules' time).
    let bf16 = r#""c10::BFloat16""#;
    let r = steps(|b, t| {
        let ext = b.op(
            "aten::copy_",
            t + 100,
            100,
            &format!(r#""Input Dims":[[16,559,1024],[16,559,1024]],"Input type":[{bf16},{bf16}]"#),
        );
        b.memcpy(
            ext,
            t + 110,
            "Memcpy HtoD (Pinned -> Device)",
            t + 1000,
            1500,
            18_317_312,
        );
    })
    .report(&Config::default());
    assert!(
        find(&r.findings, "GP009").is_none(),
        "{:?}",
        find(&r.findings, "GP009").map(|f| &f.evidence)
    );
}
