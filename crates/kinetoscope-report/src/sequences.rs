//! `kinetoscope sequences`: the most frequent kernel sequences of each trace (fusion
//! candidates). Terminal and CSV: one row per pattern; JSON every field of
//! [`TraceSequences`] (`docs/json.md`).

use kinetoscope_analysis::sequences::{SequenceScope, TraceSequences};

use crate::format::{percent, us};
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::Document;

/// Everything `kinetoscope sequences` shows for one input path: one [`TraceSequences`] per trace read, in file order.
pub type SequencesDocument = Document<TraceSequences>;

fn table(doc: &SequencesDocument, with_trace: bool) -> Tabular {
    let mut headers: Vec<&str> = Vec::new();
    if with_trace {
        headers.push("trace");
    }
    headers.extend([
        "rank_by_count",
        "operator",
        "length",
        "count",
        "kernel_time_us",
        "mean_kernel_time_us",
        "share_pct",
        "op_time_us",
        "pattern",
    ]);
    let mut t = Tabular::new(headers);
    for tr in &doc.traces {
        for (i, s) in tr.sequences.iter().enumerate() {
            let mut row: Vec<Value> = Vec::new();
            if with_trace {
                row.push(tr.path.clone().into());
            }
            row.extend([
                (i + 1).into(),
                s.op.clone().unwrap_or_default().into(),
                s.kernels.len().into(),
                s.count.into(),
                Value::float(us(s.kernel_time_ns as f64), 1),
                Value::float(us(s.mean_kernel_time_ns), 1),
                Value::float(percent(s.share), 2),
                s.op_time_ns
                    .map_or(Value::Empty, |v| Value::float(us(v as f64), 1)),
                Value::Text(if with_trace {
                    s.kernels.join("|")
                } else {
                    s.kernels
                        .iter()
                        .map(|k| short_name(k))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
            ]);
            t.push(row);
        }
    }
    t
}

/// A kernel name shortened for the terminal: no `void `, no parameter list, template
/// arguments folded to `<…>`, at most 70 characters.
pub fn short_name(name: &str) -> String {
    let n = name.strip_prefix("void ").unwrap_or(name);
    // Drop the parameter list: the parenthesis matching the final `)`.
    let mut n = n.trim_end();
    if n.ends_with(')') {
        let mut depth = 0i32;
        for (i, c) in n.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        n = n[..i].trim_end();
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = String::new();
    let mut depth = 0;
    for c in n.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…>");
                }
                depth += 1;
            }
            '>' => depth = (depth - 1).max(0),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    if out.chars().count() > 70 {
        out = out.chars().take(69).collect::<String>() + "…";
    }
    out
}

/// One CSV row per pattern (µs; kernel names joined with `|`, as HTA writes them).
pub fn to_csv(doc: &SequencesDocument) -> String {
    table(doc, true).to_csv()
}

/// Render as a terminal report.
pub fn to_table(doc: &SequencesDocument) -> String {
    let mut out = String::new();
    for tr in &doc.traces {
        let scope = match &tr.scope {
            SequenceScope::Step => format!("{} step(s), kernels per stream", tr.roots),
            SequenceScope::Operator { name } => {
                format!("{} operator instance(s) matching {name:?}", tr.roots)
            }
        };
        out.push_str(&format!(
            "{}\n  {scope}: {} kernels, {:.1} µs\n",
            tr.path,
            tr.kernels,
            us(tr.kernel_time_ns as f64)
        ));
        let one = SequencesDocument {
            traces: vec![tr.clone()],
            errors: Vec::new(),
            ..doc.clone()
        };
        if tr.sequences.is_empty() {
            out.push_str("  no repeated kernel sequence\n");
        } else {
            out.push_str(
                &table(&one, false)
                    .titled("Most frequent kernel sequences")
                    .to_terminal(),
            );
        }
        crate::note::push_warnings(&mut out, &tr.warnings);
        out.push('\n');
    }
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn short_names() {
        assert_eq!(
            short_name("void at::cuda::(anonymous namespace)::f<float, 4>(float*, int)"),
            "at::cuda::(anonymous namespace)::f<…>"
        );
        assert_eq!(
            short_name("ncclDevKernel_SendRecv(x)"),
            "ncclDevKernel_SendRecv"
        );
        assert_eq!(short_name("Memcpy HtoD (Pinned -> Device)"), "Memcpy HtoD");
        assert_eq!(short_name("aten::mm"), "aten::mm");
    }
}
