//! OpenAI Responses streams: typed events (`response.output_item.added`, `...delta`, ...)
//! keyed by `item_id` (or `output_index`), ending with `response.completed`, `.incomplete`
//! or `.failed`. OpenAI sends no `[DONE]`; OpenRouter sends `data: [DONE]` after the terminal event
//! (as in Chat Completions), and the SDK stops there: it ends the stream here too.
//!
//! Reasoning items become thinking blocks (summary parts joined by a blank line, the
//! `encrypted_content` of `output_item.done` as the signature); message items become text
//! blocks, one per content part, their annotations its citations (`output_text.annotation.added`,
//! and the `.done` item's final word); function calls become tool calls keyed by `call_id`. Each
//! block keeps the id of its item (`item_id`), which a request needs to send it back. Built-in
//! tool items (web search, code interpreter, ...) are server tool calls (`crate::server_tool`);
//! other items are kept whole as `provider_part` blocks.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::StopTable;
use super::walk::{KeyOrder, Walk, walk_or_parse};
use super::{Dialect, DialectName, parse, provider_error};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;

/// The status, or the incomplete reason, that says each stop reason (written; reading is the
/// dialect's, which also weighs the calls and a refusal).
pub(crate) const STOP: StopTable = &[
    (StopReason::EndTurn, &["completed"]),
    (StopReason::ToolUse, &["completed"]),
    (StopReason::Refusal, &["completed"]),
    (StopReason::Length, &["max_output_tokens"]),
    (StopReason::ContentFilter, &["content_filter"]),
    (StopReason::Aborted, &["cancelled"]),
];

#[derive(Debug)]
enum Slot {
    /// The thinking block is created on its first text or signature: an item with neither
    /// would be an empty block that no event describes.
    Reasoning {
        block: Option<usize>,
        summary_parts: usize,
    },
    /// Text blocks of a message item, by `content_index`, created on their first text (an empty
    /// part makes no block, as an empty Anthropic text block makes none).
    Message {
        parts: Vec<(u64, usize)>,
    },
    Call(usize),
    Server(usize),
    Raw(usize),
}

#[derive(Debug)]
struct Item {
    id: String,
    output_index: Option<u64>,
    slot: Slot,
}

#[derive(Debug, Default)]
pub struct OpenAiResponses {
    items: Vec<Item>,
    terminal: bool,
    refusal: bool,
    /// `data: [DONE]` was seen.
    done: bool,
    /// The order this stream's events send their keys in.
    order: KeyOrder,
}

#[derive(Deserialize, Debug)]
struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    // once per stream and large: boxed, so the payload of every delta stays small
    #[serde(borrow)]
    response: Option<Box<Response<'a>>>,
    #[serde(borrow)]
    item: Option<&'a RawValue>,
    #[serde(borrow)]
    item_id: Option<Cow<'a, str>>,
    output_index: Option<u64>,
    content_index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow)]
    code: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    annotation: Option<&'a RawValue>,
}

#[derive(Deserialize, Debug)]
struct Response<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    incomplete_details: Option<Incomplete>,
    error: Option<serde_json::Value>,
    usage: Option<ResponsesUsage>,
}

#[derive(Deserialize, Debug)]
struct Incomplete {
    reason: Option<String>,
}

#[derive(Deserialize)]
struct ItemFields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
    #[serde(borrow)]
    encrypted_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    summary: Option<Vec<SummaryPart<'a>>>,
    #[serde(borrow)]
    content: Option<Vec<DonePart<'a>>>,
}

/// A content part of a message item: its annotations are the citations of its text block.
#[derive(Deserialize)]
struct DonePart<'a> {
    #[serde(borrow)]
    annotations: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct SummaryPart<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
struct ResponsesUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Debug)]
struct InputDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize, Debug)]
struct OutputDetails {
    reasoning_tokens: Option<u64>,
}

// --- the fast walk of the per-token events (anything else is serde's: see `walk`) ---

fn walk_payload<'a>(data: &'a str, order: &mut KeyOrder) -> Option<Payload<'a>> {
    let mut walk = Walk::new(data);
    let mut payload = Payload {
        kind: Cow::Borrowed(""),
        response: None,
        item: None,
        item_id: None,
        output_index: None,
        content_index: None,
        delta: None,
        arguments: None,
        code: None,
        message: None,
        annotation: None,
    };
    let mut kind = None;
    // the keys an event does not read are listed for their place in the order (learned per stream)
    let keys = [
        "type",
        "sequence_number",
        "item_id",
        "output_index",
        "content_index",
        "summary_index",
        "delta",
        "logprobs",
        "obfuscation",
        "arguments",
        "code",
        "message",
        "response",
        "item",
        "annotation",
    ];
    let present = walk.object_in(&keys, order, |w, key| {
        match key {
            0 => kind = w.str()?,
            1 | 5 | 7 | 8 => w.skip()?,
            2 => payload.item_id = w.str()?,
            3 => payload.output_index = w.u64()?,
            4 => payload.content_index = w.u64()?,
            6 => payload.delta = w.str()?,
            9 => payload.arguments = w.str()?,
            10 => payload.code = w.str()?,
            11 => payload.message = w.str()?,
            _ => w.null()?, // `response`, `item`, `annotation`: serde reads them
        }
        Some(())
    })?;
    walk.finish()?;
    payload.kind = kind.filter(|_| present)?;
    Some(payload)
}

impl Dialect for OpenAiResponses {
    fn on_payload(&mut self, _event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        if self.done {
            builder.diagnostic("data_after_done", "an event after [DONE] was ignored");
            return Ok(());
        }
        if data.trim_ascii() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let payload = walk_or_parse(data, |data| walk_payload(data, &mut self.order), builder)?;
        let kind = payload.kind.as_ref();
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(response) = &payload.response {
                    builder.start(response.id.as_deref(), response.model.as_deref());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = payload.item {
                    self.item_added(item, payload.output_index, builder)?;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = payload.item {
                    self.item_done(item, payload.output_index, builder)?;
                }
            }
            "response.content_part.added" | "response.output_text.delta" | "response.refusal.delta" => {
                let delta = payload.delta.as_deref().unwrap_or("");
                if kind == "response.refusal.delta" {
                    self.refusal = true;
                }
                if let Some(block) = self.text_part(&payload, !delta.is_empty(), builder) {
                    builder.push_text(block, delta);
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let (Some(Slot::Call(block)), Some(delta)) = (self.slot(&payload), payload.delta.as_deref()) {
                    let block = *block;
                    builder.tool_args(block, delta)?;
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(Slot::Call(block)), Some(arguments)) = (self.slot(&payload), payload.arguments.as_deref())
                {
                    let block = *block;
                    builder.tool_set_args(block, arguments)?;
                }
            }
            "response.output_text.annotation.added" => {
                if let (Some(block), Some(annotation)) = (self.text_part(&payload, false, builder), payload.annotation)
                {
                    let text = match builder.message().content.get(block) {
                        Some(crate::canonical::Block::Text(t)) => t.text.as_str(),
                        _ => "",
                    };
                    if let Some(citation) = crate::citation::from_responses(annotation.get(), text) {
                        builder.cite(block, citation)?;
                    }
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(pos) = self.find(&payload) {
                    let Item { id, slot, .. } = &mut self.items[pos];
                    if let Slot::Reasoning { block, summary_parts } = slot {
                        *summary_parts += 1;
                        if *summary_parts > 1 {
                            let block = thinking_block(block, id, builder);
                            builder.push_thinking(block, "\n\n");
                        }
                    }
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = payload.delta.as_deref().unwrap_or("");
                if let (Some(pos), false) = (self.find(&payload), delta.is_empty()) {
                    let Item { id, slot, .. } = &mut self.items[pos];
                    if let Slot::Reasoning { block, .. } = slot {
                        let block = thinking_block(block, id, builder);
                        builder.push_thinking(block, delta);
                    }
                }
            }
            "response.completed" | "response.incomplete" => {
                self.terminal = true;
                if let Some(response) = payload.response {
                    self.finish(&response, builder);
                }
            }
            "response.failed" => {
                self.terminal = true;
                let error = payload.response.and_then(|r| r.error).unwrap_or(serde_json::Value::Null);
                return Err(provider_error(&error, builder));
            }
            "error" => return Err(event_error(&payload, builder)),
            _ => {} // done-events that repeat what deltas said, annotations, newer event types
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if self.terminal { Ok(()) } else { Err(Error::truncated("no response.completed", builder.offset())) }
    }
}

impl OpenAiResponses {
    fn find(&self, payload: &Payload<'_>) -> Option<usize> {
        match (payload.item_id.as_deref(), payload.output_index) {
            (Some(id), _) => self.items.iter().rposition(|item| item.id == id),
            (None, Some(index)) => self.items.iter().rposition(|item| item.output_index == Some(index)),
            (None, None) => None,
        }
    }

    fn slot(&self, payload: &Payload<'_>) -> Option<&Slot> {
        self.find(payload).map(|pos| &self.items[pos].slot)
    }

    /// The text block of a message item's content part; `create`: made if there is none yet.
    fn text_part(&mut self, payload: &Payload<'_>, create: bool, builder: &mut Builder) -> Option<usize> {
        let content_index = payload.content_index.unwrap_or(0);
        let found = self.find(payload);
        let Some(Item { id, slot: Slot::Message { parts }, .. }) = found.map(|pos| &mut self.items[pos]) else {
            builder.diagnostic("text_without_item", "output text for an item that was never added");
            return None;
        };
        if let Some((_, block)) = parts.iter().find(|(index, _)| *index == content_index) {
            return Some(*block);
        }
        if !create {
            return None;
        }
        let block = builder.new_text();
        builder.set_item_id(block, id);
        parts.push((content_index, block));
        Some(block)
    }

    fn item_added(&mut self, raw: &RawValue, output_index: Option<u64>, builder: &mut Builder) -> Result<(), Error> {
        let item: ItemFields<'_> = parse(raw.get(), builder)?;
        let id = item.id.as_deref().unwrap_or("").to_owned();
        let slot = match item.kind.as_ref() {
            "reasoning" => Slot::Reasoning { block: None, summary_parts: 0 },
            "message" => Slot::Message { parts: Vec::new() },
            "function_call" | "custom_tool_call" => {
                let block =
                    builder.begin_tool(item.call_id.as_deref().unwrap_or(""), item.name.as_deref().unwrap_or(""));
                builder.set_item_id(block, &id);
                let arguments = item.arguments.as_deref().or(item.input.as_deref()).unwrap_or("");
                builder.tool_args(block, arguments)?;
                Slot::Call(block)
            }
            kind => {
                match crate::server_tool::from_responses(raw.get()).filter(|_| crate::server_tool::is_responses(kind)) {
                    Some(server) => Slot::Server(builder.begin_whole(server)?),
                    None => Slot::Raw(builder.unknown_block(super::kept_whole(raw, DialectName::OpenAiResponses))?),
                }
            }
        };
        self.items.push(Item { id, output_index, slot });
        Ok(())
    }

    fn item_done(&mut self, raw: &RawValue, output_index: Option<u64>, builder: &mut Builder) -> Result<(), Error> {
        let item: ItemFields<'_> = parse(raw.get(), builder)?;
        let id = item.id.as_deref().unwrap_or("");
        let found = self.items.iter().rposition(|i| (!id.is_empty() && i.id == id) || i.output_index == output_index);
        let Some(pos) = found else {
            builder.diagnostic("done_without_added", format!("output_item.done for {id:?} without output_item.added"));
            self.item_added(raw, output_index, builder)?;
            return self.item_done(raw, output_index, builder);
        };
        let Item { id: item_id, slot, .. } = &mut self.items[pos];
        match slot {
            Slot::Reasoning { block, summary_parts } => {
                if *summary_parts == 0 {
                    // Summaries that never streamed as deltas arrive only here.
                    let texts: Vec<&str> = item.summary.iter().flatten().filter_map(|p| p.text.as_deref()).collect();
                    let text = texts.join("\n\n");
                    if !text.is_empty() {
                        let block = thinking_block(block, item_id, builder);
                        builder.push_thinking(block, &text);
                    }
                }
                // `.added` and `.done` carry different encrypted content: only `.done`'s is valid.
                let signature = item.encrypted_content.as_deref().unwrap_or("");
                if !signature.is_empty() {
                    let block = thinking_block(block, item_id, builder);
                    builder.thinking_signature(block, signature);
                }
            }
            Slot::Message { parts } => {
                // the item's own word on each part's annotations (a response body has no other)
                for (index, part) in item.content.iter().flatten().enumerate() {
                    let Some((_, block)) = parts.iter().find(|(i, _)| *i == index as u64) else { continue };
                    let text = match builder.message().content.get(*block) {
                        Some(crate::canonical::Block::Text(t)) => t.text.clone(),
                        _ => continue,
                    };
                    let citations: Vec<_> = part
                        .annotations
                        .iter()
                        .flatten()
                        .filter_map(|a| crate::citation::from_responses(a.get(), &text))
                        .collect();
                    builder.set_citations(*block, citations)?;
                }
            }
            &mut Slot::Server(block) => {
                if let Some(server) = crate::server_tool::from_responses(raw.get()) {
                    builder.set_whole(block, server)?;
                }
                builder.end_whole(block);
            }
            &mut Slot::Call(block) => {
                if let Some(arguments) = item.arguments.as_deref().or(item.input.as_deref()) {
                    builder.tool_set_args(block, arguments)?;
                }
                builder.end_tool(block);
            }
            &mut Slot::Raw(block) => {
                builder.set_unknown_block(block, super::kept_whole(raw, DialectName::OpenAiResponses))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, response: &Response<'_>, builder: &mut Builder) {
        builder.start(response.id.as_deref(), response.model.as_deref());
        if let Some(usage) = &response.usage {
            let input = usage.input_tokens_details.as_ref();
            builder.usage(Usage {
                input_tokens: usage.input_tokens.unwrap_or(0),
                output_tokens: usage.output_tokens.unwrap_or(0),
                cache_read_tokens: input.and_then(|d| d.cached_tokens).unwrap_or(0),
                cache_write_tokens: input.and_then(|d| d.cache_write_tokens).unwrap_or(0),
                reasoning_tokens: usage.output_tokens_details.as_ref().and_then(|d| d.reasoning_tokens).unwrap_or(0),
            });
        }
        let status = response.status.as_deref().unwrap_or("completed");
        let reason = response.incomplete_details.as_ref().and_then(|d| d.reason.as_deref());
        let stop = match (status, reason) {
            (_, Some("max_output_tokens")) => StopReason::Length,
            (_, Some("content_filter")) => StopReason::ContentFilter,
            ("completed", _) if builder.has_tool_calls() => StopReason::ToolUse,
            ("completed", _) if self.refusal => StopReason::Refusal,
            ("completed", _) => StopReason::EndTurn,
            ("cancelled", _) => StopReason::Aborted,
            _ => StopReason::Unknown,
        };
        builder.finish(stop, Some(reason.unwrap_or(status)));
    }
}

/// The thinking block of a reasoning item (with the item's id), created on first use.
/// The provider error of an `error` event: its `code` (the error's type word) and `message`.
fn event_error(payload: &Payload<'_>, builder: &Builder) -> Error {
    let error_type = payload.code.as_deref().unwrap_or("error");
    let message = payload.message.as_deref().unwrap_or("");
    Error::provider(error_type, message, builder.offset()).with_code(payload.code.as_deref().map(str::to_owned))
}

fn thinking_block(block: &mut Option<usize>, item_id: &str, builder: &mut Builder) -> usize {
    *block.get_or_insert_with(|| {
        let block = builder.new_thinking();
        builder.set_item_id(block, item_id);
        block
    })
}
