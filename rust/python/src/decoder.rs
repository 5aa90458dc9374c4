//! `msgwire._core.Decoder`: one provider stream, fed chunk by chunk from Python.
//!
//! Every call returns bytes of canonical JSON (an event batch, the message, the diagnostics)
//! for Python to decode with one msgspec call; with a `target` dialect, `feed` and `finish`
//! return the stream rewritten in that dialect's wire format instead (`msgwire.transcode`). A stream failure does not raise here: `feed`
//! and `finish` still return the events decoded before it, and `error()` gives the exception
//! to raise, so the Python side can hand out those events first and keep the partial message.

use msgwire_core::assemble::BuilderOptions;
use msgwire_core::{Error, ErrorKind, Limits, StreamDecoder};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::{self, detached};
use crate::errors::stream_error;

#[pyclass(module = "msgwire._core", name = "Decoder")]
pub struct PyDecoder {
    inner: StreamDecoder,
}

#[pymethods]
impl PyDecoder {
    #[new]
    #[pyo3(signature = (
        dialect, *, id, timestamp, provider=None, events=true, partial_args=false, target=None,
        max_event_size=None, max_line_size=None, max_tool_args_size=None, max_depth=None,
    ))]
    #[allow(clippy::too_many_arguments)] // mirrors the keyword arguments of msgwire.stream
    fn new(
        dialect: &str,
        id: String,
        timestamp: String,
        provider: Option<String>,
        events: bool,
        partial_args: bool,
        target: Option<&str>,
        max_event_size: Option<usize>,
        max_line_size: Option<usize>,
        max_tool_args_size: Option<usize>,
        max_depth: Option<usize>,
    ) -> PyResult<Self> {
        let name = args::dialect(dialect)?;
        let target = target.map(args::dialect).transpose()?;
        let defaults = Limits::default();
        let limits = Limits {
            max_event_size: max_event_size.unwrap_or(defaults.max_event_size),
            max_line_size: max_line_size.unwrap_or(defaults.max_line_size),
            max_tool_args_size: max_tool_args_size.unwrap_or(defaults.max_tool_args_size),
            max_depth: max_depth.unwrap_or(defaults.max_depth),
        };
        let options = BuilderOptions {
            id,
            timestamp,
            provider: provider.unwrap_or_else(|| name.provider().to_owned()),
            record_events: events,
            partial_args,
            limits,
        };
        let inner = match target {
            Some(target) => msgwire_core::transcode::transcoder(name, target, options),
            None => StreamDecoder::new(name, options),
        };
        Ok(Self { inner })
    }

    /// Decode the next bytes; returns the events they completed (a JSON array). Raises only for
    /// a caller's mistake (bytes after the end); a stream failure is reported by `error()`.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let data = args::chunk_bytes(py, data)?;
        let inner = &mut self.inner;
        if let Err(e) = detached(py, data.len(), || inner.feed(&data)) {
            if matches!(e.kind, ErrorKind::Usage { .. }) {
                return Err(stream_error(py, &e, inner.dialect().as_str(), None));
            }
        }
        Ok(PyBytes::new(py, &self.inner.take_events()))
    }

    /// End the stream; returns the last events (a JSON array).
    fn finish<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let _ = self.inner.finish();
        PyBytes::new(py, &self.inner.take_events())
    }

    /// End the stream because its source failed (`reason` says how).
    fn abort(&mut self, reason: &str) {
        if self.inner.failure().is_none() {
            let offset = self.inner.offset();
            self.inner.abort(Error::truncated(format!("the source failed: {reason}"), offset));
        }
    }

    /// The assembled message so far (canonical JSON), readable after any failure.
    fn message<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let json = msgwire_core::canonical::write(self.inner.builder().message())
            .map_err(|e| stream_error(py, &e, "", None))?;
        Ok(PyBytes::new(py, &json))
    }

    /// The assembled message (canonical JSON), moved out of the decoder, which keeps an empty
    /// one: for `assemble`, done with the stream. The core's message is dropped once written, so
    /// a large message is held twice at most (here, then its JSON in Python), not three times.
    fn take_message<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let message = self.inner.take_message();
        let json = msgwire_core::canonical::write(&message).map_err(|e| stream_error(py, &e, "", None))?;
        drop(message);
        Ok(PyBytes::new(py, &json))
    }

    /// What the stream did that was unusual (a JSON array of `{code, message, offset}`).
    fn diagnostics<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let json = serde_json::to_vec(self.inner.builder().diagnostics()).unwrap_or_else(|_| b"[]".to_vec());
        PyBytes::new(py, &json)
    }

    /// The exception that ended the stream, or `None`.
    fn error(&self, py: Python<'_>) -> Option<PyErr> {
        let dialect = self.inner.dialect().as_str();
        self.inner.failure().map(|e| stream_error(py, e, dialect, Some(self.inner.offset())))
    }

    /// Whether the stream ended (finished, failed or aborted).
    #[getter]
    fn ended(&self) -> bool {
        self.inner.is_ended() || self.inner.failure().is_some()
    }

    /// Bytes fed so far.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset()
    }

    #[getter]
    fn dialect(&self) -> &'static str {
        self.inner.dialect().as_str()
    }
}
