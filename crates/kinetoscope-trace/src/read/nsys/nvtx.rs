//! NVTX range texts: what `torch.autograd.profiler.emit_nvtx` writes for each operator
//! (`aten::addmm, seq = 12, op_id = 7, sizes = [[8, 16], [16, 4]]`), and step ranges
//! (`step 3`).

/// An operator range written by `emit_nvtx`, taken apart.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct EmitNvtx<'a> {
    /// The operator: the text before the first `, `.
    pub op: &'a str,
    /// `seq = N`: the autograd sequence number.
    pub seq: Option<i64>,
    /// `sizes = [...]`: the input shapes as JSON text, as Kineto writes `Input Dims`.
    pub sizes: Option<&'a str>,
}

/// The parts of an `emit_nvtx` range text, or `None` for another text. An emit_nvtx
/// text is a name (an operator, or a `record_function` range such as
/// `FSDP::pre_forward (shared)`) followed by nothing but `, seq = N`, `, op_id = N`,
/// `, input_op_ids = [...]` and `, sizes = [...]`, at least one of them.
pub(crate) fn emit_nvtx(text: &str) -> Option<EmitNvtx<'_>> {
    let (op, rest) = text.split_once(", ")?;
    if op.is_empty() {
        return None;
    }
    let mut out = EmitNvtx {
        op,
        seq: None,
        sizes: None,
    };
    let mut known = false;
    let mut rest = rest;
    while !rest.is_empty() {
        let (key, value) = rest.split_once(" = ")?;
        match key {
            "sizes" | "input_op_ids" => {
                let end = bracket_end(value)?;
                if key == "sizes" {
                    out.sizes = Some(&value[..end]);
                }
                rest = value[end..].strip_prefix(", ").unwrap_or(&value[end..]);
            }
            "seq" | "op_id" => {
                let end = value.find(", ").unwrap_or(value.len());
                let n: i64 = value[..end].trim().parse().ok()?;
                if key == "seq" {
                    out.seq = Some(n);
                }
                rest = value[end..].strip_prefix(", ").unwrap_or("");
            }
            _ => return None,
        }
        known = true;
    }
    known.then_some(out)
}

/// The length of the bracketed value at the start of `s` (`[[1, 2], []]`), or `None`
/// when it is not one or never closes.
fn bracket_end(s: &str) -> Option<usize> {
    if !s.starts_with('[') {
        return None;
    }
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The step number of a range named like a step: `step 3`, `Step_3`, `step#3`,
/// `step-3` (the number alone after `step`); `None` otherwise. `ProfilerStep#N` needs
/// no renaming and is not matched here.
pub(crate) fn step_number(text: &str) -> Option<i64> {
    let lower = text.trim();
    let rest = lower
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("step"))
        .map(|_| &lower[4..])?;
    let digits = rest.trim_start_matches([' ', '_', '#', '-']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_nvtx_texts() {
        assert_eq!(
            emit_nvtx("aten::addmm, seq = 12, op_id = 7, sizes = [[8, 16], [16, 4], []]"),
            Some(EmitNvtx {
                op: "aten::addmm",
                seq: Some(12),
                sizes: Some("[[8, 16], [16, 4], []]"),
            })
        );
        assert_eq!(
            emit_nvtx("aten::view, op_id = 314290"),
            Some(EmitNvtx {
                op: "aten::view",
                seq: None,
                sizes: None,
            })
        );
        assert_eq!(
            emit_nvtx("aten::mm, op_id = 3, input_op_ids = [1, 2], sizes = [[2], [2]]")
                .and_then(|e| e.sizes),
            Some("[[2], [2]]")
        );
        assert_eq!(
            emit_nvtx("detach_, op_id = 5").map(|e| e.op),
            Some("detach_")
        );
        assert_eq!(
            emit_nvtx("FSDP::pre_forward (shared), op_id = 317150").map(|e| e.op),
            Some("FSDP::pre_forward (shared)")
        );
        assert_eq!(emit_nvtx("forward, backward"), None);
        assert_eq!(emit_nvtx("computing softmax"), None);
        assert_eq!(emit_nvtx("aten::mm, op_id = x"), None);
        assert_eq!(emit_nvtx("aten::mm, sizes = [[1, 2]"), None);
        assert_eq!(emit_nvtx("aten::mm, colour = red"), None);
    }

    #[test]
    fn step_names() {
        assert_eq!(step_number("step 3"), Some(3));
        assert_eq!(step_number("Step_12"), Some(12));
        assert_eq!(step_number("step#0"), Some(0));
        assert_eq!(step_number("steps 3"), None);
        assert_eq!(step_number("step"), None);
        assert_eq!(step_number("ProfilerStep#3"), None);
        assert_eq!(step_number("ступ 3"), None);
    }
}
