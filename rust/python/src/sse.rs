//! `msgwire._core.SSEParser` and `NDJSONParser`: the framers of msgwire-core, fed from Python.
//!
//! One call per chunk: `feed` frames the whole chunk in Rust and returns every event it
//! completed as one list of ready-made `ServerSentEvent` objects, built here from a frozen
//! pyclass (the cheapest Python object to create from Rust, see `sse.py` for the timings).
//! Strings that repeat are created once: the event type `"message"`, the last few event types
//! and the last event id (jiter's string cache, sized for SSE). Chunks of 64 KiB or more are
//! framed with the GIL released, the events copied out and turned into objects afterwards.

use std::borrow::Cow;

use msgwire_core::Error;
use msgwire_core::ndjson::NdjsonParser;
use msgwire_core::sse::{DEFAULT_LIMIT, Pending, SseEvent, SseLimits, SseParser};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};

use crate::errors::stream_error;

/// Chunks at least this large are framed with the GIL released (detaching costs time too).
const DETACH_ABOVE: usize = 64 * 1024;
/// Event types remembered per parser; a stream uses a handful.
const TYPE_CACHE_SIZE: usize = 16;
/// Longer event types are not cached (they are not names but payloads).
const TYPE_CACHE_MAX_LEN: usize = 64;

/// The bytes of a chunk: a `bytes` object is borrowed, any other buffer (`bytearray`,
/// `memoryview`, `array`...) copied.
fn chunk_bytes<'a>(py: Python<'_>, data: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    Ok(Cow::Owned(PyBuffer::<u8>::get(data)?.to_vec(py)?))
}

/// Why a feed stopped: the framer refused the stream, or Python failed (out of memory).
enum Stop {
    Core(Error),
    Py(PyErr),
}

impl From<Error> for Stop {
    fn from(err: Error) -> Self {
        Self::Core(err)
    }
}

impl From<PyErr> for Stop {
    fn from(err: PyErr) -> Self {
        Self::Py(err)
    }
}

// ---- ServerSentEvent ----------------------------------------------------------------------

/// One server-sent event (httpx-sse's `ServerSentEvent`, immutable).
#[pyclass(module = "msgwire._core", name = "ServerSentEvent", frozen, freelist = 256)]
pub struct PyServerSentEvent {
    #[pyo3(get)]
    event: Py<PyString>,
    #[pyo3(get)]
    data: Py<PyString>,
    #[pyo3(get)]
    id: Py<PyString>,
    #[pyo3(get)]
    retry: Option<u64>,
}

static JSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl PyServerSentEvent {
    /// As httpx-sse: a missing or empty `event` is `"message"`, a missing `data` or `id` is `""`.
    #[new]
    #[pyo3(signature = (event=None, data=None, id=None, retry=None))]
    fn new(
        py: Python<'_>,
        event: Option<Bound<'_, PyString>>,
        data: Option<Bound<'_, PyString>>,
        id: Option<Bound<'_, PyString>>,
        retry: Option<u64>,
    ) -> PyResult<Self> {
        let empty = || intern!(py, "").clone();
        let event = match event {
            Some(event) if event.len()? > 0 => event,
            _ => intern!(py, "message").clone(),
        };
        Ok(Self {
            event: event.unbind(),
            data: data.unwrap_or_else(empty).unbind(),
            id: id.unwrap_or_else(empty).unbind(),
            retry,
        })
    }

    /// The data parsed as JSON (`json.loads`, so a `json.JSONDecodeError` if it is not JSON).
    fn json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let loads = JSON_LOADS.import(py, "json", "loads")?;
        Ok(loads.call1((self.data.bind(py),))?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut out = format!("ServerSentEvent(event={}", self.event.bind(py).repr()?);
        if self.data.bind(py).len()? > 0 {
            out.push_str(&format!(", data={}", self.data.bind(py).repr()?));
        }
        if self.id.bind(py).len()? > 0 {
            out.push_str(&format!(", id={}", self.id.bind(py).repr()?));
        }
        if let Some(retry) = self.retry {
            out.push_str(&format!(", retry={retry}"));
        }
        out.push(')');
        Ok(out)
    }

    fn __richcmp__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<Self>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.get();
        let same = |a: &Py<PyString>, b: &Py<PyString>| a.bind(py).as_any().eq(b.bind(py));
        let equal = self.retry == other.retry
            && same(&self.event, &other.event)?
            && same(&self.data, &other.data)?
            && same(&self.id, &other.id)?;
        match op {
            CompareOp::Eq => equal.into_py_any(py),
            CompareOp::Ne => (!equal).into_py_any(py),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        (self.event.bind(py), self.data.bind(py), self.id.bind(py), self.retry).into_pyobject(py)?.hash()
    }

    /// Pickling and `copy`: the class and its four fields.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let args = (this.event.bind(py), this.data.bind(py), this.id.bind(py), this.retry).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }
}

// ---- the strings events share --------------------------------------------------------------

/// The Python strings a stream repeats, created once.
struct Strings {
    /// Recent event types (`"message"` among them), replaced round-robin.
    types: Vec<(Box<str>, Py<PyString>)>,
    next_slot: usize,
    /// The last event id: it persists from event to event, so nearly every event repeats it.
    id: Option<(Box<str>, Py<PyString>)>,
}

impl Strings {
    fn new() -> Self {
        Self { types: Vec::with_capacity(TYPE_CACHE_SIZE), next_slot: 0, id: None }
    }

    fn event_type(&mut self, py: Python<'_>, name: &str) -> Py<PyString> {
        if name == "message" {
            return intern!(py, "message").clone().unbind();
        }
        if let Some((_, cached)) = self.types.iter().find(|(known, _)| **known == *name) {
            return cached.clone_ref(py);
        }
        let created = PyString::new(py, name).unbind();
        if name.len() <= TYPE_CACHE_MAX_LEN {
            let entry = (Box::from(name), created.clone_ref(py));
            if self.types.len() < TYPE_CACHE_SIZE {
                self.types.push(entry);
            } else if let Some(slot) = self.types.get_mut(self.next_slot) {
                *slot = entry;
                self.next_slot = (self.next_slot + 1) % TYPE_CACHE_SIZE;
            }
        }
        created
    }

    fn id(&mut self, py: Python<'_>, id: &str) -> Py<PyString> {
        if id.is_empty() {
            return intern!(py, "").clone().unbind();
        }
        if let Some((known, cached)) = &self.id
            && **known == *id
        {
            return cached.clone_ref(py);
        }
        let created = PyString::new(py, id).unbind();
        self.id = Some((Box::from(id), created.clone_ref(py)));
        created
    }

    fn event(&mut self, py: Python<'_>, event: &SseEvent<'_>) -> PyServerSentEvent {
        PyServerSentEvent {
            event: self.event_type(py, event.event),
            data: PyString::new(py, event.data).unbind(),
            id: self.id(py, event.id),
            retry: event.retry,
        }
    }
}

/// An event copied out of the framer while the GIL is released.
struct OwnedEvent {
    event: String,
    data: String,
    id: String,
    retry: Option<u64>,
}

impl OwnedEvent {
    fn of(event: &SseEvent<'_>) -> Self {
        Self { event: event.event.to_owned(), data: event.data.to_owned(), id: event.id.to_owned(), retry: event.retry }
    }

    fn borrow(&self) -> SseEvent<'_> {
        SseEvent { event: &self.event, data: &self.data, id: &self.id, retry: self.retry, offset: 0, data_offset: 0 }
    }
}

// ---- SSEParser ------------------------------------------------------------------------------

/// What was left when an SSE stream ended (`SSEParser.finish()`).
#[pyclass(module = "msgwire._core", name = "SSEPending", frozen, eq)]
#[derive(PartialEq, Eq)]
pub struct PySsePending {
    /// The stream did not end with a line terminator: its last line was cut.
    #[pyo3(get)]
    partial_line: bool,
    /// The offset of a block with data that no blank line dispatched, if any.
    #[pyo3(get)]
    undispatched: Option<u64>,
}

#[pymethods]
impl PySsePending {
    /// Nothing was lost: the stream ended on a line terminator, no event left undispatched.
    #[getter]
    fn clean(&self) -> bool {
        Pending { partial_line: self.partial_line, undispatched: self.undispatched }.is_clean()
    }

    fn __repr__(&self) -> String {
        let undispatched = self.undispatched.map_or_else(|| "None".to_owned(), |o| o.to_string());
        format!("SSEPending(partial_line={}, undispatched={undispatched})", if self.partial_line { "True" } else { "False" })
    }
}

/// An incremental WHATWG server-sent-events parser.
#[pyclass(module = "msgwire._core", name = "SSEParser")]
pub struct PySseParser {
    inner: SseParser,
    strings: Strings,
    /// The error that stopped the stream: every feed raises it again until `finish`.
    failure: Option<Error>,
}

impl PySseParser {
    /// The exception for a framing error, with the events completed before it as `events`.
    fn raise(&self, py: Python<'_>, err: &Error, events: &Bound<'_, PyList>) -> PyErr {
        let exc = stream_error(py, err, "sse", Some(self.inner.offset()));
        match exc.value(py).setattr(intern!(py, "events"), events) {
            Ok(()) => exc,
            Err(failed) => failed,
        }
    }

    fn run<'py>(&mut self, py: Python<'py>, bytes: &[u8], out: &Bound<'py, PyList>) -> Result<(), Stop> {
        let Self { inner, strings, .. } = self;
        if bytes.len() >= DETACH_ABOVE {
            let mut owned = Vec::new();
            let framed = py.detach(|| {
                inner.feed(bytes, |event| {
                    owned.push(OwnedEvent::of(&event));
                    Ok::<_, Error>(())
                })
            });
            for event in &owned {
                out.append(Bound::new(py, strings.event(py, &event.borrow()))?)?;
            }
            framed.map_err(Stop::Core)
        } else {
            inner.feed(bytes, |event| {
                out.append(Bound::new(py, strings.event(py, &event))?)?;
                Ok::<_, Stop>(())
            })
        }
    }
}

#[pymethods]
impl PySseParser {
    #[new]
    #[pyo3(signature = (*, max_line_size=DEFAULT_LIMIT, max_event_size=DEFAULT_LIMIT))]
    fn new(max_line_size: usize, max_event_size: usize) -> Self {
        Self { inner: SseParser::new(SseLimits { max_line_size, max_event_size }), strings: Strings::new(), failure: None }
    }

    /// Parse the next bytes of the stream; returns the events they completed.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(err) = &self.failure {
            return Err(self.raise(py, err, &out));
        }
        let bytes = chunk_bytes(py, data)?;
        match self.run(py, &bytes, &out) {
            Ok(()) => Ok(out),
            Err(Stop::Py(err)) => Err(err),
            Err(Stop::Core(err)) => {
                let exc = self.raise(py, &err, &out);
                self.failure = Some(err);
                Err(exc)
            }
        }
    }

    /// PROTOTYPE: (event, data, id, retry) tuples.
    fn feed_tuples<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let bytes = chunk_bytes(py, data)?;
        let Self { inner, strings, .. } = self;
        let r = inner.feed(&bytes, |event| {
            let e = strings.event(py, &event);
            out.append((e.event, e.data, e.id, e.retry).into_pyobject(py)?)?;
            Ok::<_, Stop>(())
        });
        if r.is_err() {
            return Err(PyValueError::new_err("x"));
        }
        Ok(out)
    }

    /// PROTOTYPE: cls(event, data, id, retry) per event.
    fn feed_call<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        cls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let bytes = chunk_bytes(py, data)?;
        let Self { inner, strings, .. } = self;
        let r = inner.feed(&bytes, |event| {
            let e = strings.event(py, &event);
            out.append(cls.call1((e.event, e.data, e.id, e.retry))?)?;
            Ok::<_, Stop>(())
        });
        if r.is_err() {
            return Err(PyValueError::new_err("x"));
        }
        Ok(out)
    }

    /// PROTOTYPE: data strings only (lower bound).
    fn feed_data<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let bytes = chunk_bytes(py, data)?;
        let r = self.inner.feed(&bytes, |event| {
            out.append(PyString::new(py, event.data))?;
            Ok::<_, Stop>(())
        });
        if r.is_err() {
            return Err(PyValueError::new_err("x"));
        }
        Ok(out)
    }

    /// PROTOTYPE: count only.
    fn feed_count(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let bytes = chunk_bytes(py, data)?;
        let mut n = 0;
        let r = self.inner.feed(&bytes, |_| {
            n += 1;
            Ok::<_, Error>(())
        });
        if r.is_err() {
            return Err(PyValueError::new_err("x"));
        }
        Ok(n)
    }

    /// End the stream: what was left undispatched. The parser is then ready for a new stream
    /// (a reconnection), keeping the last event id, the reconnection time and the comment count.
    fn finish(&mut self) -> PySsePending {
        self.failure = None;
        let Pending { partial_line, undispatched } = self.inner.finish();
        PySsePending { partial_line, undispatched }
    }

    /// The last event id as of the last blank line (what a reconnection sends as `Last-Event-ID`).
    #[getter]
    fn last_event_id(&mut self, py: Python<'_>) -> Py<PyString> {
        let Self { inner, strings, .. } = self;
        strings.id(py, inner.last_event_id())
    }

    /// The last valid `retry` value seen, in milliseconds.
    #[getter]
    fn reconnection_time(&self) -> Option<u64> {
        self.inner.reconnection_time()
    }

    /// Comment lines seen (keep-alives).
    #[getter]
    fn comments_seen(&self) -> u64 {
        self.inner.comments_seen()
    }

    /// Bytes of the current stream fed so far.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset()
    }
}

// ---- NDJSONParser ---------------------------------------------------------------------------

/// An incremental NDJSON line splitter.
#[pyclass(module = "msgwire._core", name = "NDJSONParser")]
pub struct PyNdjsonParser {
    inner: NdjsonParser,
    failure: Option<Error>,
}

impl PyNdjsonParser {
    fn raise(&self, py: Python<'_>, err: &Error, lines: &Bound<'_, PyList>) -> PyErr {
        let exc = stream_error(py, err, "ndjson", Some(self.inner.offset()));
        match exc.value(py).setattr(intern!(py, "events"), lines) {
            Ok(()) => exc,
            Err(failed) => failed,
        }
    }
}

#[pymethods]
impl PyNdjsonParser {
    #[new]
    #[pyo3(signature = (*, max_line_size=DEFAULT_LIMIT))]
    fn new(max_line_size: usize) -> Self {
        Self { inner: NdjsonParser::new(max_line_size), failure: None }
    }

    /// Split the next bytes of the stream; returns the non-blank lines they completed.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(err) = &self.failure {
            return Err(self.raise(py, err, &out));
        }
        let bytes = chunk_bytes(py, data)?;
        let mut push = |line: msgwire_core::ndjson::NdjsonLine<'_>| -> Result<(), Stop> {
            out.append(PyString::new(py, line.text))?;
            Ok(())
        };
        let fed = if bytes.len() >= DETACH_ABOVE {
            let inner = &mut self.inner;
            let mut owned = Vec::new();
            let framed = py.detach(|| {
                inner.feed(&bytes, |line| {
                    owned.push(line.text.to_owned());
                    Ok::<_, Error>(())
                })
            });
            for line in &owned {
                out.append(PyString::new(py, line))?;
            }
            framed.map_err(Stop::Core)
        } else {
            self.inner.feed(&bytes, &mut push)
        };
        match fed {
            Ok(()) => Ok(out),
            Err(Stop::Py(err)) => Err(err),
            Err(Stop::Core(err)) => {
                let exc = self.raise(py, &err, &out);
                self.failure = Some(err);
                Err(exc)
            }
        }
    }

    /// End the stream: the last line if it had no LF (a list of zero or one line). The parser
    /// is then ready for a new stream.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.failure = None;
        let out = PyList::empty(py);
        self.inner.finish(|line| out.append(PyString::new(py, line.text)))?;
        Ok(out)
    }

    /// Bytes of the current stream fed so far.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset()
    }
}
