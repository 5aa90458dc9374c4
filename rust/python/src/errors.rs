//! Every core error becomes an exception of the `msgwire` hierarchy (`msgwire.errors`), with
//! its byte offset as the `offset` attribute. Looked up once per process.

use msgwire_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The Python exception for a core error.
pub fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    // Malformed JSON and a wrong shape are both bad input: DecodeError (a ValueError).
    let built = match &err.kind {
        ErrorKind::Json { .. } | ErrorKind::Schema { .. } => DECODE_ERROR.import(py, "msgwire.errors", "DecodeError"),
    }
    .and_then(|cls| {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("offset", err.offset)?;
        cls.call((err.to_string(),), Some(&kwargs))
    });
    match built {
        Ok(instance) => PyErr::from_value(instance),
        Err(lookup_failed) => lookup_failed,
    }
}
