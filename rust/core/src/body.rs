//! A body given to a stream decoder that is not the stream it should be.
//!
//! Providers answer a streaming request with a plain JSON document when it fails before the
//! stream starts: OpenAI, Anthropic and the Responses API with their error object (HTTP 4xx),
//! Gemini with `{"error": {...}}` even under `content-type: text/event-stream`. Gemini without
//! `alt=sse` streams a JSON array of response chunks. A proxy may answer with an HTML page. Read
//! as SSE, each of these is lines of unknown fields that the spec ignores: the stream would end
//! "truncated" and the provider's own message would be lost.
//!
//! [`Sniff`] looks at the body's first byte that is not whitespace. `{` or `[` cannot begin an
//! SSE stream that carries any event (such a line is a field the spec ignores), so the body is
//! then kept whole, within `max_event_size`, and read at its end as one JSON document: a
//! provider error becomes [`ErrorKind::Provider`], a Gemini array is decoded chunk by chunk,
//! anything else is [`ErrorKind::NotAStream`]. A body that dispatched no event and does not
//! begin like SSE (a field name or a comment) is [`ErrorKind::NotAStream`] too, with its first
//! bytes shown, instead of a truncated stream.

use serde_json::value::RawValue;

use crate::assemble::Builder;
use crate::dialect::{Dialect, DialectName};
use crate::error::{Error, ErrorKind};

/// Bytes of the body's start kept to show in an error.
const SHOWN: usize = 80;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Only whitespace so far.
    #[default]
    Undecided,
    Stream,
    /// A JSON document: kept whole.
    Json,
}

/// What the start of a body says it is (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Sniff {
    state: State,
    /// The first bytes of the body (at most [`SHOWN`]).
    head: Vec<u8>,
    /// The JSON document, from its first byte (in the `Json` state).
    json: Vec<u8>,
    /// Where the JSON document starts in the body.
    json_start: u64,
    /// Whether a payload reached the dialect: the body is a stream.
    pub dispatched: bool,
}

impl Sniff {
    /// The part of `chunk` (whose first byte is at `offset` in the body) that goes to the SSE
    /// framer; the rest, from a JSON document's first byte on, is kept here.
    pub fn split<'c>(&mut self, chunk: &'c [u8], offset: u64, max_size: usize) -> Result<&'c [u8], Error> {
        self.note_head(chunk);
        match self.state {
            State::Stream => Ok(chunk),
            State::Json => self.keep(chunk, max_size).map(|()| &chunk[..0]),
            State::Undecided => match chunk.iter().position(|b| !b.is_ascii_whitespace()) {
                None => Ok(chunk),
                Some(at) if matches!(chunk[at], b'{' | b'[') => {
                    self.state = State::Json;
                    self.json_start = offset + at as u64;
                    self.keep(&chunk[at..], max_size).map(|()| &chunk[..at])
                }
                Some(_) => {
                    self.state = State::Stream;
                    Ok(chunk)
                }
            },
        }
    }

    /// Keep the first bytes of the body, to show in an error.
    pub fn note_head(&mut self, chunk: &[u8]) {
        if self.head.len() < SHOWN {
            self.head.extend_from_slice(&chunk[..chunk.len().min(SHOWN - self.head.len())]);
        }
    }

    fn keep(&mut self, bytes: &[u8], max_size: usize) -> Result<(), Error> {
        if self.json.len() + bytes.len() > max_size {
            // at the first byte past the limit, wherever the chunks were cut
            return Err(Error::limit("max_event_size", max_size, self.json_start + max_size as u64));
        }
        self.json.extend_from_slice(bytes);
        Ok(())
    }

    /// Bytes kept here and not fed to the framer.
    pub fn kept(&self) -> u64 {
        self.json.len() as u64
    }

    /// The error for the first line of an NDJSON body that is not JSON: not NDJSON at all (a
    /// JSON object that is broken stays the malformed line it is).
    pub fn ndjson_error(&self, error: Error) -> Error {
        let object = self.head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        match error.kind {
            ErrorKind::Json { .. } | ErrorKind::JsonSyntax(_) if !self.dispatched && !object => {
                Error::not_a_stream("NDJSON", first_line(&self.head), "")
            }
            _ => error,
        }
    }

    /// At the end of a body fed to an SSE framer: read a JSON document kept whole, or refuse a
    /// body that carried no event and does not begin like SSE.
    pub fn finish_sse(
        &mut self,
        name: DialectName,
        dialect: &mut dyn Dialect,
        builder: &mut Builder,
    ) -> Result<(), Error> {
        match self.state {
            State::Json => self.read_json(name, dialect, builder),
            State::Stream if !self.dispatched && !begins_like_sse(&self.head) => {
                Err(Error::not_a_stream("SSE", first_line(&self.head), ""))
            }
            _ => Ok(()),
        }
    }

    fn read_json(&mut self, name: DialectName, dialect: &mut dyn Dialect, builder: &mut Builder) -> Result<(), Error> {
        const NO_ERROR: &str = ": a JSON document that is no provider error (a reply read with from_response?)";
        let Ok(text) = std::str::from_utf8(&self.json) else {
            return Err(Error::not_a_stream("SSE", first_line(&self.head), ""));
        };
        builder.set_offset(self.json_start);
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            // `{"error": ...}` (Anthropic's also has `"type": "error"`), or Gemini's in an array
            let error = match &value {
                serde_json::Value::Array(items) => items.first().and_then(|first| first.get("error")),
                other => other.get("error"),
            };
            if let Some(error) = error.filter(|e| !e.is_null()) {
                return Err(crate::dialect::provider_error(error, builder));
            }
        }
        if name != DialectName::Gemini || !text.starts_with('[') {
            return Err(Error::not_a_stream("SSE", first_line(&self.head), NO_ERROR));
        }
        // Gemini without `alt=sse`: a JSON array of the chunks an SSE stream would carry
        let chunks: Vec<&RawValue> = serde_json::from_str(text)
            .map_err(|e| Error::from_serde(&e, text.as_bytes()).in_body("stream payload").shifted(self.json_start))?;
        for chunk in chunks {
            let at = (chunk.get().as_ptr() as usize).wrapping_sub(text.as_ptr() as usize) as u64;
            builder.set_offset(self.json_start + at);
            self.dispatched = true;
            dialect.on_payload("message", chunk.get(), builder)?;
        }
        Ok(())
    }
}

/// The first line of the body's start, as an error shows it: the same however the body was cut
/// into chunks (an NDJSON body is refused as soon as its first line is complete).
fn first_line(head: &[u8]) -> &[u8] {
    memchr::memchr(b'\n', head).map_or(head, |end| &head[..end])
}

/// Whether a body starts as SSE does: after a BOM and blank lines, a field name or a comment (or
/// the start of one, when the body ends inside its first line).
fn begins_like_sse(head: &[u8]) -> bool {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    if BOM.starts_with(head) {
        return true;
    }
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let line = &head[start..];
    let cut = !line.iter().any(|b| matches!(b, b'\r' | b'\n'));
    let field = |name: &[u8]| {
        (line.starts_with(name) && matches!(line.get(name.len()), None | Some(b':' | b'\r' | b'\n')))
            || (cut && name.starts_with(line))
    };
    line.is_empty() || line.starts_with(b":") || [&b"data"[..], b"event", b"id", b"retry"].into_iter().any(field)
}

#[cfg(test)]
mod tests {
    use super::begins_like_sse;

    #[test]
    fn sse_begins_with_a_field_or_a_comment() {
        let sse: [&[u8]; 9] = [
            b"data: x\n\n",
            b"\xEF\xBB\xBF\n\nevent: ping\n",
            b": keep-alive\n",
            b"retry: 10\n",
            b"data\n",
            b"id",
            b"ev",
            b"\xEF",
            b"",
        ];
        for body in sse {
            assert!(begins_like_sse(body), "{body:?}");
        }
        let not: [&[u8]; 5] = [b"<!DOCTYPE html>", b"datum: x\n", b"\x00\x01garbage", b"Bad Gateway", b"ev\n"];
        for body in not {
            assert!(!begins_like_sse(body), "{body:?}");
        }
    }
}
