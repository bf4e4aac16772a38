//! pstats in `kinetoscope diff`: two cProfile / profile files (or run folders' pstats
//! files) compared function by function; seconds shown with 6 decimals.

use std::fmt::Write;

use kinetoscope_analysis::pstats::diff::{FunctionStatus, PstatsDiff};
use kinetoscope_engine::PstatsDiffDocument;
use kinetoscope_trace::FuncKey;

use crate::tabular::{Tabular, Value};

fn secs(x: f64) -> Value {
    Value::float(x, 6)
}

/// The comparison: totals, then the functions with the largest changes (`top`, 0 = all).
pub fn section(out: &mut String, d: &PstatsDiff, top: usize) {
    let _ = writeln!(
        out,
        "Python functions (pstats): own time {:.6} s → {:.6} s ({:+.6} s), calls {} → {}; \
         {} matched, {} added, {} removed",
        d.base_total_tt,
        d.new_total_tt,
        d.new_total_tt - d.base_total_tt,
        d.base_total_calls,
        d.new_total_calls,
        d.matched,
        d.added,
        d.removed
    );
    let mut t = Tabular::new([
        "function",
        "status",
        "Δ cumtime",
        "Δ tottime",
        "cumtime base",
        "cumtime new",
        "calls base",
        "calls new",
    ]);
    let n = if top == 0 { d.functions.len() } else { top };
    for f in d.functions.iter().take(n) {
        let status = match f.status {
            FunctionStatus::Both => "",
            FunctionStatus::Added => "added",
            FunctionStatus::Removed => "removed",
        };
        t.push(vec![
            FuncKey {
                file: f.file.clone(),
                line: f.line,
                name: f.name.clone(),
            }
            .std_string()
            .into(),
            status.into(),
            secs(f.delta_cumtime),
            secs(f.delta_tottime),
            secs(f.base.cumtime),
            secs(f.new.cumtime),
            f.base.calls.into(),
            f.new.calls.into(),
        ]);
    }
    out.push_str(&t.to_terminal());
}

/// `kinetoscope diff A.prof B.prof` for the terminal.
pub fn to_table(doc: &PstatsDiffDocument, top: usize) -> String {
    let mut out = format!(
        "kinetoscope diff: base {} → new {}\n\n",
        doc.base.join(", "),
        doc.new.join(", ")
    );
    section(&mut out, &doc.pstats, top);
    out
}
