//! `msgwire._core.to_request_json` / `from_request_json`: the request formats of
//! `msgwire.formats`. Every provider rule lives in `msgwire_core::request`; this only converts
//! arguments, releases the GIL for large inputs and maps errors.

use msgwire_core::request::{self, Options};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyBytesMethods};

use crate::args::{self, detached};
use crate::errors::to_py;

/// Write the request fields of `data` (a canonical session, or a JSON array of canonical
/// messages) for `dialect`; `options` is the JSON of `{system_prompt, system_role, tools,
/// policy, missing_result, tool_call_ids}`. Returns the body and the report, both JSON.
/// Without `report`, the report is `None` (not written).
#[pyfunction]
#[pyo3(signature = (data, dialect, options=None, report=true))]
pub fn to_request_json<'py>(
    py: Python<'py>,
    data: &[u8],
    dialect: &str,
    options: Option<&[u8]>,
    report: bool,
) -> PyResult<(Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>)> {
    let name = args::dialect(dialect)?;
    let convert = || {
        let options = match options {
            Some(json) => Options::from_json(json)?,
            None => Options::default(),
        };
        request::to_request_body(data, name, &options, report)
    };
    let converted = detached(py, data.len(), convert);
    let (body, losses) = converted.map_err(|e| to_py(py, &e))?;
    let losses = report.then(|| PyBytes::new(py, &request::report_json(&losses)));
    Ok((PyBytes::new(py, &body), losses))
}

/// Read a request body of `dialect` into canonical session JSON (without ids and timestamps).
#[pyfunction]
pub fn from_request_json<'py>(py: Python<'py>, data: &[u8], dialect: &str) -> PyResult<Bound<'py, PyBytes>> {
    let name = args::dialect(dialect)?;
    let read = || request::from_request_json(data, name);
    let session = detached(py, data.len(), read);
    Ok(PyBytes::new(py, &session.map_err(|e| to_py(py, &e))?))
}

/// The content key of a message's canonical JSON (see `RequestCache`), 16 bytes.
#[pyfunction]
pub fn content_key<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &request::content_key(data).to_le_bytes())
}

/// `msgwire_core::request::RequestCache`: the messages read and the last requests written for
/// one conversation, so that re-building its request after it grew writes only what is new.
#[pyclass(module = "msgwire._core", name = "RequestCache")]
#[derive(Default)]
pub struct PyRequestCache {
    inner: request::RequestCache,
}

#[pymethods]
impl PyRequestCache {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// How many messages are kept read.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The request of the messages (`data`, their canonical JSON; `keys`, the 16-byte content
    /// key of each, joined) for `dialect`; the same bytes and report as `to_request_json`.
    #[pyo3(name = "to_request_json", signature = (keys, data, dialect, options=None, report=true))]
    #[allow(clippy::needless_pass_by_value)] // pyo3 hands the list over as a Vec
    fn convert<'py>(
        &mut self,
        py: Python<'py>,
        keys: &[u8],
        data: Vec<Bound<'py, PyBytes>>,
        dialect: &str,
        options: Option<&[u8]>,
        report: bool,
    ) -> PyResult<(Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>)> {
        let name = args::dialect(dialect)?;
        if keys.len() != 16 * data.len() {
            return Err(pyo3::exceptions::PyValueError::new_err("keys must hold 16 bytes per message"));
        }
        let keys = keys.chunks_exact(16).map(|k| u128::from_le_bytes(k.try_into().unwrap_or_default()));
        let messages: Vec<(u128, &[u8])> = keys.zip(data.iter().map(PyBytesMethods::as_bytes)).collect();
        let inner = &mut self.inner;
        // a short conversation's build takes microseconds: releasing the GIL for it costs more, and
        // a thread that takes the GIL meanwhile holds up the event loop (up to its switch interval)
        let size = messages.iter().map(|(_, json)| json.len()).sum();
        let written = detached(py, size, || inner.write(&messages, name, options, report));
        let written = written.map_err(|e| to_py(py, &e))?;
        let body = PyBytes::new(py, written.body);
        Ok((body, report.then(|| PyBytes::new(py, &request::report_json(&written.report)))))
    }
}
