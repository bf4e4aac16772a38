//! Which GPU kernels run on tensor cores, recognised by name.
//!
//! The TensorBoard plugin uses an 18-entry list taken from NVIDIA PyProf in 2020
//! ([`PLUGIN_PATTERNS`]): it knows the Volta/Turing cuBLAS and cuDNN names (`s884`,
//! `h1688`, `16816`, `xmma_gemm`, …) but none of the names Ampere, Hopper and Blackwell
//! libraries use, so modern runs read about 0 %. kinetoscope keeps the plugin's list and
//! adds [`MODERN_PATTERNS`]; [`EXCLUDED`] names are never tensor-core kernels even when a
//! pattern matches. Matching is a case-sensitive substring test, as in the plugin.
//! `docs/tb-plugin-differences.md` explains the choice.

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
///   `cutlass3x_sm90_tensorop_gemm_…`);
/// * `cutlass`: other CUTLASS kernels (PyTorch's `fmha_cutlassF_…` attention, FP8 and 2:4
///   sparse GEMMs), except the SIMT and reduction ones in [`EXCLUDED`];
/// * `wmma`: kernels built on the WMMA API;
/// * `gmma`: Hopper warpgroup MMA (`wgmma`, `gmma`);
/// * `tcgen05`: Blackwell fifth-generation tensor-core kernels;
/// * `nvjet`: cuBLAS's Hopper/Blackwell GEMM kernels (CUDA 12.6+, `nvjet_tst_…`);
/// * `flash_fwd`, `flash_bwd`, `FlashAttn`, `fmha`: FlashAttention and fused
///   multi-head-attention kernels.
pub const MODERN_PATTERNS: [&str; 11] = [
    "xmma",
    "tensorop",
    "cutlass",
    "wmma",
    "gmma",
    "tcgen05",
    "nvjet",
    "flash_fwd",
    "flash_bwd",
    "FlashAttn",
    "fmha",
];

/// Names containing one of these never count as tensor-core kernels: CUTLASS SIMT
/// (CUDA-core) GEMMs and CUTLASS's split-K reduction.
pub const EXCLUDED: [&str; 2] = ["simt", "cutlass::reduction"];

/// Whether a kernel runs on tensor cores, by kinetoscope's list (the plugin's patterns
/// plus [`MODERN_PATTERNS`], minus [`EXCLUDED`]).
pub fn uses_tensor_cores(kernel_name: &str) -> bool {
    if EXCLUDED.iter().any(|p| kernel_name.contains(p)) {
        return false;
    }
    plugin_uses_tensor_cores(kernel_name) || MODERN_PATTERNS.iter().any(|p| kernel_name.contains(p))
}

/// Whether the plugin would say a kernel runs on tensor cores (its 2020 list only).
pub fn plugin_uses_tensor_cores(kernel_name: &str) -> bool {
    PLUGIN_PATTERNS.iter().any(|p| kernel_name.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn cuda_core_kernels_do_not_match() {
        for name in [
            "volta_sgemm_64x64_nt",
            "volta_scudnn_128x64_relu_interior_nn_v1",
            "ampere_sgemm_128x64_tn",
            "void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)",
            "void cutlass::reduction::kernel::ReduceSplitK<>(Params)",
            "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        ] {
            assert!(!uses_tensor_cores(name), "{name}");
        }
    }
}
