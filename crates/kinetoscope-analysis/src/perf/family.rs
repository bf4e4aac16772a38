//! Op families of the perf model, and which operators it models (has a FLOPs and bytes
//! formula for) — by name alone.

use serde::{Deserialize, Serialize};

use super::gemm::is_gemm_op;

/// The family of an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Matrix multiplications (`mm`, `addmm`, `bmm`, `linear`, `matmul`, …).
    Gemm,
    /// Scaled dot-product attention (flash, memory-efficient, cuDNN), forward and
    /// backward.
    Attention,
    /// Convolutions, forward and backward.
    Conv,
    /// Unary, binary and ternary element-wise operators, copies and fills.
    Elementwise,
    /// Reductions (`sum`, `mean`, `amax`, `norm`, …).
    Reduction,
    /// Layer, group, batch and RMS normalisation, forward and backward.
    Normalization,
    /// Softmax and log-softmax, forward and backward.
    Softmax,
    /// Embedding lookups and index / gather / scatter operators.
    EmbeddingIndex,
    /// Optimizer kernels (`_foreach_*`, fused Adam/AdamW/SGD).
    Optimizer,
    /// Everything else that launched GPU work.
    Other,
}

impl Family {
    /// Whether the family runs on tensor/matrix cores.
    pub fn uses_matrix_units(self) -> bool {
        matches!(self, Self::Gemm | Self::Attention | Self::Conv)
    }
}

/// How the perf model computes FLOPs and bytes of a modelled operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formula {
    /// A GEMM-family operator ([`super::gemm`]).
    Gemm,
    /// SDPA forward: `(q, k, v, …)`.
    AttentionForward,
    /// SDPA backward: `(grad_out, q, k, v, …)`.
    AttentionBackward,
    /// `aten::convolution`.
    ConvForward,
    /// `aten::convolution_backward`.
    ConvBackward,
    /// `copy_(dst, src)`: read the source, write the destination.
    Copy,
    /// `fill_` / `zero_`: write only.
    Fill,
    /// Element-wise over the broadcast of the tensor inputs, output like the first
    /// tensor input.
    Elementwise,
    /// The same with a one-byte (bool) output.
    Comparison,
    /// A reduction `(self, dim, keepdim, …)`.
    Reduction,
    /// A scan (`cumsum`): as many outputs as inputs.
    Scan,
    /// A normalisation forward (input first).
    NormForward,
    /// A normalisation backward (`grad_out, input, …`).
    NormBackward,
    /// Softmax forward.
    SoftmaxForward,
    /// Softmax backward (`grad_out, output, …`).
    SoftmaxBackward,
    /// `embedding(weight, indices, …)`.
    Embedding,
    /// `index_select(self, dim, index)`.
    IndexSelect,
}

const UNARY: &[&str] = &[
    "abs",
    "neg",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "silu",
    "gelu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "leaky_relu",
    "elu",
    "softplus",
    "erf",
    "erfc",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "clamp",
    "clamp_min",
    "clamp_max",
    "pow",
    "square",
    "bitwise_not",
    "nan_to_num",
    "threshold",
];

const BINARY: &[&str] = &[
    "add",
    "sub",
    "rsub",
    "mul",
    "div",
    "remainder",
    "fmod",
    "maximum",
    "minimum",
    "atan2",
    "where",
    "masked_fill",
    "lerp",
    "addcmul",
    "addcdiv",
    "bitwise_and",
    "bitwise_or",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "hardswish_backward",
];

const COMPARISONS: &[&str] = &[
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "isnan",
    "isinf",
];

const REDUCTIONS: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "prod",
    "norm",
    "linalg_vector_norm",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "all",
    "any",
    "logsumexp",
];

const NORM_FORWARD: &[&str] = &[
    "native_layer_norm",
    "native_group_norm",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "cudnn_batch_norm",
    "miopen_batch_norm",
    "_fused_rms_norm",
];

const NORM_BACKWARD: &[&str] = &[
    "native_layer_norm_backward",
    "native_group_norm_backward",
    "native_batch_norm_backward",
    "cudnn_batch_norm_backward",
    "miopen_batch_norm_backward",
    "_fused_rms_norm_backward",
];

/// The `aten::` base name: without the prefix and without a trailing in-place `_`.
fn base(name: &str) -> Option<&str> {
    let b = name.strip_prefix("aten::")?;
    Some(b.strip_suffix('_').unwrap_or(b))
}

/// The formula of a modelled operator; `None` when the perf model does not model it
/// (its time is still shown, without FLOPs and bytes).
pub fn formula(name: &str) -> Option<Formula> {
    if is_gemm_op(name) {
        return Some(Formula::Gemm);
    }
    let b = base(name)?;
    Some(match b {
        "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_flash_attention_for_cpu"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention" => Formula::AttentionForward,
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_flash_attention_for_cpu_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward" => Formula::AttentionBackward,
        "convolution" => Formula::ConvForward,
        "convolution_backward" => Formula::ConvBackward,
        "copy" => Formula::Copy,
        "fill" | "zero" => Formula::Fill,
        "cumsum" | "cumprod" => Formula::Scan,
        "_softmax" | "_log_softmax" => Formula::SoftmaxForward,
        "_softmax_backward_data" | "_log_softmax_backward_data" => Formula::SoftmaxBackward,
        "embedding" => Formula::Embedding,
        "index_select" => Formula::IndexSelect,
        _ if COMPARISONS.contains(&b) => Formula::Comparison,
        _ if UNARY.contains(&b) || BINARY.contains(&b) => Formula::Elementwise,
        _ if REDUCTIONS.contains(&b) => Formula::Reduction,
        _ if NORM_FORWARD.contains(&b) => Formula::NormForward,
        _ if NORM_BACKWARD.contains(&b) => Formula::NormBackward,
        _ => return None,
    })
}

/// How many tensor operands an element-wise operator reads; tensor inputs after them
/// are `out=` tensors (written, not read).
pub fn elementwise_arity(name: &str) -> usize {
    let Some(b) = base(name) else {
        return usize::MAX;
    };
    match b {
        "where" | "addcmul" | "addcdiv" | "lerp" | "masked_fill" | "clamp" => 3,
        "pow" | "clamp_min" | "clamp_max" => 2,
        "logical_not" | "isnan" | "isinf" => 1,
        _ if UNARY.contains(&b) => 1,
        _ => 2,
    }
}

/// The family of an operator by name (modelled or not).
pub fn family_of(name: &str) -> Family {
    if let Some(f) = formula(name) {
        return match f {
            Formula::Gemm => Family::Gemm,
            Formula::AttentionForward | Formula::AttentionBackward => Family::Attention,
            Formula::ConvForward | Formula::ConvBackward => Family::Conv,
            Formula::Copy | Formula::Fill | Formula::Elementwise | Formula::Comparison => {
                Family::Elementwise
            }
            Formula::Reduction | Formula::Scan => Family::Reduction,
            Formula::NormForward | Formula::NormBackward => Family::Normalization,
            Formula::SoftmaxForward | Formula::SoftmaxBackward => Family::Softmax,
            Formula::Embedding | Formula::IndexSelect => Family::EmbeddingIndex,
        };
    }
    let b = name.strip_prefix("aten::").unwrap_or(name);
    if b.starts_with("_foreach_") || b.starts_with("_fused_adam") || b.starts_with("_fused_sgd") {
        Family::Optimizer
    } else if b.contains("attention") {
        Family::Attention
    } else if b.contains("conv") {
        Family::Conv
    } else if b.contains("softmax") {
        Family::Softmax
    } else if b.contains("norm") {
        Family::Normalization
    } else if b.starts_with("embedding")
        || b.starts_with("index")
        || b.starts_with("gather")
        || b.starts_with("scatter")
    {
        Family::EmbeddingIndex
    } else {
        Family::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_name() {
        assert_eq!(family_of("aten::addmm"), Family::Gemm);
        assert_eq!(family_of("aten::linear"), Family::Gemm);
        assert_eq!(
            family_of("aten::_scaled_dot_product_flash_attention"),
            Family::Attention
        );
        assert_eq!(
            family_of("aten::_flash_attention_forward"),
            Family::Attention
        );
        assert_eq!(family_of("aten::cudnn_convolution"), Family::Conv);
        assert_eq!(family_of("aten::add_"), Family::Elementwise);
        assert_eq!(family_of("aten::copy_"), Family::Elementwise);
        assert_eq!(family_of("aten::mean"), Family::Reduction);
        assert_eq!(family_of("aten::layer_norm"), Family::Normalization);
        assert_eq!(family_of("aten::_softmax"), Family::Softmax);
        assert_eq!(
            family_of("aten::embedding_dense_backward"),
            Family::EmbeddingIndex
        );
        assert_eq!(family_of("aten::_foreach_mul_"), Family::Optimizer);
        assert_eq!(family_of("aten::cat"), Family::Other);
        assert_eq!(formula("aten::cat"), None);
        assert_eq!(
            formula("aten::layer_norm"),
            None,
            "the wrapper is not modelled"
        );
        assert_eq!(formula("aten::eq"), Some(Formula::Comparison));
        assert_eq!(formula("aten::fill_"), Some(Formula::Fill));
    }
}
