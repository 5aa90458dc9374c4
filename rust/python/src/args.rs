//! What every binding function shares: reading a dialect name, and running work on a large
//! buffer with the GIL released.

use msgwire_core::DialectName;
use msgwire_core::dialect::UnknownDialect;
use pyo3::exceptions::PyValueError;
use pyo3::marker::Ungil;
use pyo3::prelude::*;

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
