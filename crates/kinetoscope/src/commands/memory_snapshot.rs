//! `kinetoscope memory SNAPSHOT.pickle`: the snapshot path of the memory command, taken
//! when the file's content is a pickle (`torch.cuda.memory._dump_snapshot`), whatever
//! it is called; the file is read from the opening that classified it.

use std::process::ExitCode;

use kinetoscope_analysis::memory::snapshot::{analyze_snapshot, SnapshotOptions};
use kinetoscope_report::memory_snapshot::{to_json, to_table, SnapshotDocument};
use kinetoscope_trace::read::Sniffed;

use super::common::write_stdout;
use crate::args::{MemoryArgs, ViewFormat};

/// Read the snapshot, analyse it, render it.
pub fn run(args: &MemoryArgs, sniffed: Sniffed<'_>) -> anyhow::Result<ExitCode> {
    let path = &args.view.path;
    if args.view.format == ViewFormat::Csv {
        anyhow::bail!(
            "{}: CSV is not available for memory snapshots; use --format table or json",
            path.display()
        );
    }
    if args.view.sort.is_some() || args.table.is_some() {
        eprintln!("warning: --sort and --table apply to traces only; ignored for a snapshot");
    }
    let snap = sniffed.read_snapshot()?;
    let opts = SnapshotOptions {
        top: args.view.top,
        points: args.points as usize,
        device: args.device,
    };
    let view = analyze_snapshot(&snap, &opts);
    if let Some(out) = &args.html {
        let charts = super::memory_html::snapshot_charts(&view);
        let html = kinetoscope_report::memory_html::render(
            "kinetoscope memory",
            &path.display().to_string(),
            &charts,
        );
        super::memory_html::write(out, std::slice::from_ref(path), &html)?;
    }
    let doc = SnapshotDocument::new(path.display().to_string(), view);
    let text = match args.view.format {
        ViewFormat::Json => to_json(&doc) + "\n",
        _ => to_table(&doc),
    };
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
