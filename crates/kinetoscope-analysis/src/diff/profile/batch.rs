//! The batch size read from input shapes, for throughput when the user gives none.
//!
//! The first input operator of a model's forward pass shows the batch: the indices of
//! `aten::embedding` (`[B, T]`: B samples, B·T tokens; 1-D indices `[N]`: N tokens) or
//! the input of a convolution (`aten::conv1d/2d/3d`, `aten::convolution`: `[N, C, …]`,
//! N samples). In each step the first such call (by start time) is taken; the batch is
//! known only when every step agrees (a step that changes its batch, or a trace whose
//! first call is something else, gives no answer rather than a wrong one).

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{parse_dims, CategoryKind, EventId, Phase, Trace};

/// A batch read from input shapes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchFromShapes {
    /// Samples per step (`None` for flattened 1-D token indices).
    pub samples: Option<u64>,
    /// Tokens per step (embedding inputs only).
    pub tokens: Option<u64>,
    /// The operator whose input gave it.
    pub op: String,
    /// That input's dims, as recorded (`[8, 128]`).
    pub dims: Vec<i64>,
}

/// Operators whose input shows the batch, and which input.
fn batch_input(name: &str) -> Option<usize> {
    match name {
        "aten::embedding" => Some(1),
        "aten::conv1d" | "aten::conv2d" | "aten::conv3d" | "aten::convolution" => Some(0),
        _ => None,
    }
}

/// What one call's input says, or `None` when its shape does not fit.
fn read_batch(name: &str, dims: &[i64]) -> Option<(Option<u64>, Option<u64>)> {
    let positive = dims.iter().all(|&d| d > 0);
    if !positive {
        return None;
    }
    let n = |d: i64| u64::try_from(d).ok();
    match (name, dims) {
        ("aten::embedding", [tokens]) => Some((None, n(*tokens))),
        ("aten::embedding", [b, t]) => Some((n(*b), n(*b)?.checked_mul(n(*t)?))),
        (_, [batch, _, _, ..]) if name != "aten::embedding" => Some((n(*batch), None)),
        _ => None,
    }
}

/// The batch of `trace` over its steps (`[start, end)` epoch ns, time-ordered), or over
/// the whole trace without steps.
pub fn batch_from_shapes(trace: &Trace, steps: &[(i64, i64)]) -> Option<BatchFromShapes> {
    let e = &trace.events;
    let mut calls: Vec<(i64, usize, usize)> = Vec::new();
    let mut memo = crate::name_memo::NameMemo::new(trace, batch_input);
    for i in 0..e.len() {
        if e.phase[i] != Phase::Complete || trace.categories.kind(e.cat[i]) != CategoryKind::CpuOp {
            continue;
        }
        if let Some(input) = memo.get(e.name[i]) {
            calls.push((e.ts_ns[i], i, input));
        }
    }
    calls.sort_unstable();
    let first_in = |lo: i64, hi: i64| {
        let k = calls.partition_point(|c| c.0 < lo);
        calls.get(k).filter(|c| c.0 < hi)
    };
    let windows = if steps.is_empty() {
        vec![(i64::MIN, i64::MAX)]
    } else {
        steps.to_vec()
    };
    let mut found: Option<BatchFromShapes> = None;
    for (lo, hi) in windows {
        let &(_, i, input) = first_in(lo, hi)?;
        let name = trace.strings.get(e.name[i]);
        let args = trace.args.op_of(EventId(i as u32))?;
        let dims = parse_dims(trace.strings.get(args.input_dims))?
            .into_iter()
            .nth(input)?;
        let (samples, tokens) = read_batch(name, &dims)?;
        let this = BatchFromShapes {
            samples,
            tokens,
            op: name.to_owned(),
            dims,
        };
        match &found {
            Some(f) if (f.samples, f.tokens) != (this.samples, this.tokens) => return None,
            Some(_) => {}
            None => found = Some(this),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::read_batch;

    #[test]
    fn reads_the_batch_of_each_input_kind() {
        assert_eq!(
            read_batch("aten::embedding", &[8, 128]),
            Some((Some(8), Some(1024)))
        );
        assert_eq!(
            read_batch("aten::embedding", &[512]),
            Some((None, Some(512)))
        );
        assert_eq!(
            read_batch("aten::conv2d", &[32, 3, 224, 224]),
            Some((Some(32), None))
        );
        assert_eq!(read_batch("aten::conv2d", &[3, 224]), None);
        assert_eq!(read_batch("aten::embedding", &[0, 128]), None);
    }
}
