//! The native steps of `kinetoscope.distributed`: a Parquet export whose traces are read
//! and written by the tasks of a distributed map (each task one trace, in any process
//! that sees the output folder), then put in place by the client.

use std::path::PathBuf;

use kinetoscope_engine::ParquetPart;
use pyo3::prelude::*;

use crate::{convert, error, trace};

/// The trace files of `path` (a trace, a rank folder, a run folder), in the order the
/// engine reads them.
#[pyfunction]
pub fn _trace_files(path: PathBuf) -> PyResult<Vec<PathBuf>> {
    let input = kinetoscope_engine::input::open_path(&path).map_err(|e| error::engine(e.into()))?;
    Ok(input.trace_files())
}

/// Check the output folder `out` and make its staging folder (before any part).
#[pyfunction]
pub fn _parquet_begin(py: Python<'_>, out: PathBuf) -> PyResult<()> {
    let engine = trace::engine(false, None, None);
    py.detach(|| engine.begin_parquet_parts(&out))
        .map_err(error::engine)
}

/// Read the trace `path` and write its tables as part `id` of the export in `out`;
/// the part's record (its tables, or why the trace could not be read) as JSON text.
#[pyfunction]
#[pyo3(signature = (path, out, id, *, strict = false, threads = None))]
pub fn _parquet_part(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    id: usize,
    strict: bool,
    threads: Option<usize>,
) -> PyResult<String> {
    let engine = trace::engine(strict, threads, None);
    let part = py
        .detach(|| engine.export_parquet_part(&path, &out, id))
        .map_err(error::engine)?;
    serde_json::to_string(&part).map_err(error::other)
}

/// Put the parts (records from `_parquet_part`, in the input's order) in place and
/// write the manifest naming `input`; the export document.
#[pyfunction]
pub fn _parquet_finish<'py>(
    py: Python<'py>,
    out: PathBuf,
    input: String,
    parts: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let parts = parts
        .iter()
        .map(|p| serde_json::from_str::<ParquetPart>(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(error::other)?;
    let engine = trace::engine(false, None, None);
    let doc = py
        .detach(|| engine.finish_parquet_parts(&out, input, parts))
        .map_err(error::engine)?;
    convert::document(py, &doc)
}
