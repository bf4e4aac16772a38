//! FLOPs of one operator call from its recorded shapes: GEMM-family operators by
//! [`super::gemm`], convolutions at `aten::convolution` / `aten::convolution_backward`,
//! SDPA at the `aten::_scaled_dot_product_*` operators (forward 4·B·H·Sq·Skv·D, backward
//! 2.5× forward, ½ when causal). Shared by the perf model and the advisor's MFU.

use serde::{Deserialize, Serialize};

use super::gemm::{gemm_of, is_gemm_op};

/// The precision an operator ran in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// FP64.
    Fp64,
    /// FP32 on CUDA cores.
    Fp32,
    /// FP32 inputs on TF32 tensor cores (seen in the kernel name).
    Tf32,
    /// BF16 or FP16 on tensor cores.
    Bf16,
    /// FP8.
    Fp8,
}

impl Precision {
    /// From an `Input type` entry (`float`, `c10::BFloat16`, `c10::Half`, ...).
    pub fn from_dtype(t: &str) -> Option<Self> {
        let t = t.trim().trim_matches('"');
        Some(match t {
            "float" => Self::Fp32,
            "double" => Self::Fp64,
            "c10::BFloat16" | "c10::Half" | "BFloat16" | "Half" => Self::Bf16,
            _ if t.contains("Float8") => Self::Fp8,
            _ => return None,
        })
    }
}

/// Operator classes whose FLOPs are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// Matrix multiplications.
    Gemm,
    /// Convolutions (forward and backward).
    Conv,
    /// Scaled dot-product attention (forward and backward).
    Attention,
}

/// FLOPs of one operator call from its name, `Input Dims` and `Concrete Inputs` (JSON
/// texts as recorded): GEMM-family operators by [`crate::gemm`], convolutions and SDPA
/// by the formulas of the module docs. `None` when the operator is not counted or its
/// shapes do not fit the formula.
pub fn op_flops(name: &str, dims: &[Vec<i64>], concrete: &[String]) -> Option<(OpClass, f64)> {
    let f = |v: &[i64]| v.iter().map(|&x| x as f64).product::<f64>();
    let d = |i: usize| dims.get(i).map(Vec::as_slice).unwrap_or(&[]);
    let causal_at = |i: usize| concrete.get(i).is_some_and(|c| c.trim() == "True");
    if is_gemm_op(name) {
        return gemm_of(name, dims).map(|g| (OpClass::Gemm, g.flops()));
    }
    match name {
        "aten::convolution" | "aten::convolution_backward" => {
            let backward = name.ends_with("_backward");
            // convolution(input, weight, bias, stride, padding, dilation, transposed,
            // output_padding, groups); backward(grad_out, input, weight, ...).
            let (x, w) = if backward { (d(1), d(2)) } else { (d(0), d(1)) };
            if x.len() < 3 || w.len() != x.len() {
                return None;
            }
            let fwd = if backward {
                2.0 * f(d(0)) * f(&w[1..])
            } else {
                let transposed = concrete.get(6).is_some_and(|c| c.trim() == "True");
                if transposed {
                    2.0 * f(x) * f(&w[1..])
                } else {
                    let out = conv_out(x, w, concrete)?;
                    2.0 * f(&out) * f(&w[1..])
                }
            };
            Some((OpClass::Conv, if backward { 2.0 * fwd } else { fwd }))
        }
        "aten::_scaled_dot_product_flash_attention"
        | "aten::_scaled_dot_product_flash_attention_for_cpu"
        | "aten::_scaled_dot_product_efficient_attention"
        | "aten::_scaled_dot_product_cudnn_attention" => {
            // is_causal: flash / flash_for_cpu (q, k, v, dropout_p, is_causal, ...);
            // efficient / cudnn (q, k, v, attn_bias, compute_log_sumexp, dropout_p,
            // is_causal, ...).
            let causal = if name.contains("efficient") || name.contains("cudnn") {
                causal_at(6)
            } else {
                causal_at(4)
            };
            sdpa(d(0), d(1), causal).map(|v| (OpClass::Attention, v))
        }
        "aten::_scaled_dot_product_flash_attention_backward"
        | "aten::_scaled_dot_product_flash_attention_for_cpu_backward"
        | "aten::_scaled_dot_product_efficient_attention_backward"
        | "aten::_scaled_dot_product_cudnn_attention_backward" => {
            let causal = if name.contains("for_cpu") {
                causal_at(7)
            } else {
                causal_at(11)
            };
            sdpa(d(1), d(2), causal).map(|v| (OpClass::Attention, 2.5 * v))
        }
        _ => None,
    }
}

/// 4·B·Hq·Sq·Skv·D for q [B, Hq, Sq, D], k [B, Hkv, Skv, D]; × ½ when causal.
pub(crate) fn sdpa(q: &[i64], k: &[i64], causal: bool) -> Option<f64> {
    if q.len() != 4 || k.len() != 4 {
        return None;
    }
    // In f64: recorded shapes are untrusted and an i64 product may overflow.
    let v = 4.0 * q[0] as f64 * q[1] as f64 * q[2] as f64 * k[2] as f64 * q[3] as f64;
    Some(if causal && q[2] == k[2] { v / 2.0 } else { v })
}

/// Output shape of a convolution from `Concrete Inputs` (stride, padding, dilation at 3,
/// 4, 5; groups at 8). `None` when they were not recorded.
pub(crate) fn conv_out(x: &[i64], w: &[i64], concrete: &[String]) -> Option<Vec<i64>> {
    let spatial = x.len() - 2;
    let list = |i: usize| -> Option<Vec<i64>> {
        let text = concrete.get(i)?;
        let v: Vec<i64> = serde_json::from_str(text.trim()).ok()?;
        Some(if v.len() == 1 { vec![v[0]; spatial] } else { v })
    };
    let (stride, pad, dil) = (list(3)?, list(4)?, list(5)?);
    if stride.len() != spatial || pad.len() != spatial || dil.len() != spatial {
        return None;
    }
    let mut out = vec![x[0], w[0]];
    for i in 0..spatial {
        // In i128, with a positive stride: recorded values are untrusted.
        if stride[i] <= 0 {
            return None;
        }
        let span = i128::from(x[2 + i]) + 2 * i128::from(pad[i])
            - i128::from(dil[i]) * (i128::from(w[2 + i]) - 1)
            - 1;
        let o = i64::try_from(span / i128::from(stride[i]) + 1).ok()?;
        if o <= 0 {
            return None;
        }
        out.push(o);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn gemm_flops_by_hand() {
        // [64, 256] x [256, 128]: 2·64·128·256 = 4,194,304.
        let (c, f) = op_flops("aten::mm", &[vec![64, 256], vec![256, 128]], &[]).unwrap();
        assert_eq!(c, OpClass::Gemm);
        assert_eq!(f, 4_194_304.0);
        // addmm(bias [10], [64, 256], [256, 10]): 2·64·10·256 = 327,680.
        let (_, f) = op_flops(
            "aten::addmm",
            &[vec![10], vec![64, 256], vec![256, 10]],
            &[],
        )
        .unwrap();
        assert_eq!(f, 327_680.0);
        // bmm [8, 32, 16] x [8, 16, 64]: 2·8·32·64·16 = 524,288.
        let (_, f) = op_flops("aten::bmm", &[vec![8, 32, 16], vec![8, 16, 64]], &[]).unwrap();
        assert_eq!(f, 524_288.0);
        // Mismatched inner dimension: not counted.
        assert!(op_flops("aten::mm", &[vec![4, 3], vec![5, 6]], &[]).is_none());
        // linear(x [4, 3], weight [5, 3]): 2·4·5·3 = 120 (the outermost call of a nest
        // counts; see crate::gemm).
        let (_, f) = op_flops("aten::linear", &[vec![4, 3], vec![5, 3]], &[]).unwrap();
        assert_eq!(f, 120.0);
    }

    #[test]
    fn conv_flops_by_hand() {
        // x [2, 3, 32, 32], w [16, 3, 3, 3], stride 1, padding 1: out [2, 16, 32, 32].
        // 2 · (2·16·32·32) · (3·3·3) = 2 · 32768 · 27 = 1,769,472.
        let c = s(&[
            "", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        let (cl, f) = op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3], vec![16]],
            &c,
        )
        .unwrap();
        assert_eq!(cl, OpClass::Conv);
        assert_eq!(f, 1_769_472.0);
        // Stride 2, padding 0: out spatial (32 - 3)/2 + 1 = 15 → 2·(2·16·15·15)·27 = 388,800.
        let c = s(&[
            "", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        let (_, f) = op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &c,
        )
        .unwrap();
        assert_eq!(f, 388_800.0);
        // Backward: grad_out [2, 16, 32, 32] → 2 × forward = 3,538,944.
        let (_, f) = op_flops(
            "aten::convolution_backward",
            &[vec![2, 16, 32, 32], vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &[],
        )
        .unwrap();
        assert_eq!(f, 3_538_944.0);
        // Without Concrete Inputs the output shape is unknown.
        assert!(op_flops(
            "aten::convolution",
            &[vec![2, 3, 32, 32], vec![16, 3, 3, 3]],
            &[]
        )
        .is_none());
    }

    #[test]
    fn sdpa_flops_by_hand() {
        // q, k [2, 8, 128, 64]: 4·2·8·128·128·64 = 67,108,864.
        let q = vec![2, 8, 128, 64];
        let (c, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention",
            &[q.clone(), q.clone(), q.clone()],
            &s(&["", "", "", "0.", "False"]),
        )
        .unwrap();
        assert_eq!(c, OpClass::Attention);
        assert_eq!(f, 67_108_864.0);
        // Causal: half.
        let (_, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention",
            &[q.clone(), q.clone(), q.clone()],
            &s(&["", "", "", "0.", "True"]),
        )
        .unwrap();
        assert_eq!(f, 33_554_432.0);
        // Backward: 2.5 × forward = 167,772,160.
        let (_, f) = op_flops(
            "aten::_scaled_dot_product_flash_attention_backward",
            &[q.clone(), q.clone(), q.clone(), q.clone()],
            &[],
        )
        .unwrap();
        assert_eq!(f, 167_772_160.0);
    }
}
