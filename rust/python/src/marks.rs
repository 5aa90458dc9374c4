//! Partial tool arguments (`msgwire/_partialargs.py`): `attach_marks` gives each
//! `ToolCallDelta` of an event batch a `PartialArgs`, its `parsed` value computed when read.
//! The loop and the per-delta object are here rather than in Python because, for a stream whose
//! deltas nobody reads, the interpreter's cost per delta was most of what `partial_args` added.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyType};

/// For each event of `events` of type `delta` whose `parsed` slot (`slot`, the field's member
/// descriptor) holds a mark: a string (the text since the call's previous mark) is appended to
/// the call's `pieces` (`calls[event.index]`); a list holding one string is the call's first
/// mark, and `calls[event.index] = new_call(text)`. The slot then gets a `PartialArgs` of the
/// call and its marks so far.
#[pyfunction]
pub fn attach_marks(
    events: &Bound<'_, PyList>,
    delta: &Bound<'_, PyType>,
    slot: &Bound<'_, PyAny>,
    calls: &Bound<'_, PyDict>,
    new_call: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = events.py();
    let get = slot.getattr(intern!(py, "__get__"))?;
    let set = slot.getattr(intern!(py, "__set__"))?;
    for event in events.iter() {
        if !event.get_type().is(delta) {
            continue;
        }
        let mark = get.call1((&event,))?;
        let index = event.getattr(intern!(py, "index"))?;
        let call = if mark.is_instance_of::<PyString>() {
            let Some(call) = calls.get_item(&index)? else { continue };
            call
        } else if let Ok(first) = mark.cast::<PyList>() {
            let call = new_call.call1((first.get_item(0)?,))?;
            calls.set_item(&index, &call)?;
            call
        } else {
            continue;
        };
        let pieces = call.getattr(intern!(py, "pieces"))?.cast_into::<PyList>()?;
        if mark.is_instance_of::<PyString>() {
            pieces.append(&mark)?;
        }
        let args = PartialArgs { call: call.unbind(), count: pieces.len(), value: PyOnceLock::new() };
        set.call1((&event, Py::new(py, args)?))?;
    }
    Ok(())
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
