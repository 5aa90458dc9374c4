//! OpenAI Responses streams: typed events (`response.output_item.added`, `...delta`, ...)
//! keyed by `item_id` (or `output_index`), ending with `response.completed`, `.incomplete`
//! or `.failed`. OpenAI sends no `[DONE]`; OpenRouter sends `data: [DONE]` after the terminal event
//! (as in Chat Completions), and the SDK stops there: it ends the stream here too.
//!
//! Reasoning items become thinking blocks (their `reasoning_text` parts, then their summary
//! parts, joined by a blank line; the `encrypted_content` of `output_item.done` as the
//! signature); message items become text blocks, one per content part, their annotations its
//! citations (`output_text.annotation.added`, and the final word of the `.done` item and of
//! `response.completed`); function calls become tool calls keyed by `call_id`. Each block keeps
//! the id of its item (`item_id`), which a request needs to send it back. Built-in tool items
//! (web search, code interpreter, ...) are server tool calls (`crate::server_tool`); other items
//! are kept whole as `provider_part` blocks.
//!
//! Each piece of the output (a summary part, a text part, a call's arguments) may arrive by
//! deltas, by its `.done` event, by `output_item.done` and by `response.completed`'s `output`, and
//! the events that announce parts (`reasoning_summary_part.added`, `content_part.added`, their
//! `.done`) may be missing. Every later word on a piece is settled against what streamed, never
//! appended again: the same text adds nothing, a longer one adds the rest, and another one is a
//! diagnostic (`docs/wire.md`, section 5: the rule and what it keeps).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

mod reasoning;
mod said;
mod settle;
#[cfg(test)]
mod tests;

use reasoning::Reasoning;
use said::Said;
use settle::text_part;

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
    Reasoning(Reasoning),
    Message(Vec<TextPart>),
    Call(usize),
    Server(usize),
    Raw(usize),
}

/// A content part of a message item, by `content_index`: its text block, created on its first
/// text (an empty part makes no block, as an empty Anthropic text block makes none).
#[derive(Debug)]
struct TextPart {
    index: u64,
    block: Option<usize>,
    said: Said,
}

#[derive(Debug)]
struct Item {
    id: String,
    output_index: Option<u64>,
    slot: Slot,
    /// `output_item.done` came (or `response.completed` stood in for it).
    done: bool,
}

/// Which final word on an item: its `output_item.done`, or `response.completed`'s `output`
/// after it (a check of what is kept, that takes no signature and ends nothing again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Final {
    Done,
    Completed,
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
    summary_index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    /// The whole text of a part, on its `.done` event: `text`, `refusal` (`refusal.done`) or
    /// `input` (`custom_tool_call_input.done`), one field for the three, as no event has two.
    #[serde(borrow, alias = "refusal", alias = "input")]
    text: Option<Cow<'a, str>>,
    /// The part of `*.part.added` and `*.part.done` (rare, and large: boxed, so the payload of
    /// every delta stays small).
    #[serde(borrow)]
    part: Option<Box<EventPart<'a>>>,
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
    /// The finished items (`response.completed`, `.incomplete`): read apart, as a restatement
    /// that cannot be read is a diagnostic, not the stream's error.
    #[serde(borrow)]
    output: Option<&'a RawValue>,
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
    content: Option<Vec<ContentPart<'a>>>,
}

/// A content part: of a message item (`output_text`, its annotations the citations of its text
/// block, or `refusal`) or of a reasoning item (`reasoning_text`).
#[derive(Deserialize, Debug)]
struct ContentPart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow)]
    annotations: Option<Vec<&'a RawValue>>,
}

/// The part of a `*.part.added` or `*.part.done` event.
#[derive(Deserialize, Debug)]
struct EventPart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
}

/// A part's text, and whether it is a refusal.
fn part_text<'p>(kind: Option<&str>, text: Option<&'p str>, refusal: Option<&'p str>) -> (&'p str, bool) {
    match kind {
        Some("refusal") => (refusal.unwrap_or(""), true),
        _ => (text.unwrap_or(""), false),
    }
}

impl ContentPart<'_> {
    /// The part's text, and whether it is a refusal.
    fn text(&self) -> (&str, bool) {
        part_text(self.kind.as_deref(), self.text.as_deref(), self.refusal.as_deref())
    }
}

/// What a reasoning event does to a piece of the item's text.
#[derive(Debug, Clone, Copy)]
enum Step {
    Begin,
    Delta,
    Done,
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
        summary_index: None,
        delta: None,
        text: None,
        part: None,
        arguments: None,
        code: None,
        message: None,
        annotation: None,
    };
    let mut kind = None;
    let mut text_seen = false;
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
        "text",
        "refusal",
        "input",
        "part",
    ];
    let present = walk.object_in(&keys, order, |w, key| {
        match key {
            0 => kind = w.str()?,
            1 | 7 | 8 => w.skip()?,
            2 => payload.item_id = w.str()?,
            3 => payload.output_index = w.u64()?,
            4 => payload.content_index = w.u64()?,
            5 => payload.summary_index = w.u64()?,
            6 => payload.delta = w.str()?,
            9 => payload.arguments = w.str()?,
            10 => payload.code = w.str()?,
            11 => payload.message = w.str()?,
            // `text`, `refusal`, `input`: one field (two of them, even null, are serde's duplicate)
            15..=17 if std::mem::replace(&mut text_seen, true) => return None,
            15..=17 => payload.text = w.str()?,
            _ => w.null()?, // `response`, `item`, `annotation`, `part`: serde reads them
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
            // the deltas first: most events are one
            "response.output_text.delta" | "response.refusal.delta" => self.on_text_delta(kind, &payload, builder),
            "response.reasoning_summary_text.delta" => self.on_reasoning(true, Step::Delta, &payload, builder),
            "response.reasoning_text.delta" => self.on_reasoning(false, Step::Delta, &payload, builder),
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let (Some(Slot::Call(block)), Some(delta)) = (self.slot(&payload), payload.delta.as_deref()) {
                    let block = *block;
                    builder.tool_args(block, delta)?;
                }
            }
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
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                let arguments = payload.arguments.as_deref().or(payload.text.as_deref());
                if let (Some(Slot::Call(block)), Some(arguments)) = (self.slot(&payload), arguments) {
                    let block = *block;
                    builder.tool_set_args(block, arguments)?;
                }
            }
            // a reasoning item's `reasoning_text` parts are content parts too
            "response.content_part.added" => match self.slot(&payload) {
                Some(Slot::Reasoning(_)) => self.on_reasoning(false, Step::Begin, &payload, builder),
                _ => self.on_text_delta(kind, &payload, builder),
            },
            "response.content_part.done" => match self.slot(&payload) {
                Some(Slot::Reasoning(_)) => self.on_reasoning(false, Step::Done, &payload, builder),
                _ => self.on_text_done(kind, &payload, builder),
            },
            "response.output_text.done" | "response.refusal.done" => self.on_text_done(kind, &payload, builder),
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
            "response.reasoning_summary_part.added" => self.on_reasoning(true, Step::Begin, &payload, builder),
            "response.reasoning_summary_text.done" | "response.reasoning_summary_part.done" => {
                self.on_reasoning(true, Step::Done, &payload, builder);
            }
            "response.reasoning_text.done" => self.on_reasoning(false, Step::Done, &payload, builder),
            "response.completed" | "response.incomplete" => {
                self.terminal = true;
                if let Some(response) = payload.response {
                    if let Some(output) = response.output {
                        self.settle_output(output, builder)?;
                    }
                    self.check_order(builder);
                    self.finish(&response, builder);
                }
            }
            "response.failed" => {
                self.terminal = true;
                let error = payload.response.and_then(|r| r.error).unwrap_or(serde_json::Value::Null);
                return Err(provider_error(&error, builder));
            }
            "error" => return Err(event_error(&payload, builder)),
            _ => {} // newer event types
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
        let Some(Item { id, slot: Slot::Message(parts), .. }) = found.map(|pos| &mut self.items[pos]) else {
            builder.diagnostic("text_without_item", "output text for an item that was never added");
            return None;
        };
        let part = text_part(parts, content_index);
        if part.block.is_none() && create {
            let block = builder.new_text();
            builder.set_item_id(block, id);
            part.block = Some(block);
        }
        part.block
    }

    fn item_added(&mut self, raw: &RawValue, output_index: Option<u64>, builder: &mut Builder) -> Result<(), Error> {
        let item: ItemFields<'_> = parse(raw.get(), builder)?;
        let id = item.id.as_deref().unwrap_or("").to_owned();
        let slot = match item.kind.as_ref() {
            "reasoning" => Slot::Reasoning(Reasoning::default()),
            "message" => Slot::Message(Vec::new()),
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
        self.items.push(Item { id, output_index, slot, done: false });
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
        let word = if self.items[pos].done { Final::Completed } else { Final::Done };
        self.settle_item(pos, raw, &item, word, builder)
    }

    /// Text for a message's content part (`output_text.delta`, `refusal.delta`; and
    /// `content_part.added`, with none: a part is made on its first text).
    fn on_text_delta(&mut self, kind: &str, payload: &Payload<'_>, builder: &mut Builder) {
        let delta = payload.delta.as_deref().unwrap_or("");
        if kind == "response.refusal.delta" {
            self.refusal = true;
        }
        if let Some(block) = self.text_part(payload, !delta.is_empty(), builder) {
            builder.push_text(block, delta);
        }
    }

    /// The whole text of a message's content part (`output_text.done`, `refusal.done`,
    /// `content_part.done`).
    fn on_text_done(&mut self, kind: &str, payload: &Payload<'_>, builder: &mut Builder) {
        let (text, refusal) = match &payload.part {
            Some(part) => part_text(part.kind.as_deref(), part.text.as_deref(), part.refusal.as_deref()),
            None => (payload.text.as_deref().unwrap_or(""), kind == "response.refusal.done"),
        };
        self.refusal |= refusal;
        match self.find(payload) {
            Some(pos) => self.settle_part(pos, payload.content_index.unwrap_or(0), text, builder),
            None => builder.diagnostic("text_without_item", "output text for an item that was never added"),
        }
    }

    /// A reasoning event: a piece of the item's text (a summary part, or a `reasoning_text`
    /// part) begun (`reasoning_summary_part.added`, `content_part.added`), continued (`.delta`) or
    /// given whole (`.done`, `part.done`).
    fn on_reasoning(&mut self, summary: bool, step: Step, payload: &Payload<'_>, builder: &mut Builder) {
        let Some(pos) = self.find(payload) else { return };
        let Item { id, slot: Slot::Reasoning(reasoning), .. } = &mut self.items[pos] else { return };
        let index = if summary { payload.summary_index } else { payload.content_index };
        let piece = reasoning.piece(summary, index, id, builder);
        match step {
            Step::Begin => {}
            Step::Delta => reasoning.delta(piece, payload.delta.as_deref().unwrap_or(""), id, builder),
            Step::Done => {
                let part = payload.part.as_ref().and_then(|p| p.text.as_deref());
                if let Some(text) = payload.text.as_deref().or(part) {
                    reasoning.settle(piece, text, id, builder);
                }
            }
        }
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

/// The provider error of an `error` event: its `code` (the error's type word) and `message`.
fn event_error(payload: &Payload<'_>, builder: &Builder) -> Error {
    let error_type = payload.code.as_deref().unwrap_or("error");
    let message = payload.message.as_deref().unwrap_or("");
    Error::provider(error_type, message, builder.offset()).with_code(payload.code.as_deref().map(str::to_owned))
}
