//! Engine errors as `kinetoscope.KinetoscopeError`: the engine's message (it names the
//! file and, where known, the byte offset and event) and its hint.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    kinetoscope,
    KinetoscopeError,
    PyException,
    "An input could not be read or a view could not be computed; the message names the file."
);

/// `e` as a [`KinetoscopeError`], its hint on a second line.
pub fn engine(e: kinetoscope_engine::EngineError) -> PyErr {
    let mut message = e.to_string();
    if let Some(hint) = e.hint() {
        message.push_str("\nhint: ");
        message.push_str(&hint);
    }
    KinetoscopeError::new_err(message)
}

/// A document that could not be turned into Python objects or Arrow arrays.
pub fn other(e: impl std::fmt::Display) -> PyErr {
    KinetoscopeError::new_err(e.to_string())
}
