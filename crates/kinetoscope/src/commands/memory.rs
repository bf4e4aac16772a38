//! `kinetoscope memory`: the memory view of each trace in a file or rank folder.
//!
//! The trace path lives here: read each trace, build its memory view on the worker
//! thread that read it ([`analyze_trace`]), sort and cut the tables, render. A file
//! whose content is a pickle (a CUDA memory snapshot) goes to `memory_snapshot` instead,
//! one whose content is a memory timeline to `memory_timeline`; either reads the file
//! from the opening that classified it.

use std::path::Path;
use std::process::ExitCode;

use std::path::PathBuf;

use kinetoscope_analysis::memory::timeline::attach_comparison;
use kinetoscope_analysis::memory::{analyze_trace, sort, MemoryOptions, SortKey};
use kinetoscope_report::document::InputLayout;
use kinetoscope_report::memory::{to_csv, to_json, to_table, MemoryDocument, MemoryTable};
use kinetoscope_report::memory_html::{render, HtmlChart};
use kinetoscope_trace::read::{sniff_path, ContentKind, ReadOptions, Sniffed};
use kinetoscope_trace::{ArtifactKind, MemoryTimeline};

use super::common::{finish_document, layout_of, map_input, read_options, split_results};
use crate::args::{MemoryArgs, MemoryTableArg, ViewFormat};

pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    if args.view.path.is_file() {
        if let Ok(sniffed) = sniff_path(&args.view.path) {
            match sniffed.kind() {
                ContentKind::Snapshot => return super::memory_snapshot::run(&args, sniffed),
                ContentKind::MemoryTimeline => return super::memory_timeline::run(&args, sniffed),
                _ => {}
            }
        }
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
                eprintln!("{}: {}", v.path, v.notes.join("; "));
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

/// The one memory-timeline file beside a trace (by content), if exactly one, still open
/// from its classification.
fn timeline_beside(trace: &Path) -> Option<Sniffed<'static>> {
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
        {
            found.extend(sniff_path(&p).ok().filter(is_timeline));
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

fn is_timeline(s: &Sniffed<'_>) -> bool {
    s.kind() == ContentKind::MemoryTimeline
}

/// A memory timeline read for comparison: its file, and its content when it could be
/// read.
type LoadedTimeline = (PathBuf, Option<MemoryTimeline>);

fn load(s: Sniffed<'_>) -> LoadedTimeline {
    let path = s.path().to_owned();
    (path, s.read_memory_timeline().ok())
}

/// Attach PyTorch's timeline categories next to the inferred ones. An explicit
/// `--timeline` that cannot be read is an error; a timeline found beside a trace is
/// used only when its peak falls inside the trace's memory records (the same run). Each
/// timeline file is read once, however many traces it is compared with.
fn compare_with_timelines(doc: &mut MemoryDocument, args: &MemoryArgs) -> anyhow::Result<()> {
    let explicit = args.timeline.as_deref();
    let mut timelines: Vec<LoadedTimeline> = Vec::new();
    // (trace, index in `timelines`)
    let mut of_trace: Vec<(PathBuf, usize)> = Vec::new();
    match &doc.layout {
        InputLayout::RunFolder { phases } => {
            for ph in phases {
                let traces: Vec<&PathBuf> = ph
                    .artifacts
                    .iter()
                    .filter(|a| a.kind == ArtifactKind::Trace)
                    .map(|a| &a.path)
                    .collect();
                let tl = ph
                    .artifacts
                    .iter()
                    .filter(|a| a.kind == ArtifactKind::MemoryTimeline)
                    .find_map(|a| sniff_path(&a.path).ok().filter(is_timeline));
                if let (Some(tl), false) = (tl, traces.is_empty()) {
                    of_trace.extend(traces.into_iter().map(|t| (t.clone(), timelines.len())));
                    timelines.push(load(tl));
                }
            }
        }
        InputLayout::File => {
            if let Some(v) = doc.traces.first() {
                let trace = PathBuf::from(&v.path);
                let tl = match explicit {
                    Some(p) => Some(
                        sniff_path(p)
                            .and_then(|s| s.read_memory_timeline())
                            .map(|tl| (p.to_owned(), Some(tl)))?,
                    ),
                    None => timeline_beside(&trace).map(load),
                };
                if let Some(tl) = tl {
                    of_trace.push((trace, 0));
                    timelines.push(tl);
                }
            }
        }
        InputLayout::RankFolder => {}
    }
    for v in &mut doc.traces {
        let trace = PathBuf::from(&v.path);
        let Some((tl_path, Some(tl))) = of_trace
            .iter()
            .find(|(t, _)| *t == trace)
            .map(|(_, k)| &timelines[*k])
        else {
            continue;
        };
        let tl = super::memory_timeline::view(tl_path, tl, args.points as usize);
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
        v.notes.push(format!(
            "categories compared with PyTorch's memory timeline {}",
            tl_path.display()
        ));
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
