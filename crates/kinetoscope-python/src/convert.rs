//! Documents to Python objects: dicts (keys in the document's order), lists, str, int,
//! float, bool and None, as `json.loads` of the CLI's `--format json` output gives.

use kinetoscope_arrow::value::Value;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use pyo3::IntoPyObjectExt;
use serde::Serialize;

use crate::error;

/// The document `doc` as Python objects.
pub fn document<'py, D: Serialize>(py: Python<'py>, doc: &D) -> PyResult<Bound<'py, PyAny>> {
    let value = Value::of(doc).map_err(error::other)?;
    to_py(py, &value)
}

/// One value as a Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_bound_py_any(py)?,
        Value::UInt(u) => u.into_bound_py_any(py)?,
        Value::Float(f) => f.into_bound_py_any(py)?,
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Map(fields) => {
            let dict = PyDict::new(py);
            for (k, item) in fields {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
