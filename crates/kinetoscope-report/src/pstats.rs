//! `kinetoscope pstats`: pstats' function table (`print_stats`), callers
//! (`print_callers`) and callees (`print_callees`) for the terminal and CSV, and the
//! estimated call tree as collapsed stacks (`frame;frame;frame microseconds`, the text
//! flamegraph.pl, speedscope and Perfetto's importers read). JSON is the document.

use kinetoscope_analysis::pstats::{CallListing, CallTree, FunctionRow, SortKey, SORT_KEYS};
use kinetoscope_engine::PstatsDocument;
use kinetoscope_trace::EdgeStats;

use crate::sanitize;
use crate::tabular::{Tabular, Value};

/// Seconds shown with 6 decimals (pstats prints 3; profiles of short runs need more).
fn secs(x: f64) -> Value {
    Value::float(x, 6)
}

fn opt_secs(x: Option<f64>) -> Value {
    x.map_or(Value::Empty, secs)
}

/// pstats' `ncalls` cell: `calls/primitive` when they differ.
fn ncalls(calls: i64, primitive: i64) -> Value {
    if calls == primitive {
        Value::Int(calls)
    } else {
        Value::Text(format!("{calls}/{primitive}"))
    }
}

fn sort_name(k: SortKey) -> &'static str {
    SORT_KEYS
        .iter()
        .find(|(_, key)| *key == k)
        .map_or("?", |(n, _)| n)
}

fn function_table(rows: &[FunctionRow]) -> Tabular {
    let mut t = Tabular::new([
        "ncalls",
        "tottime",
        "percall",
        "cumtime",
        "percall",
        "tottime %",
        "filename:lineno(function)",
    ]);
    for r in rows {
        t.push(vec![
            ncalls(r.calls, r.primitive_calls),
            secs(r.tottime),
            opt_secs(r.tottime_per_call),
            secs(r.cumtime),
            opt_secs(r.cumtime_per_call),
            Value::float(r.tottime_share * 100.0, 1),
            Value::Text(r.std_name.clone()),
        ]);
    }
    t
}

/// The numbers of one edge as pstats prints them: `ncalls tottime cumtime` for
/// cProfile, the call count alone for `profile`.
fn edge_cells(s: &EdgeStats) -> [Value; 3] {
    match *s {
        EdgeStats::Timed {
            calls,
            primitive_calls,
            tottime,
            cumtime,
        } => [ncalls(calls, primitive_calls), secs(tottime), secs(cumtime)],
        EdgeStats::Count { calls } => [Value::Int(calls), Value::Empty, Value::Empty],
    }
}

fn call_table(listings: &[CallListing], other: &str) -> Tabular {
    let mut t = Tabular::new(["function", other, "ncalls", "tottime", "cumtime"]);
    for l in listings {
        if l.edges.is_empty() {
            t.push(vec![
                l.std_name.clone().into(),
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
            ]);
        }
        for (i, e) in l.edges.iter().enumerate() {
            let [n, tt, ct] = edge_cells(&e.stats);
            let name = if i == 0 {
                l.std_name.clone()
            } else {
                String::new()
            };
            t.push(vec![name.into(), e.std_name.clone().into(), n, tt, ct]);
        }
    }
    t
}

/// The terminal report: pstats' header lines, the function table, then callers and
/// callees when asked.
pub fn to_table(doc: &PstatsDocument) -> String {
    let v = &doc.pstats;
    let mut out = String::new();
    for f in &doc.inputs {
        out.push_str(&format!("{}\n", sanitize::inline(f)));
    }
    out.push_str(&format!(
        "\n{} function calls ({} primitive calls) in {:.6} seconds\n",
        v.total_calls, v.prim_calls, v.total_tt
    ));
    if v.files > 1 {
        out.push_str(&format!("({} files summed)\n", v.files));
    }
    if !doc.options.sort.is_empty() {
        let keys: Vec<&str> = doc.options.sort.iter().map(|&k| sort_name(k)).collect();
        out.push_str(&format!("Ordered by: {}\n", keys.join(", ")));
    }
    if v.rows.len() < v.functions {
        out.push_str(&format!(
            "List reduced from {} to {} functions\n",
            v.functions,
            v.rows.len()
        ));
    }
    out.push('\n');
    out.push_str(&function_table(&v.rows).to_terminal());
    if let Some(c) = &v.callers {
        out.push('\n');
        out.push_str(&call_table(c, "was called by").to_terminal());
    }
    if let Some(c) = &v.callees {
        out.push('\n');
        out.push_str(&call_table(c, "called").to_terminal());
    }
    out
}

/// CSV: the function table (seconds, full precision).
pub fn to_csv(doc: &PstatsDocument) -> String {
    let mut t = Tabular::new([
        "ncalls",
        "primitive_calls",
        "tottime_s",
        "tottime_per_call_s",
        "cumtime_s",
        "cumtime_per_call_s",
        "tottime_share",
        "file",
        "line",
        "function",
    ]);
    for r in &doc.pstats.rows {
        t.push(vec![
            r.calls.into(),
            r.primitive_calls.into(),
            Value::float(r.tottime, 6),
            r.tottime_per_call
                .map_or(Value::Empty, |x| Value::float(x, 6)),
            Value::float(r.cumtime, 6),
            r.cumtime_per_call
                .map_or(Value::Empty, |x| Value::float(x, 6)),
            Value::float(r.tottime_share, 4),
            r.func.file.clone().into(),
            r.func.line.into(),
            r.func.name.clone().into(),
        ]);
    }
    t.to_csv()
}

/// Longest frame name written in collapsed stacks, in characters.
const MAX_FRAME_CHARS: usize = 256;

/// One frame of a collapsed stack: on one line, with `;` (the frame separator) written
/// as `,`, cut to [`MAX_FRAME_CHARS`].
fn frame(name: &str) -> String {
    let f = sanitize::inline(name).replace(';', ",");
    match f.char_indices().nth(MAX_FRAME_CHARS) {
        Some((i, _)) => format!("{}…", &f[..i]),
        None => f,
    }
}

/// Collapsed stacks of the estimated call tree: one line per node with own time,
/// `root;...;function microseconds` (rounded; lines that round to 0 are left out).
/// The nodes come depth-first, so the path is a stack.
pub fn collapsed(tree: &CallTree) -> String {
    let mut stack: Vec<(u32, String)> = Vec::new();
    let mut out = String::new();
    for (id, n) in tree.nodes.iter().enumerate() {
        while stack.last().is_some_and(|(top, _)| Some(*top) != n.parent) {
            stack.pop();
        }
        let name = tree
            .functions
            .get(n.func as usize)
            .map_or("?", String::as_str);
        stack.push((id as u32, frame(name)));
        let us = (n.self_time * 1e6).round();
        if us >= 1.0 {
            let path: Vec<&str> = stack.iter().map(|(_, f)| f.as_str()).collect();
            out.push_str(&format!("{} {us:.0}\n", path.join(";")));
        }
    }
    out
}

/// One pstats file of `kinetoscope report`: totals, top functions by cumulative time,
/// and the pstats rules' findings (impact over the whole profile, not per step).
pub fn report_section(out: &mut String, r: &kinetoscope_engine::PstatsFileReport) {
    out.push_str(&format!(
        "{} (cProfile/pstats)\n{} function calls in {:.6} seconds; top functions by cumulative time:\n",
        sanitize::inline(&r.path),
        r.total_calls,
        r.total_tt
    ));
    out.push_str(&function_table(&r.top).to_terminal());
    if r.findings.is_empty() {
        out.push_str("no pstats findings\n\n");
        return;
    }
    for (i, f) in r.findings.iter().enumerate() {
        out.push_str(&format!(
            "{:>2}. [{}] {} {}: {}\n    impact      {:.3} s of the profile ({:.1} %)\n",
            i + 1,
            f.severity.as_str(),
            f.id,
            f.rule,
            f.title,
            f.impact_ns_per_step / 1e9,
            f.impact_share * 100.0
        ));
        for (j, e) in f.evidence.iter().enumerate() {
            let label = if j == 0 { "evidence" } else { "" };
            out.push_str(&format!("    {label:<11} {e}\n"));
        }
        out.push_str(&format!(
            "    fix         {}\n    threshold   {}\n",
            f.fix, f.details
        ));
    }
    out.push('\n');
}
