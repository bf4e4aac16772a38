//! Tensor-core eligible operators (as the TensorBoard plugin decides them).
//!
//! An operator is eligible when its name is in [`PLUGIN_ELIGIBLE_OPS`] (the TensorBoard
//! plugin's list) or [`MODERN_ELIGIBLE_OPS`] (names PyTorch ≥ 1.11 uses for the same work,
//! which the plugin's 2021 list predates), when it has an eligible child operator, or when
//! its own kernels used tensor cores.

/// The plugin's list of eligible operator names (`tensor_core.py`, `TC_OP_Allowlist`).
pub const PLUGIN_ELIGIBLE_OPS: &[&str] = &[
    "aten::_convolution",
    "aten::_convolution_nogroup",
    "aten::conv1d",
    "aten::conv2d",
    "aten::conv3d",
    "aten::conv_tbc",
    "aten::conv_transpose1d",
    "aten::conv_transpose2d",
    "aten::conv_transpose3d",
    "aten::convolution",
    "aten::cudnn_convolution",
    "aten::cudnn_convolution_transpose",
    "aten::prelu",
    "aten::addmm",
    "aten::addmv",
    "aten::addr",
    "aten::matmul",
    "aten::mm",
    "aten::mv",
    "aten::linear",
    "aten::addbmm",
    "aten::baddbmm",
    "aten::bmm",
    "aten::chain_matmul",
    "aten::linalg_multi_dot",
    "aten::_thnn_fused_lstm_cell",
    "aten::_thnn_fused_gru_cell",
    "aten::lstm_cell",
    "aten::gru_cell",
    "aten::rnn_tanh_cell",
    "aten::rnn_relu_cell",
    "CudnnConvolutionBackward",
    "BmmBackward0",
    "aten::cudnn_convolution_transpose_backward",
    "CudnnConvolutionTransposeBackward",
    "MmBackward",
    "aten::cudnn_convolution_backward_weight",
    "aten::addmm_",
    "AddmvBackward",
    "MvBackward",
    "aten::cudnn_convolution_transpose_backward_weight",
    "aten::cudnn_convolution_transpose_backward_input",
    "AddmmBackward",
    "aten::cudnn_convolution_backward_input",
    "AddbmmBackward",
    "aten::cudnn_convolution_backward",
];

/// Eligible operators the plugin's list misses: the convolution backward of PyTorch ≥ 1.11,
/// the `…Backward0` autograd names, scaled / integer matmuls and fused attention.
pub const MODERN_ELIGIBLE_OPS: &[&str] = &[
    "aten::convolution_backward",
    "aten::_scaled_mm",
    "aten::_int_mm",
    "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_flash_attention_backward",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_efficient_attention_backward",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_scaled_dot_product_cudnn_attention_backward",
    "aten::_flash_attention_forward",
    "aten::_flash_attention_backward",
    "aten::_efficient_attention_forward",
    "aten::_efficient_attention_backward",
    "ConvolutionBackward0",
    "CudnnConvolutionBackward0",
    "MmBackward0",
    "AddmmBackward0",
    "AddmvBackward0",
    "MvBackward0",
    "AddbmmBackward0",
    "BaddbmmBackward0",
];

/// Whether an operator name is tensor-core eligible by name alone.
pub fn is_eligible_name(name: &str) -> bool {
    PLUGIN_ELIGIBLE_OPS.contains(&name) || MODERN_ELIGIBLE_OPS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_eligible_name("aten::cudnn_convolution"));
        assert!(is_eligible_name("aten::convolution_backward"));
        assert!(!is_eligible_name("aten::add_"));
        assert!(!is_eligible_name("aten::mm_"));
    }
}
