//! `kinetoscope overview`: a terminal report, a CSV table and a versioned JSON document.
//!
//! Terminal: per trace, the step-time breakdown (one row per step, then the average and
//! its percentages), the per-GPU metrics, the devices and warnings. CSV: the breakdown
//! of every trace (µs) with an `average` row per trace. JSON: every field of
//! [`TraceOverview`] (`docs/json.md`). `--sort` and `--top` order and cut the step rows of
//! the terminal and CSV tables; the average always covers every kept step.

use std::cmp::Reverse;
use std::str::FromStr;

use kinetoscope_analysis::overview::{Parts, StepBreakdown, TraceOverview};
use kinetoscope_trace::GpuVendor;

use crate::format::{bytes, ms, percent, us};
use crate::tabular::{Tabular, Value};
use kinetoscope_engine::Document;

/// Everything `kinetoscope overview` shows for one input path: one [`TraceOverview`] per trace read, in file order.
pub type OverviewDocument = Document<TraceOverview>;

/// Order of the step rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepOrder {
    /// Time order.
    #[default]
    Step,
    /// Longest step first.
    Total,
    /// Largest value of one part first (index into [`Parts::KEYS`]).
    Part(usize),
}

impl StepOrder {
    /// Every order with its `--sort` spelling.
    pub const ALL: [(&'static str, StepOrder); 10] = [
        ("step", Self::Step),
        ("total", Self::Total),
        ("kernel", Self::Part(0)),
        ("memcpy", Self::Part(1)),
        ("memset", Self::Part(2)),
        ("communication", Self::Part(3)),
        ("runtime", Self::Part(4)),
        ("dataloader", Self::Part(5)),
        ("cpu_exec", Self::Part(6)),
        ("other", Self::Part(7)),
    ];
}

impl FromStr for StepOrder {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let key = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        match key.as_str() {
            "step" | "time" => return Ok(Self::Step),
            "total" | "dur" | "duration" => return Ok(Self::Total),
            _ => {}
        }
        let key = key.strip_suffix("_us").unwrap_or(&key);
        Parts::<f64>::KEYS
            .iter()
            .position(|k| *k == key)
            .map(Self::Part)
            .ok_or_else(|| {
                format!(
                    "unknown sort key {s:?}: use step, total or one of {}",
                    Parts::<f64>::KEYS.join(", ")
                )
            })
    }
}

/// The step rows to show: sorted by `order`, the first `top` (0 = all).
fn rows(steps: &[StepBreakdown], order: StepOrder, top: usize) -> Vec<&StepBreakdown> {
    let mut v: Vec<&StepBreakdown> = steps.iter().collect();
    match order {
        StepOrder::Step => {}
        StepOrder::Total => v.sort_by_key(|s| Reverse(s.dur_ns)),
        StepOrder::Part(i) => v.sort_by_key(|s| Reverse(s.breakdown_ns.to_array()[i])),
    }
    if top > 0 {
        v.truncate(top);
    }
    v
}

/// The per-step breakdown of every trace as CSV, µs, each trace's steps followed by its
/// `average` row.
pub fn to_csv(doc: &OverviewDocument, order: StepOrder, top: usize) -> String {
    let mut headers = vec!["trace".to_owned(), "step".into(), "total_us".into()];
    headers.extend(Parts::<f64>::KEYS.iter().map(|k| format!("{k}_us")));
    let mut t = Tabular::new(headers);
    for tr in &doc.traces {
        for s in rows(&tr.steps, order, top) {
            let mut row = vec![
                tr.path.clone().into(),
                s.name.clone().into(),
                us_value(s.dur_ns as f64),
            ];
            row.extend(s.breakdown_ns.to_array().map(|v| us_value(v as f64)));
            t.push(row);
        }
        if let Some(avg) = &tr.average {
            let mut row = vec![
                tr.path.clone().into(),
                "average".into(),
                us_value(avg.dur_ns),
            ];
            row.extend(avg.breakdown_ns.to_array().map(us_value));
            t.push(row);
        }
    }
    t.to_csv()
}

/// Nanoseconds as a µs value: an integer when it is one, else to the nanosecond.
fn us_value(ns: f64) -> Value {
    let v = us(ns);
    if v.fract() == 0.0 && v.abs() < 9e15 {
        Value::Int(v as i64)
    } else {
        Value::float(v, 3)
    }
}

/// Render as a terminal report.
pub fn to_table(doc: &OverviewDocument, order: StepOrder, top: usize) -> String {
    let mut out = String::new();
    if doc.traces.len() > 1 {
        out.push_str(&format!("{}: {} workers\n\n", doc.input, doc.traces.len()));
    }
    for tr in &doc.traces {
        trace_section(&mut out, tr, order, top);
    }
    for e in &doc.errors {
        out.push_str(&format!("error: {}\n", e.error));
    }
    out
}

fn trace_section(out: &mut String, tr: &TraceOverview, order: StepOrder, top: usize) {
    let mut head = format!("{}\n  worker {}", tr.path, tr.worker);
    if let Some(span) = &tr.span {
        head.push_str(&format!(", span {span}"));
    }
    if let Some(rank) = tr.rank {
        head.push_str(&format!(", rank {rank}"));
    }
    out.push_str(&head);
    out.push('\n');
    crate::note::push_warnings(out, &tr.warnings);
    out.push('\n');
    if tr.steps.is_empty() {
        out.push_str("no events: nothing to break down\n\n");
        return;
    }
    out.push_str(&steps_table(tr, order, top).to_terminal());
    out.push('\n');
    if !tr.gpus.is_empty() {
        out.push_str(&gpu_table(tr).to_terminal());
        out.push('\n');
    }
    if !tr.devices.is_empty() {
        out.push_str(&device_table(tr).to_terminal());
        out.push('\n');
    }
}

fn steps_table(tr: &TraceOverview, order: StepOrder, top: usize) -> Tabular {
    let mut headers = vec!["step".to_owned(), "total".into()];
    headers.extend(Parts::<f64>::NAMES.iter().map(|n| n.to_string()));
    let shown = rows(&tr.steps, order, top);
    let title = if shown.len() < tr.steps.len() {
        format!(
            "Step-time breakdown, ms (first {} of {} steps; average over all)",
            shown.len(),
            tr.steps.len()
        )
    } else {
        format!("Step-time breakdown, ms ({} steps)", tr.steps.len())
    };
    let mut t = Tabular::new(headers).titled(title);
    let ms = |ns: f64| Value::float(ms(ns), 3);
    for s in shown {
        let mut row = vec![s.name.clone().into(), ms(s.dur_ns as f64)];
        row.extend(s.breakdown_ns.to_array().map(|v| ms(v as f64)));
        t.push(row);
    }
    if let Some(avg) = &tr.average {
        let mut row = vec!["average".into(), ms(avg.dur_ns)];
        row.extend(avg.breakdown_ns.to_array().map(ms));
        t.push(row);
        let mut row = vec!["% of step".into(), Value::float(100.0, 2)];
        row.extend(avg.share.to_array().map(|p| Value::float(percent(p), 2)));
        t.push(row);
    }
    t
}

fn pct(v: Option<f64>) -> Value {
    v.map_or(Value::Empty, |v| Value::float(percent(v), 2))
}

fn gpu_table(tr: &TraceOverview) -> Tabular {
    let amd = tr.gpus.iter().any(|g| g.vendor == GpuVendor::Amd);
    let mut t = Tabular::new([
        "gpu",
        "name",
        "kernels",
        "utilization %",
        if amd {
            "est. CU eff. %"
        } else {
            "est. SM eff. %"
        },
        "est. occupancy %",
        if amd {
            "matrix cores %"
        } else {
            "tensor cores %"
        },
    ])
    .titled("GPUs (over the kept steps)");
    for g in &tr.gpus {
        t.push(vec![
            g.id.into(),
            g.name.clone().unwrap_or_default().into(),
            g.kernels.into(),
            pct(g.utilization),
            pct(g.sm_efficiency),
            pct(g.achieved_occupancy),
            pct(g.tensor_core_ratio),
        ]);
    }
    t
}

fn device_table(tr: &TraceOverview) -> Tabular {
    let amd = tr.devices.iter().any(|d| d.vendor == GpuVendor::Amd);
    let mut t = Tabular::new([
        "device",
        "name",
        "memory",
        if amd { "arch" } else { "compute capability" },
        if amd { "CUs" } else { "SMs" },
        "used",
    ])
    .titled("Devices (deviceProperties)");
    for d in &tr.devices {
        let used = tr.gpus.iter().any(|g| g.id == d.id);
        let arch = if amd {
            d.arch.clone()
        } else {
            format!("{}.{}", d.compute_major, d.compute_minor)
        };
        t.push(vec![
            d.id.into(),
            d.name.clone().into(),
            bytes(d.total_memory_bytes).into(),
            arch.into(),
            d.num_sms.into(),
            if used { "yes" } else { "" }.into(),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinetoscope_engine::InputLayout;

    #[test]
    fn sort_keys() {
        assert_eq!("step".parse::<StepOrder>(), Ok(StepOrder::Step));
        assert_eq!("total".parse::<StepOrder>(), Ok(StepOrder::Total));
        assert_eq!("kernel".parse::<StepOrder>(), Ok(StepOrder::Part(0)));
        assert_eq!("cpu-exec".parse::<StepOrder>(), Ok(StepOrder::Part(6)));
        assert_eq!("DataLoader_us".parse::<StepOrder>(), Ok(StepOrder::Part(5)));
        assert!("bogus".parse::<StepOrder>().is_err());
    }

    fn step(name: &str, number: i64, parts_ns: [i64; 8]) -> StepBreakdown {
        let dur_ns: i64 = parts_ns.iter().sum();
        let parts = Parts::from_array(parts_ns);
        StepBreakdown {
            name: name.into(),
            number: Some(number),
            start_ns: 0,
            dur_ns,
            device_events: 1,
            breakdown_ns: parts,
        }
    }

    fn doc() -> OverviewDocument {
        let steps = vec![
            step("ProfilerStep#1", 1, [3000, 0, 0, 0, 1000, 0, 500, 500]),
            step("ProfilerStep#2", 2, [6000, 0, 0, 0, 1000, 0, 1500, 1500]),
        ];
        let overview = TraceOverview {
            path: "w0.pt.trace.json".into(),
            worker: "w0".into(),
            span: None,
            rank: Some(0),
            step_source: kinetoscope_analysis::steps::StepSource::ProfilerStep,
            average: Some(kinetoscope_analysis::overview::AverageBreakdown {
                steps: 2,
                dur_ns: 7500.0,
                breakdown_ns: Parts::from_array([
                    4500.0, 0.0, 0.0, 0.0, 1000.0, 0.0, 1000.0, 1000.0,
                ]),
                share: Parts::from_array([0.6, 0.0, 0.0, 0.0, 0.1333, 0.0, 0.1333, 0.1333]),
            }),
            steps,
            dropped_steps: Vec::new(),
            window_ns: Some([0, 15000]),
            gpus: vec![kinetoscope_analysis::overview::GpuMetrics {
                id: 0,
                name: Some("GPU".into()),
                vendor: Default::default(),
                kernels: 2,
                utilization: Some(0.6),
                sm_efficiency: None,
                achieved_occupancy: Some(0.5),
                tensor_core_ratio: Some(0.0),
            }],
            devices: Vec::new(),
            warnings: Vec::new(),
        };
        let mut d =
            OverviewDocument::with_options("w0.pt.trace.json".into(), InputLayout::File, ());
        d.traces.push(overview);
        d
    }

    #[test]
    fn csv_has_steps_then_average() {
        let csv = to_csv(&doc(), StepOrder::Step, 0);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "trace,step,total_us,kernel_us,memcpy_us,memset_us,communication_us,runtime_us,\
             dataloader_us,cpu_exec_us,other_us"
        );
        assert_eq!(
            lines[1],
            "w0.pt.trace.json,ProfilerStep#1,5,3,0,0,0,1,0,0.5,0.5"
        );
        assert_eq!(lines[3], "w0.pt.trace.json,average,7.5,4.5,0,0,0,1,0,1,1");
        // Longest first, cut to one row; the average still covers both steps.
        let csv = to_csv(&doc(), StepOrder::Total, 1);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains("ProfilerStep#2") && lines[2].contains("average"));
    }

    #[test]
    fn terminal_and_json() {
        let text = to_table(&doc(), StepOrder::Step, 0);
        assert!(text.contains("Step-time breakdown, ms (2 steps)"));
        assert!(text.contains("% of step") && text.contains("60.00"));
        assert!(!text.contains("Devices"));
        let json: serde_json::Value =
            serde_json::from_str(&kinetoscope_engine::to_json(&doc()).unwrap()).unwrap();
        let t = &json["traces"][0];
        assert_eq!(t["steps"][0]["breakdown_ns"]["cpu_exec"], 500);
        assert_eq!(t["steps"][1]["dur_ns"], 10000);
        assert_eq!(t["average"]["share"]["kernel"], 0.6);
        assert_eq!(t["gpus"][0]["achieved_occupancy"], 0.5);
        assert!(t["steps"][0].get("dur_us").is_none());
    }

    #[test]
    fn us_values() {
        assert_eq!(us_value(187948000.0), Value::Int(187948));
        assert_eq!(us_value(1500.0), Value::float(1.5, 3));
    }
}
