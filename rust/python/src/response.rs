//! `msgwire._core.to_response_json` / `from_response_json`: the non-streamed responses of
//! `msgwire.formats`. Every provider rule lives in `msgwire_core::response`; this only converts
//! arguments, releases the GIL for large inputs and maps errors.

use msgwire_core::response::{self, Options};
use msgwire_core::{ids, request};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::{self, detached};
use crate::errors::{response_error, to_py};

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
/// `id` (a new one by default) and this `timestamp` unless the body has a creation time (now by
/// default).
#[pyfunction]
#[pyo3(signature = (data, dialect, *, id=None, timestamp=None))]
pub fn from_response_json<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    id: Option<&str>,
    timestamp: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let name = args::dialect(dialect)?;
    let id = id.map_or_else(ids::new_id, str::to_owned);
    let read = || response::from_response_json(data, name, &id, timestamp.unwrap_or_default());
    let message = detached(py, data.len(), read);
    Ok(PyBytes::new(py, &message.map_err(|e| response_error(py, &e))?))
}
