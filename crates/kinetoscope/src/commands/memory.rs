//! `kinetoscope memory`: the memory view of a trace, rank folder or run folder, a CUDA
//! memory snapshot or a profiler memory timeline (the engine decides by content), and
//! with `--html` one self-contained chart.

use std::process::ExitCode;

use kinetoscope_engine::{MemoryOptions, MemoryResult, Source};
use kinetoscope_report::memory::MemoryTable;
use kinetoscope_report::{memory, memory_html, memory_snapshot, memory_timeline, note};

use super::output::{emit, message, note_skipped};
use super::{engine, output_file};
use crate::args::{MemoryArgs, MemoryGroupBy, MemoryTableArg, ViewFormat};

/// Points of the short terminal table of a memory timeline (6 buckets, each bucket's
/// extremes).
const TIMELINE_TABLE_POINTS: usize = 24;

/// Read, analyse, write the chart if asked, render.
pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let v = &args.view;
    let src = Source::Path(v.path.clone());
    // Refused before anything is read; checked again when written.
    let reads = output_file::files_read(&v.path, args.timeline.clone());
    if let Some(out) = &args.html {
        output_file::check("--html", out, &reads)?;
    }
    let opts = MemoryOptions {
        points: args.points as usize,
        device: args.device,
        sort: args.sort,
        top: v.top,
        timeline: args.timeline.clone(),
    };
    let engine = engine(&v.read);
    let result = engine.memory(&src, &opts)?;
    let table = match (args.table, args.group_by) {
        (Some(MemoryTableArg::Curve), _) => Some(MemoryTable::Curve),
        (Some(MemoryTableArg::Events), _) => Some(MemoryTable::Events),
        (Some(MemoryTableArg::Operators), _) => Some(MemoryTable::Operators),
        (Some(MemoryTableArg::Modules), _) | (None, MemoryGroupBy::Module) => {
            Some(MemoryTable::Modules)
        }
        (None, MemoryGroupBy::Op) => None,
    };
    match result {
        MemoryResult::Traces(doc) => {
            if let Some(out) = &args.html {
                let html = memory_html::render(
                    "kinetoscope memory",
                    &doc.input,
                    &memory_html::trace_charts(&doc),
                );
                output_file::write("--html", out, &reads, html.as_bytes())?;
            }
            if v.format == ViewFormat::Csv {
                for t in doc.traces.iter().filter(|t| t.records == 0) {
                    let notes: Vec<String> = t.notes.iter().map(note::text).collect();
                    message(&format!("{}: {}", t.path, notes.join("; ")));
                }
            }
            note_skipped(&doc.skipped);
            let csv_table = table.unwrap_or(MemoryTable::Operators);
            emit(
                &doc,
                &doc.errors,
                v.format,
                |d| memory::to_table(d, table),
                Some(&|d| memory::to_csv(d, csv_table)),
            )
        }
        MemoryResult::Snapshot(doc) => {
            if args.table.is_some() {
                message("warning: --table applies to traces only; ignored for a snapshot");
            }
            if let Some(out) = &args.html {
                let charts = memory_html::snapshot_charts(&doc.snapshot);
                let html = memory_html::render("kinetoscope memory", &doc.input, &charts);
                output_file::write("--html", out, &reads, html.as_bytes())?;
            }
            emit(&doc, &[], v.format, memory_snapshot::to_table, None)
        }
        MemoryResult::Timeline(doc) => {
            if args.sort.is_some() || args.device.is_some() || args.timeline.is_some() {
                message(
                    "warning: --sort, --device and --timeline apply to traces only; ignored \
                     for a memory timeline",
                );
            }
            if let Some(out) = &args.html {
                let html = memory_html::render(
                    "kinetoscope memory",
                    &doc.view.path,
                    &[memory_html::timeline_chart(&doc.view)],
                );
                output_file::write("--html", out, &reads, html.as_bytes())?;
            }
            let all_points = args.table == Some(MemoryTableArg::Curve);
            if v.format == ViewFormat::Table && !all_points {
                // A short table on the terminal.
                let short = engine.memory(
                    &src,
                    &MemoryOptions {
                        points: TIMELINE_TABLE_POINTS,
                        ..opts
                    },
                )?;
                if let MemoryResult::Timeline(short) = short {
                    return emit(
                        &short,
                        &[],
                        v.format,
                        |d| memory_timeline::to_table(d, true),
                        None,
                    );
                }
            }
            emit(
                &doc,
                &[],
                v.format,
                |d| memory_timeline::to_table(d, true),
                None,
            )
        }
    }
}
