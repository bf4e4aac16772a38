//! FLOPs and bytes moved by one call of a modelled operator, from its `Input Dims`,
//! `Input type` and `Concrete Inputs`. The definitions, and where they depart from
//! TraceLens's, are in `docs/metrics.md` ("Perf model").

use super::family::{elementwise_arity, Formula};
use super::flops::{conv_out, op_flops, Precision};
use super::gemm::{first_operand, gemm_of};

/// The work of one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes read and written (each tensor once).
    pub bytes: f64,
    /// The precision the arithmetic runs in (from the deciding input's dtype; integer
    /// and unknown dtypes count as FP32).
    pub precision: Precision,
}

/// Bytes per element of a recorded `Input type`; `None` for what is not a tensor
/// (`Scalar`, `ScalarList`, lists, empty).
pub fn elem_bytes(t: &str) -> Option<f64> {
    Some(match t.trim() {
        "float" => 4.0,
        "double" | "long int" | "long" | "c10::complex<float>" => 8.0,
        "c10::complex<double>" => 16.0,
        "c10::BFloat16" | "c10::Half" | "BFloat16" | "Half" | "short int" | "short" => 2.0,
        "int" | "unsigned int" => 4.0,
        "bool" | "signed char" | "unsigned char" => 1.0,
        t if t.contains("Float8") => 1.0,
        _ => return None,
    })
}

/// Elements of a shape (1 for a 0-dim tensor).
fn numel(d: &[i64]) -> f64 {
    d.iter().map(|&x| x.max(0) as f64).product()
}

/// The inputs of one call, as recorded.
pub struct Inputs<'a> {
    /// `Input Dims`, one shape per input.
    pub dims: &'a [Vec<i64>],
    /// `Input type`, one per input.
    pub types: &'a [String],
    /// `Concrete Inputs`, one per input (empty when not recorded).
    pub concrete: &'a [String],
}

impl Inputs<'_> {
    fn dims(&self, i: usize) -> &[i64] {
        self.dims.get(i).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Element size of input `i` when it is a tensor.
    fn elem(&self, i: usize) -> Option<f64> {
        if i >= self.dims.len() {
            return None;
        }
        self.types.get(i).and_then(|t| elem_bytes(t))
    }

    /// Bytes of input `i` (0 when it is not a tensor).
    fn bytes(&self, i: usize) -> f64 {
        self.elem(i).map_or(0.0, |e| e * numel(self.dims(i)))
    }

    /// The precision of input `i`'s dtype (FP32 when unknown or integer).
    fn precision(&self, i: usize) -> Precision {
        self.types
            .get(i)
            .and_then(|t| Precision::from_dtype(t))
            .unwrap_or(Precision::Fp32)
    }

    /// The tensor inputs' indexes.
    fn tensors(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.dims.len()).filter(|&i| self.elem(i).is_some())
    }
}

/// The work of one call of an operator with formula `f`; `None` when its shapes or
/// dtypes do not fit the formula.
pub fn work(f: Formula, name: &str, x: &Inputs) -> Option<Work> {
    match f {
        Formula::Gemm => gemm(name, x),
        Formula::AttentionForward | Formula::AttentionBackward => attention(f, name, x),
        Formula::ConvForward | Formula::ConvBackward => conv(f, name, x),
        Formula::Copy => {
            // copy_(dst, src): the source read, the destination written.
            let n = numel(x.dims(0));
            let bytes = n * (x.elem(0)? + x.elem(1)?);
            Some(Work {
                flops: n,
                bytes,
                precision: x.precision(0),
            })
        }
        Formula::Fill => Some(Work {
            flops: 0.0,
            bytes: x.bytes(0),
            precision: x.precision(0),
        }),
        Formula::Elementwise | Formula::Comparison => elementwise(f, elementwise_arity(name), x),
        Formula::Reduction | Formula::Scan => reduction(f, x),
        Formula::NormForward
        | Formula::NormBackward
        | Formula::SoftmaxForward
        | Formula::SoftmaxBackward => normalization(f, x),
        Formula::Embedding | Formula::IndexSelect => gather(f, x),
    }
}

/// GEMMs: 2·B·M·N·K, plus B·M·N for a bias (TraceLens's definition); bytes: both
/// operands as recorded (a broadcast operand once), the output, and the bias.
fn gemm(name: &str, x: &Inputs) -> Option<Work> {
    let g = gemm_of(name, x.dims)?;
    let a = first_operand(name);
    let e = x.elem(a)?;
    let bias_at = if name == "aten::linear" {
        Some(2)
    } else {
        (a == 1).then_some(0)
    };
    let bias = bias_at.filter(|&i| x.elem(i).is_some() && i < x.dims.len());
    let out = g.batch as f64 * g.m as f64 * g.n as f64;
    let mut flops = g.flops();
    let mut bytes = e * (numel(x.dims(a)) + numel(x.dims(a + 1)) + out);
    if let Some(b) = bias {
        flops += out;
        bytes += x.bytes(b);
    }
    Some(Work {
        flops,
        bytes,
        precision: x.precision(a),
    })
}

/// SDPA: FLOPs as [`op_flops`]; bytes: forward q, k, v read and the output written;
/// backward q, k, v, the output and its gradient read and dq, dk, dv written.
fn attention(f: Formula, name: &str, x: &Inputs) -> Option<Work> {
    let (_, flops) = op_flops(name, x.dims, x.concrete)?;
    let first = usize::from(f == Formula::AttentionBackward);
    let (q, k, v) = (first, first + 1, first + 2);
    let e = x.elem(q)?;
    let dq = *x.dims(q).last()?;
    let dv = *x.dims(v).last()?;
    if dq <= 0 {
        return None;
    }
    let out = numel(x.dims(q)) / dq as f64 * dv as f64;
    let once = e * (numel(x.dims(q)) + numel(x.dims(k)) + numel(x.dims(v)) + out);
    let bytes = if first == 1 { 2.0 * once } else { once };
    Some(Work {
        flops,
        bytes,
        precision: x.precision(q),
    })
}

/// Convolutions: FLOPs as [`op_flops`]; forward bytes input, weight, bias and output;
/// backward grad_out, input and weight read, grad_input and grad_weight written.
fn conv(f: Formula, name: &str, x: &Inputs) -> Option<Work> {
    let (_, flops) = op_flops(name, x.dims, x.concrete)?;
    if f == Formula::ConvBackward {
        let e = x.elem(0)?;
        let bytes = e * (numel(x.dims(0)) + 2.0 * numel(x.dims(1)) + 2.0 * numel(x.dims(2)));
        return Some(Work {
            flops,
            bytes,
            precision: x.precision(1),
        });
    }
    let e = x.elem(0)?;
    let out = conv_out(x.dims(0), x.dims(1), x.concrete)?;
    let bytes = e * (numel(x.dims(0)) + numel(x.dims(1)) + numel(&out)) + x.bytes(2);
    Some(Work {
        flops,
        bytes,
        precision: x.precision(0),
    })
}

/// The broadcast of shapes aligned from the right; `None` when they do not broadcast.
fn broadcast<'a>(shapes: impl Iterator<Item = &'a [i64]>) -> Option<Vec<i64>> {
    let mut out: Vec<i64> = Vec::new();
    for s in shapes {
        if s.len() > out.len() {
            let mut grown = vec![1; s.len() - out.len()];
            grown.extend_from_slice(&out);
            out = grown;
        }
        let off = out.len() - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[off + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// Element-wise: one FLOP per output element; bytes: every tensor operand as recorded
/// (a 0-dim tensor is one element, a `Scalar` none; tensors after the operator's
/// `arity` operands are `out=` tensors, written only) and the output, the broadcast of
/// the operands, in the first operand's dtype (one byte for comparisons; the first
/// value's dtype for `where`).
fn elementwise(f: Formula, arity: usize, x: &Inputs) -> Option<Work> {
    let tensors: Vec<usize> = x.tensors().take(arity).collect();
    let first = *tensors.first()?;
    let out = numel(&broadcast(tensors.iter().map(|&i| x.dims(i)))?);
    let read: f64 = tensors.iter().map(|&i| x.bytes(i)).sum();
    let out_elem = if f == Formula::Comparison {
        1.0
    } else if tensors.len() == 3 && x.elem(first) == Some(1.0) {
        x.elem(tensors[1])?
    } else {
        x.elem(first)?
    };
    Some(Work {
        flops: out,
        bytes: read + out * out_elem,
        precision: x.precision(first),
    })
}

/// The dimensions a reduction keeps: `dim` from `Concrete Inputs` (an int or a list),
/// all reduced when it is absent or empty.
fn reduced_numel(x: &Inputs) -> f64 {
    let shape = x.dims(0);
    let text = x.concrete.get(1).map(|s| s.trim()).unwrap_or("");
    let dims: Vec<i64> = if let Ok(d) = text.parse::<i64>() {
        vec![d]
    } else {
        serde_json::from_str(text).unwrap_or_default()
    };
    if dims.is_empty() {
        return 1.0;
    }
    let rank = shape.len() as i64;
    let reduced = |i: usize| {
        dims.iter()
            .any(|&d| (if d < 0 { d + rank } else { d }) == i as i64)
    };
    (0..shape.len())
        .filter(|&i| !reduced(i))
        .map(|i| shape[i].max(0) as f64)
        .product()
}

/// Reductions: one FLOP per input element; bytes: the input and the output (the
/// dimensions `dim` keeps, in the input's dtype). Scans write as many as they read.
fn reduction(f: Formula, x: &Inputs) -> Option<Work> {
    let e = x.elem(0)?;
    let n = numel(x.dims(0));
    let out = if f == Formula::Scan {
        n
    } else {
        reduced_numel(x)
    };
    Some(Work {
        flops: n,
        bytes: e * (n + out),
        precision: x.precision(0),
    })
}

/// Normalisation and softmax: forward reads the input and writes the output (5 FLOPs
/// per element), backward reads two tensors of the input's size and writes one (8 per
/// element); the other tensor inputs (weights, statistics) as recorded.
fn normalization(f: Formula, x: &Inputs) -> Option<Work> {
    let e = x.elem(0)?;
    let n = numel(x.dims(0));
    let (main, per_elem, skip) = match f {
        Formula::NormBackward => (3.0, 8.0, 2),
        Formula::SoftmaxBackward => (3.0, 4.0, 2),
        Formula::SoftmaxForward => (2.0, 5.0, 1),
        _ => (2.0, 5.0, 1),
    };
    let others: f64 = x.tensors().filter(|&i| i >= skip).map(|i| x.bytes(i)).sum();
    Some(Work {
        flops: per_elem * n,
        bytes: main * e * n + others,
        precision: x.precision(0),
    })
}

/// Embedding and `index_select`: no FLOPs; bytes: the rows gathered, read and written,
/// and the indices.
fn gather(f: Formula, x: &Inputs) -> Option<Work> {
    let (src, idx) = match f {
        Formula::Embedding => (0, 1),
        _ => (0, 2),
    };
    let e = x.elem(src)?;
    let shape = x.dims(src);
    let out = if f == Formula::Embedding {
        numel(x.dims(idx)) * (*shape.last()?).max(0) as f64
    } else {
        let dim: i64 = x.concrete.get(1)?.trim().parse().ok()?;
        let d = if dim < 0 {
            dim + shape.len() as i64
        } else {
            dim
        };
        let along = *shape.get(usize::try_from(d).ok()?)?;
        if along <= 0 {
            return None;
        }
        numel(shape) / along as f64 * numel(x.dims(idx))
    };
    Some(Work {
        flops: 0.0,
        bytes: 2.0 * e * out + x.bytes(idx),
        precision: x.precision(src),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    fn w(f: Formula, name: &str, dims: &[Vec<i64>], types: &[&str], concrete: &[&str]) -> Work {
        let (t, c) = (s(types), s(concrete));
        let x = Inputs {
            dims,
            types: &t,
            concrete: &c,
        };
        work(f, name, &x).unwrap()
    }

    #[test]
    fn by_hand() {
        // addmm(bias [4], a [2, 3], b [3, 4]) in BF16: 2·2·4·3 + 2·4 = 56 FLOPs;
        // (6 + 12 + 8 + 4)·2 = 60 bytes.
        let r = w(
            Formula::Gemm,
            "aten::addmm",
            &[vec![4], vec![2, 3], vec![3, 4]],
            &["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"],
            &[],
        );
        assert_eq!(
            (r.flops, r.bytes, r.precision),
            (56.0, 60.0, Precision::Bf16)
        );
        // mul([8, 1] float, [8, 16] float): 128 outputs; (8 + 128 + 128)·4 bytes.
        let r = w(
            Formula::Elementwise,
            "aten::mul",
            &[vec![8, 1], vec![8, 16]],
            &["float", "float"],
            &[],
        );
        assert_eq!((r.flops, r.bytes), (128.0, 1056.0));
        // add(x [10] float, 0-dim double, Scalar alpha): (10 + 10)·4 + 8.
        let r = w(
            Formula::Elementwise,
            "aten::add",
            &[vec![10], vec![], vec![]],
            &["float", "double", "Scalar"],
            &[],
        );
        assert_eq!(r.bytes, 88.0);
        // mul(x, 0-dim double, out=x) of 10 floats: the out tensor is written, not read.
        let r = w(
            Formula::Elementwise,
            "aten::mul",
            &[vec![10], vec![], vec![10]],
            &["float", "double", "float"],
            &[],
        );
        assert_eq!(r.bytes, 88.0);
        // copy_(dst bf16, src float) of 10: 10·(2 + 4).
        let r = w(
            Formula::Copy,
            "aten::copy_",
            &[vec![10], vec![10], vec![]],
            &["c10::BFloat16", "float", "Scalar"],
            &[],
        );
        assert_eq!((r.flops, r.bytes), (10.0, 60.0));
        // mean over the last dim of [4, 5] float, keepdim: 20 in, 4 out.
        let r = w(
            Formula::Reduction,
            "aten::mean",
            &[vec![4, 5], vec![], vec![], vec![]],
            &["float", "ScalarList", "Scalar", ""],
            &["", "[-1]", "True", ""],
        );
        assert_eq!((r.flops, r.bytes), (20.0, 96.0));
        // Full reduction: one output.
        let r = w(
            Formula::Reduction,
            "aten::sum",
            &[vec![4, 5], vec![]],
            &["float", ""],
            &["", ""],
        );
        assert_eq!(r.bytes, 84.0);
        // Causal flash attention, q = k = v [1, 2, 4, 8] BF16: 4·1·2·4·4·8 / 2 = 512
        // FLOPs; 4 tensors of 64 elements, 2 bytes each.
        let q = vec![1, 2, 4, 8];
        let r = w(
            Formula::AttentionForward,
            "aten::_scaled_dot_product_flash_attention",
            &[q.clone(), q.clone(), q.clone()],
            &["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"],
            &["", "", "", "0.", "True"],
        );
        assert_eq!((r.flops, r.bytes), (512.0, 512.0));
        // Embedding of 6 indices (int64) into a [100, 16] BF16 table: 96 elements read
        // and written, 48 bytes of indices.
        let r = w(
            Formula::Embedding,
            "aten::embedding",
            &[vec![100, 16], vec![2, 3]],
            &["c10::BFloat16", "long int"],
            &[],
        );
        assert_eq!((r.flops, r.bytes), (0.0, 2.0 * 2.0 * 96.0 + 48.0));
    }

    #[test]
    fn hostile_shapes_do_not_overflow() {
        let huge = i64::MAX / 2;
        for (f, name, dims) in [
            (
                Formula::Gemm,
                "aten::mm",
                vec![vec![huge, huge], vec![huge, huge]],
            ),
            (
                Formula::Gemm,
                "aten::linear",
                vec![vec![huge, huge, 4], vec![8, 4]],
            ),
            (
                Formula::AttentionForward,
                "aten::_scaled_dot_product_flash_attention",
                vec![vec![huge, huge, huge, huge]; 3],
            ),
        ] {
            let t = s(&["float", "float", "float"]);
            let x = Inputs {
                dims: &dims,
                types: &t,
                concrete: &[],
            };
            let _ = work(f, name, &x);
        }
        // A zero stride is refused, not divided by.
        let c = s(&[
            "", "", "", "[0, 0]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
        ]);
        let t = s(&["float", "float"]);
        let dims = [vec![2, 3, 32, 32], vec![16, 3, 3, 3]];
        let x = Inputs {
            dims: &dims,
            types: &t,
            concrete: &c,
        };
        assert_eq!(work(Formula::ConvForward, "aten::convolution", &x), None);
    }

    #[test]
    fn broadcasts() {
        let a: &[i64] = &[16, 1, 4];
        let b: &[i64] = &[3, 1];
        assert_eq!(broadcast([a, b].into_iter()), Some(vec![16, 3, 4]));
        let c: &[i64] = &[5];
        assert_eq!(broadcast([a, c].into_iter()), None);
    }
}
