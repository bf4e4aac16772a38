//! `kinetoscope memory`: the memory view of each trace in a file or rank folder.
//!
//! The trace path lives here: read each trace, build its memory view on the worker
//! thread that read it ([`analyze_trace`]), sort and cut the tables, render. A file
//! whose content is a pickle (a CUDA memory snapshot) goes to `memory_snapshot` instead.

use std::path::Path;
use std::process::ExitCode;

use std::path::PathBuf;

use kinetoscope_analysis::memory::timeline::attach_comparison;
use kinetoscope_analysis::memory::{analyze_trace, sort, MemoryOptions, SortKey};
use kinetoscope_analysis::note::Note;
use kinetoscope_report::document::InputLayout;
use kinetoscope_report::memory::{to_csv, to_json, to_table, MemoryDocument, MemoryTable};
use kinetoscope_report::memory_html::{render, HtmlChart};
use kinetoscope_report::note;
use kinetoscope_trace::read::{is_memory_timeline_file, ArtifactKind, ReadOptions};

use super::common::{finish_document, layout_of, map_input, read_options, split_results};
use crate::args::{MemoryArgs, MemoryTableArg, ViewFormat};

pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    if args.view.path.is_file() && kinetoscope_trace::read::is_snapshot_file(&args.view.path) {
        return super::memory_snapshot::run(&args);
    }
    if args.view.path.is_file() && kinetoscope_trace::read::is_memory_timeline_file(&args.view.path)
    {
        return super::memory_timeline::run(&args);
    }
    let sort_key = args
        .view
        .sort
        .as_deref()
        .map(str::parse::<SortKey>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("invalid --sort: {e}"))?;
    let opts = MemoryOptions {
        points: args.points as usize,
        device: args.device,
    };
    let mut doc = view_traces(&args.view.path, &read_options(&args.view.read), &opts)?;
    compare_with_timelines(&mut doc, &args)?;
    if let Some(out) = &args.html {
        write_html(&doc, &args, out)?;
    }
    doc.options.sort = sort_key.map(|k| k.to_string());
    doc.options.top = args.view.top;
    for v in &mut doc.traces {
        sort::sort_and_limit(v, sort_key, args.view.top);
    }
    let table = args.table.map(|t| match t {
        MemoryTableArg::Curve => MemoryTable::Curve,
        MemoryTableArg::Events => MemoryTable::Events,
        MemoryTableArg::Operators => MemoryTable::Operators,
    });
    let text = match args.view.format {
        ViewFormat::Table => to_table(&doc, table),
        ViewFormat::Json => to_json(&doc) + "\n",
        ViewFormat::Csv => {
            for v in doc.traces.iter().filter(|v| v.records == 0) {
                let notes: Vec<String> = v.notes.iter().map(note::text).collect();
                eprintln!("{}: {}", v.path, notes.join("; "));
            }
            to_csv(&doc, table.unwrap_or(MemoryTable::Operators))
        }
    };
    finish_document(&text, &doc)
}

/// The memory views of every trace in `path` (a file or a rank folder).
fn view_traces(
    path: &Path,
    read: &ReadOptions,
    opts: &MemoryOptions,
) -> anyhow::Result<MemoryDocument> {
    let (input, results) = map_input(path, read, |t| analyze_trace(t, opts))?;
    let mut doc = MemoryDocument::new(path.display().to_string(), layout_of(input));
    let mut peaks = std::collections::HashMap::new();
    doc.doc.errors = split_results(results, |path, v| {
        let peak = v
            .devices
            .iter()
            .filter_map(|d| Some((d.peak_allocated.as_ref()?.bytes, d.device.clone())))
            .max_by_key(|(b, _)| *b);
        peaks.insert(path, peak);
        doc.doc.traces.push(v);
    });
    if let InputLayout::RunFolder { phases } = &doc.layout {
        doc.phases = super::run_folder::phase_memory(phases, &peaks);
    }
    Ok(doc)
}

/// The memory-timeline file for a trace: `--timeline`, else the one timeline file
/// beside the trace (by content), if exactly one.
fn timeline_for(trace: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    let dir = trace.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_ascii_lowercase();
        if p.is_file()
            && (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz"))
            && is_memory_timeline_file(&p)
        {
            found.push(p);
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// Attach PyTorch's timeline categories next to the inferred ones. An explicit
/// `--timeline` that cannot be read is an error; a timeline found beside a trace is
/// used only when its peak falls inside the trace's memory records (the same run).
fn compare_with_timelines(doc: &mut MemoryDocument, args: &MemoryArgs) -> anyhow::Result<()> {
    let explicit = args.timeline.as_deref();
    let mut phase_timelines: Vec<(PathBuf, PathBuf)> = Vec::new();
    if let InputLayout::RunFolder { phases } = &doc.layout {
        for ph in phases {
            let tl = ph.artifacts.iter().find(|a| {
                a.kind == ArtifactKind::MemoryTimeline && is_memory_timeline_file(&a.path)
            });
            for a in ph
                .artifacts
                .iter()
                .filter(|a| a.kind == ArtifactKind::Trace)
            {
                if let Some(t) = tl {
                    phase_timelines.push((a.path.clone(), t.path.clone()));
                }
            }
        }
    }
    let single = matches!(doc.layout, InputLayout::File);
    for v in &mut doc.traces {
        let trace = PathBuf::from(&v.path);
        let tl_path = if single {
            timeline_for(&trace, explicit)
        } else {
            phase_timelines
                .iter()
                .find(|(t, _)| *t == trace)
                .map(|(_, tl)| tl.clone())
        };
        let Some(tl_path) = tl_path else { continue };
        let tl = match super::memory_timeline::view(&tl_path, args.points as usize) {
            Ok(tl) => tl,
            Err(e) if explicit.is_some() => return Err(e),
            Err(_) => continue,
        };
        if !attach_comparison(v, &tl) {
            continue;
        }
        if explicit.is_none() {
            let c = v.timeline_comparison.as_ref().expect("attached");
            let span = v
                .devices
                .iter()
                .filter_map(|d| Some((d.curve.points.first()?.ts_ns, d.curve.points.last()?.ts_ns)))
                .fold(None, |acc: Option<(i64, i64)>, (a, b)| {
                    Some(acc.map_or((a, b), |(x, y)| (x.min(a), y.max(b))))
                });
            let inside = span.is_some_and(|(a, b)| (a..=b).contains(&c.timeline_peak.ts_ns));
            if !inside {
                v.timeline_comparison = None;
                continue;
            }
        }
        v.notes.push(Note::ComparedWithTimeline {
            path: tl_path.display().to_string(),
        });
    }
    Ok(())
}

/// `--html`: one chart per trace and device (inferred categories, else allocated bytes).
fn write_html(doc: &MemoryDocument, args: &MemoryArgs, out: &Path) -> anyhow::Result<()> {
    use kinetoscope_analysis::memory::timeline::{CategoryPoint, CategorySeries};
    let multi = doc.traces.len() > 1;
    let mut charts = Vec::new();
    let mut inputs: Vec<PathBuf> = vec![args.view.path.clone()];
    if let Some(t) = &args.timeline {
        inputs.push(t.clone());
    }
    for v in &doc.traces {
        inputs.push(PathBuf::from(&v.path));
        for d in &v.devices {
            let title = if multi {
                format!("{} · {}", v.path, d.device)
            } else {
                d.device.clone()
            };
            let chart = match &d.categories {
                Some(c) => HtmlChart::from_series(
                    title,
                    format!("categories inferred by kinetoscope: {}", c.method),
                    &c.series,
                    v.origin_ns,
                ),
                None => {
                    let points = d
                        .curve
                        .points
                        .iter()
                        .map(|p| CategoryPoint {
                            ts_ns: p.ts_ns,
                            bytes: vec![p.allocated_bytes],
                        })
                        .collect();
                    HtmlChart::from_series(
                        title,
                        "allocated bytes (no addresses recorded: no categories)".to_owned(),
                        &CategorySeries::new(vec!["allocated".to_owned()], points, usize::MAX),
                        v.origin_ns,
                    )
                }
            };
            charts.push(chart);
        }
    }
    let html = render("kinetoscope memory", &doc.input, &charts);
    super::memory_html::write(out, &inputs, &html)
}
