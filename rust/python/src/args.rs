//! What every binding function shares: reading a dialect name and a chunk of bytes, and running
//! work on a large buffer with the GIL released.

use std::borrow::Cow;

use msgwire_core::DialectName;
use msgwire_core::dialect::UnknownDialect;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Inputs at least this large are worked on with the GIL released (detaching costs time too).
pub(crate) const DETACH_ABOVE: usize = 64 * 1024;

/// A dialect name as users pass it; `ValueError` naming the known ones otherwise.
pub(crate) fn dialect(name: &str) -> PyResult<DialectName> {
    name.parse().map_err(|e: UnknownDialect| PyValueError::new_err(e.to_string()))
}

/// `work` on an input of `size` bytes: with the GIL released when the input is large.
pub(crate) fn detached<T: Ungil>(py: Python<'_>, size: usize, work: impl Ungil + FnOnce() -> T) -> T {
    if size >= DETACH_ABOVE { py.detach(work) } else { work() }
}

/// The bytes of a chunk: a `bytes` object is borrowed, any other buffer (`bytearray`,
/// `memoryview`, `array`...) copied.
pub(crate) fn chunk_bytes<'a>(py: Python<'_>, data: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    Ok(Cow::Owned(PyBuffer::<u8>::get(data)?.to_vec(py)?))
}
