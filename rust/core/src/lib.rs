//! msgwire-core: every wire format of msgwire, in pure Rust (no Python).
//!
//! - [`canonical`]: the canonical v1 schema (serde), the contract with the Python types.
//! - [`error`]: the typed errors every fallible path returns, with byte offsets.
//! - [`limits`]: the bounds on sizes and depths that keep memory bounded on hostile input.
//! - [`sse`], [`ndjson`]: incremental framers of the two stream formats.
//! - [`dialect`]: each provider's stream rules (a chunk walk and serde structs per provider, its
//!   stop-reason table), fed one payload at a time.
//! - [`assemble`]: the builder a dialect drives into one canonical message, with its
//!   diagnostics; [`event`]: the canonical stream events and the sinks that record them;
//!   [`decoder`]: framing, dialect and builder for one stream (`StreamDecoder`).
//! - [`partial`]: incremental JSON of tool arguments (partial values, validation, surrogates).
//! - [`request`]: canonical conversations to and from each provider's request body, and the
//!   cache that re-builds a grown conversation's request; [`response`]: non-streamed response
//!   bodies, read as their stream would be and written; [`transcode`]: one dialect's stream
//!   written as another's.
//! - `json_out`: the one writer of JSON strings (a block-at-a-time escape scan) and a serde
//!   serializer on it, byte for byte `serde_json`'s output.
//! - [`ids`]: the process's one generator of message ids (`UUIDv7`).
//! - `citation`, `server_tool`, `body`: each provider's citations and server tool blocks, read
//!   and written; the sniffing of a body that is not a stream (a provider's error, HTML).
//! - `raw`: provider JSON rebuilt as text, its numbers as written (`docs/wire.md`, "Numbers").

pub mod assemble;
mod body;
pub mod canonical;
mod citation;
pub mod decoder;
pub mod dialect;
pub mod error;
pub mod event;
pub mod ids;
mod json_out;
pub mod limits;
pub mod ndjson;
pub mod partial;
mod raw;
pub mod request;
pub mod response;
mod server_tool;
pub mod sse;
pub mod transcode;

pub use decoder::StreamDecoder;
pub use dialect::DialectName;
pub use error::{Error, ErrorKind};
pub use limits::Limits;
