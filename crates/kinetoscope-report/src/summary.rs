//! `kinetoscope summary`: a terminal report and a JSON document.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use kinetoscope_analysis::summary::TraceSummary;
use kinetoscope_engine::{Document, InputLayout};

use crate::format::{bytes, count, duration};

/// What `kinetoscope summary` shows: one [`TraceSummary`] per trace.
pub type SummaryDocument = Document<TraceSummary>;

/// Render as a terminal report.
pub fn to_table(doc: &SummaryDocument) -> String {
    let mut out = String::new();
    if let InputLayout::RunFolder { phases } = &doc.layout {
        out.push_str(&format!("run folder {}\n", doc.input));
        for p in phases {
            out.push_str(&format!("  stage {} · {}\n", p.stage, p.phase));
            for a in &p.artifacts {
                let name = a
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let memory = doc
                    .phase_memory
                    .iter()
                    .flat_map(|p| &p.artifacts)
                    .find(|m| std::path::Path::new(&m.path) == a.path)
                    .map(|m| format!("  ({})", crate::run_folder::artifact_line(m)));
                let note = match memory {
                    Some(m) => m,
                    None if a.kind.is_readable() => String::new(),
                    None => "  (not read yet by this version)".to_owned(),
                };
                out.push_str(&format!(
                    "    {:<22} {name}{note}\n",
                    format!("{:?}", a.kind)
                ));
            }
        }
        out.push('\n');
    }
    for t in &doc.traces {
        out.push_str(&trace_table(t));
        out.push('\n');
    }
    for e in &doc.errors {
        out.push_str(&format!("error: {}\n", e.error));
    }
    out
}

fn trace_table(t: &TraceSummary) -> String {
    let mut out = String::new();
    let compression = if let Some(n) = &t.nsys {
        let version = if n.nsys_version.is_empty() {
            String::new()
        } else {
            format!(", nsys {}", n.nsys_version)
        };
        format!("{} Nsight Systems export{version}", bytes(t.file_bytes))
    } else if t.gzip {
        format!(
            "gzip, {} → {} JSON",
            bytes(t.file_bytes),
            bytes(t.json_bytes)
        )
    } else {
        format!("{} JSON", bytes(t.json_bytes))
    };
    out.push_str(&format!("trace    {} ({compression})\n", t.path));
    out.push_str(&format!("era      {}\n", t.era));
    if let Some(n) = &t.nsys {
        for p in &n.gpu_processes {
            let devices: Vec<String> = p.devices.iter().map(i64::to_string).collect();
            out.push_str(&format!(
                "process  {} {} · GPU work on device {}\n",
                p.pid,
                p.name,
                devices.join(", ")
            ));
        }
    }
    let rank = match (t.rank, t.world_size) {
        (Some(r), Some(w)) => format!("{r} of {w}"),
        (Some(r), None) => format!("{r}"),
        (None, _) => "unknown (single process?)".into(),
    };
    let backend = t
        .backend
        .as_deref()
        .map(|b| format!(" · {b}"))
        .unwrap_or_default();
    out.push_str(&format!("rank     {rank}{backend}\n"));
    if t.devices.is_empty() {
        out.push_str("devices  none recorded (CPU-only trace)\n");
    }
    for d in &t.devices {
        out.push_str(&format!(
            "device   {}: {} · {} · {} {}s · {}\n",
            d.id,
            if d.name.is_empty() {
                "(unnamed)"
            } else {
                &d.name
            },
            bytes(d.total_memory_bytes),
            d.num_sms,
            d.vendor.multiprocessor(),
            if d.arch.is_empty() {
                "arch unknown"
            } else {
                &d.arch
            }
        ));
    }
    if let Some(span) = t.span_ns {
        out.push_str(&format!("span     {}\n", duration(span as f64)));
    }
    if !t.profiler_options.is_empty() {
        out.push_str(&format!("options  {}\n", t.profiler_options.join(", ")));
    }
    match &t.step_stats {
        Some(s) => out.push_str(&format!(
            "steps    {} · mean {} · median {} · p90 {} · min {} · max {} · CV {:.1}%\n",
            s.count,
            duration(s.mean_ns),
            duration(s.median_ns),
            duration(s.p90_ns),
            duration(s.min_ns as f64),
            duration(s.max_ns as f64),
            s.cv * 100.0
        )),
        None => out.push_str("steps    none marked (ProfilerStep# absent)\n"),
    }

    let mut cats = Table::new();
    cats.load_preset(UTF8_BORDERS_ONLY);
    cats.set_header(vec!["category", "events"]);
    let mut by_count: Vec<_> = t.events_by_category.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (c, n) in by_count {
        cats.add_row(vec![
            Cell::new(c),
            Cell::new(count(*n)).set_alignment(CellAlignment::Right),
        ]);
    }
    cats.add_row(vec![
        Cell::new("total"),
        Cell::new(count(t.total_events)).set_alignment(CellAlignment::Right),
    ]);
    out.push_str(&cats.to_string());
    out.push('\n');

    if t.step_stats.is_some() {
        let mut steps = Table::new();
        steps.load_preset(UTF8_BORDERS_ONLY);
        steps.set_header(vec!["step", "starts at", "duration"]);
        let origin = t.start_ns.unwrap_or(0);
        for s in &t.steps {
            steps.add_row(vec![
                Cell::new(&s.name),
                Cell::new(format!("+{}", duration((s.start_ns - origin) as f64)))
                    .set_alignment(CellAlignment::Right),
                Cell::new(duration(s.dur_ns as f64)).set_alignment(CellAlignment::Right),
            ]);
        }
        out.push_str(&steps.to_string());
        out.push('\n');
    }
    for w in &t.warnings {
        out.push_str(&format!("warning: {}\n", crate::note::text(w)));
    }
    out
}
