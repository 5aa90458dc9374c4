//! `msgwire._core.to_response_json` / `from_response_json`: the non-streamed responses of
//! `msgwire.formats`. Every provider rule lives in `msgwire_core::response`; this only converts
//! arguments, releases the GIL for large inputs and maps errors.

use msgwire_core::response::{self, Options, ResponseError};
use msgwire_core::{ErrorKind, request};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::args::{self, detached};
use crate::errors::to_py;

/// Write the response body of `dialect` for `data` (the canonical JSON of one assistant
/// message); `options` is the JSON of `{policy}`. Returns the body and the report, both JSON.
#[pyfunction]
#[pyo3(signature = (data, dialect, options=None))]
pub fn to_response_json<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    options: Option<&[u8]>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let name = args::dialect(dialect)?;
    let convert = || {
        let options = options.map(Options::from_json).transpose()?.unwrap_or_default();
        response::to_response_json(data, name, &options)
    };
    let converted = detached(py, data.len(), convert);
    let converted = converted.map_err(|e| to_py(py, &e))?;
    Ok((PyBytes::new(py, &converted.body), PyBytes::new(py, &request::report_json(&converted.report))))
}

/// Read a response body of `dialect` into the canonical JSON of an assistant message with this
/// `id`, and this `timestamp` unless the body has a creation time.
#[pyfunction]
#[pyo3(signature = (data, dialect, *, id, timestamp))]
pub fn from_response_json<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    id: &str,
    timestamp: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let name = args::dialect(dialect)?;
    let read = || response::from_response_json(data, name, id, timestamp);
    let message = detached(py, data.len(), read);
    Ok(PyBytes::new(py, &message.map_err(|e| error(py, &e))?))
}

/// The provider's error as `ProviderError` (as a stream raises it), anything else as
/// `DecodeError` with the offset and the JSON path.
fn error(py: Python<'_>, err: &ResponseError) -> PyErr {
    let kwargs = PyDict::new(py);
    let (class, filled) = match &err.error.kind {
        ErrorKind::Provider { error_type, message } => (
            "ProviderError",
            (|| -> PyResult<()> {
                kwargs.set_item("dialect", err.dialect.as_str())?;
                kwargs.set_item("offset", err.error.offset)?;
                kwargs.set_item("error_type", error_type)?;
                kwargs.set_item("provider_message", message)
            })(),
        ),
        _ => (
            "DecodeError",
            (|| -> PyResult<()> {
                kwargs.set_item("offset", err.error.offset)?;
                kwargs.set_item("path", err.path.as_deref())
            })(),
        ),
    };
    let made = filled
        .and_then(|()| py.import("msgwire.errors")?.getattr(class))
        .and_then(|cls| cls.call((err.to_string(),), Some(&kwargs)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(failed) => failed,
    }
}
