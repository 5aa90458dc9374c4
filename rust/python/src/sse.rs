//! `msgwire._core.SSEParser` and `NDJSONParser`: the framers of msgwire-core, fed from Python.
//!
//! One call per chunk: `feed` frames the whole chunk in Rust and returns every event it
//! completed as one list of finished `msgwire.sse.ServerSentEvent` objects, made here by
//! calling that class (a msgspec `Struct` with `gc=False`: the cheapest object to make and to
//! keep, see `msgwire/sse.py` for the timings). The strings a stream repeats are made once per
//! parser: the event type `"message"`, the last few other event types and the last event id
//! (jiter's string cache, sized for SSE). Chunks of 64 KiB or more are framed with the GIL
//! released; their events are copied out and turned into objects once it is held again.
//!
//! A framing error (a limit exceeded) raises `msgwire.LimitExceededError` with the stream
//! offset, its `events` holding the events the chunk completed before the error. Every later
//! `feed` raises it again until `finish` starts a new stream.

use msgwire_core::Error;
use msgwire_core::ndjson::{NdjsonLine, NdjsonParser};
use msgwire_core::sse::{DEFAULT_LIMIT, Pending, SseEvent, SseLimits, SseParser};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyType};

use crate::args::{DETACH_ABOVE, chunk_bytes};
use crate::errors::stream_error;

/// Event types remembered per parser besides `"message"`; a stream uses a handful.
const TYPE_CACHE_SIZE: usize = 16;
/// Longer event types are not remembered.
const TYPE_CACHE_MAX_LEN: usize = 64;

static SERVER_SENT_EVENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

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

/// The `StreamError` for `err`, its `events` set to what the chunk completed before it.
fn failure(py: Python<'_>, err: &Error, dialect: &str, offset: u64, events: &Bound<'_, PyList>) -> PyErr {
    let exc = stream_error(py, err, dialect, Some(offset));
    match exc.value(py).setattr(intern!(py, "events"), events) {
        Ok(()) => exc,
        Err(failed) => failed,
    }
}

// ---- SSE ------------------------------------------------------------------------------------

/// Makes the `ServerSentEvent` objects of one stream, reusing the strings it repeats.
struct Events {
    class: Py<PyType>,
    message: Py<PyString>,
    empty: Py<PyString>,
    /// Recent event types other than `"message"`, replaced round-robin once full.
    types: Vec<(Box<str>, Py<PyString>)>,
    next_slot: usize,
    /// The last event id: it persists from event to event, so most events repeat it.
    id: Option<(Box<str>, Py<PyString>)>,
}

impl Events {
    fn new(py: Python<'_>) -> PyResult<Self> {
        Ok(Self {
            class: SERVER_SENT_EVENT.import(py, "msgwire.sse", "ServerSentEvent")?.clone().unbind(),
            message: intern!(py, "message").clone().unbind(),
            empty: intern!(py, "").clone().unbind(),
            types: Vec::with_capacity(TYPE_CACHE_SIZE),
            next_slot: 0,
            id: None,
        })
    }

    fn event_type(&mut self, py: Python<'_>, name: &str) -> Py<PyString> {
        if name == "message" {
            return self.message.clone_ref(py);
        }
        if let Some((_, known)) = self.types.iter().find(|(text, _)| **text == *name) {
            return known.clone_ref(py);
        }
        let made = PyString::new(py, name).unbind();
        if name.len() <= TYPE_CACHE_MAX_LEN {
            let entry = (Box::from(name), made.clone_ref(py));
            if self.types.len() < TYPE_CACHE_SIZE {
                self.types.push(entry);
            } else if let Some(slot) = self.types.get_mut(self.next_slot) {
                *slot = entry;
                self.next_slot = (self.next_slot + 1) % TYPE_CACHE_SIZE;
            }
        }
        made
    }

    fn id(&mut self, py: Python<'_>, id: &str) -> Py<PyString> {
        if id.is_empty() {
            return self.empty.clone_ref(py);
        }
        if let Some((text, known)) = &self.id {
            if **text == *id {
                return known.clone_ref(py);
            }
        }
        let made = PyString::new(py, id).unbind();
        self.id = Some((Box::from(id), made.clone_ref(py)));
        made
    }

    /// `ServerSentEvent(event, data, id, retry)`.
    fn make<'py>(&mut self, py: Python<'py>, event: &SseEvent<'_>) -> PyResult<Bound<'py, PyAny>> {
        let args =
            (self.event_type(py, event.event), PyString::new(py, event.data), self.id(py, event.id), event.retry);
        self.class.bind(py).call1(args)
    }
}

/// An event copied out of the framer while the GIL is released.
struct OwnedEvent {
    event: Box<str>,
    data: Box<str>,
    id: Box<str>,
    retry: Option<u64>,
}

impl OwnedEvent {
    fn of(event: &SseEvent<'_>) -> Self {
        Self { event: event.event.into(), data: event.data.into(), id: event.id.into(), retry: event.retry }
    }

    fn view(&self) -> SseEvent<'_> {
        SseEvent { event: &self.event, data: &self.data, id: &self.id, retry: self.retry, offset: 0, data_offset: 0 }
    }
}

/// What was left when an SSE stream ended: `SSEParser.finish()`.
#[pyclass(module = "msgwire._core", name = "SSEPending", frozen, eq)]
#[derive(PartialEq, Eq)]
pub struct PySsePending {
    /// The stream did not end with a line terminator: its last line was cut.
    #[pyo3(get)]
    partial_line: bool,
    /// The offset of a block with data that no blank line dispatched (an event lost), if any.
    #[pyo3(get)]
    undispatched: Option<u64>,
}

#[pymethods]
impl PySsePending {
    /// Nothing was lost: the stream ended on a line terminator, with no event undispatched.
    #[getter]
    fn clean(&self) -> bool {
        Pending { partial_line: self.partial_line, undispatched: self.undispatched }.is_clean()
    }

    fn __repr__(&self) -> String {
        let partial = if self.partial_line { "True" } else { "False" };
        let undispatched = self.undispatched.map_or_else(|| "None".to_owned(), |at| at.to_string());
        format!("SSEPending(partial_line={partial}, undispatched={undispatched})")
    }
}

/// An incremental WHATWG server-sent-events parser (`msgwire.sse.SSEParser`).
#[pyclass(module = "msgwire._core", name = "SSEParser")]
pub struct PySseParser {
    inner: SseParser,
    events: Events,
    /// The error that stopped the stream: every feed raises it again until `finish`.
    failed: Option<Error>,
}

impl PySseParser {
    /// Frame `bytes`, appending the events it completes to `out`.
    fn frame<'py>(&mut self, py: Python<'py>, bytes: &[u8], out: &Bound<'py, PyList>) -> Result<(), Stop> {
        let Self { inner, events, .. } = self;
        if bytes.len() < DETACH_ABOVE {
            return inner.feed(bytes, |event| Ok::<_, Stop>(out.append(events.make(py, &event)?)?));
        }
        let mut owned = Vec::new();
        let framed = py.detach(|| {
            inner.feed(bytes, |event| {
                owned.push(OwnedEvent::of(&event));
                Ok::<_, Error>(())
            })
        });
        for event in &owned {
            out.append(events.make(py, &event.view())?)?;
        }
        framed.map_err(Stop::Core)
    }
}

#[pymethods]
impl PySseParser {
    #[new]
    #[pyo3(signature = (*, max_line_size=DEFAULT_LIMIT, max_event_size=DEFAULT_LIMIT))]
    fn new(py: Python<'_>, max_line_size: usize, max_event_size: usize) -> PyResult<Self> {
        let limits = SseLimits { max_line_size, max_event_size };
        Ok(Self { inner: SseParser::new(limits), events: Events::new(py)?, failed: None })
    }

    /// Parse the next bytes of the stream (split anywhere); returns the events they completed.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(err) = &self.failed {
            return Err(failure(py, err, "sse", self.inner.offset(), &out));
        }
        let bytes = chunk_bytes(py, data)?;
        match self.frame(py, &bytes, &out) {
            Ok(()) => Ok(out),
            Err(Stop::Py(err)) => Err(err),
            Err(Stop::Core(err)) => {
                let exc = failure(py, &err, "sse", self.inner.offset(), &out);
                self.failed = Some(err);
                Err(exc)
            }
        }
    }

    /// End the stream: what it left undispatched (as the spec says, an unfinished block is
    /// discarded). The parser is then ready for a new stream (a reconnection): offsets restart
    /// at 0, while the last event id, the reconnection time and the comment count carry over.
    fn finish(&mut self) -> PySsePending {
        self.failed = None;
        let Pending { partial_line, undispatched } = self.inner.finish();
        PySsePending { partial_line, undispatched }
    }

    /// The last event id as of the last blank line (what a reconnection sends as `Last-Event-ID`).
    #[getter]
    fn last_event_id(&mut self, py: Python<'_>) -> Py<PyString> {
        let Self { inner, events, .. } = self;
        events.id(py, inner.last_event_id())
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

// ---- NDJSON ---------------------------------------------------------------------------------

/// An incremental NDJSON line splitter (`msgwire.sse.NDJSONParser`).
#[pyclass(module = "msgwire._core", name = "NDJSONParser")]
pub struct PyNdjsonParser {
    inner: NdjsonParser,
    /// The error that stopped the stream: every feed raises it again until `finish`.
    failed: Option<Error>,
}

impl PyNdjsonParser {
    /// Split `bytes`, appending the lines it completes to `out`.
    fn frame<'py>(&mut self, py: Python<'py>, bytes: &[u8], out: &Bound<'py, PyList>) -> Result<(), Stop> {
        let inner = &mut self.inner;
        if bytes.len() < DETACH_ABOVE {
            return inner.feed(bytes, |line: NdjsonLine<'_>| Ok::<_, Stop>(out.append(PyString::new(py, line.text))?));
        }
        let mut owned: Vec<Box<str>> = Vec::new();
        let framed = py.detach(|| {
            inner.feed(bytes, |line| {
                owned.push(line.text.into());
                Ok::<_, Error>(())
            })
        });
        for line in &owned {
            out.append(PyString::new(py, line))?;
        }
        framed.map_err(Stop::Core)
    }
}

#[pymethods]
impl PyNdjsonParser {
    #[new]
    #[pyo3(signature = (*, max_line_size=DEFAULT_LIMIT))]
    fn new(max_line_size: usize) -> Self {
        Self { inner: NdjsonParser::new(max_line_size), failed: None }
    }

    /// Split the next bytes of the stream; returns the non-blank lines they completed.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(err) = &self.failed {
            return Err(failure(py, err, "ndjson", self.inner.offset(), &out));
        }
        let bytes = chunk_bytes(py, data)?;
        match self.frame(py, &bytes, &out) {
            Ok(()) => Ok(out),
            Err(Stop::Py(err)) => Err(err),
            Err(Stop::Core(err)) => {
                let exc = failure(py, &err, "ndjson", self.inner.offset(), &out);
                self.failed = Some(err);
                Err(exc)
            }
        }
    }

    /// End the stream: its last line if no LF ended it (a list of zero or one line). The
    /// parser is then ready for a new stream. After an error the rest of the stream is dropped.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if self.failed.take().is_some() {
            self.inner.finish(|_| Ok::<_, PyErr>(()))?;
        } else {
            self.inner.finish(|line| out.append(PyString::new(py, line.text)))?;
        }
        Ok(out)
    }

    /// Bytes of the current stream fed so far.
    #[getter]
    fn offset(&self) -> u64 {
        self.inner.offset()
    }
}
