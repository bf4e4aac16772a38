//! `tables`: PyTorch key_averages tables (`prof.key_averages(…).table(…)`, oumi's
//! `prof_<rank>_local_<local_rank>_<sort_key>.txt`), sorted and cut, each next to the
//! operator view of the Chrome trace of the same run when it lies in the same folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpsTable};
use kinetoscope_analysis::tables::{compare, sort_rows, OpComparison};
use kinetoscope_trace::read::{read_trace, sniff_path, ContentKind};
use kinetoscope_trace::{ArtifactKind, KeyAveragesTable, OumiTableName};
use serde::{Deserialize, Serialize};

use crate::document::{ReadFailure, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::Source;
use crate::Engine;

/// Options of the tables view.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TablesOptions {
    /// Sort the rows by the column with this header (ASCII case ignored); none: as printed.
    pub sort: Option<String>,
    /// Then keep the first N rows.
    pub top: Option<usize>,
}

/// `tables FILE...`: every table read, in order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TablesDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// The options of the view.
    pub options: TablesOptions,
    /// The tables.
    pub tables: Vec<TableFile>,
    /// Files that could not be read (tables, or the traces beside them).
    pub errors: Vec<ReadFailure>,
}

/// One table file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableFile {
    /// The file.
    pub path: String,
    /// Rank, local rank and sort key when the name is oumi's.
    pub oumi: Option<OumiTableName>,
    /// Rows in the file, before `top`.
    pub total_rows: usize,
    /// The table (rows sorted and cut as asked).
    pub table: KeyAveragesTable,
    /// The rows next to the Chrome trace of the same run, when there is one.
    pub comparison: Option<TraceComparison>,
}

/// A table's rows next to the operators of the trace beside it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceComparison {
    /// The trace file.
    pub trace: String,
    /// One per table row, in the table's order.
    pub ops: Vec<OpComparison>,
}

/// The files of `dir` that may be tables (`*.txt`), sorted.
pub fn table_candidates(dir: &Path) -> EngineResult<Vec<PathBuf>> {
    super::pstats::files_of_kind(dir, ArtifactKind::KeyAveragesTable)
}

/// The trace of the same run as `table`: oumi's `prof_<r>_local_<l>_pt_trace.json.gz`
/// beside it, else the one trace of its folder.
fn trace_beside(table: &Path, oumi: Option<&OumiTableName>) -> Option<PathBuf> {
    let dir = table
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(p) = oumi
        .map(|o| dir.join(o.trace_name()))
        .filter(|p| p.is_file())
    {
        return Some(p);
    }
    let mut traces = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_ok_and(|t| t.is_file())
                && e.file_name()
                    .to_str()
                    .and_then(ArtifactKind::from_file_name)
                    == Some(ArtifactKind::Trace)
        });
    match (traces.next(), traces.next()) {
        (Some(only), None) => Some(only.path()),
        _ => None,
    }
}

impl Engine {
    /// `tables`: read every source (a folder: its `*.txt` files that are tables),
    /// sort and cut each, and compare each with the trace beside it.
    pub fn tables(&self, srcs: &[Source], opts: &TablesOptions) -> EngineResult<TablesDocument> {
        let mut files = Vec::new();
        for src in srcs {
            let Some(p) = src.path() else {
                return Err(EngineError::Option("tables reads files and folders".into()));
            };
            if p.is_dir() {
                let tables: Vec<PathBuf> = table_candidates(p)?
                    .into_iter()
                    .filter(|f| {
                        sniff_path(f).is_ok_and(|s| s.kind() == ContentKind::KeyAveragesTable)
                    })
                    .collect();
                if tables.is_empty() {
                    return Err(EngineError::WrongInput {
                        path: p.display().to_string(),
                        message: "this folder holds no key_averages tables (*.txt)".to_owned(),
                        hint: None,
                    });
                }
                files.extend(tables);
            } else {
                files.push(p.to_owned());
            }
        }
        let mut ops_of: HashMap<PathBuf, Result<OpsTable, String>> = HashMap::new();
        let mut doc = TablesDocument {
            schema_version: SCHEMA_VERSION,
            options: opts.clone(),
            tables: Vec::new(),
            errors: Vec::new(),
        };
        for f in files {
            let mut table = sniff_path(&f)?.read_key_averages(&self.read)?;
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let oumi = OumiTableName::parse(name);
            if let Some(header) = &opts.sort {
                let column = table.column(header).ok_or_else(|| {
                    let known: Vec<&str> =
                        table.columns.iter().map(|c| c.header.as_str()).collect();
                    EngineError::Option(format!(
                        "--sort {header:?}: {} has no such column; its columns: {}",
                        f.display(),
                        known.join(", ")
                    ))
                })?;
                sort_rows(&mut table, column);
            }
            let total_rows = table.rows.len();
            table.rows.truncate(opts.top.unwrap_or(usize::MAX));
            let comparison = trace_beside(&f, oumi.as_ref()).and_then(|trace| {
                let ops = ops_of.entry(trace.clone()).or_insert_with(|| {
                    read_trace(&trace, &self.read)
                        .map(|t| analyze_ops(&t, OpGroupBy::Name))
                        .map_err(|e| e.to_string())
                });
                match ops {
                    Ok(ops) => Some(TraceComparison {
                        trace: trace.display().to_string(),
                        ops: compare(&table, ops),
                    }),
                    Err(e) => {
                        let failure = ReadFailure {
                            path: trace.display().to_string(),
                            error: e.clone(),
                        };
                        if !doc.errors.iter().any(|e| e.path == failure.path) {
                            doc.errors.push(failure);
                        }
                        None
                    }
                }
            });
            doc.tables.push(TableFile {
                path: f.display().to_string(),
                oumi,
                total_rows,
                table,
                comparison,
            });
        }
        Ok(doc)
    }
}

/// One key_averages table in `report`: what it is and its first rows as printed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportTable {
    /// The file.
    pub path: String,
    /// Rank, local rank and sort key when the name is oumi's.
    pub oumi: Option<OumiTableName>,
    /// Rows in the table.
    pub rows: usize,
    /// The footer's `Self CPU time total`, ns.
    pub self_cpu_total_ns: Option<i64>,
    /// The first [`REPORT_ROWS`] rows as printed (in the table's own order).
    pub top: Vec<ReportTableRow>,
}

/// One row of a [`ReportTable`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportTableRow {
    /// The name as printed.
    pub name: String,
    /// `# of Calls`.
    pub calls: Option<u64>,
    /// `Self CPU`, ns.
    pub self_cpu_ns: Option<i64>,
}

/// Rows listed per table in `report`.
pub const REPORT_ROWS: usize = 5;

fn report_table(path: &Path, table: &KeyAveragesTable) -> ReportTable {
    let calls = table.column("# of Calls");
    let self_cpu = table.column("Self CPU");
    fn cell(
        row: &kinetoscope_trace::TableRow,
        c: Option<usize>,
    ) -> Option<&kinetoscope_trace::Cell> {
        row.cells.get(c?)
    }
    ReportTable {
        path: path.display().to_string(),
        oumi: path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(OumiTableName::parse),
        rows: table.rows.len(),
        self_cpu_total_ns: table
            .totals
            .iter()
            .find(|t| t.label == "Self CPU time total")
            .map(|t| t.ns),
        top: table
            .rows
            .iter()
            .take(REPORT_ROWS)
            .map(|r| ReportTableRow {
                name: r.name().to_owned(),
                calls: cell(r, calls).and_then(|c| c.count()),
                self_cpu_ns: cell(r, self_cpu).and_then(|c| c.duration_ns()),
            })
            .collect(),
    }
}

impl Engine {
    /// The key_averages tables `report` lists for `src`: the file itself when it is one,
    /// or the `*.txt` tables of a folder (by content), by rank, local rank and sort key;
    /// tables that fail to read go to the second list.
    pub(crate) fn table_reports(&self, src: &Source) -> (Vec<ReportTable>, Vec<ReadFailure>) {
        let files = match src.path() {
            Some(p) if p.is_dir() => table_candidates(p).unwrap_or_default(),
            Some(p) => vec![p.to_owned()],
            None => Vec::new(),
        };
        let mut reports = Vec::new();
        let mut errors = Vec::new();
        for f in files {
            let Ok(sniffed) = sniff_path(&f) else {
                continue;
            };
            if sniffed.kind() != ContentKind::KeyAveragesTable {
                continue;
            }
            match sniffed.read_key_averages(&self.read) {
                Ok(t) => reports.push(report_table(&f, &t)),
                Err(e) => errors.push(ReadFailure {
                    path: f.display().to_string(),
                    error: e.to_string(),
                }),
            }
        }
        reports.sort_by_key(|r| {
            r.oumi
                .as_ref()
                .map(|o| (o.rank, o.local_rank, o.sort_key.clone()))
        });
        (reports, errors)
    }
}
