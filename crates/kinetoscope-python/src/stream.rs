//! Arrow data for Python through the Arrow PyCapsule interface: an object with
//! `__arrow_c_stream__`, which `pyarrow.table(obj)`, `pyarrow.RecordBatchReader.from_stream`
//! (and polars, DuckDB, …) take over without a copy.

use std::ffi::CStr;

use kinetoscope_arrow::{RecordBatch, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

const STREAM: &CStr = c"arrow_array_stream";

/// Record batches, handed over once through `__arrow_c_stream__`.
#[pyclass(module = "kinetoscope._native")]
pub struct ArrowStream {
    schema: SchemaRef,
    batches: Option<Vec<RecordBatch>>,
}

impl ArrowStream {
    /// A stream of `batches`, all of `schema`.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Self {
            schema,
            batches: Some(batches),
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The batches as an `ArrowArrayStream` capsule (the schema requested is not
    /// applied: the stream has the one schema it was made with). A second call fails.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self
            .batches
            .take()
            .ok_or_else(|| PyValueError::new_err("this Arrow stream was already consumed"))?;
        let stream = kinetoscope_arrow::stream::ffi_stream(self.schema.clone(), batches);
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// Rows in all batches (before the stream is consumed; 0 after).
    fn __len__(&self) -> usize {
        self.batches
            .as_ref()
            .map_or(0, |b| b.iter().map(RecordBatch::num_rows).sum())
    }
}
