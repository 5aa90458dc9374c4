//! Stream transcoding for gateways: one provider's stream in, another provider's stream out,
//! as the input arrives.
//!
//! The source is decoded as usual (framer, dialect, [`Builder`](crate::assemble::Builder)); the
//! builder's events go to a `Sequencer` instead of a JSON batch, and the sequencer drives the
//! target's `Encoder`. The sequencer exists because targets differ in what they allow: an
//! Anthropic or Responses stream has one block open at a time, while an OpenAI source may
//! interleave the arguments of parallel tool calls. So blocks are written in the order of the
//! final message, each opened when it is first heard of (with what arrived for it so far) and
//! closed when the next one opens; a block that arrives while a tool call is still open waits.
//!
//! What each target cannot carry is left out, never invented: OpenAI Chat has no place for
//! thinking signatures or redacted thinking (reasoning text goes out as `reasoning_content`,
//! as DeepSeek and vLLM send it); Gemini and Ollama have none for redacted thinking, Ollama none
//! for signatures. Ids, the model, usage and the stop reason are carried over (the stop-reason
//! strings are the non-streamed writers' tables in `crate::response`: the source's own string
//! when the target has it for that reason, as from one dialect to itself).
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
use crate::canonical::{AssistantMessage, Block, StopReason};
use crate::decoder::StreamDecoder;
use crate::dialect::DialectName;
use crate::error::{Error, ErrorKind};
pub(crate) use crate::response::{response_id, usage as usage_of};

use sequence::Sequencer;

/// A decoder of `source` streams whose output ([`StreamDecoder::take_events`]) is the stream
/// in the `target` dialect's wire format.
pub fn transcoder(source: DialectName, target: DialectName, options: BuilderOptions) -> StreamDecoder {
    let sink: Box<dyn crate::event::EventSink> = match target {
        DialectName::OpenAi => Box::new(Sequencer::new(openai_chat::OpenAiChat::default())),
        DialectName::OpenAiResponses => Box::new(Sequencer::new(openai_responses::OpenAiResponses::default())),
        DialectName::Anthropic => Box::new(Sequencer::new(anthropic::Anthropic::default())),
        DialectName::Gemini => Box::new(Sequencer::new(gemini::Gemini::default())),
        DialectName::Ollama => Box::new(Sequencer::new(ollama::Ollama::default())),
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

/// One target dialect's writer. The `Sequencer` calls it in a strict order: `start`, then for
/// each block `open`, `delta`s, `close` (one block at a time), then `finish`; or `fail` at any
/// point. `open` gets the block's index in the message and the block as it is then (for a tool
/// call: its id and name).
pub(crate) trait Encoder: Send + Sync + std::fmt::Debug {
    /// The target's name, as server tool blocks name their dialect.
    fn dialect(&self) -> &'static str;
    /// Whether the stream carries this server tool block of its own dialect as a block (Gemini
    /// writes its grounding on the last chunk instead).
    fn streams_server_tools(&self) -> bool {
        false
    }
    /// Whether the stream carries this citation of a text block.
    fn cites(&self, _citation: &crate::canonical::Citation) -> bool {
        false
    }
    fn start(&mut self, out: &mut Vec<u8>, message: &AssistantMessage);
    fn open(&mut self, out: &mut Vec<u8>, index: usize, block: &Block);
    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>);
    fn close(&mut self, out: &mut Vec<u8>, block: &Block);
    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage);
    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, message: &AssistantMessage);
}

// --- what the writers share ------------------------------------------------------------------

/// `text` as a JSON string.
pub(crate) fn json_str(out: &mut Vec<u8>, text: &str) {
    crate::json_out::write_str(out, text);
}

pub(crate) fn json_num(out: &mut Vec<u8>, number: u64) {
    out.extend_from_slice(number.to_string().as_bytes());
}

/// Tool-call arguments as a JSON object (Gemini, Ollama), as request conversion writes them.
pub(crate) use crate::request::json_object_arguments;

/// The error type and message a target's error frame carries.
pub(crate) fn error_parts(error: &Error) -> (&str, String) {
    match &error.kind {
        ErrorKind::Provider { error_type, message, .. } => (error_type, message.clone()),
        ErrorKind::Truncated { .. } => ("stream_truncated", error.to_string()),
        ErrorKind::Limit { .. } => ("stream_limit_exceeded", error.to_string()),
        _ => ("malformed_stream", error.to_string()),
    }
}

/// The stop-reason string of `table` (a dialect's, from `crate::response`) for `message`: its
/// own `raw_stop_reason` when that is one of the table's strings for its stop reason, else the
/// table's first, else `otherwise`.
pub(crate) fn stop_string<'a>(
    message: &'a AssistantMessage,
    table: &[(StopReason, &[&'static str])],
    otherwise: &'static str,
) -> &'a str {
    crate::response::stop_value(message, table, otherwise, &mut Vec::new())
}

/// The message's creation time in Unix seconds, as `created` fields carry it (0 when unreadable).
pub(crate) fn json_created(out: &mut Vec<u8>, message: &AssistantMessage) {
    out.extend_from_slice(crate::response::created(message).to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

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
