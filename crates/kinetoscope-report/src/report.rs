//! `kinetoscope report`: the advisor's one-screen summary and ranked findings, as a
//! terminal report or a versioned JSON document (`docs/json.md`).
//!
//! Terminal: per trace, steps and step time, breakdown, host-side phases, GPU metrics,
//! memory peaks against device memory and FLOPs/MFU, then the findings in rank order
//! (estimated recoverable time, then severity), each with impact, confidence, evidence,
//! fix and the threshold's source. Cross-rank findings (stragglers) follow the traces.
//! A rank folder lists the job's findings once, after its ranks (each rank's summary, or
//! one line per rank past [`RANK_SECTIONS_MAX`] ranks): each problem once over the ranks
//! it is on, with the cross-rank findings. A run folder starts with its phases side by
//! side: time, host phases, peak memory, top operators and the findings that matter.

use std::fmt::Write;

use kinetoscope_advisor::flops::FlopsSummary;
use kinetoscope_advisor::summary::{ForwardSource, Phases, Summary};
use kinetoscope_advisor::{Finding, TraceReport};
use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::ops::OpSortKey;
use kinetoscope_engine::run_folder::RunReport;
use kinetoscope_engine::{InputLayout, ReportDocument};
use kinetoscope_trace::ArtifactKind;

use crate::format::{bytes, duration, ms, percent};
use crate::tabular::{Tabular, Value};

/// Ranks of a rank folder shown each with its summary; past this, one line per rank.
pub const RANK_SECTIONS_MAX: usize = 8;

/// The terminal report.
pub fn to_table(doc: &ReportDocument) -> String {
    let mut out = String::new();
    if let Some(run) = &doc.run {
        out.push_str(&run_table(&doc.input, run));
        out.push('\n');
    }
    let rank_folder = matches!(doc.layout, InputLayout::RankFolder);
    if rank_folder && doc.traces.len() > RANK_SECTIONS_MAX {
        out.push_str(&ranks_table(&doc.input, &doc.traces));
        out.push('\n');
    } else {
        for t in &doc.traces {
            trace_section(&mut out, t, !rank_folder);
        }
    }
    if rank_folder {
        job_findings(&mut out, doc);
    }
    for p in &doc.pstats {
        crate::pstats::report_section(&mut out, p);
    }
    crate::tables::report_section(&mut out, &doc.tables);
    let export = matches!(doc.layout, InputLayout::ParquetExport);
    if export {
        let _ = writeln!(
            out,
            "A Parquet export: the rules across ranks ran from its tables; the rules of \
             each trace need the traces (`kinetoscope report RANK_FOLDER`).\n"
        );
    }
    if !rank_folder && !doc.cross_rank_findings.is_empty() {
        let _ = writeln!(out, "Across ranks ({})", doc.input);
        for (i, f) in doc.cross_rank_findings.iter().enumerate() {
            finding(&mut out, i + 1, f);
        }
        out.push('\n');
    }
    if let Some(t) = &doc.throughput {
        let unit = match t.unit {
            kinetoscope_engine::diff::document::ThroughputUnit::Samples => "samples",
            kinetoscope_engine::diff::document::ThroughputUnit::Tokens => "tokens",
        };
        match (t.items_per_s, t.median_step_ns) {
            (Some(rate), Some(step)) => {
                let _ = writeln!(
                    out,
                    "throughput  {rate:.1} {unit}/s at the median step ({} {unit} per step of {}{})",
                    t.per_step,
                    duration(step),
                    items_source(&t.source)
                );
            }
            _ => {
                let _ = writeln!(out, "throughput  unknown: no steps");
            }
        }
        out.push('\n');
    }
    for e in &doc.errors {
        let _ = writeln!(out, "error: {}: {}", e.path, e.error);
    }
    if doc.traces.len() > 1 || !doc.cross_rank_findings.is_empty() || export {
        let c = &doc.counts;
        let what = match export {
            true => "an export's ranks".to_owned(),
            false => format!("{} traces", doc.traces.len()),
        };
        let _ = writeln!(
            out,
            "{what}, {} findings: {} critical, {} warning, {} info",
            doc.findings.len(),
            c.critical,
            c.warning,
            c.info
        );
    }
    out
}

/// A run folder's phases side by side.
fn run_table(input: &str, run: &RunReport) -> String {
    let mut t = Tabular::new([
        "stage",
        "phase",
        "time",
        "host phases (per step)",
        "peak memory",
        "top operators (self time)",
        "findings that matter",
    ])
    .titled(format!(
        "run folder {input}: {} phases, {} profiled",
        run.phases.len(),
        duration(run.time_ns)
    ));
    for p in &run.phases {
        let time = match (p.time_ns, p.time_share) {
            (Some(ns), Some(share)) => format!(
                "{}\n{:.1} %{}",
                duration(ns),
                percent(share),
                if p.steps > 1 {
                    format!("\n{} steps", p.steps)
                } else {
                    String::new()
                }
            ),
            (Some(ns), None) => duration(ns),
            _ if p.trace.is_none() => "no trace".to_owned(),
            _ => String::new(),
        };
        let phases = p
            .phases
            .as_ref()
            .map(|x| phases_text(x, p.communication_ns).replace(" · ", "\n"))
            .unwrap_or_default();
        let peak = p
            .peak_memory
            .as_ref()
            .map(|m| {
                let from = match m.source {
                    ArtifactKind::Trace => "trace",
                    ArtifactKind::MemorySnapshot => "snapshot",
                    ArtifactKind::MemoryTimeline => "memory timeline",
                    ArtifactKind::MemoryTimelineHtml
                    | ArtifactKind::Pstats
                    | ArtifactKind::KeyAveragesTable => "",
                };
                let dev = m
                    .device
                    .as_deref()
                    .map(|d| format!(" {d}"))
                    .unwrap_or_default();
                format!("{}\n({from}{dev})", bytes(m.bytes.max(0) as u64))
            })
            .unwrap_or_default();
        let ops = p
            .top_ops
            .as_ref()
            .map(|o| {
                let side = if o.by == OpSortKey::DeviceSelf {
                    "device"
                } else {
                    "host"
                };
                o.ops
                    .iter()
                    .map(|x| format!("{} {} {side}", x.name, duration(x.self_ns as f64)))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let mut findings: Vec<String> = p
            .findings
            .iter()
            .map(|f| {
                format!(
                    "{} {} [{}]: {:.2} ms/step ({:.1} %)",
                    f.id,
                    f.rule,
                    f.severity.as_str(),
                    ms(f.impact_ns_per_step),
                    percent(f.impact_share)
                )
            })
            .collect();
        let rest = p.findings_total - p.findings.len();
        if rest > 0 {
            findings.push(format!("+{rest} more"));
        }
        t.push(vec![
            Value::Int(i64::from(p.stage)),
            p.phase.clone().into(),
            time.into(),
            phases.into(),
            peak.into(),
            ops.into(),
            findings.join("\n").into(),
        ]);
    }
    t.to_terminal()
}

/// The host phases the trace has, `·`-separated (phases it has no span of are left out,
/// not shown as 0); empty when it has none.
pub fn phases_text(p: &Phases, communication_ns: f64) -> String {
    let forward = p.forward_ns.map(|v| {
        let how = match p.forward_source {
            Some(ForwardSource::ModuleSpans) => " (nn.Module spans)",
            Some(ForwardSource::StepChildren) => " (before the first backward)",
            None => "",
        };
        format!("{}{how}", duration(v))
    });
    [
        ("DataLoader", p.dataloader_ns.map(duration)),
        ("forward", forward),
        ("backward", p.backward_ns.map(duration)),
        ("optimizer", p.optimizer_ns.map(duration)),
        (
            "collectives",
            (communication_ns > 0.0).then(|| duration(communication_ns)),
        ),
    ]
    .into_iter()
    .filter_map(|(name, v)| Some(format!("{name} {}", v?)))
    .collect::<Vec<_>>()
    .join(" · ")
}

/// A rank folder's findings: each problem once over the ranks it is on, and the
/// cross-rank findings, ranked together.
fn job_findings(out: &mut String, doc: &ReportDocument) {
    if doc.findings.is_empty() {
        let _ = writeln!(
            out,
            "No findings on any rank: no rule's threshold was crossed.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "Findings of the job ({}, {} ranks read), each once over the ranks it is on, by \
         estimated recoverable time then severity:",
        doc.input,
        doc.traces.len()
    );
    for (i, f) in doc.findings.iter().enumerate() {
        finding(out, i + 1, f);
    }
    out.push('\n');
}

/// A rank folder's ranks, one line each.
fn ranks_table(input: &str, traces: &[TraceReport]) -> String {
    let mut t = Tabular::new([
        "rank",
        "steps",
        "median step",
        "GPU utilization",
        "peak allocated",
        "trace",
    ])
    .titled(format!("rank folder {input}: {} ranks", traces.len()));
    for r in traces {
        let s = &r.summary;
        let util: Vec<String> = s
            .gpus
            .iter()
            .filter_map(|g| Some(format!("{:.1} %", 100.0 * g.utilization?)))
            .collect();
        let peak = s.memory.iter().map(|m| m.peak_allocated_bytes).max();
        t.push(vec![
            r.rank.map_or(Value::Empty, Value::Int),
            s.step_stats
                .as_ref()
                .map_or(Value::Empty, |st| Value::Int(st.count as i64)),
            s.step_stats
                .as_ref()
                .map_or(Value::Empty, |st| duration(st.median_ns).into()),
            util.join(" · ").into(),
            peak.map_or(Value::Empty, |b| bytes(b.max(0) as u64).into()),
            r.path.clone().into(),
        ]);
    }
    t.to_terminal()
}

/// One trace's summary, and its findings when `findings` (a rank folder lists them once
/// for the job).
fn trace_section(out: &mut String, t: &TraceReport, findings: bool) {
    let s = &t.summary;
    let rank = t.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
    let _ = writeln!(out, "kinetoscope report: {}{rank}", t.path);
    step_lines(out, s);
    gpu_lines(out, s);
    launch_lines(out, s);
    memory_lines(out, s);
    flops_lines(out, &t.flops);
    for w in &s.warnings {
        let _ = writeln!(out, "  warning: {}", crate::note::text(w));
    }
    out.push('\n');
    if findings {
        trace_findings(out, t);
    }
}

/// The step statistics, the step-time breakdown and the host phases.
fn step_lines(out: &mut String, s: &Summary) {
    match &s.step_stats {
        Some(st) => {
            let _ = writeln!(
                out,
                "  steps       {} × {} mean (median {}, min {}, max {}, CV {:.1} %){}",
                st.count,
                duration(st.mean_ns),
                duration(st.median_ns),
                duration(st.min_ns as f64),
                duration(st.max_ns as f64),
                100.0 * st.cv,
                if matches!(
                    s.step_source,
                    kinetoscope_analysis::steps::StepSource::WholeTrace
                ) {
                    "  [no ProfilerStep#: whole trace as one step]"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(out, "  steps       none");
        }
    }
    if let (Some(ns), Some(share)) = (&s.breakdown_ns, &s.breakdown_share) {
        let names = kinetoscope_analysis::overview::Parts::<f64>::NAMES;
        let parts: Vec<String> = ns
            .to_array()
            .iter()
            .zip(share.to_array())
            .zip(names)
            .filter(|((v, _), _)| **v > 0.0)
            .map(|((v, p), n)| format!("{n} {} ({:.1} %)", duration(*v), percent(p)))
            .collect();
        let _ = writeln!(out, "  breakdown   {}", parts.join(" · "));
    }
    let phases = phases_text(&s.phases, s.communication_ns);
    if !phases.is_empty() {
        let _ = writeln!(out, "  phases      {phases}  (host, per step)");
    }
}

/// One line per GPU with its metrics, or the line saying why there is none.
fn gpu_lines(out: &mut String, s: &Summary) {
    let lost = s.warnings.iter().find_map(|w| match w {
        Note::NoDeviceActivity { launch_calls } => Some(*launch_calls),
        _ => None,
    });
    match lost {
        Some(n) if s.gpus.is_empty() => {
            let _ = writeln!(
                out,
                "  GPU         device activity missing ({n} kernel launch calls, no kernel recorded)"
            );
        }
        _ if s.gpus.is_empty() => {
            let _ = writeln!(out, "  GPU         none in the trace (CPU-only profile)");
        }
        _ => {}
    }
    for g in &s.gpus {
        let pct = |v: Option<f64>| {
            v.map(|x| format!("{:.1} %", 100.0 * x))
                .unwrap_or("n/a".into())
        };
        let _ = writeln!(
            out,
            "  GPU{}        {}: utilization {} · est. {} efficiency {} · est. occupancy {} · {} {}",
            g.id,
            g.name.as_deref().unwrap_or("unknown"),
            pct(g.utilization),
            g.vendor.multiprocessor(),
            pct(g.sm_efficiency),
            pct(g.achieved_occupancy),
            g.vendor.matrix_units(),
            pct(g.tensor_core_ratio)
        );
    }
}

/// How the host launches work: CUDA graph replays and the runtime calls per step.
fn launch_lines(out: &mut String, s: &Summary) {
    if let Some(g) = &s.graphs {
        let _ = writeln!(
            out,
            "  graphs      {} graph launch(es) replay {} kernels ({:.1} % of kernel time in the steps)",
            g.launches,
            g.kernels,
            percent(g.kernel_share)
        );
    }
    if !s.runtime_calls.is_empty() {
        let calls: Vec<String> = s
            .runtime_calls
            .iter()
            .map(|r| {
                format!(
                    "{} {:.1} calls {} ({:.1} %)",
                    r.name,
                    r.calls_per_step,
                    duration(r.ns_per_step),
                    percent(r.share)
                )
            })
            .collect();
        let _ = writeln!(out, "  runtime     {}  (host, per step)", calls.join(" · "));
    }
}

/// One line per device with its memory peaks, against its capacity when known.
fn memory_lines(out: &mut String, s: &Summary) {
    for m in &s.memory {
        let cap = match (m.capacity_bytes, m.peak_share_of_capacity) {
            (Some(c), Some(p)) => format!(" of {} ({:.1} %)", bytes(c), percent(p)),
            _ => String::new(),
        };
        let reserved = if m.peak_reserved_bytes > 0 {
            format!(", reserved {}", bytes(m.peak_reserved_bytes as u64))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  memory      {}: peak allocated {}{reserved}{cap}",
            m.device,
            bytes(m.peak_allocated_bytes.max(0) as u64)
        );
    }
}

/// The FLOPs per step by class (when any were counted), then the MFU.
fn flops_lines(out: &mut String, f: &FlopsSummary) {
    if f.flops_per_step > 0.0 {
        let classes: Vec<String> = f
            .classes
            .iter()
            .map(|c| {
                format!(
                    "{:?} {:.3} GFLOP{}",
                    c.class,
                    c.flops_per_step / 1e9,
                    c.achieved_tflops
                        .map(|a| format!(" @ {a:.3} TFLOP/s"))
                        .unwrap_or_default()
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  FLOPs       {:.3} GFLOP per step ({}), {:.3} TFLOP/s over step time",
            f.flops_per_step / 1e9,
            classes.join(", "),
            f.tflops_per_s.unwrap_or(0.0)
        );
    }
    let _ = writeln!(
        out,
        "  MFU         {}{}",
        f.mfu
            .map(|m| format!("{:.1} %", 100.0 * m))
            .unwrap_or("n/a".into()),
        f.note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    );
}

/// One trace's findings in rank order, or the line saying there are none.
fn trace_findings(out: &mut String, t: &TraceReport) {
    if t.findings.is_empty() {
        let _ = writeln!(out, "No findings: no rule's threshold was crossed.\n");
        return;
    }
    let _ = writeln!(
        out,
        "Findings ({}), by estimated recoverable time then severity:",
        t.findings.len()
    );
    for (i, f) in t.findings.iter().enumerate() {
        finding(out, i + 1, f);
    }
    out.push('\n');
}

fn finding(out: &mut String, n: usize, f: &Finding) {
    let _ = writeln!(
        out,
        "{n:>2}. [{}] {} {}: {}",
        f.severity.as_str(),
        f.id,
        f.rule,
        f.title
    );
    let c = &f.confidence;
    let ranks = if c.of_ranks > 1 {
        format!(", {}/{} ranks", c.ranks, c.of_ranks)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "    impact      {:.3} ms per step ({:.1} % of step) · confidence {}/{} steps{ranks}",
        ms(f.impact_ns_per_step),
        percent(f.impact_share),
        c.steps,
        c.of_steps
    );
    if let Some(a) = &f.across_ranks {
        let rank = a
            .worst_rank
            .map(|r| format!("rank {r}, "))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    ranks       seen on {} · per step least {:.3} ms, mean {:.3} ms · shown: {rank}{}",
            a.seen_on,
            ms(a.least_impact_ns_per_step),
            ms(a.mean_impact_ns_per_step),
            a.worst_trace
        );
    }
    for (i, e) in f.evidence.iter().enumerate() {
        let label = if i == 0 { "evidence" } else { "" };
        let _ = writeln!(out, "    {label:<11} {e}");
    }
    let _ = writeln!(out, "    fix         {}", f.fix);
    let _ = writeln!(out, "    threshold   {}", f.details);
}

/// Where the items per step come from, as a clause (empty when given).
pub(crate) fn items_source(source: &kinetoscope_engine::diff::document::ItemsSource) -> String {
    match source {
        kinetoscope_engine::diff::document::ItemsSource::Given => String::new(),
        kinetoscope_engine::diff::document::ItemsSource::Shapes { op, dims } => {
            format!("; read from the input shape of {op} {dims:?}")
        }
    }
}
