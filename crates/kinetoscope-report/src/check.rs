//! `kinetoscope check`: each trace's defects with their first examples, then a rank
//! folder's cross-rank defects and the totals. Terminal: one table per trace, one row
//! per example (the kind's first row carries its severity and count); CSV: one table for
//! the input, one row per example (a defect without examples gets one row). Times are
//! shown as the file writes them (`ts` in µs, before `baseTimeNanoseconds`), so they can
//! be searched for in the file. JSON: the document itself (`docs/json.md`).

use kinetoscope_analysis::integrity::{CheckKind, CheckResult, Example, Severity, TraceCheck};
use kinetoscope_engine::CheckDocument;

use crate::tabular::{Tabular, Value};

/// The words for a kind of defect.
pub fn label(kind: CheckKind) -> &'static str {
    use CheckKind::*;
    match kind {
        UnescapedQuote => "unescaped quotes (repaired)",
        BareToken => "bare tokens (read as null)",
        ControlCharacter => "control characters in strings",
        TruncatedTail => "truncated tail",
        MalformedEvent => "malformed events (skipped)",
        MissingTimestamp => "events without ts (skipped)",
        Oversized => "elements over the size cap",
        RepairedLaunchLink => "launch links repaired",
        NegativeDuration => "negative durations",
        GpuStreamOverlap => "overlapping GPU activities on a stream",
        HostSliceCrossing => "host slices past their parent's end",
        PythonFrameCrossing => "ranges crossing Python frames",
        LaunchWithoutActivity => "launches without GPU activity",
        LaunchCutAtEnd => "launches cut by the window's end",
        ActivityWithoutLaunch => "GPU activities without launch",
        ActivityCutAtStart => "GPU activities launched before the window",
        NoLaunchCalls => "GPU activities, no host launches recorded",
        NegativeLaunchLatency => "negative launch latencies",
        UnpairedFlow => "flows with one end",
        UnboundFlow => "flows bound to no slice",
        FlowCutByWindow => "flows cut by the window",
        LoneFlowOnCall => "lone flow ends on runtime calls",
        MissingSteps => "missing steps",
        RepeatedStep => "repeated step numbers",
        MissingRanks => "missing ranks",
        RepeatedRank => "repeated ranks",
        StepMissingOnRank => "steps missing on a rank",
        ClockSkew => "clock skew between ranks",
    }
}

/// The word for a severity.
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

/// A time of the model (epoch ns) as the file writes it: µs after the time base.
fn file_us(ns: Option<i64>, base_ns: i64) -> Value {
    match ns {
        Some(t) => Value::float(t.saturating_sub(base_ns) as f64 / 1000.0, 3),
        None => Value::Empty,
    }
}

fn opt_i64(v: Option<i64>) -> Value {
    v.map_or(Value::Empty, Value::Int)
}

/// A name, cut to [`NAME_CHARS`] characters on the terminal (CSV keeps it whole).
fn opt_text(v: &Option<String>, cut: bool) -> Value {
    match v {
        Some(t) if cut && t.chars().count() > NAME_CHARS => {
            Value::Text(t.chars().take(NAME_CHARS - 1).chain(['…']).collect())
        }
        Some(t) => Value::Text(t.clone()),
        None => Value::Empty,
    }
}

/// The longest name a terminal cell shows.
const NAME_CHARS: usize = 48;

fn amount_us(ex: &Example) -> Value {
    ex.amount_ns
        .map_or(Value::Empty, |a| Value::float(a as f64 / 1000.0, 3))
}

/// The example columns of one row (or empty ones).
fn example_cells(ex: Option<&Example>, base_ns: i64, cut: bool) -> Vec<Value> {
    let Some(ex) = ex else {
        return vec![Value::Empty; 9];
    };
    let track = ex.track.as_ref().map_or(Value::Empty, |t| {
        Value::Text(format!("{} / {}", t.pid, t.tid))
    });
    let location = match (ex.byte_offset, ex.element) {
        (Some(b), Some(e)) => Value::Text(format!("byte {b}, element {e}")),
        _ => Value::Empty,
    };
    vec![
        file_us(ex.ts_ns, base_ns),
        track,
        opt_text(&ex.name, cut),
        opt_text(&ex.other, cut),
        file_us(ex.other_ts_ns, base_ns),
        amount_us(ex),
        opt_i64(ex.number),
        opt_i64(ex.rank),
        location,
    ]
}

const EXAMPLE_HEADERS: [&str; 9] = [
    "ts_us",
    "pid / tid",
    "event",
    "other",
    "other_ts_us",
    "amount_us",
    "number",
    "rank",
    "location",
];

/// Rows of `defects`: one per example, the first of each kind with its severity,
/// name and count.
fn push_rows(t: &mut Tabular, defects: &[CheckResult], base_ns: i64) {
    for d in defects {
        let n = d.examples.len().max(1);
        for i in 0..n {
            let mut row = Vec::new();
            if i == 0 {
                row.extend([
                    severity(d.severity).into(),
                    label(d.kind).into(),
                    d.count.into(),
                ]);
            } else {
                row.extend([Value::Empty, Value::Empty, Value::Empty]);
            }
            row.extend(example_cells(d.examples.get(i), base_ns, true));
            t.push(row);
        }
    }
}

fn trace_table(tr: &TraceCheck) -> Tabular {
    let mut t = Tabular::new(
        ["severity", "check", "count"]
            .into_iter()
            .chain(EXAMPLE_HEADERS),
    );
    push_rows(&mut t, &tr.defects, tr.base_time_ns);
    without_empty_columns(t)
}

/// The table without the columns no row fills (the terminal's width is scarce; CSV keeps
/// every column).
fn without_empty_columns(t: Tabular) -> Tabular {
    let keep: Vec<bool> = (0..t.headers.len())
        .map(|c| {
            t.rows
                .iter()
                .any(|r| r.get(c).is_some_and(|v| *v != Value::Empty))
        })
        .collect();
    let pick = |row: Vec<Value>| -> Vec<Value> {
        row.into_iter()
            .zip(&keep)
            .filter_map(|(v, &k)| k.then_some(v))
            .collect()
    };
    let headers: Vec<String> = t
        .headers
        .into_iter()
        .zip(&keep)
        .filter_map(|(h, &k)| k.then_some(h))
        .collect();
    Tabular {
        title: t.title,
        headers,
        rows: t.rows.into_iter().map(pick).collect(),
    }
}

/// Render as a terminal report.
pub fn to_table(doc: &CheckDocument) -> String {
    let mut out = String::new();
    for tr in &doc.traces {
        let rank = tr.rank.map(|r| format!(", rank {r}")).unwrap_or_default();
        out.push_str(&format!(
            "{}\n  {} events, {} flow events{rank}\n",
            tr.path,
            crate::format::count(tr.events),
            crate::format::count(tr.flows),
        ));
        if tr.defects.is_empty() {
            out.push_str("  no defects found\n\n");
            continue;
        }
        out.push_str(&trace_table(tr).to_terminal());
        out.push('\n');
    }
    if !doc.ranks.is_empty() {
        let mut t = Tabular::new(
            ["severity", "check", "count"]
                .into_iter()
                .chain(EXAMPLE_HEADERS),
        )
        .titled("Across ranks");
        push_rows(&mut t, &doc.ranks, 0);
        out.push_str(&without_empty_columns(t).to_terminal());
        out.push('\n');
    }
    let c = doc.counts;
    out.push_str(&format!(
        "{} error{}, {} warning{}, {} info\n",
        crate::format::count(c.error),
        if c.error == 1 { "" } else { "s" },
        crate::format::count(c.warning),
        if c.warning == 1 { "" } else { "s" },
        crate::format::count(c.info),
    ));
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}

/// One CSV table: a row per example of every defect (cross-rank defects with an empty
/// `trace`).
pub fn to_csv(doc: &CheckDocument) -> String {
    let mut t = Tabular::new(
        ["trace", "trace_rank", "severity", "check", "count"]
            .into_iter()
            .chain(EXAMPLE_HEADERS),
    );
    for tr in &doc.traces {
        let lead = [Value::Text(tr.path.clone()), opt_i64(tr.rank)];
        push_csv_rows(&mut t, &lead, &tr.defects, tr.base_time_ns);
    }
    push_csv_rows(&mut t, &[Value::Empty, Value::Empty], &doc.ranks, 0);
    t.to_csv()
}

/// CSV rows: every row carries its severity, kind (as in JSON) and count.
fn push_csv_rows(t: &mut Tabular, lead: &[Value], defects: &[CheckResult], base_ns: i64) {
    for d in defects {
        let kind = serde_json::to_value(d.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        for i in 0..d.examples.len().max(1) {
            let mut row = lead.to_vec();
            row.extend([
                severity(d.severity).into(),
                kind.clone().into(),
                d.count.into(),
            ]);
            row.extend(example_cells(d.examples.get(i), base_ns, false));
            t.push(row);
        }
    }
}
