//! The Python binding of msgwire-core, built as `msgwire._core`.
//!
//! Thin on purpose: convert arguments, release the GIL around work on large buffers, and map
//! every core error to a `msgwire` exception (see `errors.rs`). No wire rule lives here.

mod alloc;
mod args;
mod decoder;
mod errors;
mod formats;
mod ids;
mod marks;
mod response;
mod sse;
mod structs;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    use pyo3::prelude::*;
    use pyo3::types::PyBytes;

    use crate::errors::to_py;

    #[pymodule_export]
    use crate::decoder::PyDecoder;
    #[pymodule_export]
    use crate::formats::{PyRequestCache, content_key, from_request_json, to_request_json};
    #[pymodule_export]
    use crate::ids::{forget_randomness, new_id, new_ids};
    #[pymodule_export]
    use crate::marks::{Marks, PartialArgs};
    #[pymodule_export]
    use crate::response::{from_response_json, from_response_parts, to_response_json};
    #[pymodule_export]
    use crate::sse::{PyNdjsonParser, PySseParser, PySsePending};
    #[pymodule_export]
    use crate::structs::canonical_arguments;

    #[pymodule_export]
    #[allow(non_upper_case_globals)] // a Python dunder name
    const __version__: &str = env!("CARGO_PKG_VERSION");

    /// The core's own texts, so that Python states them once (`formats.MISSING_RESULT`, ...).
    #[pymodule_export]
    const MISSING_RESULT: &str = msgwire_core::request::MISSING_RESULT;
    #[pymodule_export]
    const EMPTY_MESSAGE: &str = msgwire_core::request::EMPTY_MESSAGE;

    /// `DIALECTS`: the dialect names the core speaks, in its order; the C allocator's threshold
    /// for large blocks raised (`alloc.rs`).
    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        crate::alloc::settle();
        let names = msgwire_core::DialectName::ALL.map(msgwire_core::DialectName::as_str);
        module.add("DIALECTS", pyo3::types::PyTuple::new(module.py(), names)?)
    }

    /// Read a canonical session envelope and write it back (the contract check: the Rust
    /// core reads and writes the same JSON as the Python types).
    #[pyfunction]
    fn normalize_session<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let written = py
            .detach(|| msgwire_core::canonical::read_session(data).and_then(|s| msgwire_core::canonical::write(&s)))
            .map_err(|e| to_py(py, &e))?;
        Ok(PyBytes::new(py, &written))
    }
}
