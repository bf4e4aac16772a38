//! One function per view, each a method of [`Engine`]: read the source, reduce each
//! trace on the thread that read it, make the cross-trace decisions, return the
//! document.

pub mod bundle;
mod check;
mod clocks;
pub(crate) mod gpu_time;
mod indices;
pub mod memory;
pub mod merge;
pub mod parquet;
mod per_trace;
pub mod pstats;
mod ranks;
mod report;
pub mod tables;
mod workbook;

pub use bundle::{BundleOptions, OfflineBundle};
pub use gpu_time::{IdleOptions, LaunchesOptions};
pub use merge::{Align, MergeSet, RankTrace};
pub use parquet::{ParquetExportDocument, ParquetPart};
pub use per_trace::{CommOptions, KernelsOptions, OpsOptions};
pub use pstats::{PstatsDocument, PstatsFileReport, PstatsOptions};
pub use ranks::RanksOptions;
pub use tables::{
    ReportTable, ReportTableRow, TableFile, TablesDocument, TablesOptions, TraceComparison,
};
pub use workbook::WorkbookDocument;

use std::path::PathBuf;

use kinetoscope_trace::read::read_trace;
use kinetoscope_trace::{Trace, TraceError};

use crate::document::{Document, InputLayout, SkippedFile};
use crate::error::{hint_for_content, EngineError, EngineResult};
use crate::input::{map_bytes, map_paths_each, open_path, split_results, PerTrace, Source};
use crate::Engine;

/// What reading a source gave: its layout and one reduced result per trace, in order.
pub(crate) struct Mapped<T> {
    /// The layout documents report.
    pub layout: InputLayout,
    /// One result per trace.
    pub results: Vec<PerTrace<T>>,
    /// Special files of the input folder, skipped.
    pub skipped: Vec<SkippedFile>,
}

impl Engine {
    /// Read every trace of `src` in parallel (with progress) and reduce each with `f` on
    /// the thread that read it. A run folder without traces is an error (with a hint).
    pub(crate) fn map<T: Send>(
        &self,
        src: &Source,
        f: impl Fn(&Trace) -> T + Sync,
    ) -> EngineResult<Mapped<T>> {
        let mapped = self.map_any(src, f)?;
        if let InputLayout::RunFolder { .. } = mapped.layout {
            if mapped.results.is_empty() {
                return Err(no_run_folder_traces(src));
            }
        }
        Ok(mapped)
    }

    /// [`Engine::map`], also for a run folder without traces (its other artifacts are
    /// what the summary and memory views show).
    pub(crate) fn map_any<T: Send>(
        &self,
        src: &Source,
        f: impl Fn(&Trace) -> T + Sync,
    ) -> EngineResult<Mapped<T>> {
        let mut results = Vec::new();
        let (layout, skipped) = self.map_each(src, f, |r| results.push(r))?;
        Ok(Mapped {
            layout,
            results,
            skipped,
        })
    }

    /// [`Engine::map_any`], handing each result to `consume` in input order as soon as
    /// it is made instead of collecting them; the input's layout and skipped files.
    pub(crate) fn map_each<T: Send>(
        &self,
        src: &Source,
        f: impl Fn(&Trace) -> T + Sync,
        mut consume: impl FnMut(PerTrace<T>),
    ) -> EngineResult<(InputLayout, Vec<SkippedFile>)> {
        match src {
            Source::Bytes { name, data } => {
                consume(map_bytes(name, data, &self.read, f));
                Ok((InputLayout::File, Vec::new()))
            }
            Source::Path(path) => {
                if kinetoscope_parquet::is_export(path) {
                    return Err(parquet_export_input(src));
                }
                let input = open_path(path)?;
                let files = input.trace_files();
                let mut opts = self.read.clone();
                if let Some(p) = &self.progress {
                    opts.progress = p.start(&files);
                }
                match &self.cache {
                    Some(cache) => {
                        map_paths_each(&files, &opts, |p, o| cache.get_shared(p, o), f, consume)
                    }
                    None => map_paths_each(&files, &opts, read_trace, f, consume),
                };
                if let Some(p) = &self.progress {
                    p.finish();
                }
                Ok((input.layout(), input.skipped().to_vec()))
            }
        }
    }

    /// [`Engine::map`] collected into a document with `options`: successes in
    /// `traces`, failures in `errors`; an error when no trace could be read.
    pub(crate) fn document<T: Send, X>(
        &self,
        src: &Source,
        options: X,
        f: impl Fn(&Trace) -> T + Sync,
    ) -> EngineResult<Document<T, X>> {
        self.collect(src, options, self.map(src, f)?)
    }

    /// Collect mapped results into a document with `options`.
    pub(crate) fn collect<T, X>(
        &self,
        src: &Source,
        options: X,
        mapped: Mapped<T>,
    ) -> EngineResult<Document<T, X>> {
        let results = ensure_any_read(mapped.results)?;
        let mut doc = Document::with_options(src.name(), mapped.layout, options);
        doc.errors = split_results(results, |_, t| doc.traces.push(t));
        doc.skipped = mapped.skipped;
        Ok(doc)
    }
}

/// The error of a view that needs traces, given a Parquet export.
fn parquet_export_input(src: &Source) -> EngineError {
    EngineError::WrongInput {
        path: src.name(),
        message: "this is a kinetoscope Parquet export (kinetoscope-parquet.json): only \
                  `ranks` and `report` (its cross-rank rules) read it; the other views need \
                  the traces it was made from"
            .to_owned(),
        hint: Some(
            "`kinetoscope ranks FOLDER` compares its ranks; DuckDB, Polars, pandas or Spark \
             read its tables (docs/parquet.md)"
                .to_owned(),
        ),
    }
}

/// The results unchanged when at least one trace was read (or there were none);
/// otherwise the first failure as an error, with a hint when the file is something
/// else kinetoscope reads.
pub(crate) fn ensure_any_read<T>(mut results: Vec<PerTrace<T>>) -> EngineResult<Vec<PerTrace<T>>> {
    if results.is_empty() || results.iter().any(|r| r.result.is_ok()) {
        return Ok(results);
    }
    let first = results.swap_remove(0);
    let Err(error) = first.result else {
        unreachable!("no result is Ok")
    };
    Err(nothing_read(first.path, error))
}

/// The error for an input none of whose traces could be read: the first failure, with
/// a hint when its content is something else kinetoscope reads.
pub(crate) fn nothing_read(path: PathBuf, error: TraceError) -> EngineError {
    let hint = match &error {
        TraceError::NotATrace { looks_like, .. } => hint_for_content(looks_like),
        _ => None,
    };
    EngineError::NothingRead {
        path,
        error: error.to_string(),
        hint,
    }
}

/// The error for a run folder without traces, with what reads its other files.
pub(crate) fn no_run_folder_traces(src: &Source) -> EngineError {
    EngineError::WrongInput {
        path: src.name(),
        message: "this run folder holds no traces (stageN-<phase>_trace.json)".to_owned(),
        hint: Some(
            "`kinetoscope memory FOLDER` reads its snapshots and memory timelines; \
             `kinetoscope summary FOLDER` lists what it holds"
                .to_owned(),
        ),
    }
}
