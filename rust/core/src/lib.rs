//! msgwire-core: every wire format of msgwire, in pure Rust (no Python).
//!
//! - [`canonical`]: the canonical v1 schema (serde), the contract with the Python types.
//! - [`error`]: the typed errors every fallible path returns, with byte offsets.
//! - [`sse`], [`ndjson`]: incremental framers of the two stream formats.
//! - `citation`, `server_tool`: each provider's citations and server tool blocks, read and written.

pub mod assemble;
mod body;
pub mod canonical;
mod citation;
pub mod decoder;
pub mod dialect;
pub mod error;
pub mod event;
pub mod limits;
pub mod ndjson;
pub mod partial;
pub mod request;
pub mod response;
mod server_tool;
pub mod sse;
pub mod transcode;

pub use decoder::StreamDecoder;
pub use dialect::DialectName;
pub use error::{Error, ErrorKind};
pub use limits::Limits;
