//! Writing an export: each rank's tables into a staging folder inside the output (on
//! the thread that read the rank), then every file renamed into place and the manifest
//! written last, through a temporary file.
//!
//! The output folder must be new, empty, or a previous export (whose files this one
//! replaces); a folder holding anything else is refused, so no input can be written over.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::RecordBatch;
use kinetoscope_trace::Trace;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use crate::error::{ExportError, ExportResult};
use crate::manifest::{Manifest, RankEntry, SourceError, FORMAT, MANIFEST};
use crate::schema::{Table, SCHEMA_VERSION};
use crate::tables::RankTables;

/// The prefix of the staging folder inside the output.
const STAGING: &str = ".kinetoscope-staging-";

/// An export under way.
pub struct Export {
    out: PathBuf,
    staging: PathBuf,
    next: AtomicUsize,
    /// Files of a previous export in the output, removed when this one is complete.
    previous: Vec<PathBuf>,
}

/// The staging folder of an export whose ranks other processes write ([`write_part`]).
const PARTS: &str = ".kinetoscope-staging-parts";

/// One rank's tables, written to the staging folder.
#[derive(Debug, Serialize, Deserialize)]
pub struct Staged {
    id: usize,
    rank: Option<i64>,
    source: String,
    rows: BTreeMap<String, u64>,
}

impl Export {
    /// Start an export into `out` (created when missing).
    pub fn create(out: &Path) -> ExportResult<Export> {
        let previous = check_output(out)?;
        let staging = out.join(format!("{STAGING}{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| ExportError::new(&staging, e))?;
        }
        for t in Table::ALL {
            let dir = staging.join(t.name());
            std::fs::create_dir_all(&dir).map_err(|e| ExportError::new(&dir, e))?;
        }
        Ok(Export {
            out: out.to_owned(),
            staging,
            next: AtomicUsize::new(0),
            previous,
        })
    }

    /// Prepare `out` for an export whose ranks other processes (the tasks of a
    /// distributed map) write with [`write_part`]: the same checks as [`Export::create`],
    /// and the shared staging folder. [`Export::parts`] then puts them in place.
    pub fn begin_parts(out: &Path) -> ExportResult<()> {
        check_output(out)?;
        let staging = out.join(PARTS);
        if staging.exists() {
            // An earlier, unfinished distributed export's parts.
            std::fs::remove_dir_all(&staging).map_err(|e| ExportError::new(&staging, e))?;
        }
        for t in Table::ALL {
            let dir = staging.join(t.name());
            std::fs::create_dir_all(&dir).map_err(|e| ExportError::new(&dir, e))?;
        }
        Ok(())
    }

    /// The export begun with [`Export::begin_parts`] in `out`, to [`Export::finish`]
    /// with the parts' [`Staged`] records.
    pub fn parts(out: &Path) -> ExportResult<Export> {
        let previous = check_output(out)?;
        let staging = out.join(PARTS);
        if !staging.is_dir() {
            return Err(ExportError::new(
                &staging,
                "no parts were staged here (begin the export first)",
            ));
        }
        Ok(Export {
            out: out.to_owned(),
            staging,
            next: AtomicUsize::new(0),
            previous,
        })
    }

    /// Build and write every table of `trace` (call it on the thread that read it).
    pub fn write_trace(&self, trace: &Trace) -> ExportResult<Staged> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        write_staged(&self.staging, id, trace)
    }

    fn staged_file(&self, table: Table, id: usize) -> PathBuf {
        staged_file(&self.staging, table, id)
    }

    /// Move the staged ranks (in the input's order) into place and write the manifest.
    /// Files are named by rank when every rank is known, non-negative and distinct,
    /// else by position in the input.
    pub fn finish(
        self,
        input: String,
        staged: Vec<Staged>,
        errors: Vec<SourceError>,
    ) -> ExportResult<Manifest> {
        let by_rank = ranks_name_files(&staged);
        let mut entries = Vec::with_capacity(staged.len());
        let mut written = HashSet::new();
        for t in Table::ALL {
            let dir = self.out.join(t.name());
            std::fs::create_dir_all(&dir).map_err(|e| ExportError::new(&dir, e))?;
        }
        for (i, s) in staged.into_iter().enumerate() {
            let n = match (by_rank, s.rank) {
                (true, Some(r)) => r as usize,
                _ => i,
            };
            let file = format!("rank-{n:05}");
            for t in Table::ALL {
                let to = self.out.join(t.name()).join(format!("{file}.parquet"));
                let from = self.staged_file(t, s.id);
                std::fs::rename(&from, &to).map_err(|e| ExportError::new(&to, e))?;
                written.insert(to);
            }
            entries.push(RankEntry {
                file,
                rank: s.rank,
                source: s.source,
                rows: s.rows,
            });
        }
        for old in &self.previous {
            if !written.contains(old) {
                std::fs::remove_file(old).map_err(|e| ExportError::new(old, e))?;
            }
        }
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            schema_version: SCHEMA_VERSION,
            tables: Table::ALL.iter().map(|t| t.name().to_owned()).collect(),
            input,
            ranks: entries,
            errors,
        };
        write_manifest(&self.out, &manifest)?;
        Ok(manifest)
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        // Whatever was not moved into place (a failed export) goes with the staging.
        let _ = std::fs::remove_dir_all(&self.staging);
    }
}

/// Write every table of `trace` as part `id` of the export begun in `out` with
/// [`Export::begin_parts`] (from any process that sees `out`; ids distinct).
pub fn write_part(out: &Path, id: usize, trace: &Trace) -> ExportResult<Staged> {
    write_staged(&out.join(PARTS), id, trace)
}

/// Every table of `trace` written into `staging` as rank `id`.
fn write_staged(staging: &Path, id: usize, trace: &Trace) -> ExportResult<Staged> {
    let tables = RankTables::from_trace(trace).map_err(|e| ExportError::new(&trace.path, e))?;
    let mut rows = BTreeMap::new();
    for (table, batch) in &tables.batches {
        let path = staged_file(staging, *table, id);
        write_file(&path, *table, batch)?;
        rows.insert(table.name().to_owned(), batch.num_rows() as u64);
    }
    Ok(Staged {
        id,
        rank: tables.summary.rank,
        source: tables.summary.path,
        rows,
    })
}

fn staged_file(staging: &Path, table: Table, id: usize) -> PathBuf {
    staging.join(table.name()).join(format!("{id}.parquet"))
}

/// Whether the staged ranks can be named by rank: all known, non-negative, distinct.
fn ranks_name_files(staged: &[Staged]) -> bool {
    let mut ranks: Vec<i64> = Vec::with_capacity(staged.len());
    for s in staged {
        match s.rank {
            Some(r) if r >= 0 => ranks.push(r),
            _ => return false,
        }
    }
    ranks.sort_unstable();
    ranks.windows(2).all(|w| w[0] != w[1])
}

/// Check that `out` may receive an export: missing, an empty folder, or a previous
/// export. Returns the previous export's Parquet files.
fn check_output(out: &Path) -> ExportResult<Vec<PathBuf>> {
    let meta = match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(|e| ExportError::new(out, e))?;
            return Ok(Vec::new());
        }
        Err(e) => return Err(ExportError::new(out, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(ExportError::new(
            out,
            "the output of `--parquet` must be a folder (new, empty, or a previous export)",
        ));
    }
    let refuse = |what: &Path| {
        ExportError::new(
            out,
            format!(
                "holds {}, which is not part of a kinetoscope Parquet export; give a new or \
                 empty folder, or a previous export",
                what.display()
            ),
        )
    };
    let entries = list(out)?;
    let has_manifest = entries
        .iter()
        .any(|p| p.file_name() == Some(MANIFEST.as_ref()));
    let mut previous = Vec::new();
    for entry in entries {
        let name = entry
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let is_dir = std::fs::symlink_metadata(&entry).is_ok_and(|m| m.is_dir());
        if name == MANIFEST && entry.is_file() {
            continue;
        }
        if is_dir && name.starts_with(STAGING) {
            continue; // an interrupted export's staging: replaced below or left alone
        }
        if !(has_manifest && is_dir && Table::from_name(&name).is_some()) {
            return Err(refuse(&entry));
        }
        for file in list(&entry)? {
            let fname = file.file_name().unwrap_or_default().to_string_lossy();
            let is_file = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
            if !(is_file && fname.starts_with("rank-") && fname.ends_with(".parquet")) {
                return Err(refuse(&file));
            }
            previous.push(file);
        }
    }
    Ok(previous)
}

/// The entries of `dir`, sorted.
fn list(dir: &Path) -> ExportResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| ExportError::new(dir, e))? {
        out.push(e.map_err(|e| ExportError::new(dir, e))?.path());
    }
    out.sort();
    Ok(out)
}

/// Write `batch` of `table` to a new Parquet file at `path` (Snappy, the schema
/// version and table name in the key-value metadata).
fn write_file(path: &Path, table: Table, batch: &RecordBatch) -> ExportResult<()> {
    let err = |e: &dyn std::fmt::Display| ExportError::new(path, e);
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(vec![
            KeyValue::new(
                "kinetoscope.schema_version".to_owned(),
                SCHEMA_VERSION.to_string(),
            ),
            KeyValue::new("kinetoscope.table".to_owned(), table.name().to_owned()),
        ]))
        .build();
    let file = File::create_new(path).map_err(|e| err(&e))?;
    let mut writer =
        ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(|e| err(&e))?;
    writer.write(batch).map_err(|e| err(&e))?;
    writer.close().map_err(|e| err(&e))?;
    Ok(())
}

/// Write the manifest through a temporary file renamed onto it.
fn write_manifest(out: &Path, manifest: &Manifest) -> ExportResult<()> {
    let path = out.join(MANIFEST);
    let tmp = out.join(format!(".{MANIFEST}.{}.tmp", std::process::id()));
    let text = serde_json::to_vec_pretty(manifest).map_err(|e| ExportError::new(&path, e))?;
    std::fs::write(&tmp, text).map_err(|e| ExportError::new(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| ExportError::new(&path, e))
}
