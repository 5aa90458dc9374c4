//! Every core error becomes an exception of the `msgwire` hierarchy (`msgwire/errors.py`), with
//! its byte offset and its stable `kind` (`Error::code`). The one place exceptions are built;
//! the classes are looked up once per process.

use msgwire_core::response::ResponseError;
use msgwire_core::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static USAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MALFORMED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LIMIT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PROVIDER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TRUNCATED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn class<'py>(py: Python<'py>, cell: &'static PyOnceLock<Py<PyType>>, name: &str) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, "msgwire.errors", name)
}

/// An instance of `class(message, **kwargs)` as a `PyErr`; a failure to build it is raised instead.
fn build(py: Python<'_>, class: PyResult<&Bound<'_, PyType>>, message: String, kwargs: &Bound<'_, PyDict>) -> PyErr {
    match class.and_then(|cls| cls.call((message,), Some(kwargs))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(lookup_failed) => lookup_failed,
    }
    .into_value(py)
    .into_bound(py)
    .into()
}

/// Keyword arguments, or the error of setting one.
fn kwargs<'py>(
    py: Python<'py>,
    fill: impl FnOnce(&Bound<'py, PyDict>) -> PyResult<()>,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(py);
    fill(&kwargs)?;
    Ok(kwargs)
}

/// A caller's mistake (`UsageError`, a `RuntimeError`): never reported as bad data.
fn usage(py: Python<'_>, err: &Error) -> PyErr {
    match kwargs(py, |k| k.set_item("kind", err.code())) {
        Ok(k) => build(py, class(py, &USAGE, "UsageError"), err.to_string(), &k),
        Err(e) => e,
    }
}

/// The exception for an error in a document (not a stream): `DecodeError`, or `UsageError`.
pub fn to_py(py: Python<'_>, err: &Error) -> PyErr {
    if matches!(err.kind, ErrorKind::Usage { .. }) {
        return usage(py, err);
    }
    let filled = kwargs(py, |k| {
        k.set_item("offset", err.offset)?;
        k.set_item("kind", err.code())
    });
    match filled {
        Ok(k) => build(py, class(py, &DECODE_ERROR, "DecodeError"), err.to_string(), &k),
        Err(e) => e,
    }
}

/// The exception for a stream failure: a `StreamError` subclass carrying the dialect and the
/// byte offset (the stream's position when the error carries none).
pub fn stream_error(py: Python<'_>, err: &Error, dialect: &str, position: Option<u64>) -> PyErr {
    let (cell, name) = match err.kind {
        ErrorKind::Usage { .. } => return usage(py, err),
        ErrorKind::Json { .. }
        | ErrorKind::Schema { .. }
        | ErrorKind::Body { .. }
        | ErrorKind::NotAStream { .. }
        | ErrorKind::Write { .. }
        | ErrorKind::JsonSyntax(_) => (&MALFORMED, "MalformedStreamError"),
        ErrorKind::JsonTooDeep { .. } | ErrorKind::Limit { .. } => (&LIMIT, "LimitExceededError"),
        ErrorKind::Provider { .. } => (&PROVIDER, "ProviderError"),
        ErrorKind::Truncated { .. } => (&TRUNCATED, "TruncatedStreamError"),
    };
    let filled = kwargs(py, |k| {
        k.set_item("dialect", dialect)?;
        k.set_item("offset", err.offset.map(|o| o as u64).or(position))?;
        k.set_item("kind", err.code())?;
        match &err.kind {
            ErrorKind::Provider { error_type, message, code } => {
                k.set_item("error_type", error_type)?;
                k.set_item("provider_message", message)?;
                k.set_item("code", code.as_deref())?;
            }
            ErrorKind::Limit { name, limit } => {
                k.set_item("limit_name", *name)?;
                k.set_item("limit", *limit)?;
            }
            ErrorKind::JsonTooDeep { max_depth } => {
                k.set_item("limit_name", "max_depth")?;
                k.set_item("limit", *max_depth)?;
            }
            _ => {}
        }
        Ok(())
    });
    match filled {
        Ok(k) => build(py, class(py, cell, name), format!("{dialect} stream: {err}"), &k),
        Err(e) => e,
    }
}

/// The exception for a response body: the provider's error as `ProviderError` (as a stream
/// raises it), anything else as `DecodeError` with the offset and the JSON path.
pub fn response_error(py: Python<'_>, err: &ResponseError) -> PyErr {
    let provider = matches!(err.error.kind, ErrorKind::Provider { .. });
    let filled = kwargs(py, |k| {
        k.set_item("offset", err.error.offset)?;
        k.set_item("kind", err.error.code())?;
        if let ErrorKind::Provider { error_type, message, code } = &err.error.kind {
            k.set_item("dialect", err.dialect.as_str())?;
            k.set_item("error_type", error_type)?;
            k.set_item("provider_message", message)?;
            k.set_item("code", code.as_deref())?;
        } else {
            k.set_item("path", err.path.as_deref())?;
        }
        Ok(())
    });
    let class = if provider { class(py, &PROVIDER, "ProviderError") } else { class(py, &DECODE_ERROR, "DecodeError") };
    match filled {
        Ok(k) => build(py, class, err.to_string(), &k),
        Err(e) => e,
    }
}
