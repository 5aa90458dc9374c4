//! `msgwire._core.to_response_json` / `from_response_json`: the non-streamed responses of
//! `msgwire.formats`. Every provider rule lives in `msgwire_core::response`; this only converts
//! arguments, releases the GIL for large inputs and maps errors.

use msgwire_core::canonical::{LongField, take_long_strings};
use msgwire_core::response::{self, Options, ResponseError};
use msgwire_core::{ids, request};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

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

/// Strings at least this long leave the JSON in [`from_response_parts`]: below it, msgspec
/// decoding one from the JSON costs less than putting it back in its block from Python.
const LONG_STRING: usize = 128;

/// [`from_response_json`] in two parts: the canonical JSON of the message with its long texts,
/// thinking and tool arguments left empty, and those strings as `(block index, field name, str)`
/// in block order, each made a `str` from the text read from the body. The caller decodes the
/// JSON and puts each string in its block: the body's long strings are decoded once, not
/// written as JSON by the core and decoded again by msgspec.
#[pyfunction]
#[pyo3(signature = (data, dialect, *, id=None, timestamp=None))]
pub fn from_response_parts<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    id: Option<&str>,
    timestamp: Option<&str>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
    let name = args::dialect(dialect)?;
    let id = id.map_or_else(ids::new_id, str::to_owned);
    let read = || {
        let mut message = response::read_response(data, name, &id, timestamp.unwrap_or_default())?;
        let long = take_long_strings(&mut message, LONG_STRING);
        let json =
            response::message_json(&message).map_err(|error| ResponseError { dialect: name, error, path: None })?;
        Ok((json, long))
    };
    let read = detached(py, data.len(), read);
    let (json, long) = read.map_err(|e| response_error(py, &e))?;
    let strings = PyList::empty(py);
    for (index, field, text) in long {
        let name = match field {
            LongField::Text => intern!(py, "text"),
            LongField::Thinking => intern!(py, "thinking"),
            LongField::Arguments => intern!(py, "arguments"),
        };
        let name = name.clone().into_any();
        let item = [index.into_bound_py_any(py)?, name, PyString::new(py, &text).into_any()];
        strings.append(PyTuple::new(py, item)?)?;
    }
    Ok((PyBytes::new(py, &json), strings))
}
