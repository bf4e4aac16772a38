//! `kinetoscope-parquet.json`, the file that makes a folder an export: the schema
//! version, the tables, and each rank written with its source trace and row counts.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ExportError, ExportResult};
use crate::schema::SCHEMA_VERSION;

/// The manifest's file name in an export folder.
pub const MANIFEST: &str = "kinetoscope-parquet.json";

/// The `format` every manifest holds.
pub const FORMAT: &str = "kinetoscope-parquet";

/// A manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The tables (folders), in order.
    pub tables: Vec<String>,
    /// The input the export was made from, as given.
    pub input: String,
    /// The ranks written, in the input's order.
    pub ranks: Vec<RankEntry>,
    /// The traces of the input that could not be read.
    pub errors: Vec<SourceError>,
}

/// One rank of an export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankEntry {
    /// The file name (without `.parquet`) of its file in every table's folder.
    pub file: String,
    /// Its rank, when the trace says (`distributedInfo`, else the file name).
    pub rank: Option<i64>,
    /// The trace it was made from.
    pub source: String,
    /// Rows written per table.
    pub rows: BTreeMap<String, u64>,
}

/// A trace that could not be read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceError {
    /// The trace.
    pub path: String,
    /// Why.
    pub error: String,
}

/// Whether `dir` is an export (holds a manifest).
pub fn is_export(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
}

impl Manifest {
    /// The manifest of the export in `dir`, checked to be one this version reads.
    pub fn read(dir: &Path) -> ExportResult<Manifest> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read(&path).map_err(|e| ExportError::new(&path, e))?;
        let m: Manifest = serde_json::from_slice(&text)
            .map_err(|e| ExportError::new(&path, format!("not a kinetoscope manifest: {e}")))?;
        if m.format != FORMAT {
            return Err(ExportError::new(
                &path,
                format!("format is {:?}, expected {FORMAT:?}", m.format),
            ));
        }
        if m.schema_version != SCHEMA_VERSION {
            return Err(ExportError::new(
                &path,
                format!(
                    "schema version {} (this kinetoscope reads version {SCHEMA_VERSION}); \
                     export the traces again",
                    m.schema_version
                ),
            ));
        }
        Ok(m)
    }
}
