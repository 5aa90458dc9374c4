//! Every core error becomes an exception of the `msgwire` hierarchy (`msgwire/errors.py`),
//! with its byte offset. The classes are looked up once per process.

use msgwire_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MALFORMED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LIMIT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PROVIDER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TRUNCATED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn build(py: Python<'_>, class: PyResult<&Bound<'_, PyType>>, message: String, kwargs: &Bound<'_, PyDict>) -> PyErr {
    match class.and_then(|cls| cls.call((message,), Some(kwargs))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(lookup_failed) => lookup_failed,
    }
    .into_value(py)
    .into_bound(py)
    .into()
}

/// The exception for an error in a canonical document (not a stream): `DecodeError`.
pub fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    let kwargs = PyDict::new(py);
    if let Err(e) = kwargs.set_item("offset", err.offset) {
        return e;
    }
    build(py, DECODE_ERROR.import(py, "msgwire.errors", "DecodeError"), err.to_string(), &kwargs)
}

/// The exception for a stream failure: a `StreamError` subclass carrying the dialect and the
/// byte offset (the stream's position when the error carries none).
pub fn stream_error(py: Python<'_>, err: &Error, dialect: &str, position: Option<u64>) -> PyErr {
    let kwargs = PyDict::new(py);
    let offset = err.offset.map(|o| o as u64).or(position);
    let filled = (|| -> PyResult<()> {
        kwargs.set_item("dialect", dialect)?;
        kwargs.set_item("offset", offset)?;
        if let ErrorKind::Provider { error_type, message } = &err.kind {
            kwargs.set_item("error_type", error_type)?;
            kwargs.set_item("provider_message", message)?;
        }
        if let ErrorKind::Limit { name, limit } = &err.kind {
            kwargs.set_item("limit_name", *name)?;
            kwargs.set_item("limit", *limit)?;
        }
        if let ErrorKind::JsonTooDeep { max_depth } = &err.kind {
            kwargs.set_item("limit_name", "max_depth")?;
            kwargs.set_item("limit", *max_depth)?;
        }
        Ok(())
    })();
    if let Err(e) = filled {
        return e;
    }
    let (cell, name) = match err.kind {
        ErrorKind::Json { .. } | ErrorKind::Schema { .. } | ErrorKind::JsonSyntax(_) => {
            (&MALFORMED, "MalformedStreamError")
        }
        ErrorKind::JsonTooDeep { .. } | ErrorKind::Limit { .. } => (&LIMIT, "LimitExceededError"),
        ErrorKind::Provider { .. } => (&PROVIDER, "ProviderError"),
        ErrorKind::Truncated { .. } => (&TRUNCATED, "TruncatedStreamError"),
    };
    build(py, cell.import(py, "msgwire.errors", name), format!("{dialect} stream: {err}"), &kwargs)
}
