//! Typed errors with the byte offset where the problem was found.
//!
//! The message is built only when the error is displayed (jiter's habit): the hot paths carry
//! a kind and an offset, nothing more.

use std::fmt;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is not valid JSON; `detail` is the JSON parser's own description.
    Json { detail: String },
    /// Valid JSON of the wrong shape for the canonical schema.
    Schema { detail: String },
}

/// An error and where it happened in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// Byte offset into the input where the problem was detected, when known.
    pub offset: Option<usize>,
}

impl Error {
    pub fn json(detail: impl Into<String>, offset: Option<usize>) -> Self {
        Self { kind: ErrorKind::Json { detail: detail.into() }, offset }
    }

    pub fn schema(detail: impl Into<String>, offset: Option<usize>) -> Self {
        Self { kind: ErrorKind::Schema { detail: detail.into() }, offset }
    }

    /// The error of a serde_json failure on `input`, with its line/column turned into a byte offset.
    pub fn from_serde(err: &serde_json::Error, input: &[u8]) -> Self {
        let offset = byte_offset(input, err.line(), err.column());
        let detail = err.to_string();
        if err.is_data() { Self::schema(detail, offset) } else { Self::json(detail, offset) }
    }
}

/// Byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn byte_offset(input: &[u8], line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut start = 0;
    for _ in 1..line {
        start += memchr::memchr(b'\n', &input[start..])? + 1;
    }
    Some((start + column.saturating_sub(1)).min(input.len()))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Json { detail } => write!(f, "JSON is malformed: {detail}")?,
            ErrorKind::Schema { detail } => write!(f, "invalid canonical document: {detail}")?,
        }
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
