//! `export --parquet`: every trace of a source as per-rank Parquet tables
//! (`kinetoscope-parquet`), each rank's tables built and written on the thread that read
//! it, so no two whole ranks need be in memory beyond the reader threads'.

use std::path::Path;

use kinetoscope_parquet::manifest::SourceError;
use kinetoscope_parquet::{write_part, Export, Manifest, Staged};
use serde::{Deserialize, Serialize};

use crate::document::{ReadFailure, SkippedFile, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::Source;
use crate::views::ensure_any_read;
use crate::Engine;

/// What `export --parquet` wrote.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ParquetExportDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The input given.
    pub input: String,
    /// The export folder.
    pub output: String,
    /// The export's manifest (its tables, ranks, row counts, traces not read).
    pub manifest: Manifest,
    /// Special files of the input folder, skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

impl Engine {
    /// Export every trace of `src` into the folder `out` (new, empty, or a previous
    /// export, whose files are replaced).
    pub fn export_parquet(&self, src: &Source, out: &Path) -> EngineResult<ParquetExportDocument> {
        if src.path().is_some_and(|p| same_place(p, out)) {
            return Err(EngineError::WrongInput {
                path: src.name(),
                message: "the Parquet output folder is the input".to_owned(),
                hint: Some("give another folder to `--parquet`".to_owned()),
            });
        }
        let export = Export::create(out)?;
        let mapped = self.map(src, |trace| export.write_trace(trace))?;
        let results = ensure_any_read(mapped.results)?;
        let mut staged = Vec::new();
        let mut errors = Vec::new();
        for r in results {
            match r.result {
                Ok(written) => staged.push(written?),
                Err(e) => errors.push(SourceError {
                    path: r.path.display().to_string(),
                    error: e.to_string(),
                }),
            }
        }
        let manifest = export.finish(src.name(), staged, errors)?;
        Ok(ParquetExportDocument {
            schema_version: SCHEMA_VERSION,
            input: src.name(),
            output: out.display().to_string(),
            manifest,
            skipped: mapped.skipped,
        })
    }
}

/// One trace of a distributed export ([`Engine::export_parquet_part`]): its staged
/// tables, or why it could not be read.
pub type ParquetPart = Result<Staged, SourceError>;

impl Engine {
    /// Begin an export whose traces other processes write (the map of a distributed
    /// export): `out` is checked as for [`Engine::export_parquet`] and its staging
    /// folder made. Then [`Engine::export_parquet_part`] per trace, anywhere `out` is
    /// seen, and [`Engine::finish_parquet_parts`] once.
    pub fn begin_parquet_parts(&self, out: &Path) -> EngineResult<()> {
        Ok(Export::begin_parts(out)?)
    }

    /// Read the trace file `file` and write its tables as part `id` of the export begun
    /// in `out`. A trace that cannot be read is the part's error, as in a folder export.
    pub fn export_parquet_part(
        &self,
        file: &Path,
        out: &Path,
        id: usize,
    ) -> EngineResult<ParquetPart> {
        let src = Source::Path(file.to_owned());
        let mapped = self.map(&src, |trace| write_part(out, id, trace))?;
        let Some(r) = mapped.results.into_iter().next() else {
            return Err(EngineError::WrongInput {
                path: src.name(),
                message: "holds no trace to export".to_owned(),
                hint: None,
            });
        };
        Ok(match r.result {
            Ok(written) => Ok(written?),
            Err(e) => Err(SourceError {
                path: r.path.display().to_string(),
                error: e.to_string(),
            }),
        })
    }

    /// Put the parts of the export begun in `out` in place, in the order given (the
    /// input's), and write its manifest naming `input`.
    pub fn finish_parquet_parts(
        &self,
        out: &Path,
        input: String,
        parts: Vec<ParquetPart>,
    ) -> EngineResult<ParquetExportDocument> {
        let export = Export::parts(out)?;
        let mut staged = Vec::new();
        let mut errors = Vec::new();
        for p in parts {
            match p {
                Ok(s) => staged.push(s),
                Err(e) => errors.push(e),
            }
        }
        if staged.is_empty() && !errors.is_empty() {
            let first = &errors[0];
            return Err(EngineError::WrongInput {
                path: first.path.clone(),
                message: format!("no trace could be read: {}", first.error),
                hint: None,
            });
        }
        let manifest = export.finish(input.clone(), staged, errors)?;
        Ok(ParquetExportDocument {
            schema_version: SCHEMA_VERSION,
            input,
            output: out.display().to_string(),
            manifest,
            skipped: Vec::new(),
        })
    }
}

/// Whether `a` and `b` name the same existing file or folder.
fn same_place(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

impl From<&SourceError> for ReadFailure {
    fn from(e: &SourceError) -> Self {
        ReadFailure {
            path: e.path.clone(),
            error: e.error.clone(),
        }
    }
}
