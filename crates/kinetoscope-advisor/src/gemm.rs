//! The one GEMM recogniser the advisor has: which operators are matrix
//! multiplications, their M, N, K and batch from the recorded `Input Dims`
//! (`record_shapes=True`), and which calls count. FLOPs ([`crate::flops`]),
//! `Fp32GemmWithoutTensorCores` (GP003) and `GemmDimsNotAligned` (GP007) all read
//! [`crate::facts::Facts::gemms`], so they never disagree about the same operators.
//!
//! Operators: `aten::mm`, `aten::bmm`, `aten::matmul` (every broadcast form
//! `torch.matmul` accepts, vectors included), `aten::linear`, `aten::addmm`,
//! `aten::_addmm_activation`, `aten::baddbmm`, `aten::addbmm`, `aten::mv`,
//! `aten::addmv`, `aten::dot`, `aten::vdot`, `aten::_scaled_mm` (and the in-place
//! `_` forms). A call counts when its shapes fit the operator and no enclosing call on
//! its thread counts: the outermost call of a nest (`aten::linear` over `aten::matmul`
//! over `aten::mm`) stands for the nest, once. A call whose shapes were not recorded
//! or do not fit does not hide the calls inside it, so `aten::einsum`,
//! `aten::tensordot` and unshaped wrappers are counted through the GEMMs they
//! decompose into.

use kinetoscope_trace::{parse_dims, CategoryKind, EventId, OpArgs, OpArgsCursor, StrId};
use rustc_hash::{FxHashMap, FxHashSet};

pub use kinetoscope_analysis::perf::gemm::{first_operand, gemm_of, is_gemm_op, Gemm};

use crate::facts::Facts;

/// One counted GEMM call.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmCall {
    /// The operator event.
    pub event: usize,
    /// Its shape.
    pub gemm: Gemm,
    /// `Input type` of every input, as recorded (`float`, `c10::BFloat16`, …).
    pub types: Vec<String>,
}

impl GemmCall {
    /// The dtype of the first matrix operand.
    pub fn dtype<'a>(&'a self, facts: &'a Facts) -> Option<&'a str> {
        self.types
            .get(first_operand(facts.name(self.event)))
            .map(String::as_str)
    }
}

/// The GEMM calls of a trace: recognised, outermost (module docs); and the GEMM-family
/// calls that count for nothing (shapes missing or not fitting, and no GEMM counted
/// inside or around them), both in file order.
pub(crate) fn gemm_calls(facts: &Facts) -> (Vec<GemmCall>, Vec<usize>) {
    let t = facts.trace;
    let e = &t.events;
    let candidates = facts.events(&[CategoryKind::CpuOp], is_gemm_op);
    // Arguments found in file order; shapes and types parsed once per distinct text
    // (most calls repeat the shapes of calls before them).
    let mut rows = OpArgsCursor::new(&t.args);
    let args: Vec<Option<&OpArgs>> = candidates
        .iter()
        .map(|&i| rows.of(EventId(i as u32)))
        .collect();
    let mut shape_of: FxHashMap<(StrId, StrId), Option<Gemm>> = FxHashMap::default();
    let shaped: Vec<Option<Gemm>> = candidates
        .iter()
        .zip(&args)
        .map(|(&i, a)| {
            let a = (*a)?;
            *shape_of
                .entry((e.name[i], a.input_dims))
                .or_insert_with(|| {
                    let dims = parse_dims(t.strings.get(a.input_dims))?;
                    gemm_of(facts.name(i), &dims)
                })
        })
        .collect();
    let mut types_of: FxHashMap<StrId, Vec<String>> = FxHashMap::default();
    let recognised: FxHashSet<usize> = candidates
        .iter()
        .zip(&shaped)
        .filter(|(_, s)| s.is_some())
        .map(|(&i, _)| i)
        .collect();
    let mut counted = Vec::new();
    // The ancestors of the counted calls, marked walking up from each until a marked
    // one: O(n) in all.
    let mut covered: FxHashSet<usize> = Default::default();
    let mut in_recognised = facts.ancestor_search(|a| recognised.contains(&a));
    for ((&i, s), a) in candidates.iter().zip(shaped).zip(&args) {
        let Some(gemm) = s else { continue };
        if in_recognised.any(i) {
            continue;
        }
        // The types of the counted calls only (a recognised call inside another counts
        // for nothing); a recognised call has arguments.
        let types = a.map_or_else(Vec::new, |a| {
            types_of
                .entry(a.input_types)
                .or_insert_with(|| {
                    serde_json::from_str(t.strings.get(a.input_types)).unwrap_or_default()
                })
                .clone()
        });
        let mut a = facts.parent_of(i);
        while let Some(p) = a.filter(|p| covered.insert(*p)) {
            a = facts.parent_of(p);
        }
        counted.push(GemmCall {
            event: i,
            gemm,
            types,
        });
    }
    let candidate_set: FxHashSet<usize> = candidates.iter().copied().collect();
    let mut in_candidate = facts.ancestor_search(|a| candidate_set.contains(&a));
    let unshaped = candidates
        .iter()
        .copied()
        .filter(|&i| !recognised.contains(&i) && !covered.contains(&i) && !in_candidate.any(i))
        .collect();
    (counted, unshaped)
}
