//! Anthropic Messages requests: `{"system"?: "...", "messages": [...], "tools"?: [...]}`.
//!
//! The provider's rules, all of them here:
//! - the system prompt is the top-level `system` string (left out when there is none, or it is
//!   blank);
//! - roles strictly alternate: consecutive user-side messages (user messages and tool results)
//!   are merged into one `user` turn, consecutive assistant messages into one `assistant` turn;
//! - tool results are `tool_result` blocks (`tool_use_id`, `content`, `is_error` when the tool
//!   failed) first in the user turn right after the assistant turn that made the calls, in
//!   order; a call without a result gets one with the `missing_result` text and `is_error`
//!   (see the plan);
//! - call ids match `^[a-zA-Z0-9_-]+$` and are unique (others are replaced, see the plan);
//! - a tool call is a `tool_use` block whose `input` is the arguments' JSON object, embedded as
//!   it was received; empty arguments are `{}`; arguments that are not a JSON object (malformed,
//!   or an array) are sent as `{"_raw": "<the text>"}` and reported, or refused by policy;
//! - thinking is kept with its signature, unmodified, first in its assistant turn (before text and
//!   `tool_use`); redacted thinking is a `redacted_thinking` block. Thinking of another provider,
//!   or without a signature, follows the policy (dropped by default);
//! - images are `image` blocks with a base64 (jpeg, png, gif, webp) or URL source, in user turns
//!   and tool results; anything else becomes the image's recognized text, or is dropped;
//! - content that is exactly one text block is written as a string, otherwise as blocks (the
//!   normal form `from_request` reads back to the same canonical blocks);
//! - text is never empty or whitespace only ("text content blocks must be non-empty", "... must
//!   contain non-whitespace text"): such a text block (or a blank system prompt) is left out,
//!   unreported (it carries nothing the model reads), in user and assistant turns and in tool
//!   results alike; a tool result left without content has no `content` (it is optional), the
//!   placeholder of a blank `missing_result` too;
//! - every message has content ("all messages must have non-empty content except for the
//!   optional final assistant message"): a message left with nothing to send is dropped
//!   (reported), and the turns around it merge, so roles still alternate. An assistant message
//!   that makes calls always has them to send;
//! - the conversation opens with a user turn when the input opens with a user message ("first
//!   message must use the \"user\" role", still the rule on Bedrock): if that message (and any
//!   user message right after it) is left with nothing to send, the first is sent as
//!   `EMPTY_MESSAGE` (`(empty message)`), reported as a placeholder;
//! - a request that ends with an assistant turn (a prefill) must not end with whitespace ("final
//!   assistant content cannot end with trailing whitespace"): the trailing whitespace of its
//!   last text is removed, reported.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::ServerTools;
use super::{
    Action, Arguments, BlockOut, CallIds, EMPTY_MESSAGE, EmptyArray, EmptyText, IdFormat, Item, Loss, MessageOut,
    Options, Part, Plan, Refusals, Role, SessionOut, SourceOut, Target, ToolEntry, Turns, joined_text, keep_opening,
    lower, object_arguments, parse_in, result_parts, settings, to_vec, tool_entries, tool_losses,
};
use crate::canonical::{Block, CacheControl, ImageSource, TextBlock};
use crate::error::Error;

pub(crate) const TARGET: Target = Target {
    dialect: "anthropic",
    provider: "anthropic",
    thinking: true,
    signed: true,
    redacted: true,
    url_images: true,
    images: [true, false, true],
    image_media_types: &["image/jpeg", "image/png", "image/gif", "image/webp"],
    call_ids: CallIds::Required(IdFormat::Anthropic),
    cites: Some(crate::citation::anthropic_writes),
    server_tools: ServerTools::Parts,
};

const REFUSES: Refusals = Refusals { empty_text: EmptyText::BlankRefused, non_user_opening: true };

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    messages: EmptyArray,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolEntry<'a, ToolDecl<'a>>>,
}

/// The system prompt: text, or one text block when it carries a cache breakpoint.
#[derive(Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Blocks([OutBlock<'a>; 1]),
}

#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<OutBlock<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutBlock<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        citations: Vec<&'a RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Cache<'a>>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Cache<'a>>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Arguments<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Cache<'a>>,
    },
    ToolResult {
        tool_use_id: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Content<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Cache<'a>>,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Source<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

#[derive(Serialize)]
struct ToolDecl<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Cache<'a>>,
}

fn content(mut blocks: Vec<OutBlock<'_>>) -> Content<'_> {
    if let [OutBlock::Text { citations, cache_control: None, .. }] = blocks.as_slice() {
        if citations.is_empty() {
            if let Some(OutBlock::Text { text, .. }) = blocks.pop() {
                return Content::Text(text);
            }
        }
    }
    Content::Blocks(blocks)
}

pub(crate) fn block(part: Part<'_>) -> Option<OutBlock<'_>> {
    Some(match part {
        Part::Text(text) => OutBlock::Text { text, citations: Vec::new(), cache_control: None },
        Part::Cited { text, .. } => OutBlock::Text {
            text: Cow::Borrowed(&text.text),
            citations: crate::citation::anthropic_citations(&text.citations),
            cache_control: None,
        },
        Part::Image(ImageSource::Url { url }) => OutBlock::Image { source: Source::Url { url }, cache_control: None },
        Part::Image(ImageSource::Base64 { media_type, data }) => {
            OutBlock::Image { source: Source::Base64 { media_type, data }, cache_control: None }
        }
        Part::Thinking { thinking, signature, .. } => OutBlock::Thinking { thinking, signature },
        Part::Redacted(data) => OutBlock::RedactedThinking { data },
        Part::Raw(raw) => OutBlock::Raw(raw),
        // never lowered (paths, details), or written apart (calls need the policy and the
        // report, breakpoints go on the block before them)
        Part::Image(ImageSource::Path { .. }) | Part::ToolCall { .. } | Part::CacheBreak(_) | Part::Detail(_) => {
            return None;
        }
    })
}

/// A cache breakpoint as Anthropic takes it: `{"type": "ephemeral", "ttl"?}` (canonical JSON
/// leaves the type out).
#[derive(Clone, Copy)]
pub(crate) struct Cache<'a>(&'a CacheControl);

impl Serialize for Cache<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", &self.0.kind)?;
        if let Some(ttl) = &self.0.ttl {
            map.serialize_entry("ttl", ttl)?;
        }
        map.end()
    }
}

/// Put a cache breakpoint on the last block (a block that cannot carry one is left as it is).
pub(crate) fn cache_last<'a>(blocks: &mut [OutBlock<'a>], cache: &'a CacheControl) {
    if let Some(
        OutBlock::Text { cache_control, .. }
        | OutBlock::Image { cache_control, .. }
        | OutBlock::ToolUse { cache_control, .. }
        | OutBlock::ToolResult { cache_control, .. },
    ) = blocks.last_mut()
    {
        *cache_control = Some(Cache(cache));
    }
}

/// The blocks of parts, cache breakpoints put on the blocks before them.
fn blocks(parts: Vec<Part<'_>>) -> Vec<OutBlock<'_>> {
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        if let Part::CacheBreak(cache) = p {
            cache_last(&mut out, cache);
        } else if let Some(b) = block(p) {
            out.push(b);
        }
    }
    out
}

/// The conversation array of the request: `messages`.
pub(super) const ARRAY: &str = "messages";

/// A turn being written: its role and blocks (closed when the next item takes the other role).
type Open<'a> = (&'static str, Vec<OutBlock<'a>>);

/// The turns of the items of `plan` from `from` on.
pub(super) fn turns(
    plan: &Plan<'_>,
    _system: Option<&str>,
    options: &Options<'_>,
    from: usize,
    report: &mut Vec<Loss>,
    out: &mut Turns,
) -> Result<(), Error> {
    let policy = options.policy;
    // at most one: the last turn, open
    let mut open: Vec<Open<'_>> = Vec::with_capacity(1);
    let mut first_role = None;
    for (k, &item) in plan.items.iter().enumerate().skip(from) {
        let at = report.len();
        let (i, role, blocks) = match item {
            Item::User(i, m) => {
                let parts = REFUSES.empty_text.strip(lower(i, &m.content, Role::User, None, &TARGET, policy, report));
                (i, "user", blocks(parts))
            }
            Item::Assistant(i, m) => {
                let parts = lower(i, &m.content, Role::Assistant, m.provider.as_deref(), &TARGET, policy, report);
                let parts = REFUSES.empty_text.strip(parts);
                let mut out = Vec::with_capacity(parts.len());
                for p in parts {
                    if let Part::ToolCall { block: b, call } = p {
                        let input = object_arguments(i, b, call, policy, report)?;
                        let id = plan.call_id(i, b, &call.id);
                        out.push(OutBlock::ToolUse { id, name: &call.name, input, cache_control: None });
                    } else if let Part::CacheBreak(cache) = p {
                        cache_last(&mut out, cache);
                    } else if let Some(b) = block(p) {
                        out.push(b);
                    }
                }
                (i, "assistant", out)
            }
            Item::ToolResult(i, r, call) => {
                let parts = blocks(result_parts(i, r, &TARGET, REFUSES.empty_text, policy, report));
                let content = if parts.is_empty() { None } else { Some(content(parts)) };
                let tool_use_id = plan.id(&call);
                let is_error = super::is_error(r);
                let cache_control = r.cache_control.as_ref().map(Cache);
                (i, "user", vec![OutBlock::ToolResult { tool_use_id, content, is_error, cache_control }])
            }
            Item::Missing(call) => {
                let text = Some(options.missing_result()).filter(|t| !REFUSES.empty_text.refuses(t));
                let content = text.map(|t| Content::Text(Cow::Borrowed(t)));
                (
                    call.message,
                    "user",
                    vec![OutBlock::ToolResult {
                        tool_use_id: plan.id(&call),
                        content,
                        is_error: true,
                        cache_control: None,
                    }],
                )
            }
        };
        if blocks.is_empty() {
            report.push(Loss::nothing_left(i));
        } else if let Some((_, last)) = open.last_mut().filter(|(r, _)| *r == role) {
            last.extend(blocks);
        } else {
            if let Some(turn) = open.pop() {
                out.push(&closed(turn))?;
            }
            first_role.get_or_insert(role);
            out.begin(k, at);
            open.push((role, blocks));
        }
    }
    end_without_trailing_whitespace(&mut open, plan, report);
    if let Some(turn) = open.pop() {
        out.push(&closed(turn))?;
    }
    // resumed, the opening turns are kept ones: the rule below was applied when they were written
    if from == 0 && keep_opening(plan, REFUSES, first_role == Some("user"), report).is_some() {
        let text = OutBlock::Text { text: Cow::Borrowed(EMPTY_MESSAGE), citations: Vec::new(), cache_control: None };
        out.prepend(&Turn { role: "user", content: content(vec![text]) })?;
    }
    Ok(())
}

/// A turn as it is sent: thinking first in an assistant turn, the rest in order (a stable sort).
fn closed((role, mut blocks): Open<'_>) -> Turn<'_> {
    if role == "assistant" {
        blocks.sort_by_key(|b| !matches!(b, OutBlock::Thinking { .. } | OutBlock::RedactedThinking { .. }));
    }
    Turn { role, content: content(blocks) }
}

/// The body around the conversation array (written empty): system prompt, tools, settings.
pub(super) fn body(system: Option<&str>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let declared = options
        .tools
        .iter()
        .map(|t| ToolDecl {
            name: &t.name,
            description: t.description.as_deref(),
            input_schema: t.parameters,
            cache_control: t.cache_control.as_ref().map(Cache),
        })
        .collect();
    tool_losses(options, "Anthropic", false, true, report);
    let tools = tool_entries(declared, options, TARGET.dialect);
    let system =
        system.filter(|s| !REFUSES.empty_text.refuses(s)).map(|text| match &options.settings.system_cache_control {
            Some(cache) => {
                let cache_control = Some(Cache(cache));
                System::Blocks([OutBlock::Text { text: Cow::Borrowed(text), citations: Vec::new(), cache_control }])
            }
            None => System::Text(text),
        });
    let body = to_vec(&Body { system, messages: EmptyArray, tools })?;
    settings::anthropic::DIALECT.finish(body, options, report)
}

/// Trim the trailing whitespace of the last text of a final assistant turn (Anthropic refuses
/// it there, and only there: a prefill is continued from its last character).
fn end_without_trailing_whitespace(
    turns: &mut [(&'static str, Vec<OutBlock<'_>>)],
    plan: &Plan<'_>,
    report: &mut Vec<Loss>,
) {
    let Some(("assistant", blocks)) = turns.last_mut().map(|(role, blocks)| (*role, blocks)) else { return };
    let Some(OutBlock::Text { text, .. }) = blocks.iter_mut().rev().find(|b| matches!(b, OutBlock::Text { .. })) else {
        return;
    };
    let trimmed = text.trim_end_matches(super::is_blank).len();
    if trimmed == text.len() {
        return;
    }
    match text {
        Cow::Borrowed(t) => *t = &t[..trimmed],
        Cow::Owned(t) => t.truncate(trimmed),
    }
    let message = plan.items.iter().rev().find_map(|item| match item {
        Item::Assistant(i, _) => Some(*i),
        _ => None,
    });
    report.push(Loss::new(
        message.unwrap_or_default(),
        None,
        "text",
        Action::Strip,
        "trailing whitespace of a final assistant turn removed (Anthropic refuses it)",
    ));
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow, default)]
    system: Option<&'a RawValue>,
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct InTurn<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: &'a RawValue,
}

#[derive(Deserialize)]
struct InBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(borrow, default)]
    source: Option<InSource<'a>>,
    /// A text's citations (a list); a document's citation settings (an object).
    #[serde(borrow, default)]
    citations: Option<&'a RawValue>,
    #[serde(default)]
    cache_control: Option<CacheControl>,
}

#[derive(Deserialize)]
struct InSource<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    media_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    url: Option<Cow<'a, str>>,
}

/// The blocks of a `content`: a string (one text block) or an array of raw blocks.
fn raw_blocks<'a>(body: &[u8], content: &'a RawValue) -> Result<Result<Cow<'a, str>, Vec<&'a RawValue>>, Error> {
    if content.get().starts_with('"') { parse_in(body, content).map(Ok) } else { parse_in(body, content).map(Err) }
}

/// A block msgwire has a canonical block for, else the whole part kept for this dialect.
fn block_out<'a>(raw: &'a RawValue, mut b: InBlock<'a>) -> BlockOut<'a> {
    let cache = b.cache_control.take();
    let out = plain_block_out(raw, b);
    let Some(cache) = cache else { return out };
    if let BlockOut::Canonical(Block::Text(mut text)) = out {
        text.cache_control = Some(cache);
        return BlockOut::Canonical(Block::Text(text));
    }
    if !matches!(out, BlockOut::Text { .. } | BlockOut::Image { .. } | BlockOut::ToolCall { .. }) {
        return out;
    }
    match (serde_json::to_value(&out), serde_json::to_value(cache)) {
        (Ok(serde_json::Value::Object(mut block)), Ok(cache)) => {
            block.insert("cache_control".into(), cache);
            BlockOut::Cached(serde_json::Value::Object(block))
        }
        _ => out,
    }
}

fn plain_block_out<'a>(raw: &'a RawValue, b: InBlock<'a>) -> BlockOut<'a> {
    let keep = || BlockOut::ProviderPart { dialect: TARGET.dialect, part: raw };
    match b.kind.as_ref() {
        "text" => match (b.text, b.citations) {
            (Some(text), None) => BlockOut::Text { text },
            (Some(text), Some(raws)) => {
                // a list of citations this version reads, each written back as it came; else whole
                let raws: Vec<&RawValue> = serde_json::from_str(raws.get()).unwrap_or_default();
                let citations: Option<Vec<_>> = raws.iter().map(|c| crate::citation::from_anthropic(c.get())).collect();
                match citations {
                    Some(citations)
                        if !citations.is_empty() && citations.iter().all(crate::citation::anthropic_writes) =>
                    {
                        BlockOut::Canonical(Block::Text(TextBlock {
                            text: text.into_owned(),
                            citations,
                            item_id: None,
                            cache_control: None,
                        }))
                    }
                    _ => keep(),
                }
            }
            (None, _) => keep(),
        },
        kind if crate::server_tool::is_anthropic(kind) => {
            crate::server_tool::from_anthropic(raw.get(), None).map_or_else(keep, BlockOut::Canonical)
        }
        "image" => match b.source {
            Some(InSource { kind, media_type: Some(media_type), data: Some(data), .. }) if kind == "base64" => {
                BlockOut::Image { source: SourceOut::Base64 { media_type, data }, detail: None }
            }
            Some(InSource { kind, url: Some(url), .. }) if kind == "url" => {
                BlockOut::Image { source: SourceOut::Url { url }, detail: None }
            }
            _ => keep(),
        },
        "thinking" => match (b.thinking, b.signature) {
            (Some(thinking), Some(signature)) => {
                BlockOut::Thinking { thinking, signature: Some(signature), redacted: None }
            }
            _ => keep(),
        },
        "redacted_thinking" => b.data.map_or_else(keep, |data| BlockOut::Thinking {
            thinking: Cow::Borrowed(""),
            signature: None,
            redacted: Some(data),
        }),
        "tool_use" => match (b.id, b.name, b.input) {
            (Some(id), Some(name), Some(input)) => {
                BlockOut::ToolCall { id, name, arguments: Cow::Borrowed(input.get()) }
            }
            _ => keep(),
        },
        _ => keep(),
    }
}

fn blocks_of<'a>(body: &[u8], content: &'a RawValue) -> Result<Vec<BlockOut<'a>>, Error> {
    Ok(match raw_blocks(body, content)? {
        Ok(text) => vec![BlockOut::Text { text }],
        Err(raws) => {
            let mut out = Vec::with_capacity(raws.len());
            for raw in raws {
                out.push(block_out(raw, parse_in(body, raw)?));
            }
            out
        }
    })
}

pub(super) fn read(body: &[u8]) -> Result<SessionOut<'_>, Error> {
    let parsed: InBody<'_> =
        serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
    let system_prompt = parsed.system.map(|raw| joined_text(body, raw)).transpose()?;
    let system_cache = parsed.system.and_then(|raw| system_cache(body, raw));
    let mut messages = Vec::with_capacity(parsed.messages.len());
    let mut names: HashMap<Cow<'_, str>, Cow<'_, str>> = HashMap::new();
    for raw in parsed.messages {
        let turn: InTurn<'_> = parse_in(body, raw)?;
        match turn.role.as_ref() {
            "assistant" => {
                let content = blocks_of(body, turn.content)?;
                for b in &content {
                    if let BlockOut::ToolCall { id, name, .. } = b {
                        names.insert(id.clone(), name.clone());
                    }
                }
                messages.push(MessageOut::Assistant { content, provider: TARGET.provider, name: None });
            }
            "user" => {
                // a user turn is a sequence of tool results and user messages, split at each result
                let raws = match raw_blocks(body, turn.content)? {
                    Ok(text) => {
                        messages.push(MessageOut::User { content: vec![BlockOut::Text { text }], name: None });
                        continue;
                    }
                    Err(raws) => raws,
                };
                let mut pending = Vec::new();
                for raw in raws {
                    let b: InBlock<'_> = parse_in(body, raw)?;
                    match (b.kind.as_ref(), b.tool_use_id) {
                        ("tool_result", Some(tool_call_id)) => {
                            if !pending.is_empty() {
                                messages.push(MessageOut::User { content: std::mem::take(&mut pending), name: None });
                            }
                            let content = b.content.map(|c| blocks_of(body, c)).transpose()?.unwrap_or_default();
                            let is_error = b.is_error.unwrap_or(false);
                            messages.push(MessageOut::ToolResult {
                                tool_name: names.get(&tool_call_id).cloned(),
                                tool_call_id,
                                content,
                                is_error,
                                status: is_error.then_some("error"),
                                cache_control: b.cache_control,
                            });
                        }
                        (_, tool_use_id) => pending.push(block_out(raw, InBlock { tool_use_id, ..b })),
                    }
                }
                if !pending.is_empty() {
                    messages.push(MessageOut::User { content: pending, name: None });
                }
            }
            other => {
                let at = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize).min(body.len());
                let detail = format!("a message with role {other:?} (known: user, assistant)");
                return Err(Error::body("request body", detail, Some(at)));
            }
        }
    }
    let (tools, mut settings) = settings::anthropic::DIALECT.read(body)?;
    settings.system_cache_control = system_cache;
    Ok(SessionOut { system_prompt, messages, tools, settings })
}

/// The cache breakpoint of a system prompt given as blocks (on its last block).
fn system_cache(body: &[u8], raw: &RawValue) -> Option<CacheControl> {
    #[derive(Deserialize)]
    struct Cached {
        #[serde(default)]
        cache_control: Option<CacheControl>,
    }
    let blocks: Vec<Cached> = parse_in(body, raw).ok()?;
    blocks.into_iter().last()?.cache_control
}

#[cfg(test)]
mod tests {
    use super::super::{Converted, Malformed, Policy, Replay, from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn convert(messages: &str, options: &Options<'_>) -> Result<Converted, Error> {
        to_request_json(messages.as_bytes(), DialectName::Anthropic, options)
    }

    fn body(converted: &Converted) -> String {
        String::from_utf8(converted.body.clone()).expect("utf-8")
    }

    #[test]
    fn results_merge_into_one_user_turn_and_roles_alternate() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"a"}]},
            {"type":"user","id":"u1","timestamp":"t","content":[{"type":"text","text":"b"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"anthropic","content":[
                {"type":"text","text":"let me look"},
                {"type":"thinking","thinking":"hm","signature":"SIG"},
                {"type":"tool_call","id":"t1","name":"f","arguments":"{\"q\": [1, 2]}"},
                {"type":"tool_call","id":"t2","name":"g"}]},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"t1","content":[{"type":"text","text":"one"}]},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"t2","is_error":true,"status":"error"},
            {"type":"user","id":"u2","timestamp":"t","content":[{"type":"text","text":"thanks"}]}
        ]"#;
        let converted = convert(doc, &Options { system_prompt: Some("sys".into()), ..Options::default() }).expect("ok");
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"system":"sys","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"#,
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"SIG"},"#,
                r#"{"type":"text","text":"let me look"},{"type":"tool_use","id":"t1","name":"f","input":{"q": [1, 2]}},"#,
                r#"{"type":"tool_use","id":"t2","name":"g","input":{}}]},"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"},"#,
                r#"{"type":"tool_result","tool_use_id":"t2","is_error":true},{"type":"text","text":"thanks"}]}]}"#
            )
        );
        assert!(converted.report.is_empty(), "{:?}", converted.report);
    }

    #[test]
    fn malformed_arguments_are_wrapped_or_refused() {
        let doc = r#"[{"type":"assistant","id":"a","timestamp":"t","content":[
            {"type":"tool_call","id":"t1","name":"f","arguments":"{\"q\": ","malformed":true},
            {"type":"tool_call","id":"t2","name":"f","arguments":"[1]"}]}]"#;
        let converted = convert(doc, &Options::default()).expect("wraps");
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"_raw":"{\"q\": "}},"#,
                r#"{"type":"tool_use","id":"t2","name":"f","input":{"_raw":"[1]"}}]},"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"No result: this tool call was not completed.","is_error":true},"#,
                r#"{"type":"tool_result","tool_use_id":"t2","content":"No result: this tool call was not completed.","is_error":true}]}]}"#
            )
        );
        let kinds: Vec<(Option<usize>, &str, Action)> =
            converted.report.iter().map(|l| (l.block, l.kind, l.action)).collect();
        assert_eq!(
            kinds,
            [
                (Some(0), "tool_result", Action::Placeholder),
                (Some(0), "arguments", Action::Fallback),
                (Some(1), "tool_result", Action::Placeholder),
                (Some(1), "arguments", Action::Fallback)
            ]
        );
        let policy = Policy { malformed_arguments: Malformed::Error, ..Policy::default() };
        let err = convert(doc, &Options { policy, ..Options::default() }).map(|_| ()).expect_err("refuses");
        assert!(err.to_string().contains("\"t1\""), "{err}");
    }

    #[test]
    fn foreign_and_unsigned_thinking_follow_the_policy() {
        let doc = r#"[{"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"gemini","content":[
                {"type":"thinking","thinking":"plan","signature":"gemini-sig"},{"type":"thinking","redacted":"opaque"},
                {"type":"text","text":"answer"}]},
            {"type":"assistant","id":"b","timestamp":"t","provider":"anthropic","content":[{"type":"thinking","thinking":"cut"}]}]"#;
        let default = convert(doc, &Options::default()).expect("ok");
        assert_eq!(
            body(&default),
            r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"answer"}]}"#
        );
        let kinds: Vec<(usize, &str, Action)> = default.report.iter().map(|l| (l.message, l.kind, l.action)).collect();
        assert_eq!(
            kinds,
            [
                (1, "thinking", Action::Drop),
                (1, "redacted_thinking", Action::Drop),
                (2, "thinking", Action::Drop),
                (2, "message", Action::Drop)
            ]
        );
        let policy = Policy { thinking: Replay::ToText, redacted_thinking: Replay::Keep, ..Policy::default() };
        let kept = convert(doc, &Options { policy, ..Options::default() }).expect("ok");
        assert_eq!(
            body(&kept),
            concat!(
                r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"redacted_thinking","data":"opaque"},"#,
                r#"{"type":"text","text":"<thinking>\nplan\n</thinking>"},{"type":"text","text":"answer"},"#,
                r#"{"type":"text","text":"<thinking>\ncut\n</thinking>"}]}]}"#
            )
        );
    }

    #[test]
    fn reads_back_turns_split_at_tool_results() {
        let body = br#"{"model":"claude","max_tokens":10,"system":[{"type":"text","text":"s1"},{"type":"text","text":"s2"}],
            "messages":[{"role":"user","content":"hi"},
            {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"S"},{"type":"redacted_thinking","data":"R"},
              {"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x","is_error":true},
              {"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]}"#;
        let session =
            String::from_utf8(from_request_json(body, DialectName::Anthropic).expect("reads")).expect("utf-8");
        assert_eq!(
            session,
            concat!(
                r#"{"system_prompt":"s1\n\ns2","messages":[{"type":"user","content":[{"type":"text","text":"hi"}]},"#,
                r#"{"type":"assistant","content":[{"type":"thinking","thinking":"t","signature":"S"},{"type":"thinking","redacted":"R"},"#,
                r#"{"type":"tool_call","id":"toolu_1","name":"f","arguments":"{\"a\":1}"}],"provider":"anthropic"},"#,
                r#"{"type":"tool_result","tool_call_id":"toolu_1","tool_name":"f","content":[{"type":"text","text":"x"}],"is_error":true,"status":"error"},"#,
                r#"{"type":"user","content":[{"type":"provider_part","dialect":"anthropic","part":{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}}]}],"#,
                r#""model":"claude","max_tokens":10}"#
            )
        );
    }
}
