//! `kinetoscope memory TIMELINE`: the path of the memory command taken when the file's
//! content is a profiler memory timeline (`export_memory_timeline` `.json` or
//! `.raw.json.gz`), whatever it is called; the file is read from the opening that
//! classified it.

use std::path::Path;
use std::process::ExitCode;

use kinetoscope_analysis::memory::timeline::{analyze_timeline, TimelineView};
use kinetoscope_report::memory_html::{render, HtmlChart};
use kinetoscope_report::memory_timeline::{to_json, to_table, TimelineDocument};
use kinetoscope_trace::read::Sniffed;
use kinetoscope_trace::MemoryTimeline;

use super::common::write_stdout;
use crate::args::{MemoryArgs, MemoryTableArg, ViewFormat};

/// Analyse a timeline read from `path`, down-sampled to about `points` points.
pub fn view(path: &Path, tl: &MemoryTimeline, points: usize) -> TimelineView {
    analyze_timeline(&path.display().to_string(), tl, points)
}

/// The HTML chart of a timeline view.
pub fn chart(v: &TimelineView) -> HtmlChart {
    HtmlChart::from_series(
        format!("PyTorch memory timeline ({} rows)", v.rows),
        "categories as labelled by PyTorch's export_memory_timeline".to_owned(),
        &v.series,
        v.origin_ns,
    )
}

/// Read the timeline, analyse it, render it.
pub fn run(args: &MemoryArgs, sniffed: Sniffed<'_>) -> anyhow::Result<ExitCode> {
    let path = &args.view.path;
    if args.view.format == ViewFormat::Csv {
        anyhow::bail!(
            "{}: CSV is not available for memory timelines; use --format table or json",
            path.display()
        );
    }
    if args.view.sort.is_some() || args.device.is_some() || args.timeline.is_some() {
        eprintln!(
            "warning: --sort, --device and --timeline apply to traces only; ignored for a \
             memory timeline"
        );
    }
    let tl = sniffed.read_memory_timeline()?;
    let full = view(path, &tl, args.points as usize);
    if let Some(out) = &args.html {
        let html = render("kinetoscope memory", &full.path, &[chart(&full)]);
        super::memory_html::write(out, std::slice::from_ref(path), &html)?;
    }
    let text = match args.view.format {
        ViewFormat::Json => to_json(&TimelineDocument::new(full)) + "\n",
        _ => {
            let all_points = args.table == Some(MemoryTableArg::Curve);
            let shown = if all_points {
                full
            } else {
                // A short table on the terminal: 6 buckets, each bucket's extremes.
                view(path, &tl, 24)
            };
            to_table(&TimelineDocument::new(shown), true)
        }
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
