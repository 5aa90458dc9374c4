//! Anthropic Messages responses: the `message` object.
//!
//! Writing: `{"id", "type": "message", "role": "assistant", "model", "content": [...],
//! "stop_reason", "stop_sequence": null, "usage"}`. The content blocks are the request's
//! assistant blocks (`request::anthropic`), in the message's order: `text`, `thinking` with its
//! `signature`, `redacted_thinking`, `tool_use` with `input` the arguments' JSON object (as in a
//! request: `{}` when empty, `{"_raw": "<text>"}` when not an object, reported), text with its
//! Anthropic `citations`, and the server tool calls and results of an Anthropic message written
//! back as they were. `stop_reason` is
//! `end_turn` (or the message's own `stop_sequence`), `max_tokens` (or
//! `model_context_window_exceeded`), `tool_use`, `pause_turn`, `refusal` (also for a content
//! filter), and `null` for every other reason; the matched `stop_sequence` is not kept (`null`).
//! Usage: `input_tokens` is the canonical input less cache reads and writes (Anthropic counts
//! them apart), with `cache_creation_input_tokens`, `cache_read_input_tokens`, `output_tokens`.
//! Not kept, so not written back: `stop_sequence`,
//! `stop_details`, `container`, and the usage details (`service_tier`, `server_tool_use`,
//! `cache_creation`, `inference_geo`).
//!
//! Reading: the message is replayed as its stream: `message_start` (id, model, usage), one
//! `content_block_start` holding each whole block and its `content_block_stop`, `message_delta`
//! with the stop reason.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{BodyReplay, Payload, native_blocks, parts, response_id, size_hint, stop_value, to_vec, usage};
use crate::assemble::BuilderOptions;
use crate::canonical::AssistantMessage;
use crate::dialect::DialectName;
use crate::dialect::anthropic::STOP;
use crate::error::Error;
use crate::request::anthropic::{OutBlock, TARGET, block};
use crate::request::{Loss, Part, Policy, object_arguments};

#[derive(Serialize)]
struct Body<'a> {
    id: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<OutBlock<'a>>,
    stop_reason: Option<&'a str>,
    stop_sequence: Option<&'a str>,
    usage: AnthropicUsage,
}

#[derive(Serialize)]
struct AnthropicUsage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Serialize)]
struct OutputDetails {
    thinking_tokens: u64,
}

pub(super) fn write(message: &AssistantMessage, policy: Policy, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let blocks = native_blocks(message, &TARGET, true);
    let mut content = Vec::with_capacity(blocks.len());
    for part in parts(message, &blocks, &TARGET, policy, report) {
        if let Part::ToolCall { block: b, call } = part {
            let input = object_arguments(0, b, call, policy, report)?;
            content.push(OutBlock::ToolUse { id: &call.id, name: &call.name, input, cache_control: None });
        } else if let Some(b) = block(part) {
            content.push(b);
        }
    }
    let u = usage(message);
    let usage = AnthropicUsage {
        input_tokens: u.input_tokens.saturating_sub(u.cache_read_tokens).saturating_sub(u.cache_write_tokens),
        cache_creation_input_tokens: u.cache_write_tokens,
        cache_read_input_tokens: u.cache_read_tokens,
        output_tokens: u.output_tokens,
        output_tokens_details: (u.reasoning_tokens > 0)
            .then_some(OutputDetails { thinking_tokens: u.reasoning_tokens }),
    };
    let stop_reason = Some(stop_value(message, STOP, "", report)).filter(|s| !s.is_empty());
    to_vec(
        &Body {
            id: response_id(message, "msg_"),
            kind: "message",
            role: "assistant",
            model: message.model.as_deref().unwrap_or(""),
            content,
            stop_reason,
            stop_sequence: None,
            usage,
        },
        size_hint(message),
    )
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    stop_reason: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

pub(super) fn read(body: &[u8], options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let parsed: InBody<'_> = super::parse(body)?;
    let mut replay = BodyReplay::new(DialectName::Anthropic, options);
    // `{"type": "error", "error": {...}}`, the body of every failed call
    let error = parsed.error.as_ref().filter(|e| !e.is_null());
    if error.is_some() || parsed.kind.as_deref() == Some("error") {
        return Err(replay.provider_error(error.unwrap_or(&serde_json::Value::Null)));
    }
    if let Some(kind) = parsed.kind.as_deref().filter(|k| *k != "message") {
        let detail = format!("a {kind:?} object, not a message (msgwire.assemble reads streams)");
        return Err(Error::body("response body", detail, Some(0)));
    }
    let Some(content) = parsed.content else { return Err(super::missing(body, "content")) };
    replay.builder.start(parsed.id.as_deref(), parsed.model.as_deref());
    if let Some(usage) = parsed.usage {
        let mut event = Payload::default();
        event.lit(r#"{"type":"message_start","message":{"usage":"#).raw(body, usage).lit("}}");
        replay.event("message_start", &event)?;
    }
    for (index, block) in content.into_iter().enumerate() {
        let start = format!(r#"{{"type":"content_block_start","index":{index},"content_block":{}}}"#, block.get());
        replay.nested(body, "content_block_start", &start, block)?;
        let stop = format!(r#"{{"type":"content_block_stop","index":{index}}}"#);
        replay.nested(body, "content_block_stop", &stop, block)?;
    }
    if let Some(reason) = parsed.stop_reason {
        let mut event = Payload::default();
        event.lit(r#"{"type":"message_delta","delta":{"stop_reason":"#).raw(body, reason).lit("}}");
        replay.event("message_delta", &event)?;
    }
    Ok(replay.finish())
}
