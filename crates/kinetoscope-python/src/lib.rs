//! The native half of the `kinetoscope` Python package (`kinetoscope._native`): the
//! engine behind [`Trace`] handles (a trace read once, every view computed from it),
//! `diff`, Arrow tables through the Arrow PyCapsule interface, the steps of a
//! distributed Parquet export (`parts`), and the command line's `main`. The Python half (`python/kinetoscope/`) re-exports and documents it.

mod convert;
mod error;
mod options;
mod parts;
mod stream;
mod trace;

use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::prelude::*;

pub use error::KinetoscopeError;
pub use stream::ArrowStream;
pub use trace::Trace;

/// Read the trace, folder or export at `path` once; views are then computed from the
/// traces in memory.
#[pyfunction]
#[pyo3(signature = (path, *, strict = false, threads = None))]
fn open(py: Python<'_>, path: PathBuf, strict: bool, threads: Option<usize>) -> PyResult<Trace> {
    Trace::open(py, path, strict, threads)
}

/// The diff document of `base` and `new` (traces, folders or saved reports), as
/// `kinetoscope diff BASE NEW --format json` writes it.
#[pyfunction]
#[pyo3(signature = (base, new, *, fail_if = Vec::new(), batch_size = None, tokens_per_step = None, strict = false))]
fn diff<'py>(
    py: Python<'py>,
    base: PathBuf,
    new: PathBuf,
    fail_if: Vec<String>,
    batch_size: Option<f64>,
    tokens_per_step: Option<f64>,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = options::diff(&fail_if, batch_size, tokens_per_step)?;
    let engine = trace::engine(strict, None, None);
    let doc = py.detach(|| {
        engine.diff(
            &kinetoscope_engine::Source::Path(base),
            &kinetoscope_engine::Source::Path(new),
            &kinetoscope_advisor::Config::default(),
            &opts,
        )
    });
    convert::document(py, &doc.map_err(error::engine)?)
}

/// Run the `kinetoscope` command line with `argv` (the program name first) and return
/// its exit status; output goes to the process's stdout and stderr.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| kinetoscope::run_status(argv))
}

/// The module `kinetoscope._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(parts::_trace_files, m)?)?;
    m.add_function(wrap_pyfunction!(parts::_parquet_begin, m)?)?;
    m.add_function(wrap_pyfunction!(parts::_parquet_part, m)?)?;
    m.add_function(wrap_pyfunction!(parts::_parquet_finish, m)?)?;
    m.add_class::<Trace>()?;
    m.add_class::<ArrowStream>()?;
    m.add("KinetoscopeError", m.py().get_type::<KinetoscopeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
