//! Which operators are matrix multiplications, and their M, N, K and batch from the
//! recorded `Input Dims` (`record_shapes=True`): the one GEMM shape recogniser, shared by
//! the perf model ([`super`]) and the advisor (FLOPs, GP003, GP007).
//!
//! Operators: `aten::mm`, `aten::bmm`, `aten::matmul` (every broadcast form
//! `torch.matmul` accepts, vectors included), `aten::linear`, `aten::addmm`,
//! `aten::_addmm_activation`, `aten::baddbmm`, `aten::addbmm`, `aten::mv`,
//! `aten::addmv`, `aten::dot`, `aten::vdot`, `aten::_scaled_mm` (and the in-place
//! `_` forms).

/// M, N, K and the batch of one matrix multiplication (vectors have M or N = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    /// Independent products (batch dimensions, broadcast).
    pub batch: i64,
    /// Rows of the result.
    pub m: i64,
    /// Columns of the result.
    pub n: i64,
    /// The contracted dimension.
    pub k: i64,
}

impl Gemm {
    /// Multiply-adds × 2.
    pub fn flops(&self) -> f64 {
        2.0 * self.batch as f64 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

/// How an operator's inputs hold its two matrix operands.
#[derive(Clone, Copy)]
enum Operands {
    /// `(a, b, …)`, `torch.matmul` broadcasting.
    Matmul,
    /// `(bias, a, b, …)`, `torch.matmul` broadcasting.
    BiasMatmul,
    /// `(bias, a [B, M, K], b [B, K, N], …)`: the batch is summed, not kept.
    BiasBatchSum,
    /// `(input [..., K], weight [N, K], bias)`.
    Linear,
}

/// The GEMM-family operators and their operands.
const OPS: [(&str, Operands); 17] = [
    ("aten::mm", Operands::Matmul),
    ("aten::bmm", Operands::Matmul),
    ("aten::matmul", Operands::Matmul),
    ("aten::mv", Operands::Matmul),
    ("aten::dot", Operands::Matmul),
    ("aten::vdot", Operands::Matmul),
    ("aten::_scaled_mm", Operands::Matmul),
    ("aten::linear", Operands::Linear),
    ("aten::addmm", Operands::BiasMatmul),
    ("aten::addmm_", Operands::BiasMatmul),
    ("aten::_addmm_activation", Operands::BiasMatmul),
    ("aten::baddbmm", Operands::BiasMatmul),
    ("aten::baddbmm_", Operands::BiasMatmul),
    ("aten::addmv", Operands::BiasMatmul),
    ("aten::addmv_", Operands::BiasMatmul),
    ("aten::addbmm", Operands::BiasBatchSum),
    ("aten::addbmm_", Operands::BiasBatchSum),
];

/// Whether `name` is a GEMM-family operator.
pub fn is_gemm_op(name: &str) -> bool {
    OPS.iter().any(|(n, _)| *n == name)
}

/// The index of the first matrix operand in the inputs (its dtype is the GEMM's).
pub fn first_operand(name: &str) -> usize {
    match OPS.iter().find(|(n, _)| *n == name) {
        Some((_, Operands::BiasMatmul | Operands::BiasBatchSum)) => 1,
        _ => 0,
    }
}

/// The GEMM of one call from its operator name and `Input Dims`; `None` when the
/// operator is not a GEMM or its shapes do not fit it.
pub fn gemm_of(name: &str, dims: &[Vec<i64>]) -> Option<Gemm> {
    let (_, operands) = OPS.iter().find(|(n, _)| *n == name)?;
    let g = match operands {
        Operands::Matmul => matmul(dims.first()?, dims.get(1)?)?,
        Operands::BiasMatmul => matmul(dims.get(1)?, dims.get(2)?)?,
        Operands::BiasBatchSum => {
            let (a, b) = (dims.get(1)?, dims.get(2)?);
            if a.len() != 3 || b.len() != 3 || a[0] != b[0] {
                return None;
            }
            matmul(a, b)?
        }
        Operands::Linear => {
            let (x, w) = (dims.first()?, dims.get(1)?);
            if x.is_empty() || w.len() != 2 || x[x.len() - 1] != w[1] {
                return None;
            }
            Gemm {
                batch: 1,
                m: x[..x.len() - 1]
                    .iter()
                    .try_fold(1i64, |a, &b| a.checked_mul(b))?,
                n: w[0],
                k: w[1],
            }
        }
    };
    (g.batch > 0 && g.m > 0 && g.n > 0 && g.k > 0).then_some(g)
}

/// `torch.matmul(a, b)`: a vector operand is a matrix of one row (`a`) or column (`b`);
/// the batch dimensions broadcast.
fn matmul(a: &[i64], b: &[i64]) -> Option<Gemm> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (m, k, a_batch) = match a.len() {
        1 => (1, a[0], &[][..]),
        n => (a[n - 2], a[n - 1], &a[..n - 2]),
    };
    let (k2, n, b_batch) = match b.len() {
        1 => (b[0], 1, &[][..]),
        l => (b[l - 2], b[l - 1], &b[..l - 2]),
    };
    if k != k2 {
        return None;
    }
    // Broadcast the batch dimensions, aligned from the right.
    let len = a_batch.len().max(b_batch.len());
    let mut batch = 1i64;
    for i in 0..len {
        let x = (i + a_batch.len())
            .checked_sub(len)
            .map_or(1, |j| a_batch[j]);
        let y = (i + b_batch.len())
            .checked_sub(len)
            .map_or(1, |j| b_batch[j]);
        if x != y && x != 1 && y != 1 {
            return None;
        }
        batch = batch.checked_mul(x.max(y))?;
    }
    Some(Gemm { batch, m, n, k })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(v: &[&[i64]]) -> Vec<Vec<i64>> {
        v.iter().map(|x| x.to_vec()).collect()
    }

    fn g(batch: i64, m: i64, n: i64, k: i64) -> Option<Gemm> {
        Some(Gemm { batch, m, n, k })
    }

    #[test]
    fn shapes_per_operator() {
        assert_eq!(
            gemm_of("aten::mm", &d(&[&[64, 100], &[100, 32]])),
            g(1, 64, 32, 100)
        );
        assert_eq!(
            gemm_of("aten::addmm", &d(&[&[32], &[64, 100], &[100, 32]])),
            g(1, 64, 32, 100)
        );
        assert_eq!(
            gemm_of("aten::bmm", &d(&[&[4, 64, 100], &[4, 100, 32]])),
            g(4, 64, 32, 100)
        );
        assert_eq!(
            gemm_of(
                "aten::baddbmm",
                &d(&[&[4, 64, 32], &[4, 64, 100], &[4, 100, 32], &[], &[]])
            ),
            g(4, 64, 32, 100)
        );
        // addbmm sums over the batch: still B products.
        assert_eq!(
            gemm_of(
                "aten::addbmm",
                &d(&[&[64, 32], &[4, 64, 100], &[4, 100, 32]])
            ),
            g(4, 64, 32, 100)
        );
        // linear: input [B, S, K], weight [N, K].
        assert_eq!(
            gemm_of(
                "aten::linear",
                &d(&[&[2, 6, 1000], &[50257, 1000], &[50257]])
            ),
            g(1, 12, 50257, 1000)
        );
        assert_eq!(
            gemm_of("aten::_scaled_mm", &d(&[&[128, 64], &[64, 256], &[], &[]])),
            g(1, 128, 256, 64)
        );
    }

    #[test]
    fn matmul_broadcasts_like_torch() {
        // Attention scores: [B, H, S, D] × [B, H, D, S].
        assert_eq!(
            gemm_of("aten::matmul", &d(&[&[2, 12, 197, 64], &[2, 12, 64, 197]])),
            g(24, 197, 197, 64)
        );
        // A batch against one matrix.
        assert_eq!(
            gemm_of("aten::matmul", &d(&[&[8, 128, 512], &[512, 1024]])),
            g(8, 128, 1024, 512)
        );
        // Broadcast batch dimensions of 1.
        assert_eq!(
            gemm_of("aten::matmul", &d(&[&[1, 4, 16, 8], &[3, 1, 8, 2]])),
            g(12, 16, 2, 8)
        );
        // Vectors.
        assert_eq!(gemm_of("aten::matmul", &d(&[&[7], &[7]])), g(1, 1, 1, 7));
        assert_eq!(gemm_of("aten::mv", &d(&[&[5, 7], &[7]])), g(1, 5, 1, 7));
        assert_eq!(
            gemm_of("aten::matmul", &d(&[&[7], &[3, 7, 2]])),
            g(3, 1, 2, 7)
        );
    }

    #[test]
    fn shapes_that_do_not_fit() {
        assert_eq!(gemm_of("aten::mm", &d(&[&[4, 3], &[5, 6]])), None);
        assert_eq!(gemm_of("aten::mm", &d(&[&[64]])), None);
        assert_eq!(gemm_of("aten::matmul", &d(&[&[2, 4, 3], &[5, 3, 6]])), None);
        assert_eq!(gemm_of("aten::linear", &d(&[&[4, 3], &[5, 4]])), None);
        assert_eq!(gemm_of("aten::mm", &d(&[&[0, 3], &[3, 6]])), None);
        assert_eq!(gemm_of("aten::add", &d(&[&[4, 3], &[4, 3]])), None);
        assert_eq!(
            Gemm {
                batch: 2,
                m: 3,
                n: 4,
                k: 5
            }
            .flops(),
            240.0
        );
    }
}
