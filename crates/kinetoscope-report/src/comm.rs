//! `kinetoscope comm`: per trace, the overlap line, the exposed communication per step
//! and the collectives table; CSV writes the collectives table of every trace; JSON every
//! field of [`TraceComm`] (`docs/json.md`).

use kinetoscope_analysis::comm::{OverlapDefinition, TraceComm};

use crate::format::{bytes, percent, us};
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::Document;

/// Everything `kinetoscope comm` shows for one input path: one [`TraceComm`] per trace read, in file order.
pub type CommDocument = Document<TraceComm>;

fn opt_f(v: Option<f64>, decimals: usize) -> Value {
    v.map_or(Value::Empty, |v| Value::float(v, decimals))
}

fn collectives_table(tr: &TraceComm, with_trace: bool, top: usize) -> Tabular {
    let mut headers: Vec<&str> = Vec::new();
    if with_trace {
        headers.extend(["trace", "rank"]);
    }
    headers.extend([
        "collective",
        "process_group",
        "algorithm",
        "dtype",
        "group_size",
        "count",
        "bytes",
        "latency_us",
        "mean_latency_us",
        "algbw_gbps",
        "busbw_gbps",
    ]);
    let mut t = Tabular::new(headers);
    let n = if top == 0 { usize::MAX } else { top };
    for c in tr.collectives.iter().take(n) {
        let mut row: Vec<Value> = Vec::new();
        if with_trace {
            row.push(tr.path.clone().into());
            row.push(tr.rank.map_or(Value::Empty, Value::Int));
        }
        let pg = match (c.process_group.as_str(), c.process_group_desc.as_str()) {
            ("", _) => String::new(),
            (p, "") => p.to_owned(),
            (p, d) => format!("{p} ({d})"),
        };
        let algo = match (&c.algorithm, c.on_gpu) {
            (Some(a), _) => a.clone(),
            (None, false) => "(host)".into(),
            (None, true) => String::new(),
        };
        row.extend([
            c.collective.clone().into(),
            pg.into(),
            algo.into(),
            c.dtype.clone().into(),
            c.group_size.map_or(Value::Empty, Value::Int),
            c.count.into(),
            match c.bytes {
                Some(b) if with_trace => Value::Int(b as i64),
                Some(b) => Value::Text(bytes(b)),
                None => Value::Empty,
            },
            Value::float(us(c.latency_ns as f64), 1),
            Value::float(us(c.mean_latency_ns), 1),
            opt_f(c.algbw_gbps, 2),
            opt_f(c.busbw_gbps, 2),
        ]);
        t.push(row);
    }
    t
}

/// The collectives of every trace as one CSV table (µs, bytes, GB/s).
pub fn to_csv(doc: &CommDocument, top: usize) -> String {
    let mut all: Option<Tabular> = None;
    for tr in &doc.traces {
        let t = collectives_table(tr, true, top);
        match &mut all {
            None => all = Some(t),
            Some(a) => a.rows.extend(t.rows),
        }
    }
    all.unwrap_or_else(collectives_table_empty).to_csv()
}

fn collectives_table_empty() -> Tabular {
    let empty = TraceComm {
        path: String::new(),
        rank: None,
        world_size: None,
        overlap: kinetoscope_analysis::comm::Overlap {
            definition: OverlapDefinition::Kinetoscope,
            window_ns: None,
            computation_ns: 0,
            communication_ns: 0,
            overlap_ns: 0,
            exposed_communication_ns: 0,
            overlap_share: None,
            filtered_gpu_events: None,
        },
        steps: Vec::new(),
        collectives: Vec::new(),
        warnings: Vec::new(),
        hta_pending: None,
    };
    collectives_table(&empty, true, 0)
}

/// Render as a terminal report.
pub fn to_table(doc: &CommDocument, top: usize) -> String {
    let mut out = String::new();
    for tr in &doc.traces {
        let rank = tr.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
        out.push_str(&format!("{}{rank}\n", tr.path));
        let o = &tr.overlap;
        let def = match o.definition {
            OverlapDefinition::Kinetoscope => {
                "kinetoscope definition: kernels inside the kept steps"
            }
            OverlapDefinition::Hta => "HTA 0.5.0 definition: after HTA's load-time filter",
        };
        match o.overlap_share {
            Some(p) => out.push_str(&format!(
                "  communication/computation overlap: {:.2}% ({def})\n  communication {:.1} µs, \
                 overlapped {:.1} µs, exposed {:.1} µs; computation {:.1} µs\n",
                percent(p),
                us(o.communication_ns as f64),
                us(o.overlap_ns as f64),
                us(o.exposed_communication_ns as f64),
                us(o.computation_ns as f64)
            )),
            None => out.push_str(&format!("  no communication kernels ({def})\n")),
        }
        if let Some(f) = o.filtered_gpu_events {
            out.push_str(&format!("  GPU activities dropped by HTA's filter: {f}\n"));
        }
        if !tr.steps.is_empty() {
            let mut t = Tabular::new([
                "step",
                "dur_us",
                "communication_us",
                "overlapped_us",
                "exposed_us",
                "exposed_%_of_step",
            ])
            .titled("Exposed communication per step");
            let n = if top == 0 { usize::MAX } else { top };
            for s in tr.steps.iter().take(n) {
                t.push(vec![
                    s.name.clone().into(),
                    Value::float(us(s.dur_ns as f64), 1),
                    Value::float(us(s.communication_ns as f64), 1),
                    Value::float(us(s.overlapped_ns as f64), 1),
                    Value::float(us(s.exposed_ns as f64), 1),
                    Value::float(percent(s.exposed_share), 2),
                ]);
            }
            out.push_str(&t.to_terminal());
        }
        if !tr.collectives.is_empty() {
            out.push_str(
                &collectives_table(tr, false, top)
                    .titled("Collectives (latency = kernel time; busbw with nccl-tests factors)")
                    .to_terminal(),
            );
        }
        crate::note::push_warnings(&mut out, &tr.warnings);
        out.push('\n');
    }
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}
