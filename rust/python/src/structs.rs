//! Hooks msgspec calls while it builds the Python types (called for every object decoded, so
//! a C-level call instead of a Python method: `ToolCallBlock.__post_init__` in Python was 3% of
//! the instructions of `msgwire.loads` of a 900-message session).

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// `ToolCallBlock.__post_init__`: arguments equal to `"{}"` become the default object itself
/// (the interned `"{}"`, `types._NO_ARGUMENTS`). msgspec's `omit_defaults` compares by
/// identity: an equal `"{}"` decoded or built at run time would be written by `dumps` where the
/// Rust core leaves it out.
#[pyfunction]
pub fn canonical_arguments(block: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = block.py();
    let default = intern!(py, "{}");
    let arguments = block.getattr(intern!(py, "arguments"))?;
    if arguments.is(default) {
        return Ok(());
    }
    let Ok(text) = arguments.cast::<PyString>() else { return Ok(()) };
    // the length first: the UTF-8 of a long non-ASCII string would be made only to compare
    if text.len()? != 2 || text.to_str()? != "{}" {
        return Ok(());
    }
    let force_setattr = py.import(intern!(py, "msgspec.structs"))?.getattr(intern!(py, "force_setattr"))?;
    force_setattr.call1((block, intern!(py, "arguments"), default))?;
    Ok(())
}
