//! Typed errors with the byte offset where the problem was found.
//!
//! The message is built only when the error is displayed (jiter's habit): the hot paths carry
//! a kind and an offset, nothing more.

use std::fmt::{self, Write as _};

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is not valid JSON; `detail` is the JSON parser's own description.
    Json { detail: String },
    /// Valid JSON of the wrong shape for the canonical schema (a msgwire document).
    Schema { detail: String },
    /// Valid JSON of the wrong shape for a provider's body: a request, a response, a stream
    /// payload (`what` says which).
    Body { what: &'static str, detail: String },
    /// A body that is not the stream it should be (`framing`: `SSE` or `NDJSON`): an HTML error
    /// page, random bytes, a JSON document that is no provider error; `head` shows how it starts.
    NotAStream { framing: &'static str, head: String, hint: &'static str },
    /// The caller used the API wrongly (bytes fed after the end): a bug in the caller, not bad data.
    Usage { detail: String },
    /// A value could not be written as JSON (never expected: every written type is plain data).
    Write { detail: String },
    /// A configured limit was exceeded (`max_line_size`, `max_event_size`, `max_tool_args_size`,
    /// `max_depth`): the input is refused rather than buffered without bound.
    Limit { name: &'static str, limit: usize },
    /// The provider reported an error inside the stream (`event: error`, an `error` object).
    Provider { error_type: String, message: String, code: Option<String> },
    /// The stream ended before the provider's terminal marker (`[DONE]`, `message_stop`, ...).
    Truncated { detail: String },
    /// JSON that breaks the grammar (RFC 8259); which rule is in [`JsonSyntax`].
    JsonSyntax(JsonSyntax),
    /// JSON nested deeper than `max_depth` arrays and objects (refused, never a stack overflow).
    JsonTooDeep { max_depth: usize },
}

/// Which JSON grammar rule was broken (found by `partial`'s incremental parser and validator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonSyntax {
    /// A byte that can neither start nor continue anything at this point.
    UnexpectedChar,
    /// The input ended inside a value.
    UnexpectedEof,
    /// Something other than whitespace after the one top-level value.
    TrailingChars,
    /// A malformed number (`-x`, `1.e5`, `1e+`).
    InvalidNumber,
    /// An unknown escape (`\x`) or a bad hex digit in `\uXXXX`.
    InvalidEscape,
    /// A `\uXXXX` surrogate without its other half (the offset is its backslash).
    LoneSurrogate,
    /// A raw control character (below U+0020) inside a string.
    ControlChar,
    /// Bytes that are not UTF-8.
    InvalidUtf8,
}

impl fmt::Display for JsonSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnexpectedChar => "unexpected character",
            Self::UnexpectedEof => "unexpected end of input",
            Self::TrailingChars => "trailing characters after the value",
            Self::InvalidNumber => "invalid number",
            Self::InvalidEscape => "invalid escape in string",
            Self::LoneSurrogate => "lone surrogate in \\u escape",
            Self::ControlChar => "control character in string",
            Self::InvalidUtf8 => "invalid UTF-8",
        })
    }
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

    /// A provider body of the wrong shape: `what` is `request body`, `response body` or `stream payload`.
    pub fn body(what: &'static str, detail: impl Into<String>, offset: Option<usize>) -> Self {
        Self { kind: ErrorKind::Body { what, detail: detail.into() }, offset }
    }

    pub fn usage(detail: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Usage { detail: detail.into() }, offset: None }
    }

    pub fn write(err: &serde_json::Error) -> Self {
        Self { kind: ErrorKind::Write { detail: err.to_string() }, offset: None }
    }

    /// A body that is not a stream, shown by its first bytes (`head`, lossily as text), with a
    /// `hint` (`": ..."`) of what it may be.
    pub fn not_a_stream(framing: &'static str, head: &[u8], hint: &'static str) -> Self {
        let mut shown = String::new();
        for c in String::from_utf8_lossy(head).chars() {
            match c {
                '\n' => shown.push_str("\\n"),
                '\r' => shown.push_str("\\r"),
                '\t' => shown.push_str("\\t"),
                '"' | '\\' => {
                    shown.push('\\');
                    shown.push(c);
                }
                c if c.is_control() => {
                    let _ = write!(shown, "\\x{:02x}", u32::from(c));
                }
                c => shown.push(c),
            }
        }
        let head = shown;
        Self { kind: ErrorKind::NotAStream { framing, head, hint }, offset: Some(0) }
    }

    /// A stable, machine-readable name of the kind (the `kind` attribute of the Python exception).
    pub fn code(&self) -> &'static str {
        match &self.kind {
            ErrorKind::Json { .. } | ErrorKind::JsonSyntax(_) => "json_malformed",
            ErrorKind::Schema { .. } => "schema",
            ErrorKind::Body { .. } => "body_shape",
            ErrorKind::NotAStream { .. } => "not_a_stream",
            ErrorKind::Usage { .. } => "usage",
            ErrorKind::Write { .. } => "write",
            ErrorKind::Limit { .. } => "limit",
            ErrorKind::JsonTooDeep { .. } => "json_too_deep",
            ErrorKind::Provider { .. } => "provider",
            ErrorKind::Truncated { .. } => "truncated",
        }
    }

    /// The same error about a provider body (`what`): a schema error becomes a body error.
    #[must_use]
    pub fn in_body(mut self, what: &'static str) -> Self {
        if let ErrorKind::Schema { detail } = &mut self.kind {
            self.kind = ErrorKind::Body { what, detail: std::mem::take(detail) };
        }
        self
    }

    pub fn limit(name: &'static str, limit: usize, offset: u64) -> Self {
        Self { kind: ErrorKind::Limit { name, limit }, offset: usize::try_from(offset).ok() }
    }

    pub fn provider(error_type: impl Into<String>, message: impl Into<String>, offset: u64) -> Self {
        let kind = ErrorKind::Provider { error_type: error_type.into(), message: message.into(), code: None };
        Self { kind, offset: usize::try_from(offset).ok() }
    }

    /// The same provider error with the error object's own `code` (OpenAI's
    /// `rate_limit_exceeded` beside a `type` of `tokens`; LiteLLM's `"500"`), which the retry
    /// rule reads too.
    #[must_use]
    pub fn with_code(mut self, code: Option<String>) -> Self {
        if let ErrorKind::Provider { code: slot, .. } = &mut self.kind {
            *slot = code;
        }
        self
    }

    pub fn truncated(detail: impl Into<String>, offset: u64) -> Self {
        Self { kind: ErrorKind::Truncated { detail: detail.into() }, offset: usize::try_from(offset).ok() }
    }

    /// The same error, its offset moved by `base` (an error found inside one event's payload
    /// becomes an error at a position in the whole stream).
    #[must_use]
    pub fn shifted(mut self, base: u64) -> Self {
        let base = usize::try_from(base).unwrap_or(usize::MAX);
        self.offset = Some(self.offset.unwrap_or(0).saturating_add(base));
        self
    }

    /// The error of a `serde_json` failure on `input`, with its line/column turned into a byte offset.
    pub fn from_serde(err: &serde_json::Error, input: &[u8]) -> Self {
        let offset = byte_offset(input, err.line(), err.column());
        // serde_json says "... at line 1 column 40", relative to `input`; the offset replaces it.
        let text = err.to_string();
        let detail = text.rfind(" at line ").map_or(text.as_str(), |end| &text[..end]).to_owned();
        if err.is_data() { Self::schema(detail, offset) } else { Self::json(detail, offset) }
    }
}

/// Byte offset of a 1-based line and column (`serde_json` counts columns in bytes).
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
            ErrorKind::Body { what, detail } => write!(f, "invalid {what}: {detail}")?,
            ErrorKind::NotAStream { framing, head, hint } => {
                write!(f, "not an {framing} body{hint} (it starts with \"{head}\")")?;
            }
            ErrorKind::Usage { detail } => write!(f, "{detail}")?,
            ErrorKind::Write { detail } => write!(f, "cannot write JSON: {detail}")?,
            ErrorKind::Limit { name, limit } => write!(f, "{name} exceeded: more than {limit} bytes")?,
            ErrorKind::Provider { error_type, message, .. } => {
                write!(f, "the provider reported {error_type}: {message}")?;
            }
            ErrorKind::Truncated { detail } => write!(f, "the stream ended early: {detail}")?,
            ErrorKind::JsonSyntax(syntax) => write!(f, "JSON is malformed: {syntax}")?,
            ErrorKind::JsonTooDeep { max_depth } => write!(f, "JSON deeper than {max_depth}")?,
        }
        if let Some(offset) = self.offset {
            write!(f, " (byte {offset})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
