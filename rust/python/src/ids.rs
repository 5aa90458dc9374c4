//! `msgwire._core.new_id` / `new_ids` / `forget_randomness`: the core's id generator
//! (`msgwire_core::ids`), which `msgwire.new_id` is.

use msgwire_core::ids;
use pyo3::prelude::*;

/// A new message id: a `UUIDv7` string (RFC 9562), time-ordered, increasing within the process.
#[pyfunction]
pub fn new_id() -> String {
    ids::new_id()
}

/// `n` new ids, in order.
#[pyfunction]
pub fn new_ids(n: usize) -> Vec<String> {
    ids::new_ids(n)
}

/// Drop the buffered randomness: a forked child's next id reads its own.
#[pyfunction]
pub fn forget_randomness() {
    ids::forget_randomness();
}
