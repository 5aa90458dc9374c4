//! msgwire-core: every wire format of msgwire, in pure Rust (no Python).
//!
//! - [`canonical`]: the canonical v1 schema (serde), the contract with the Python types.
//! - [`error`]: the typed errors every fallible path returns, with byte offsets.

pub mod canonical;
pub mod error;

pub use error::{Error, ErrorKind};
