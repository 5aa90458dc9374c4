//! Non-streamed responses: one canonical assistant message as a provider's complete response
//! body, and back.
//!
//! [`to_response_json`] writes the body a provider returns for a non-streamed call: OpenAI Chat's
//! `chat.completion`, Anthropic's `message`, the Responses API's `response`, Gemini's
//! `GenerateContentResponse`, Ollama's `/api/chat` reply with `done: true`. Each dialect file owns
//! its provider's shape; the blocks go through the request module's lowering (`lower`) with
//! the same replay [`Policy`] and the same [`Loss`] report, so a block the dialect cannot carry
//! is handled as in a request (thinking of another provider is dropped by default, a file
//! reference becomes marked text, ...). What the writers share:
//!
//! - the body's id is the message's `response_id`, else one made from the message id with the
//!   provider's prefix (`chatcmpl-`, `msg_`, `resp_`); the model is `model` (`""` when unknown);
//! - the stop reason is the message's `raw_stop_reason` when it is one of the dialect's own
//!   values for the message's `stop_reason` (so `stop_sequence`, `function_call` or
//!   `RECITATION` come back as they were), else the dialect's first value for it (see
//!   `stop_value`), else the dialect's value for "no known reason";
//! - the creation time: `created` / `created_at` (Unix seconds, whole) of OpenAI Chat and
//!   Responses are the message's `timestamp`, and Ollama's `created_at` is the timestamp itself;
//!   Anthropic and Gemini responses have no creation time;
//! - unknown blocks: a `provider_part` of the dialect is written as it was read; an unknown block
//!   that is a raw provider block (as older versions kept server tool blocks) is written back
//!   when the message's provider is the dialect's and the dialect keeps such blocks, else it
//!   follows the policy (dropped by default). Server tool calls and results go back whole to
//!   their own dialect, else follow `Policy::server_tools`; citations go where the dialect has
//!   them (`crate::citation`), else are reported.
//!
//! [`from_response_json`] is the inverse, and it has no rules of its own: the body is replayed
//! through the dialect's stream decoder as the events a stream of the same message would have
//! carried (one per block, item or part, each holding its piece of the body), so stop reasons,
//! usage, `raw_stop_reason`, thinking signatures, malformed arguments, made-up call ids and raw
//! provider blocks follow exactly the rules of `msgwire.assemble`. A Gemini or Ollama body *is*
//! one event of its stream and is decoded as it is. The message's `id` is the caller's (a fresh
//! one); its `timestamp` is the body's creation time when it has a readable one, else the
//! caller's. An error body (`{"error": {...}}`, Anthropic's `{"type": "error"}`, a Responses
//! `response` with status `failed`) is the provider's error: [`ErrorKind::Provider`], as a
//! stream reports it. Every other failure is placed in the body: a byte offset, and its JSON
//! path ([`json_path`]) in [`ResponseError`].

// The stop-reason tables are shared with `crate::transcode`.
pub(crate) mod anthropic;
mod clock;
pub(crate) mod gemini;
mod message_out;
pub(crate) mod ollama;
pub(crate) mod openai_chat;
mod openai_responses;
mod path;

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub use path::json_path;

use crate::assemble::{Builder, BuilderOptions};
use crate::canonical::{AssistantMessage, Block, Message, StopReason, Usage};
use crate::dialect::{Dialect, DialectName};
use crate::error::{Error, ErrorKind};
use crate::limits::Limits;
use crate::request::offset_in;
use crate::request::{Action, Converted, Loss, PROVIDER_PART, Part, Policy, Role, Target, lower};

/// Options of [`to_response_json`], readable from JSON (what the Python binding passes).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct Options {
    /// What happens to blocks the dialect cannot carry as they are (as for requests).
    #[serde(default)]
    pub policy: Policy,
}

impl Options {
    /// Options from their JSON object (`{"policy": {...}}`).
    pub fn from_json(input: &[u8]) -> Result<Self, Error> {
        serde_json::from_slice(input).map_err(|e| Error::from_serde(&e, input))
    }
}

/// Write the complete non-streamed response body of `dialect` for `message` (the canonical JSON
/// of one assistant message), with the lossy steps taken.
pub fn to_response_json(message: &[u8], dialect: DialectName, options: &Options) -> Result<Converted, Error> {
    let parse = |input: &[u8], text: Option<&str>| {
        crate::canonical::parse(input, text).map_err(|e| Error::from_serde(&e, input))
    };
    let read: Message = crate::canonical::read_tag_first(message, parse)?;
    let Message::Assistant(message) = read else {
        return Err(Error::schema("a response holds an assistant message (type \"assistant\")", Some(0)));
    };
    let mut report = Vec::new();
    let policy = options.policy;
    let body = match dialect {
        DialectName::OpenAi => openai_chat::write(&message, policy, &mut report)?,
        DialectName::Anthropic => anthropic::write(&message, policy, &mut report)?,
        DialectName::OpenAiResponses => openai_responses::write(&message, policy, &mut report)?,
        DialectName::Gemini => gemini::write(&message, policy, &mut report)?,
        DialectName::Ollama => ollama::write(&message, policy, &mut report)?,
    };
    Ok(Converted { body, report })
}

/// Read a non-streamed response body of `dialect` into the canonical JSON of an assistant
/// message with this `id`, and this `timestamp` unless the body has its own creation time (an
/// empty `timestamp`: now).
pub fn from_response_json(
    body: &[u8],
    dialect: DialectName,
    id: &str,
    timestamp: &str,
) -> Result<Vec<u8>, ResponseError> {
    let message = read_response(body, dialect, id, timestamp)?;
    message_json(&message).map_err(|error| ResponseError { dialect, error, path: None })
}

/// [`from_response_json`]'s message before it is written ([`message_json`] writes it): for a
/// caller that takes its long strings out first ([`crate::canonical::take_long_strings`]).
pub fn read_response(
    body: &[u8],
    dialect: DialectName,
    id: &str,
    timestamp: &str,
) -> Result<AssistantMessage, ResponseError> {
    let timestamp = if timestamp.is_empty() { clock::now() } else { timestamp.to_owned() };
    let fresh = || BuilderOptions {
        id: id.to_owned(),
        timestamp: timestamp.clone(),
        provider: dialect.provider().to_owned(),
        record_events: false,
        partial_args: false,
        limits: Limits::default(),
    };
    let read = match dialect {
        DialectName::OpenAi => openai_chat::read(body, fresh()),
        DialectName::Anthropic => anthropic::read(body, fresh()),
        DialectName::OpenAiResponses => openai_responses::read(body, fresh()),
        DialectName::Gemini => gemini::read(body, fresh()),
        DialectName::Ollama => ollama::read(body, fresh()),
    };
    read.map_err(|error| {
        let path = match &error.kind {
            ErrorKind::Provider { .. } => None,
            // a missing field is its object's error: the path names the field
            ErrorKind::Body { detail, .. } => error.offset.map(|offset| {
                let path = json_path(body, offset);
                match detail.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()) {
                    Some(field) => format!("{path}.{field}"),
                    None => path,
                }
            }),
            _ => error.offset.map(|offset| json_path(body, offset)),
        };
        ResponseError { dialect, error, path }
    })
}

/// A response body that could not be read: the error, placed by byte offset and JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError {
    pub dialect: DialectName,
    pub error: Error,
    /// Where in the body (`$.choices[0].message.content`), when the error has an offset.
    pub path: Option<String>,
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.error.kind {
            ErrorKind::Body { detail, .. } => {
                write!(f, "invalid {} response body: {detail}", self.dialect)?;
                if let Some(offset) = self.error.offset {
                    write!(f, " (byte {offset})")?;
                }
            }
            _ => write!(f, "{} response: {}", self.dialect, self.error)?,
        }
        if let Some(path) = &self.path {
            write!(f, " - at `{path}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for ResponseError {}

// --- reading: the body replayed through the stream decoder ---------------------------------------

/// A stream decoder fed the events a stream of the response would have carried.
pub(crate) struct BodyReplay {
    decoder: Box<dyn Dialect + Send + Sync>,
    pub builder: Builder,
}

/// A synthetic event: literal JSON and pieces of the body, with where each piece came from, so
/// that an error inside a piece is placed in the body.
#[derive(Default)]
pub(crate) struct Payload {
    text: String,
    /// `(position in text, position in the body, length)` of each piece.
    pieces: Vec<(usize, u64, usize)>,
}

impl Payload {
    pub fn lit(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// A piece of `body`, as it is there.
    pub fn raw(&mut self, body: &[u8], raw: &RawValue) -> &mut Self {
        self.pieces.push((self.text.len(), offset_in(body, raw), raw.get().len()));
        self.text.push_str(raw.get());
        self
    }

    /// A piece of `body`, or `null` without one.
    pub fn raw_or_null(&mut self, body: &[u8], raw: Option<&RawValue>) -> &mut Self {
        match raw {
            Some(raw) => self.raw(body, raw),
            None => self.lit("null"),
        }
    }

    pub fn number(&mut self, n: usize) -> &mut Self {
        self.lit(&n.to_string())
    }

    /// Where a position in the event is in the body: inside a piece, its place; elsewhere, the
    /// start of the next piece (serde places a value of the wrong type just before it), else of
    /// the last one.
    fn place(&self, at: usize) -> u64 {
        let inside = self.pieces.iter().find(|&&(start, _, len)| (start..start + len).contains(&at));
        let next = self.pieces.iter().find(|&&(start, _, _)| start > at).or(self.pieces.last());
        match (inside, next) {
            (Some(&(start, body, _)), _) => body + (at - start) as u64,
            (None, Some(&(_, body, _))) => body,
            (None, None) => 0,
        }
    }
}

impl BodyReplay {
    pub fn new(dialect: DialectName, options: BuilderOptions) -> Self {
        Self { decoder: dialect.decoder(), builder: Builder::new(options) }
    }

    /// An event the decoder reads whole (its errors are positions in `payload`).
    pub fn event(&mut self, kind: &str, payload: &Payload) -> Result<(), Error> {
        self.builder.set_offset(0);
        self.decoder.on_payload(kind, &payload.text, &mut self.builder).map_err(|mut e| {
            e.offset = Some(usize::try_from(payload.place(e.offset.unwrap_or(0))).unwrap_or(usize::MAX));
            e
        })
    }

    /// An event wrapping one piece of `body` that the decoder reads again on its own (Anthropic
    /// content blocks, Responses output items): its errors are positions from the piece's start.
    pub fn nested(&mut self, body: &[u8], kind: &str, payload: &str, piece: &RawValue) -> Result<(), Error> {
        let start = offset_in(body, piece);
        let end = start + piece.get().len() as u64;
        self.builder.set_offset(start);
        self.decoder.on_payload(kind, payload, &mut self.builder).map_err(|mut e| {
            let at = e.offset.map_or(start, |o| o as u64);
            e.offset = usize::try_from(if (start..=end).contains(&at) { at } else { start }).ok();
            e
        })
    }

    /// The whole body as one event (Gemini, Ollama).
    pub fn whole(&mut self, body: &str) -> Result<(), Error> {
        self.builder.set_offset(0);
        self.decoder.on_payload("message", body, &mut self.builder)
    }

    /// The message: a non-streamed body has no end marker to wait for, so a body without a stop
    /// reason reads as `unknown`, as a stream that ended without one would.
    pub fn finish(mut self) -> AssistantMessage {
        self.builder.complete();
        self.builder.take_message()
    }

    /// The provider's error in an error body (`{"error": ...}`), as a stream reports it.
    pub fn provider_error(&self, error: &serde_json::Value) -> Error {
        crate::dialect::provider_error(error, &self.builder)
    }
}

/// The canonical JSON of a message read from a response (tagged `"type": "assistant"`).
///
/// # Panics
///
/// Only in debug builds, where serde writes the message too: when the two disagree.
pub fn message_json(message: &AssistantMessage) -> Result<Vec<u8>, Error> {
    // sized up front: a large reply written into a buffer that doubles is copied again each time
    let mut out = Vec::with_capacity(size_hint(message));
    message_out::write(&mut out, message).map_err(|e| Error::write(&e))?;
    #[cfg(debug_assertions)]
    {
        let tagged = crate::canonical::Message::Assistant(message.clone());
        assert_eq!(Ok(&out), crate::canonical::write(&tagged).as_ref(), "written as serde writes it");
    }
    Ok(out)
}

/// The body as text: serde reads UTF-8 only, and the decoders take `&str`.
pub(crate) fn utf8(body: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(body).map_err(|e| Error {
        kind: ErrorKind::JsonSyntax(crate::error::JsonSyntax::InvalidUtf8),
        offset: Some(e.valid_up_to()),
    })
}

/// Parse the whole body as `T`, errors placed in it.
pub(crate) fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| {
        let mut error = Error::from_serde(&e, body).in_body("response body");
        if e.is_eof() {
            error.offset = Some(body.len());
        }
        error
    })
}

/// A required field that is not there: the error of the object (placed at its closing brace).
pub(crate) fn missing(body: &[u8], field: &str) -> Error {
    let end = body.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap_or(0);
    Error::body("response body", format!("missing field `{field}`"), Some(end))
}

/// A creation time in Unix seconds as the canonical timestamp (`None`: unreadable, out of range).
pub(crate) fn unix_timestamp(seconds: f64) -> Option<String> {
    // whole seconds: the fraction of a float is not the provider's digits
    #[allow(clippy::cast_possible_truncation)] // checked to be in range first
    let whole = (seconds.is_finite() && seconds.abs() < 1e15).then(|| seconds.floor() as i64)?;
    clock::format(whole, "")
}

/// A provider's RFC 3339 time as the canonical (UTC) timestamp, its fraction's digits kept.
pub(crate) fn rfc3339_timestamp(text: &str) -> Option<String> {
    let time = clock::parse(text)?;
    clock::format(time.seconds, time.fraction)
}

// --- writing: what the dialect writers share -----------------------------------------------------

/// The response id: the provider's, else one made from the message id.
pub(crate) fn response_id<'a>(message: &'a AssistantMessage, prefix: &str) -> Cow<'a, str> {
    match message.response_id.as_deref() {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(format!("{prefix}{}", message.id)),
    }
}

/// The message's creation time in Unix seconds (0 when its timestamp cannot be read).
pub(crate) fn created(message: &AssistantMessage) -> i64 {
    clock::parse(&message.timestamp).map_or(0, |t| t.seconds)
}

/// The dialect's stop reason for `message`: `raw_stop_reason` when it is one of `values`' strings
/// for the message's stop reason, else the first of them, else `otherwise` (reported, unless
/// the message's reason is unknown too).
pub(crate) fn stop_value<'a>(
    message: &'a AssistantMessage,
    values: &[(StopReason, &[&'static str])],
    otherwise: &'static str,
    report: &mut Vec<Loss>,
) -> &'a str {
    let stop = message.stop_reason.unwrap_or_default();
    let Some((_, strings)) = values.iter().find(|(reason, _)| *reason == stop) else {
        if stop != StopReason::Unknown {
            let name = serde_json::to_string(&stop).unwrap_or_default();
            let reason = format!("the dialect has no stop reason {name}: written as its unknown reason");
            report.push(Loss::new(0, None, "stop_reason", Action::Fallback, reason));
        }
        return otherwise;
    };
    match message.raw_stop_reason.as_deref() {
        Some(raw) if strings.contains(&raw) => raw,
        _ => strings.first().copied().unwrap_or(otherwise),
    }
}

pub(crate) fn usage(message: &AssistantMessage) -> Usage {
    message.usage.clone().unwrap_or_default()
}

/// The parts of the message's blocks for `target` (see the module documentation for raw
/// provider blocks). `keeps_raw`: the dialect writes raw blocks of its provider back.
pub(crate) fn parts<'a>(
    message: &'a AssistantMessage,
    blocks: &'a [Block],
    target: &Target,
    policy: Policy,
    report: &mut Vec<Loss>,
) -> Vec<Part<'a>> {
    lower(0, blocks, Role::Assistant, message.provider.as_deref(), target, policy, report)
}

/// The message's blocks, with each raw provider block made a `provider_part` of `target` when
/// it is native there (written back as it is); borrowed when there is none.
pub(crate) fn native_blocks<'a>(message: &'a AssistantMessage, target: &Target, keeps_raw: bool) -> Cow<'a, [Block]> {
    let native = keeps_raw && message.provider.as_deref() == Some(target.provider);
    let is_raw = |block: &Block| matches!(block, Block::Unknown(raw) if !is_provider_part(raw));
    if !native || !message.content.iter().any(is_raw) {
        return Cow::Borrowed(&message.content);
    }
    let wrap = |block: &Block| match block {
        Block::Unknown(raw) if !is_provider_part(raw) => {
            let text = format!(r#"{{"type":"{PROVIDER_PART}","dialect":"{}","part":{}}}"#, target.dialect, raw.get());
            RawValue::from_string(text).map_or_else(|_| block.clone(), Block::Unknown)
        }
        other => other.clone(),
    };
    Cow::Owned(message.content.iter().map(wrap).collect())
}

fn is_provider_part(raw: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        tag: Option<Cow<'a, str>>,
    }
    serde_json::from_str::<Tag<'_>>(raw.get()).is_ok_and(|t| t.tag.as_deref() == Some(PROVIDER_PART))
}

/// Serialize a response body (of about `capacity` bytes).
pub(crate) fn to_vec<T: Serialize>(body: &T, capacity: usize) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(capacity);
    crate::json_out::to_writer(&mut out, body).map_err(|e| Error::write(&e))?;
    Ok(out)
}

/// About how many bytes the JSON of a message (or of its response body) takes: a large reply
/// is written into one buffer, not into one that grows ten times.
pub(crate) fn size_hint(message: &AssistantMessage) -> usize {
    let text = |t: &Option<String>| t.as_ref().map_or(0, String::len);
    let block = |b: &Block| -> usize {
        let size = match b {
            Block::Text(t) => t.text.len(),
            Block::Thinking(t) => t.thinking.len() + text(&t.signature) + text(&t.redacted),
            Block::ToolCall(c) => c.id.len() + c.name.len() + c.arguments.len(),
            Block::Unknown(raw) => raw.get().len(),
            _ => 0,
        };
        size + 64
    };
    let content: usize = message.content.iter().map(block).sum();
    // escapes make JSON text longer than the text: an eighth more is a fair guess
    content + content / 8 + 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = concat!(
        r#"{"type":"assistant","id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","timestamp":"2025-08-08T21:35:29Z","#,
        r#""content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"text","text":"Hi"},"#,
        r#"{"type":"tool_call","id":"call_1","name":"f","arguments":"{\"a\": 1}"}],"#,
        r#""stop_reason":"tool_use","raw_stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5},"#,
        r#""model":"m","provider":"anthropic","response_id":"msg_1"}"#
    );

    #[test]
    fn every_dialect_reads_back_what_it_writes() {
        for dialect in DialectName::ALL {
            let converted = to_response_json(MESSAGE.as_bytes(), dialect, &Options::default()).expect("writes");
            let read = from_response_json(&converted.body, dialect, "id", "2000-01-01T00:00:00Z").expect("reads");
            let message: Message = serde_json::from_slice(&read).expect("canonical");
            let Message::Assistant(message) = message else { panic!("an assistant message") };
            let calls: Vec<_> = message
                .content
                .iter()
                .filter_map(|b| {
                    if let Block::ToolCall(c) = b { Some((c.name.as_str(), c.arguments.as_str())) } else { None }
                })
                .collect();
            assert_eq!(calls, [("f", "{\"a\": 1}")], "{dialect}");
            assert_eq!(message.stop_reason, Some(StopReason::ToolUse), "{dialect}");
            assert_eq!(message.model.as_deref(), Some("m"), "{dialect}");
            assert_eq!(message.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((10, 5)), "{dialect}");
        }
    }

    #[test]
    fn hostile_bodies_are_errors_not_panics() {
        let deep = "[".repeat(100_000);
        let deep_arguments = format!(
            r#"{{"message":{{"tool_calls":[{{"function":{{"name":"f","arguments":{}}}}}]}},"done":true}}"#,
            "[".repeat(300)
        );
        let bodies: [&[u8]; 6] =
            [deep.as_bytes(), b"", b"null", b"{\"id\": \"\xff\"}", b"[]", deep_arguments.as_bytes()];
        for dialect in DialectName::ALL {
            for body in bodies {
                let err = from_response_json(body, dialect, "id", "t").expect_err(&String::from_utf8_lossy(body));
                assert!(err.error.offset.is_some_and(|o| o <= body.len()), "{dialect}: {err}");
            }
        }
    }

    #[test]
    fn only_assistant_messages_are_responses() {
        let user = br#"{"type":"user","id":"u","timestamp":"t","content":[]}"#;
        assert!(to_response_json(user, DialectName::OpenAi, &Options::default()).is_err());
    }

    #[test]
    fn stop_values_keep_the_providers_own_word() {
        let values: &[(StopReason, &[&str])] = &[(StopReason::EndTurn, &["end_turn", "stop_sequence"])];
        let message = |stop, raw: Option<&str>| AssistantMessage {
            stop_reason: stop,
            raw_stop_reason: raw.map(str::to_owned),
            ..AssistantMessage::default()
        };
        let mut report = Vec::new();
        let m = message(Some(StopReason::EndTurn), Some("stop_sequence"));
        assert_eq!(stop_value(&m, values, "x", &mut report), "stop_sequence");
        let m = message(Some(StopReason::EndTurn), Some("eos"));
        assert_eq!(stop_value(&m, values, "x", &mut report), "end_turn");
        assert!(report.is_empty());
        let m = message(Some(StopReason::Error), Some("stop_sequence"));
        assert_eq!(stop_value(&m, values, "x", &mut report), "x");
        let m = message(None, None);
        assert_eq!(stop_value(&m, values, "x", &mut report), "x");
        let kinds: Vec<_> = report.iter().map(|l| (l.kind, l.action)).collect();
        assert_eq!(kinds, [("stop_reason", Action::Fallback)], "an unknown reason is no loss");
    }

    #[test]
    fn errors_name_the_json_path() {
        let body = br#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":5}}]},"finish_reason":"tool_calls"}]}"#;
        let err = from_response_json(body, DialectName::OpenAi, "id", "t").expect_err("a number");
        assert_eq!(err.path.as_deref(), Some("$.choices[0].message.tool_calls[1].function.arguments"));
        assert!(err.to_string().contains("- at `$.choices[0].message.tool_calls[1].function.arguments`"), "{err}");
        let err = from_response_json(br#"{"id": "x"}"#, DialectName::OpenAi, "id", "t").expect_err("no choices");
        assert!(err.to_string().ends_with("- at `$.choices`"), "{err}");
    }
}
