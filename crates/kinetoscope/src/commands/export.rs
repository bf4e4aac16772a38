//! `kinetoscope export PATH --parquet OUTDIR`: every trace read once through the engine
//! (`Engine::export_parquet`), each rank's tables written on the thread that read it.

use std::process::ExitCode;

use kinetoscope_engine::{ParquetExportDocument, ReadFailure, Source};

use super::engine;
use super::output::{emit, note_skipped};
use crate::args::{ExportArgs, ViewFormat};

/// Run `kinetoscope export`.
pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.format != ViewFormat::Csv,
        "--format csv: `export` prints a summary (table) or its manifest (json)"
    );
    // The engine refuses an OUTDIR holding anything but a previous export, so no
    // input can be written over.
    let doc = engine(&args.read).export_parquet(&Source::Path(args.path.clone()), &args.parquet)?;
    note_skipped(&doc.skipped);
    let errors: Vec<ReadFailure> = doc.manifest.errors.iter().map(ReadFailure::from).collect();
    emit(&doc, &errors, args.format, summary, None)
}

/// The summary printed: what was written where, rows per table, traces not read.
fn summary(doc: &ParquetExportDocument) -> String {
    let m = &doc.manifest;
    let mut out = format!(
        "{} rank(s) exported to {} (schema version {})\n",
        m.ranks.len(),
        doc.output,
        m.schema_version
    );
    for table in &m.tables {
        let rows: u64 = m.ranks.iter().filter_map(|r| r.rows.get(table)).sum();
        out.push_str(&format!("  {table:<17} {rows:>12} rows\n"));
    }
    for e in &m.errors {
        out.push_str(&format!("not read: {}: {}\n", e.path, e.error));
    }
    out
}
