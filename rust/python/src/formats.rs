//! `msgwire._core.to_request_json` / `from_request_json`: the request formats of
//! `msgwire.formats`. Every provider rule lives in `msgwire_core::request`; this only converts
//! arguments, releases the GIL for large inputs and maps errors.

use msgwire_core::request::{self, Options};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::{self, detached};
use crate::errors::to_py;

/// Write the request fields of `data` (a canonical session, or a JSON array of canonical
/// messages) for `dialect`; `options` is the JSON of `{system_prompt, system_role, tools,
/// policy, missing_result, tool_call_ids}`. Returns the body and the report, both JSON.
#[pyfunction]
#[pyo3(signature = (data, dialect, options=None))]
pub fn to_request_json<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    options: Option<&[u8]>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let name = args::dialect(dialect)?;
    let convert = || {
        let options = match options {
            Some(json) => Options::from_json(json)?,
            None => Options::default(),
        };
        request::to_request_json(data, name, &options)
    };
    let converted = detached(py, data.len(), convert);
    let converted = converted.map_err(|e| to_py(py, &e))?;
    Ok((PyBytes::new(py, &converted.body), PyBytes::new(py, &request::report_json(&converted.report))))
}

/// Read a request body of `dialect` into canonical session JSON (without ids and timestamps).
#[pyfunction]
pub fn from_request_json<'py>(py: Python<'py>, data: &[u8], dialect: &str) -> PyResult<Bound<'py, PyBytes>> {
    let name = args::dialect(dialect)?;
    let read = || request::from_request_json(data, name);
    let session = detached(py, data.len(), read);
    Ok(PyBytes::new(py, &session.map_err(|e| to_py(py, &e))?))
}
