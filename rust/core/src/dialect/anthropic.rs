//! Anthropic Messages streams: `message_start`, then `content_block_start` / `_delta` /
//! `_stop` per block, `message_delta` (stop reason, cumulative usage), `message_stop`.
//!
//! Blocks keep their order. Server tool blocks (`server_tool_use`, `*_tool_result`, ...) are
//! server tool calls and results (`crate::server_tool`), their streamed input filled in, so a
//! later request can send them back; text citations (`citations_delta`, or a block's own
//! `citations`) are the text block's. Other blocks are kept whole as `provider_part` blocks.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::walk::{Walk, walk_or_parse};
use super::{Dialect, DialectName, parse, provider_error};
use super::{StopTable, read_stop};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;
use crate::server_tool;

/// What an Anthropic block index became.
/// Anthropic's stop reasons: the words written for each canonical reason (the first one), and
/// read back as the first reason whose words hold them (`refusal` reads as `Refusal`).
pub(crate) const STOP: StopTable = &[
    (StopReason::EndTurn, &["end_turn", "stop_sequence"]),
    (StopReason::Length, &["max_tokens", "model_context_window_exceeded"]),
    (StopReason::ToolUse, &["tool_use"]),
    (StopReason::Pause, &["pause_turn"]),
    (StopReason::Refusal, &["refusal"]),
    (StopReason::ContentFilter, &["refusal"]),
];

#[derive(Debug)]
enum Slot {
    /// A text block, created with its first text: an empty one would be in the message but in
    /// no event (and Anthropic refuses empty text blocks sent back).
    Text(Option<usize>),
    Thinking(usize),
    /// A tool call, and the input given whole at its start (used only if no delta follows).
    Tool(usize, Option<String>),
    /// A server tool call or result, or a provider block kept raw (`json`, as it started); its
    /// `input` may still stream (`server_tool_use`).
    Raw {
        server: bool,
        block: usize,
        json: Box<RawValue>,
        input: String,
    },
    /// A redacted thinking block, or a block already closed.
    Closed,
}

#[derive(Debug, Default)]
pub struct Anthropic {
    /// By the provider's block index: a map, since the stream chooses the index (a dense
    /// vector would allocate up to it: `"index": 7777777770` asked for 435 GB).
    slots: BTreeMap<usize, Slot>,
    /// Usage parts as Anthropic counts them (input excludes cache reads and writes).
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
    thinking: u64,
    stopped: bool,
}

#[derive(Deserialize, Debug)]
struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    index: Option<usize>,
    #[serde(borrow)]
    // once per stream and large: boxed, so the payload of every delta stays small
    message: Option<Box<StartMessage<'a>>>,
    #[serde(borrow)]
    content_block: Option<&'a RawValue>,
    #[serde(borrow)]
    delta: Option<PayloadDelta<'a>>,
    usage: Option<Box<AnthropicUsage>>,
    error: Option<Box<serde_json::Value>>,
}

#[derive(Deserialize, Debug)]
struct StartMessage<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    usage: Option<AnthropicUsage>,
}

#[derive(Deserialize, Debug)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    data: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    /// A text's citations (a list; anything else is not read).
    #[serde(borrow)]
    citations: Option<&'a RawValue>,
}

#[derive(Deserialize, Debug)]
struct PayloadDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    citation: Option<&'a RawValue>,
}

#[derive(Deserialize, Debug)]
struct AnthropicUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Debug)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

// --- the fast walk of the per-token events (anything else is serde's: see `walk`) ---

fn walk_payload(data: &str) -> Option<Payload<'_>> {
    let mut walk = Walk::new(data);
    // built in place: the delta is the payload's largest part, moving it costs (see openai_chat)
    let mut payload = Payload {
        kind: Cow::Borrowed(""),
        index: None,
        message: None,
        content_block: None,
        delta: None,
        usage: None,
        error: None,
    };
    let mut has_kind = false;
    let present =
        walk.object(&["type", "index", "delta", "message", "content_block", "usage", "error"], |w, key| {
            match key {
                0 => {
                    payload.kind = w.str()??; // `null`: serde's error
                    has_kind = true;
                }
                1 => payload.index = w.u64()?.map(usize::try_from).transpose().ok()?,
                2 => walk_delta(w, &mut payload.delta)?,
                _ => w.null()?, // the once-per-stream parts: serde reads them
            }
            Some(())
        })?;
    walk.finish()?;
    (present && has_kind).then_some(payload)
}

/// The delta, written in place into `slot` (`None` for `null`). `None`: serde reads the chunk.
fn walk_delta<'a>(w: &mut Walk<'a>, slot: &mut Option<PayloadDelta<'a>>) -> Option<()> {
    let delta = slot.insert(PayloadDelta {
        kind: None,
        text: None,
        partial_json: None,
        thinking: None,
        signature: None,
        stop_reason: None,
        citation: None,
    });
    let keys = ["type", "text", "partial_json", "thinking", "signature", "stop_reason", "citation"];
    let present = w.object(&keys, |w, key| {
        let field = match key {
            0 => &mut delta.kind,
            1 => &mut delta.text,
            2 => &mut delta.partial_json,
            3 => &mut delta.thinking,
            4 => &mut delta.signature,
            5 => &mut delta.stop_reason,
            _ => return w.null(),
        };
        *field = w.str()?;
        Some(())
    })?;
    if !present {
        *slot = None;
    }
    Some(())
}

impl Dialect for Anthropic {
    fn on_payload(&mut self, _event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        let payload = walk_or_parse(data, walk_payload, builder)?;
        match payload.kind.as_ref() {
            "message_start" => {
                if let Some(message) = payload.message {
                    builder.start(message.id.as_deref(), message.model.as_deref());
                    if let Some(usage) = message.usage {
                        self.usage(&usage, builder);
                    }
                }
            }
            "content_block_start" => {
                let (Some(index), Some(block)) = (payload.index, payload.content_block) else {
                    return Err(Error::body(
                        "stream payload",
                        "content_block_start without index or content_block",
                        None,
                    )
                    .shifted(builder.offset()));
                };
                self.block_start(index, block, builder)?;
            }
            "content_block_delta" => {
                if let (Some(index), Some(delta)) = (payload.index, payload.delta) {
                    self.block_delta(index, &delta, builder)?;
                }
            }
            "content_block_stop" => {
                if let Some(index) = payload.index {
                    self.block_stop(index, builder)?;
                }
            }
            "message_delta" => {
                if let Some(usage) = payload.usage {
                    self.usage(&usage, builder);
                }
                if let Some(reason) = payload.delta.and_then(|d| d.stop_reason) {
                    builder.finish(map_stop_reason(&reason), Some(&reason));
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let error = payload.error.map_or(serde_json::Value::Null, |e| *e);
                return Err(provider_error(&error, builder));
            }
            _ => {} // `ping` and event types newer than this code
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if !self.stopped {
            if !builder.is_finished() {
                return Err(Error::truncated("no message_stop", builder.offset()));
            }
            builder.diagnostic("missing_message_stop", "the stream ended after message_delta but without message_stop");
        }
        Ok(())
    }
}

impl Anthropic {
    fn slot(&mut self, index: usize) -> Option<&mut Slot> {
        self.slots.get_mut(&index)
    }

    fn block_start(&mut self, index: usize, raw: &RawValue, builder: &mut Builder) -> Result<(), Error> {
        let start: BlockStart<'_> = parse(raw.get(), builder)?;
        let slot = match start.kind.as_ref() {
            "text" => {
                let mut block = None;
                push_text(&mut block, start.text.as_deref().unwrap_or(""), builder);
                let citations = start.citations.map(|c| serde_json::from_str::<Vec<&RawValue>>(c.get()));
                for citation in citations.and_then(Result::ok).unwrap_or_default() {
                    cite(&mut block, citation, builder)?;
                }
                Slot::Text(block)
            }
            "thinking" => {
                let block = builder.new_thinking();
                builder.push_thinking(block, start.thinking.as_deref().unwrap_or(""));
                builder.thinking_signature(block, start.signature.as_deref().unwrap_or(""));
                Slot::Thinking(block)
            }
            "redacted_thinking" => {
                builder.redacted_thinking(start.data.as_deref().unwrap_or(""));
                Slot::Closed
            }
            "tool_use" => {
                let block = builder.begin_tool(start.id.as_deref().unwrap_or(""), start.name.as_deref().unwrap_or(""));
                let initial = start.input.map(RawValue::get).filter(|input| *input != "{}").map(str::to_owned);
                Slot::Tool(block, initial)
            }
            kind => {
                let json = raw.to_owned();
                let server = server_tool::from_anthropic(raw.get(), None).filter(|_| server_tool::is_anthropic(kind));
                if let Some(server) = server {
                    Slot::Raw { server: true, block: builder.begin_whole(server)?, json, input: String::new() }
                } else {
                    let block = builder.unknown_block(super::kept_whole(raw, DialectName::Anthropic))?;
                    Slot::Raw { server: false, block, json, input: String::new() }
                }
            }
        };
        if self.slots.insert(index, slot).is_some() {
            builder.diagnostic("repeated_block_index", format!("content block index {index} started twice"));
        }
        Ok(())
    }

    fn block_delta(&mut self, index: usize, delta: &PayloadDelta<'_>, builder: &mut Builder) -> Result<(), Error> {
        let kind = delta.kind.as_deref().unwrap_or("");
        let Some(slot) = self.slot(index) else {
            builder.diagnostic("delta_without_block", format!("a {kind} for block {index}, which never started"));
            return Ok(());
        };
        match (slot, kind) {
            (Slot::Text(block), "text_delta") => push_text(block, delta.text.as_deref().unwrap_or(""), builder),
            (Slot::Thinking(block), "thinking_delta") => {
                builder.push_thinking(*block, delta.thinking.as_deref().unwrap_or(""));
            }
            (Slot::Thinking(block), "signature_delta") => {
                builder.thinking_signature(*block, delta.signature.as_deref().unwrap_or(""));
            }
            (Slot::Tool(block, _), "input_json_delta") => {
                builder.tool_args(*block, delta.partial_json.as_deref().unwrap_or(""))?;
            }
            (Slot::Raw { input, .. }, "input_json_delta") => {
                // A server tool's input is a tool call's arguments: bounded the same way.
                let fragment = delta.partial_json.as_deref().unwrap_or("");
                let limit = builder.limits().max_tool_args_size;
                if input.len() + fragment.len() > limit {
                    return Err(Error::limit("max_tool_args_size", limit, builder.offset()));
                }
                input.push_str(fragment);
            }
            (Slot::Text(block), "citations_delta") => {
                if let Some(citation) = delta.citation {
                    cite(block, citation, builder)?;
                }
            }
            _ => builder.diagnostic("unexpected_delta", format!("a {kind} for block {index} of another kind")),
        }
        Ok(())
    }

    fn block_stop(&mut self, index: usize, builder: &mut Builder) -> Result<(), Error> {
        let Some(slot) = self.slots.get_mut(&index).map(|s| std::mem::replace(s, Slot::Closed)) else {
            return Ok(());
        };
        match slot {
            Slot::Tool(block, initial) => {
                if let Some(initial) = initial {
                    if builder.tool_args_len(block) == 0 {
                        builder.tool_set_args(block, &initial)?;
                    }
                }
                builder.end_tool(block);
            }
            Slot::Raw { server, block, json, input } => {
                // The streamed input completes the block, as it streamed (its numbers as written:
                // `crate::raw`); input that is not JSON is kept as a string of its text.
                if !input.trim().is_empty() {
                    let value = match serde_json::from_str::<&RawValue>(&input) {
                        Ok(value) => Cow::Borrowed(value.get()),
                        Err(_) => Cow::Owned(serde_json::to_string(&input).unwrap_or_default()),
                    };
                    if let Some(raw) = crate::raw::with_member(json.get(), "input", &value) {
                        if server {
                            if let Some(whole) = crate::server_tool::from_anthropic(raw.get(), Some(&input)) {
                                builder.set_whole(block, whole)?;
                            }
                        } else {
                            builder.set_unknown_block(block, super::kept_whole(&raw, DialectName::Anthropic))?;
                        }
                    }
                }
                if server {
                    builder.end_whole(block);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn usage(&mut self, usage: &AnthropicUsage, builder: &mut Builder) {
        // Figures are cumulative: a field present replaces the earlier value.
        let set = |field: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut self.input, usage.input_tokens);
        set(&mut self.output, usage.output_tokens);
        set(&mut self.cache_read, usage.cache_read_input_tokens);
        set(&mut self.cache_write, usage.cache_creation_input_tokens);
        set(&mut self.thinking, usage.output_tokens_details.as_ref().and_then(|d| d.thinking_tokens));
        builder.usage(Usage {
            // Canonical input counts every input token, cached or not (as OpenAI reports it).
            // Saturating: the counts are the provider's, and may be anything.
            input_tokens: self.input.saturating_add(self.cache_read).saturating_add(self.cache_write),
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            reasoning_tokens: self.thinking,
        });
    }
}

/// A citation of an Anthropic text block (created by it when it has no text yet).
fn cite(block: &mut Option<usize>, citation: &RawValue, builder: &mut Builder) -> Result<(), Error> {
    if let Some(citation) = crate::citation::from_anthropic(citation.get()) {
        let index = *block.get_or_insert_with(|| builder.new_text());
        builder.cite(index, citation)?;
    }
    Ok(())
}

/// Text for an Anthropic text block, which is created with its first non-empty text.
fn push_text(block: &mut Option<usize>, text: &str, builder: &mut Builder) {
    if !text.is_empty() {
        let index = *block.get_or_insert_with(|| builder.new_text());
        builder.push_text(index, text);
    }
}

fn map_stop_reason(reason: &str) -> StopReason {
    read_stop(STOP, reason)
}

#[cfg(test)]
mod tests {
    use super::{Payload, walk_payload};

    /// The walk reads the per-token events, and on every odd one either agrees with serde or
    /// leaves the payload to serde: never a different reading, never an accepted error.
    #[test]
    fn the_walk_agrees_with_serde_or_steps_aside() {
        let usual = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b"}}"#;
        assert!(walk_payload(usual).is_some(), "the usual shape is walked");
        for payload in [
            usual,
            r#"{"type":"ping"}"#,
            r#"{"index":0}"#, // no type: serde's error
            r#"{"type":null}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}"#,
            r#"{"type":"content_block_delta","index":18446744073709551615,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"a":1}}}"#,
            r#"{"type":"x","delta":{"type":"t","type":"u"}}"#,
            r#"{"type":"x","delta":null,"message":null}"#,
        ] {
            let parsed = serde_json::from_str::<Payload<'_>>(payload);
            if let Some(walked) = walk_payload(payload) {
                let parsed = parsed.unwrap_or_else(|e| panic!("the walk accepted {payload}, serde: {e}"));
                assert_eq!(format!("{walked:?}"), format!("{parsed:?}"), "{payload}");
            }
        }
    }

    use crate::assemble::BuilderOptions;
    use crate::canonical::{Block, TextBlock};
    use crate::{DialectName, Limits, StreamDecoder};

    /// Found by `fuzz/fuzz_targets/anthropic.rs`: the slots were a vector indexed by the
    /// stream's block index, so one `"index": 7777777770` allocated 435 GB and aborted (and
    /// `usize::MAX` overflowed).
    #[test]
    fn a_huge_block_index_allocates_nothing() {
        for index in [7_777_777_770, usize::MAX] {
            let event = |kind: &str, rest: &str| format!("event: {kind}\ndata: {{\"type\":\"{kind}\"{rest}}}\n\n");
            let stream = [
                event("message_start", r#","message":{"id":"m","model":"claude"}"#),
                event(
                    "content_block_start",
                    &format!(r#","index":{index},"content_block":{{"type":"text","text":""}}"#),
                ),
                event(
                    "content_block_delta",
                    &format!(r#","index":{index},"delta":{{"type":"text_delta","text":"hi"}}"#),
                ),
                event("content_block_stop", &format!(r#","index":{index}"#)),
                event("message_delta", r#","delta":{"stop_reason":"end_turn"}"#),
                event("message_stop", ""),
            ]
            .concat();
            let options = BuilderOptions {
                id: "id".to_owned(),
                timestamp: "t".to_owned(),
                provider: "anthropic".to_owned(),
                record_events: true,
                partial_args: true,
                limits: Limits::default(),
            };
            let mut decoder = StreamDecoder::new(DialectName::Anthropic, options);
            assert_eq!(decoder.feed(stream.as_bytes()), Ok(()));
            assert_eq!(decoder.finish(), Ok(()));
            let content = &decoder.builder().message().content;
            assert!(matches!(content.as_slice(), [Block::Text(TextBlock { text, .. })] if text == "hi"), "{content:?}");
        }
    }
}
