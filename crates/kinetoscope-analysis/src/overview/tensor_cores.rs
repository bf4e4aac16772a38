//! Which GPU kernels run on tensor cores (NVIDIA) or matrix cores (AMD MFMA),
//! recognised by name.
//!
//! The TensorBoard plugin uses an 18-entry list taken from NVIDIA PyProf in 2020
//! ([`PLUGIN_PATTERNS`]): it knows the Volta/Turing cuBLAS and cuDNN names (`s884`,
//! `h1688`, `16816`, `xmma_gemm`, …) but none of the names Ampere, Hopper and Blackwell
//! libraries use, so modern runs read about 0 %. kinetoscope keeps the plugin's list and
//! adds [`MODERN_PATTERNS`], Blackwell's TensorRT-LLM-generated GEMMs
//! ([`is_trtllm_gen_gemm`]), CUTLASS's tensor-core kernels ([`CUTLASS_PATTERNS`]) and
//! AMD's matrix-core kernels ([`AMD_PATTERNS`], [`is_tensile_mfma`]); [`EXCLUDED`] names
//! are never tensor-core kernels even when a pattern matches. Matching is a
//! case-sensitive substring test, as in the plugin. `docs/tb-plugin-differences.md`
//! explains the choice.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxBuildHasher;

/// The plugin's list (`tb_plugin/torch_tb_profiler/profiler/tensor_core.py`,
/// `TC_Allowlist`): a kernel uses tensor cores if its name contains one of these.
pub const PLUGIN_PATTERNS: [&str; 18] = [
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
];

/// Patterns kinetoscope adds (not in the plugin), each a tensor-core-only kernel family:
///
/// * `xmma`: every cuDNN / cuBLAS XMMA kernel. The plugin's five `xmma_*` patterns match
///   GEMM names such as `sm90_xmma_gemm_bf16bf16_…` but not cuDNN's Ampere+ convolution
///   kernels (`sm80_xmma_fprop_implicit_gemm_…`, `sm80_xmma_dgrad_…`,
///   `sm86_xmma_wgrad_…`);
/// * `tensorop`: CUTLASS tensor-op kernels (`cutlass_80_tensorop_…`,
///   `cutlass3x_sm90_tensorop_gemm_…`, Blackwell's block-scaled
///   `cutlass3x_sm100_bstensorop_…`);
/// * `wmma`: kernels built on the WMMA API;
/// * `gmma`: Hopper warpgroup MMA (`wgmma`, `gmma`);
/// * `tcgen05`: Blackwell fifth-generation tensor-core kernels;
/// * `nvjet`: cuBLAS's Hopper/Blackwell GEMM kernels (CUDA 12.6+, `nvjet_tst_…`);
/// * `flash_fwd`, `flash_bwd`, `FlashAttn`, `fmha`: FlashAttention and fused
///   multi-head-attention kernels (`fmhaSm100aKernel_…` on Blackwell).
pub const MODERN_PATTERNS: [&str; 10] = [
    "xmma",
    "tensorop",
    "wmma",
    "gmma",
    "tcgen05",
    "nvjet",
    "flash_fwd",
    "flash_bwd",
    "FlashAttn",
    "fmha",
];

/// CUTLASS kernels, recognised by the kernel's own name rather than by a `cutlass::` type
/// among its template arguments (a `finalize` or routing kernel templated on
/// `cutlass::bfloat16_t` runs no MMA): generated kernels (`cutlass_80_…`,
/// `cutlass3x_…`, cuDNN's `cutlass_cudnn_…`) and the GEMM and convolution templates
/// (`cutlass::gemm::kernel::GemmUniversal<…>`, FP8 `_scaled_mm` and 2:4 sparse GEMMs),
/// except the SIMT and reduction ones in [`EXCLUDED`].
pub const CUTLASS_PATTERNS: [&str; 4] = [
    "cutlass_",
    "cutlass3x",
    "cutlass::gemm::",
    "cutlass::conv::",
];

/// AMD matrix-core (MFMA) kernel families:
///
/// * `_xdl`: Composable Kernel's XDL (MFMA) GEMMs and convolutions
///   (`kernel_batched_gemm_xdlops_…`, `GridwiseGemm_xdl_cshuffle_v3`);
/// * `_gtcx`: MIOpen's implicit-GEMM convolutions built on xdlops (`igemm_fwd_gtcx3_…`
///   on gfx942, `gtcx2` on gfx90a; the non-MFMA ones are `gtc_`);
/// * `mfma`: kernels that name the instruction (`paged_attention_ll4mi_QKV_mfma16_…`);
/// * `attn_fwd`: the Triton / aiter FlashAttention forward kernel (its two products are
///   16-bit MMAs, MFMA on AMD, tensor cores on NVIDIA);
/// * `_matmul_ogs_`: the Triton `matmul_ogs` GEMM (MoE layers; MX weights are upcast to
///   16 bits and multiplied on matrix units).
pub const AMD_PATTERNS: [&str; 5] = ["_xdl", "_gtcx", "mfma", "attn_fwd", "_matmul_ogs_"];

/// Names containing one of these never count as tensor-core kernels: CUTLASS SIMT
/// (CUDA-core) GEMMs, CUTLASS's split-K reduction, and cuBLAS's FP32 XMMA kernels that
/// run on fused multiply-adds (`sm80_xmma_gemm_f32f32_f32f32_f32_…_ffma_…`, what FP32
/// GEMMs use on Ampere and Hopper without TF32, as recorded on an H200 with PyTorch 2.11).
pub const EXCLUDED: [&str; 4] = ["simt", "OpClassSimt", "cutlass::reduction", "_ffma"];

/// A Tensile (rocBLAS / hipBLASLt) GEMM that uses MFMA: a `Cijk_…` kernel whose name has
/// a matrix-instruction field (`_MI16x16x1_`, `_MI32x32x8_`, `_MI16x16x16x1_`); Tensile's
/// vector-ALU kernels have a thread tile (`_TT4_4_`) instead.
pub fn is_tensile_mfma(kernel_name: &str) -> bool {
    kernel_name.starts_with("Cijk_")
        && kernel_name.match_indices("_MI").any(|(i, _)| {
            kernel_name
                .as_bytes()
                .get(i + 3)
                .is_some_and(u8::is_ascii_digit)
        })
}

/// A GEMM generated by TensorRT-LLM for Blackwell (as FlashInfer and vLLM ship them,
/// including the MX / block-scaled ones): `bmm_…` or `gemm_…` with an `_sm100`-family
/// target suffix (`bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_…_sm100f`).
pub fn is_trtllm_gen_gemm(kernel_name: &str) -> bool {
    (kernel_name.starts_with("bmm_") || kernel_name.starts_with("gemm_"))
        && ["_sm100", "_sm103", "_sm110", "_sm120", "_sm121"]
            .iter()
            .any(|t| kernel_name.contains(t))
}

/// Whether a kernel runs on tensor cores (NVIDIA) or matrix cores (AMD), by kinetoscope's
/// list (the plugin's patterns plus the ones above, minus [`EXCLUDED`]).
///
/// Answers are kept per name for the life of the process (up to [`REMEMBERED_BYTES`] of
/// names, each at most [`LONGEST_REMEMBERED`] bytes): testing the 41 patterns in turn
/// costs about 14,000 instructions on a 500-byte C++ template name, and several analyses
/// and rules ask about the same few hundred kernels.
pub fn uses_tensor_cores(kernel_name: &str) -> bool {
    static SEEN: Mutex<Remembered> = Mutex::new(Remembered {
        answers: HashMap::with_hasher(FxBuildHasher),
        bytes: 0,
    });
    if kernel_name.len() > LONGEST_REMEMBERED {
        return matches_tensor_core_patterns(kernel_name);
    }
    let remembered = SEEN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .answers
        .get(kernel_name)
        .copied();
    if let Some(answer) = remembered {
        return answer;
    }
    let answer = matches_tensor_core_patterns(kernel_name);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.bytes + kernel_name.len() > REMEMBERED_BYTES {
        seen.answers.clear();
        seen.bytes = 0;
    }
    seen.bytes += kernel_name.len();
    seen.answers.insert(kernel_name.into(), answer);
    answer
}

/// The bytes of names [`uses_tensor_cores`] keeps before it starts afresh.
pub const REMEMBERED_BYTES: usize = 8 << 20;

/// Longer names are tested every time (a hostile trace's names can be megabytes).
pub const LONGEST_REMEMBERED: usize = 16 << 10;

/// The answers [`uses_tensor_cores`] keeps, and the bytes of their names.
struct Remembered {
    answers: HashMap<Box<str>, bool, FxBuildHasher>,
    bytes: usize,
}

/// [`uses_tensor_cores`] without the memory: every pattern tested in turn.
fn matches_tensor_core_patterns(kernel_name: &str) -> bool {
    if EXCLUDED.iter().any(|p| kernel_name.contains(p)) {
        return false;
    }
    plugin_uses_tensor_cores(kernel_name)
        || MODERN_PATTERNS.iter().any(|p| kernel_name.contains(p))
        || CUTLASS_PATTERNS.iter().any(|p| kernel_name.contains(p))
        || AMD_PATTERNS.iter().any(|p| kernel_name.contains(p))
        || is_tensile_mfma(kernel_name)
        || is_trtllm_gen_gemm(kernel_name)
}

/// Whether the plugin would say a kernel runs on tensor cores (its 2020 list only).
pub fn plugin_uses_tensor_cores(kernel_name: &str) -> bool {
    PLUGIN_PATTERNS.iter().any(|p| kernel_name.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remembered answer is the answer: each name asked twice (the second time from
    /// memory) and again after the memory was full and started afresh; a name too long
    /// to keep is answered every time.
    #[test]
    fn remembered_answers_are_the_answers() {
        let too_long = format!("{}_s16816gemm", "x".repeat(LONGEST_REMEMBERED));
        let names = [
            ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_ffma", false),
            ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", true),
            ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >", false),
            ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", true),
            (too_long.as_str(), true),
        ];
        for round in 0..3 {
            for (name, want) in names {
                assert_eq!(matches_tensor_core_patterns(name), want, "{name}");
                assert_eq!(uses_tensor_cores(name), want, "{name}, round {round}");
            }
            if round == 1 {
                // More than the memory holds, in names just short enough to be kept.
                let filler = "f".repeat(LONGEST_REMEMBERED - 8);
                for k in 0..=REMEMBERED_BYTES / (LONGEST_REMEMBERED - 8) {
                    assert!(!uses_tensor_cores(&format!("{k:08}{filler}")));
                }
            }
        }
    }

    #[test]
    fn plugin_names_still_match() {
        for name in [
            "volta_fp16_s884cudnn_fp16_128x128_ldg8_splitK_relu_f2f_exp_small_nhwc_tn_v1",
            "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn",
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
            // `xmma_gemm` already matches cuBLAS's Hopper XMMA GEMMs.
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
        ] {
            assert!(
                plugin_uses_tensor_cores(name) && uses_tensor_cores(name),
                "{name}"
            );
        }
    }

    #[test]
    fn modern_names_match_only_here() {
        for name in [
            "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16",
            "sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc",
            "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
            "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>(Params)",
            "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8",
            "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<>>>",
            "sm90_gemm_wgmma_kernel",
            "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<>)",
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>",
        ] {
            assert!(uses_tensor_cores(name), "{name}");
            assert!(!plugin_uses_tensor_cores(name) || name.contains("16816"), "{name}");
        }
    }

    /// Blackwell kernels of the TraceLens B200 trace (vLLM + FlashInfer, MX GEMMs).
    #[test]
    fn blackwell_kernels() {
        for name in [
            "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
            "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
            "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
            "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT",
            "nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN",
        ] {
            assert!(uses_tensor_cores(name), "{name}");
        }
        for name in [
            // Templated on CUTLASS types, but no MMA: MoE finalize, routing, quantization.
            "void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true>)",
            "void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, false, true, true>)",
            "void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16, 32, true>(int, int, int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*, flashinfer::QuantizationSFLayout)",
            "void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, c10::BFloat16 const*, float const*, int, long, long)",
            "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)",
        ] {
            assert!(!uses_tensor_cores(name), "{name}");
        }
    }

    /// AMD kernels of the TraceLens MI300X / MI210 traces and HTA's MI250 trace.
    #[test]
    fn amd_matrix_core_kernels() {
        for name in [
            // hipBLASLt / rocBLAS (Tensile) with a matrix-instruction field.
            "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAM",
            "Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x64x32_MI32x32x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_G",
            "Cijk_Ailk_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASM_ASAE01_ASCE01_ASEM1_AAC0_BL1_BS1_CLR0_DTLA0_DTLB0",
            "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1_LBSPPA128",
            // MIOpen implicit GEMM on xdlops (gfx942, gfx90a).
            "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64_gkgs",
            "igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs",
            // Composable Kernel XDL.
            "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_bwd_weightILi64EttftLNS_25InMemoryDataOperationEnumE1E",
            "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorE",
            "void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 1, 128, 256, false, 4, 1, ck_tile::ComposedAttention<0u, false> >",
            "attn_fwd",
            "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu",
        ] {
            assert!(uses_tensor_cores(name), "{name}");
        }
        for name in [
            "batched_transpose_16x32_half",
            "SubTensorOpWithScalar1d",
            "transpose_CNHW2NCHW_V2_2D_WG_off64",
            "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeI",
            "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
            "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, false>",
            "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
            // A Tensile vector-ALU GEMM: a thread tile (`_TT8_8_`), no `_MI` field.
            "Cijk_Ailk_Bljk_SB_MT128x128x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM8_AF1EM1_AMAS3_ASE_ASGT_TT8_8_WG16_16_1_WGM8",
        ] {
            assert!(!uses_tensor_cores(name), "{name}");
        }
    }

    #[test]
    fn cuda_core_kernels_do_not_match() {
        for name in [
            "volta_sgemm_64x64_nt",
            "volta_scudnn_128x64_relu_interior_nn_v1",
            "ampere_sgemm_128x64_tn",
            "void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)",
            "void cutlass::reduction::kernel::ReduceSplitK<>(Params)",
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas",
            "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        ] {
            assert!(!uses_tensor_cores(name), "{name}");
        }
    }
}
