//! Stream transcoding for gateways: one provider's stream in, another provider's stream out,
//! as the input arrives.
//!
//! The source is decoded as usual (framer, dialect, [`Builder`](crate::assemble::Builder)); the
//! builder's events go to a [`Sequencer`] instead of a JSON batch, and the sequencer drives the
//! target's [`Encoder`]. The sequencer exists because targets differ in what they allow: an
//! Anthropic or Responses stream has one block open at a time, while an OpenAI source may
//! interleave the arguments of parallel tool calls. So blocks are written in the order of the
//! final message, each opened when it is first heard of (with what arrived for it so far) and
//! closed when the next one opens; a block that arrives while a tool call is still open waits.
//!
//! What each target cannot carry is left out, never invented: OpenAI Chat has no place for
//! thinking signatures or redacted thinking (reasoning text goes out as `reasoning_content`,
//! as DeepSeek and vLLM send it); Gemini and Ollama have none for redacted thinking, Ollama none
//! for signatures. Ids, the model, usage and the stop reason are carried over (the provider's
//! own stop-reason string when source and target are the same dialect).
//!
//! Each target ends as its provider does (`data: [DONE]`, `message_stop`, `response.completed`
//! or `.incomplete`, a last chunk with `finishReason`, a line with `done: true`). A source that
//! fails (a provider error, a cut stream, malformed data, a limit) ends the output with the
//! target's error frame instead, so the client sees a failure and not a short answer.

mod anthropic;
mod gemini;
mod ollama;
mod openai_chat;
mod openai_responses;
mod sequence;

use crate::assemble::BuilderOptions;
use crate::canonical::{AssistantMessage, Block, StopReason, Usage};
use crate::decoder::StreamDecoder;
use crate::dialect::DialectName;
use crate::error::{Error, ErrorKind};

use sequence::Sequencer;

/// A decoder of `source` streams whose output ([`StreamDecoder::take_events`]) is the stream
/// in the `target` dialect's wire format.
pub fn transcoder(source: DialectName, target: DialectName, options: BuilderOptions) -> StreamDecoder {
    let sink: Box<dyn crate::event::EventSink> = match target {
        DialectName::OpenAi => Box::new(Sequencer::new(openai_chat::OpenAiChat::new(source))),
        DialectName::OpenAiResponses => Box::new(Sequencer::new(openai_responses::OpenAiResponses::new(source))),
        DialectName::Anthropic => Box::new(Sequencer::new(anthropic::Anthropic::new(source))),
        DialectName::Gemini => Box::new(Sequencer::new(gemini::Gemini::new(source))),
        DialectName::Ollama => Box::new(Sequencer::new(ollama::Ollama::new(source))),
    };
    StreamDecoder::with_sink(source, options, sink)
}

/// What arrived for a block: appended to what the target has written of it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Delta<'a> {
    Text(&'a str),
    Thinking(&'a str),
    Signature(&'a str),
    Arguments(&'a str),
}

/// One target dialect's writer. The [`Sequencer`] calls it in a strict order: `start`, then for
/// each block `open`, `delta`s, `close` (one block at a time), then `finish`; or `fail` at any
/// point. `open` gets the block as it is then (for a tool call: its id and name).
pub(crate) trait Encoder: Send + Sync + std::fmt::Debug {
    fn start(&mut self, out: &mut Vec<u8>, message: &AssistantMessage);
    fn open(&mut self, out: &mut Vec<u8>, block: &Block);
    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>);
    fn close(&mut self, out: &mut Vec<u8>, block: &Block);
    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage);
    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, message: &AssistantMessage);
}

// --- what the writers share ------------------------------------------------------------------

/// `text` as a JSON string.
pub(crate) fn json_str(out: &mut Vec<u8>, text: &str) {
    // Writing a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

pub(crate) fn json_num(out: &mut Vec<u8>, number: u64) {
    out.extend_from_slice(number.to_string().as_bytes());
}

/// Tool-call arguments as a JSON object, for the targets that send them as one (Gemini,
/// Ollama): the text itself when it is an object, `{}` when empty, else `{"_raw": <text>}`,
/// as request conversion writes them.
pub(crate) fn json_object_arguments(out: &mut Vec<u8>, arguments: &str) {
    if arguments.trim().is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    match serde_json::from_str::<&serde_json::value::RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => out.extend_from_slice(raw.get().as_bytes()),
        _ => {
            out.extend_from_slice(b"{\"_raw\":");
            json_str(out, arguments);
            out.push(b'}');
        }
    }
}

/// The error type and message a target's error frame carries.
pub(crate) fn error_parts(error: &Error) -> (&str, String) {
    match &error.kind {
        ErrorKind::Provider { error_type, message } => (error_type, message.clone()),
        ErrorKind::Truncated { .. } => ("stream_truncated", error.to_string()),
        ErrorKind::Limit { .. } => ("stream_limit_exceeded", error.to_string()),
        _ => ("malformed_stream", error.to_string()),
    }
}

/// The id a target's response carries: the provider's, else one made from the message id.
pub(crate) fn response_id(message: &AssistantMessage, prefix: &str) -> String {
    match message.response_id.as_deref() {
        Some(id) => id.to_owned(),
        None => format!("{prefix}{}", message.id),
    }
}

/// The stop-reason string for `target`: the provider's own when the source is the same
/// dialect, else `map` of the canonical reason.
pub(crate) fn stop_string(
    message: &AssistantMessage,
    source: DialectName,
    target: DialectName,
    map: fn(StopReason) -> &'static str,
) -> &str {
    match message.raw_stop_reason.as_deref() {
        Some(raw) if source == target => raw,
        _ => map(message.stop_reason.unwrap_or_default()),
    }
}

pub(crate) fn usage_of(message: &AssistantMessage) -> Usage {
    message.usage.clone().unwrap_or_default()
}

/// Seconds since the Unix epoch of an RFC 3339 timestamp (`2026-11-21T10:00:00.123Z`,
/// `...+01:00`); 0 when it cannot be read (the `created` fields are informative only).
pub(crate) fn unix_seconds(timestamp: &str) -> u64 {
    parse_rfc3339(timestamp).and_then(|s| u64::try_from(s).ok()).unwrap_or(0)
}

fn parse_rfc3339(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> { ts.get(range)?.parse().ok() };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let mut seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    // The offset after any fraction: `Z`, or `+HH:MM` / `-HH:MM`.
    let rest = ts.get(19..)?.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if let (Some(sign @ ('+' | '-')), Some(h), Some(m)) =
        (rest.chars().next(), rest.get(1..3).and_then(|h| h.parse::<i64>().ok()), rest.get(4..6))
    {
        let offset = h * 3_600 + m.parse::<i64>().ok()? * 60;
        seconds += if sign == '+' { -offset } else { offset };
    }
    Some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), 0);
        assert_eq!(unix_seconds("2026-11-21T10:00:00.123456Z"), 1_795_255_200);
        assert_eq!(unix_seconds("2026-11-21T11:00:00+01:00"), 1_795_255_200);
        assert_eq!(unix_seconds("2000-02-29T23:59:59Z"), 951_868_799);
        assert_eq!(unix_seconds("not a time"), 0);
    }

    #[test]
    fn arguments_become_an_object() {
        let mut out = Vec::new();
        for (text, want) in
            [("", "{}"), (r#"{"a":1}"#, r#"{"a":1}"#), ("[1]", r#"{"_raw":"[1]"}"#), ("{", r#"{"_raw":"{"}"#)]
        {
            out.clear();
            json_object_arguments(&mut out, text);
            assert_eq!(String::from_utf8_lossy(&out), want);
        }
    }
}
