//! Partial tool arguments (`msgwire/_partialargs.py`): a stream's `Marks` gives each
//! `ToolCallDelta` of an event batch a `PartialArgs`, its `parsed` value computed when read.
//! The loop and the per-delta object are here rather than in Python because, for a stream whose
//! deltas nobody reads, the interpreter's cost per delta was most of what `partial_args` added.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyType};

/// A stream's tool calls, each the Python reader of its marks (`new_call(first_text)`, a
/// `_partialargs._Call`) and that reader's `pieces`, by the call's block index.
///
/// Per delta this costs two attribute reads, an append, the `PartialArgs` and one
/// `force_setattr`: the mark is read through `ToolCallDelta._parsed_mark` (the `parsed` slot
/// under a name no property hides, a plain attribute read), not through the slot's `__get__`,
/// and the object (the stream's types, the setter) looked up once per stream, not per batch.
#[pyclass(module = "msgwire._core", name = "Marks")]
pub struct Marks {
    delta: Py<PyType>,
    new_call: Py<PyAny>,
    force_setattr: Py<PyAny>,
    calls: Vec<Option<(Py<PyAny>, Py<PyList>)>>,
}

#[pymethods]
impl Marks {
    /// `delta`: the `ToolCallDelta` type; `new_call(text)`: a call's reader, from its first mark.
    #[new]
    fn new(py: Python<'_>, delta: Bound<'_, PyType>, new_call: Bound<'_, PyAny>) -> PyResult<Self> {
        let force_setattr = py.import(intern!(py, "msgspec.structs"))?.getattr(intern!(py, "force_setattr"))?;
        Ok(Self {
            delta: delta.unbind(),
            new_call: new_call.unbind(),
            force_setattr: force_setattr.unbind(),
            calls: Vec::new(),
        })
    }

    /// Replace the mark in `parsed` of every `ToolCallDelta` of `events`: a string (the text since
    /// the call's previous mark) is appended to its call's pieces; a list holding one string is
    /// the call's first mark (a new reader). The slot then gets a `PartialArgs` of the call and
    /// its marks so far.
    fn attach(&mut self, events: &Bound<'_, PyList>) -> PyResult<()> {
        let py = events.py();
        let delta = self.delta.bind(py);
        let mark_name = intern!(py, "_parsed_mark");
        for event in events.iter() {
            if !event.get_type().is(delta) {
                continue;
            }
            let mark = event.getattr(mark_name)?;
            let index: usize = event.getattr(intern!(py, "index"))?.extract()?;
            let (call, count) = if mark.is_instance_of::<PyString>() {
                let Some(Some((call, pieces))) = self.calls.get(index) else { continue };
                let pieces = pieces.bind(py);
                pieces.append(&mark)?;
                (call.clone_ref(py), pieces.len())
            } else if let Ok(first) = mark.cast::<PyList>() {
                let call = self.new_call.bind(py).call1((first.get_item(0)?,))?;
                let pieces = call.getattr(intern!(py, "pieces"))?.cast_into::<PyList>()?;
                let count = pieces.len();
                if self.calls.len() <= index {
                    self.calls.resize_with(index + 1, || None);
                }
                let call = call.unbind();
                self.calls[index] = Some((call.clone_ref(py), pieces.unbind()));
                (call, count)
            } else {
                continue;
            };
            let args = Py::new(py, PartialArgs { call, count, value: PyOnceLock::new() })?;
            self.force_setattr.bind(py).call1((&event, mark_name, args))?;
        }
        Ok(())
    }
}

/// The arguments parsed so far at one delta: `call.value_at(count)`, computed on first read and
/// kept. Equality, hashing, `repr` and pickling are the value's.
#[pyclass(module = "msgwire._core", name = "PartialArgs", frozen)]
pub struct PartialArgs {
    call: Py<PyAny>,
    count: usize,
    value: PyOnceLock<Py<PyAny>>,
}

#[pymethods]
impl PartialArgs {
    /// The value (parsed on the first call).
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = self.value.get_or_try_init(py, || {
            self.call.bind(py).call_method1(intern!(py, "value_at"), (self.count,)).map(Bound::unbind)
        })?;
        Ok(value.bind(py).clone())
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let other = match other.cast::<PartialArgs>() {
            Ok(deferred) => deferred.get().value(py)?,
            Err(_) => other.clone(),
        };
        self.value(py)?.eq(other)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.value(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.value(py)?.repr()?.to_string())
    }

    /// Pickled (and deep-copied) as its value: `copy.copy(value)` when read back.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let copy = py.import(intern!(py, "copy"))?.getattr(intern!(py, "copy"))?;
        Ok((copy, (self.value(py)?,)))
    }
}
