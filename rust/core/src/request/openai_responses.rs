//! OpenAI Responses requests: `{"instructions"?: "...", "input": [...], "tools"?: [...]}`.
//!
//! The provider's rules, all of them here:
//! - the system prompt is the top-level `instructions` string (left out when there is none);
//! - a user message is `{"type": "message", "role": "user", "content": [...]}` with
//!   `{"type": "input_text", "text"}` and `{"type": "input_image", "image_url", "detail": "auto"}`
//!   parts (a URL, or a `data:` URL for base64); images elsewhere become their recognized text;
//! - an assistant message is a sequence of items, in the order of its blocks: consecutive text
//!   blocks are one `{"type": "message", "role": "assistant", "content": [{"type":
//!   "output_text", "text"}, ...]}`, a call is `{"type": "function_call", "call_id", "name",
//!   "arguments"}` (the arguments text exactly as received), thinking is a reasoning item
//!   `{"type": "reasoning", "summary": [{"type": "summary_text", "text"}], "encrypted_content"}`
//!   (the summary empty when the thinking has no text; the signature is the encrypted content,
//!   as msgwire's stream decoder stores it). Items carry the ids of the items they came in
//!   (`item_id`), in the forms the SDK's `ResponseInputParam` takes: an output message
//!   `{"type": "message", "id", "role": "assistant", "status": "completed", "content":
//!   [{"type": "output_text", "text", "annotations"}]}` (the text parts of one item together,
//!   its citations the annotations), a reasoning item with its `id`, a call with its `id`; text
//!   without an item id is an easy message `{"role": "assistant", "content": "..."}` (its
//!   citations dropped, reported); thinking without one cannot be a reasoning item: dropped,
//!   or marked text by policy (`thinking`), reported. A call without arguments sends `"{}"`.
//!   Thinking of another provider, or without a signature, follows the policy (dropped by
//!   default); built-in tool items of a Responses message are written back as they were;
//! - each tool result is a `{"type": "function_call_output", "call_id", "output"}` item right
//!   after the call: `output` is its text (text parts joined by a blank line); there is no error
//!   flag (`is_error` is left out, reported); a call without a result gets one with the
//!   `missing_result` text (see the plan);
//! - call ids have at most 64 characters (others are replaced, see the plan);
//! - empty text is sent (an `input_text` or `output_text` with `""`, which the API takes; an
//!   `output` may be `""`), but no message item has an empty `content` array: a user message left
//!   with no part is dropped (reported), and an assistant message's text item is written only
//!   when it has text parts (the message dropped, reported, when it has no item at all). The
//!   conversation may open with any item.
//!
//! Reading: an item msgwire can hold exactly (the shapes above, with or without ids) becomes
//! canonical blocks, a built-in tool item a server tool call; any other item, or an item with
//! fields msgwire has no place for (several summary parts, a message's `phase`), is kept whole
//! as a `provider_part` of the assistant message (of the user message for a content part), and
//! written back unchanged. A call's `status` is not kept. `system` and `developer` messages
//! join the instructions.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::ServerTools;
use super::openai_chat::image_source;
use super::{
    Action, BlockOut, CallIds, EmptyArray, EmptyText, IdFormat, Item, Loss, MessageOut, Options, Part, Plan, Refusals,
    Role, SessionOut, Target, ToolEntry, Turns, lower, offset_in, parse_in, result_parts, settings, to_vec,
    tool_entries, tool_losses,
};
use crate::canonical::{Approval, Block, Citation, ImageSource, TextBlock, ThinkingBlock, ToolCallBlock};
use crate::citation::Annotation;
use crate::error::Error;

pub(super) const TARGET: Target = Target {
    dialect: "openai-responses",
    provider: "openai",
    thinking: true,
    signed: true,
    redacted: false,
    url_images: true,
    images: [true, false, false],
    image_media_types: &[],
    call_ids: CallIds::Required(IdFormat::OpenAiResponses),
    cites: Some(crate::citation::responses_writes),
    server_tools: ServerTools::Parts,
};

const REFUSES: Refusals = Refusals { empty_text: EmptyText::Sent, non_user_opening: false };

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: EmptyArray,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolEntry<'a, ToolDecl<'a>>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutItem<'a> {
    Message {
        role: &'static str,
        content: Vec<OutPart<'a>>,
    },
    /// An assistant output message: its item id, and the status the SDK's type requires.
    #[serde(rename = "message")]
    Output {
        id: &'a str,
        role: &'static str,
        status: &'static str,
        content: Vec<OutPart<'a>>,
    },
    FunctionCall {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Output<'a>,
    },
    Reasoning {
        id: &'a str,
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
    /// An assistant message without an item id, in the easy form the API and the SDK's
    /// `EasyInputMessageParam` take: `{"role": "assistant", "content": "..."}`.
    #[serde(untagged)]
    Easy {
        role: &'static str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: Cow<'a, str>,
        detail: &'a str,
    },
    OutputText {
        text: Cow<'a, str>,
        annotations: Vec<Annotation<'a>>,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(untagged)]
enum Output<'a> {
    Text(Cow<'a, str>),
    Raw(&'a RawValue),
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct ToolDecl<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a RawValue,
    strict: bool,
}

fn user_part(part: Part<'_>) -> Option<OutPart<'_>> {
    Some(match part {
        Part::Text(text) => OutPart::InputText { text },
        Part::Cited { text, .. } => OutPart::InputText { text: Cow::Borrowed(&text.text) },
        Part::Image(ImageSource::Url { url }) => OutPart::InputImage { image_url: Cow::Borrowed(url), detail: "auto" },
        Part::Image(ImageSource::Base64 { media_type, data }) => {
            OutPart::InputImage { image_url: Cow::Owned(format!("data:{media_type};base64,{data}")), detail: "auto" }
        }
        Part::Raw(raw) => OutPart::Raw(raw),
        // never lowered in user messages (paths, thinking, calls, breakpoints; details set apart)
        Part::Image(ImageSource::Path { .. })
        | Part::Thinking { .. }
        | Part::Redacted(_)
        | Part::ToolCall { .. }
        | Part::CacheBreak(_)
        | Part::Detail(_) => {
            return None;
        }
    })
}

/// The parts of a user message: a `Detail` marker sets the detail of the image before it.
fn user_parts<'a>(parts: Vec<Part<'a>>) -> Vec<OutPart<'a>> {
    let mut out: Vec<OutPart<'a>> = Vec::with_capacity(parts.len());
    for p in parts {
        if let Part::Detail(given) = p {
            if let Some(OutPart::InputImage { detail, .. }) = out.last_mut() {
                *detail = given;
            }
        } else if let Some(p) = user_part(p) {
            out.push(p);
        }
    }
    out
}

/// The items of an assistant message, in the order of its blocks: text with an item id is an
/// output message (consecutive parts of one item together), text without one an easy message
/// each (no citations: reported), reasoning needs its item id (without one it follows the
/// policy), a call is a `function_call` (its item id when known; `"{}"` for no arguments).
fn assistant_items<'a>(
    i: usize,
    m: &'a crate::canonical::AssistantMessage,
    plan: &'a Plan<'_>,
    options: &Options<'_>,
    report: &mut Vec<Loss>,
) -> Vec<OutItem<'a>> {
    let native = m.provider.as_deref().is_none_or(|p| p == TARGET.provider);
    let mut items = Vec::new();
    let parts = lower(i, &m.content, Role::Assistant, m.provider.as_deref(), &TARGET, options.policy, report);
    for part in REFUSES.empty_text.strip(parts) {
        match part {
            Part::Text(t) => items.push(OutItem::Easy { role: "assistant", content: t }),
            Part::Cited { block, text } => {
                let Some(id) = text.item_id.as_deref() else {
                    let reason = "an assistant message without an item id is sent as plain text (no annotations)";
                    report.push(Loss::new(i, Some(block), "citation", Action::Drop, reason));
                    items.push(OutItem::Easy { role: "assistant", content: Cow::Borrowed(&text.text) });
                    continue;
                };
                let part = OutPart::OutputText {
                    text: Cow::Borrowed(&text.text),
                    annotations: crate::citation::responses_annotations(&text.citations, &text.text),
                };
                match items.last_mut() {
                    Some(OutItem::Output { id: last, content, .. }) if *last == id => content.push(part),
                    _ => {
                        items.push(OutItem::Output { id, role: "assistant", status: "completed", content: vec![part] });
                    }
                }
            }
            Part::Thinking { block, thinking, signature } => {
                let item_id = match m.content.get(block) {
                    Some(crate::canonical::Block::Thinking(t)) => t.item_id.as_deref(),
                    _ => None,
                };
                let Some(id) = item_id else {
                    items.extend(reasoning_without_id(i, block, thinking, options, report));
                    continue;
                };
                if !native {
                    let reason = "the encrypted reasoning of another provider is never sent";
                    report.push(Loss::new(i, Some(block), "signature", Action::Strip, reason));
                }
                let summary = if thinking.is_empty() {
                    Vec::new()
                } else {
                    vec![Summary { kind: "summary_text", text: thinking }]
                };
                let encrypted_content = Some(signature).filter(|s| native && !s.is_empty());
                items.push(OutItem::Reasoning { id, summary, encrypted_content });
            }
            Part::ToolCall { block, call } => {
                let call_id = plan.call_id(i, block, &call.id);
                let arguments = super::arguments_text(call);
                items.push(OutItem::FunctionCall { id: call.item_id.as_deref(), call_id, name: &call.name, arguments });
            }
            Part::Raw(raw) => items.push(OutItem::Raw(raw)),
            // never lowered in assistant messages (images, redacted thinking)
            Part::Image(_) | Part::Redacted(_) | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
    items
}

/// Thinking a request cannot send as a reasoning item, which needs the id of the item it came
/// in: dropped, or marked text by policy (reported either way).
fn reasoning_without_id<'a>(
    i: usize,
    block: usize,
    thinking: &'a str,
    options: &Options<'_>,
    report: &mut Vec<Loss>,
) -> Option<OutItem<'a>> {
    let reason = "a Responses reasoning item needs the id of the item it came in, and this thinking has none";
    if options.policy.thinking == super::Replay::Drop || thinking.is_empty() {
        report.push(Loss::new(i, Some(block), "thinking", Action::Drop, reason));
        return None;
    }
    report.push(Loss::new(i, Some(block), "thinking", Action::ToText, reason));
    Some(OutItem::Easy { role: "assistant", content: Cow::Owned(super::marked("thinking", &[], thinking)) })
}

/// The conversation array of the request: `input`.
pub(super) const ARRAY: &str = "input";

/// The input items of the items of `plan` from `from` on.
pub(super) fn turns(
    plan: &Plan<'_>,
    _system: Option<&str>,
    options: &Options<'_>,
    from: usize,
    report: &mut Vec<Loss>,
    out: &mut Turns,
) -> Result<(), Error> {
    let policy = options.policy;
    // the last input item, open: the next message's first item may be the same output message
    let mut open: Option<OutItem<'_>> = None;
    for (k, &item) in plan.items.iter().enumerate().skip(from) {
        let at = report.len();
        let items: Vec<OutItem<'_>> = match item {
            Item::User(i, m) => {
                let content = user_parts(REFUSES.empty_text.strip(lower(
                    i,
                    &m.content,
                    Role::User,
                    None,
                    &TARGET,
                    policy,
                    report,
                )));
                if content.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                vec![OutItem::Message { role: "user", content }]
            }
            Item::Assistant(i, m) => {
                let items = assistant_items(i, m, plan, options, report);
                if items.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                items
            }
            Item::ToolResult(i, r, call) => {
                let parts = result_parts(i, r, &TARGET, REFUSES.empty_text, policy, report);
                let output = if let [Part::Raw(raw)] = parts.as_slice() {
                    Output::Raw(raw)
                } else {
                    let mut texts: Vec<Cow<'_, str>> = parts
                        .into_iter()
                        .filter_map(|p| match p {
                            Part::Text(text) => Some(text),
                            Part::Raw(raw) => Some(Cow::Borrowed(raw.get())),
                            _ => None,
                        })
                        .collect();
                    Output::Text(if texts.len() == 1 {
                        texts.pop().unwrap_or_default()
                    } else {
                        Cow::Owned(texts.join("\n\n"))
                    })
                };
                if super::is_error(r) {
                    let reason = "Responses function call outputs have no error flag";
                    report.push(Loss::new(i, None, "is_error", Action::Strip, reason));
                }
                vec![OutItem::FunctionCallOutput { call_id: plan.id(&call), output }]
            }
            Item::Missing(call) => {
                let output = Output::Text(Cow::Borrowed(options.missing_result()));
                vec![OutItem::FunctionCallOutput { call_id: plan.id(&call), output }]
            }
        };
        let mut items = items.into_iter();
        let Some(first) = items.next() else { continue };
        // the parts of one output message item, split over two messages, are one item again
        match (open.as_mut(), first) {
            (Some(OutItem::Output { id, content, .. }), OutItem::Output { id: next, content: more, .. })
                if *id == next =>
            {
                content.extend(more);
            }
            (_, first) => {
                if let Some(last) = open.replace(first) {
                    out.push(&last)?;
                }
                out.begin(k, at);
            }
        }
        for next in items {
            if let Some(last) = open.replace(next) {
                out.push(&last)?;
            }
        }
    }
    if let Some(last) = open {
        out.push(&last)?;
    }
    Ok(())
}

/// The body around the conversation array (written empty): instructions, tools, settings.
pub(super) fn body(system: Option<&str>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let declared = options
        .tools
        .iter()
        .map(|t| ToolDecl {
            kind: "function",
            name: &t.name,
            description: t.description.as_deref(),
            parameters: t.parameters,
            strict: t.strict.unwrap_or(false),
        })
        .collect();
    tool_losses(options, "Responses", true, false, report);
    let tools = tool_entries(declared, options, TARGET.dialect);
    let body = to_vec(&Body { instructions: system, input: EmptyArray, tools })?;
    settings::openai_responses::DIALECT.finish(body, options, report)
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow, default)]
    instructions: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: &'a RawValue,
}

/// What every item is read as first: its type and role.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
}

/// An assistant output message item msgwire holds exactly (its `id` and `status` as the
/// writer writes them: an output message sent back with its item id).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactAssistant<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(borrow)]
    content: Vec<ExactOutputText<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactOutputText<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Cow<'a, str>,
    #[serde(borrow)]
    annotations: Vec<&'a RawValue>,
}

/// An assistant message in the easy form: its content one string.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EasyAssistant<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactText<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Cow<'a, str>,
}

/// A reasoning item msgwire holds exactly (its id, which a request needs, or none as older
/// msgwire wrote it).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactReasoning<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    summary: Vec<ExactText<'a>>,
    #[serde(borrow, default)]
    encrypted_content: Option<Cow<'a, str>>,
}

/// An input image part msgwire holds exactly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactImage<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    image_url: Cow<'a, str>,
    #[serde(borrow)]
    detail: Cow<'a, str>,
}

/// The blocks of a user message's `content`: a string, or parts.
fn user_blocks<'a>(body: &[u8], content: Option<&'a RawValue>) -> Result<Vec<BlockOut<'a>>, Error> {
    let Some(raw) = content else { return Ok(Vec::new()) };
    if raw.get().starts_with('"') {
        return Ok(vec![BlockOut::Text { text: parse_in(body, raw)? }]);
    }
    let parts: Vec<&'a RawValue> = parse_in(body, raw)?;
    let mut out = Vec::with_capacity(parts.len());
    for raw in parts {
        let keep = BlockOut::ProviderPart { dialect: TARGET.dialect, part: raw };
        let block = if let Ok(t) = serde_json::from_str::<ExactText<'a>>(raw.get()) {
            if t.kind == "input_text" { BlockOut::Text { text: t.text } } else { keep }
        } else if let Ok(image) = serde_json::from_str::<ExactImage<'a>>(raw.get()) {
            if image.kind == "input_image" {
                let detail = Some(image.detail).filter(|d| d != "auto");
                BlockOut::Image { source: image_source(image.image_url), detail }
            } else {
                keep
            }
        } else {
            keep
        };
        out.push(block);
    }
    Ok(out)
}

/// The text of a system or developer message: a string, or `input_text` parts joined.
fn system_text<'a>(body: &[u8], content: Option<&'a RawValue>) -> Result<Option<Cow<'a, str>>, Error> {
    let Some(raw) = content else { return Ok(None) };
    if raw.get().starts_with('"') {
        return parse_in(body, raw).map(Some);
    }
    let parts: Vec<ExactText<'a>> = parse_in(body, raw)?;
    Ok(Some(Cow::Owned(parts.into_iter().map(|p| p.text).collect::<Vec<_>>().join("\n\n"))))
}

/// The blocks of an assistant-side item.
fn assistant_blocks<'a>(raw: &'a RawValue, head: Head<'a>) -> Vec<BlockOut<'a>> {
    let keep = || vec![BlockOut::ProviderPart { dialect: TARGET.dialect, part: raw }];
    match head.kind.as_deref() {
        Some("function_call") => match (head.call_id, head.name) {
            (Some(id), Some(name)) => match head.id {
                Some(item_id) => vec![BlockOut::Canonical(Block::ToolCall(ToolCallBlock {
                    id: id.into_owned(),
                    name: name.into_owned(),
                    arguments: head.arguments.map(Cow::into_owned).unwrap_or_default(),
                    approval: Approval::Pending,
                    malformed: false,
                    item_id: Some(item_id.into_owned()),
                    cache_control: None,
                }))],
                None => vec![BlockOut::ToolCall { id, name, arguments: head.arguments.unwrap_or(Cow::Borrowed("")) }],
            },
            _ => keep(),
        },
        Some("reasoning") => match serde_json::from_str::<ExactReasoning<'a>>(raw.get()) {
            Ok(r)
                if r.kind == "reasoning"
                    && r.summary.len() <= 1
                    && r.summary.iter().all(|s| s.kind == "summary_text" && !s.text.is_empty())
                    && (r.id.is_some() || r.encrypted_content.is_some()) =>
            {
                let thinking = r.summary.into_iter().next().map_or(Cow::Borrowed(""), |s| s.text);
                vec![BlockOut::Canonical(Block::Thinking(ThinkingBlock {
                    thinking: thinking.into_owned(),
                    signature: r.encrypted_content.map(Cow::into_owned),
                    redacted: None,
                    item_id: r.id.map(Cow::into_owned),
                }))]
            }
            _ => keep(),
        },
        Some("message") | None => {
            if let Ok(m) = serde_json::from_str::<EasyAssistant<'a>>(raw.get()) {
                if m.role == "assistant" && m.kind.as_deref().is_none_or(|k| k == "message") {
                    return vec![BlockOut::Text { text: m.content }];
                }
                return keep();
            }
            match serde_json::from_str::<ExactAssistant<'a>>(raw.get()) {
                Ok(m)
                    if m.kind == "message"
                        && m.role == "assistant"
                        && m.status == "completed"
                        && !m.content.is_empty()
                        && m.content.iter().all(|t| t.kind == "output_text") =>
                {
                    let mut blocks = Vec::with_capacity(m.content.len());
                    for part in m.content {
                        let citations: Option<Vec<Citation>> = part
                            .annotations
                            .iter()
                            .map(|a| crate::citation::from_responses(a.get(), &part.text))
                            .collect();
                        let Some(citations) = citations else { return keep() };
                        blocks.push(BlockOut::Canonical(Block::Text(TextBlock {
                            text: part.text.into_owned(),
                            citations,
                            item_id: Some(m.id.clone().into_owned()),
                            cache_control: None,
                        })));
                    }
                    blocks
                }
                _ => keep(),
            }
        }
        Some(kind) if crate::server_tool::is_responses(kind) => {
            crate::server_tool::from_responses(raw.get()).map_or_else(keep, |b| vec![BlockOut::Canonical(b)])
        }
        _ => keep(),
    }
}

pub(super) fn read(body: &[u8]) -> Result<SessionOut<'_>, Error> {
    let parsed: InBody<'_> =
        serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
    let mut system: Vec<Cow<'_, str>> = parsed.instructions.into_iter().collect();
    let mut messages: Vec<MessageOut<'_>> = Vec::new();
    let mut names: HashMap<Cow<'_, str>, Cow<'_, str>> = HashMap::new();
    // `input` is a list of items, or the text of one user message
    let raws: Vec<&RawValue> = if parsed.input.get().starts_with('"') {
        messages.push(MessageOut::User {
            content: vec![BlockOut::Text { text: parse_in(body, parsed.input)? }],
            name: None,
        });
        Vec::new()
    } else {
        parse_in(body, parsed.input)?
    };
    for raw in raws {
        let head: Head<'_> = parse_in(body, raw)?;
        let is_message = matches!(head.kind.as_deref(), None | Some("message"));
        match (head.kind.as_deref(), head.role.as_deref()) {
            (_, Some("user")) if is_message => {
                messages.push(MessageOut::User { content: user_blocks(body, head.content)?, name: None });
            }
            (_, Some("system" | "developer")) if is_message => system.extend(system_text(body, head.content)?),
            (_, Some(other)) if is_message && other != "assistant" => {
                let detail = format!("a message with role {other:?} (known: user, assistant, system, developer)");
                return Err(Error::body("request body", detail, None).shifted(offset_in(body, raw)));
            }
            (Some("function_call_output"), _) => {
                let Some(tool_call_id) = head.call_id else {
                    let detail = "a function_call_output without call_id";
                    return Err(Error::body("request body", detail, None).shifted(offset_in(body, raw)));
                };
                let content = match head.output {
                    Some(output) if output.get().starts_with('"') => {
                        let text: Cow<'_, str> = parse_in(body, output)?;
                        if text.is_empty() { Vec::new() } else { vec![BlockOut::Text { text }] }
                    }
                    Some(output) => vec![BlockOut::ProviderPart { dialect: TARGET.dialect, part: output }],
                    None => Vec::new(),
                };
                messages.push(MessageOut::ToolResult {
                    tool_name: names.get(&tool_call_id).cloned(),
                    tool_call_id,
                    content,
                    is_error: false,
                    status: None,
                    cache_control: None,
                });
            }
            _ => {
                let blocks = assistant_blocks(raw, head);
                for b in &blocks {
                    match b {
                        BlockOut::ToolCall { id, name, .. } => {
                            names.insert(id.clone(), name.clone());
                        }
                        BlockOut::Canonical(Block::ToolCall(call)) => {
                            names.insert(Cow::Owned(call.id.clone()), Cow::Owned(call.name.clone()));
                        }
                        _ => {}
                    }
                }
                if let Some(MessageOut::Assistant { content, .. }) = messages.last_mut() {
                    content.extend(blocks);
                } else {
                    messages.push(MessageOut::Assistant { content: blocks, provider: TARGET.provider, name: None });
                }
            }
        }
    }
    let system_prompt = match system.len() {
        0 => None,
        1 => system.pop(),
        _ => Some(Cow::Owned(system.join("\n\n"))),
    };
    let (tools, settings) = settings::openai_responses::DIALECT.read(body)?;
    Ok(SessionOut { system_prompt, messages, tools, settings })
}

#[cfg(test)]
mod tests {
    use super::super::{from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn convert(doc: &str, options: &Options<'_>) -> super::super::Converted {
        to_request_json(doc.as_bytes(), DialectName::OpenAiResponses, options).expect("converts")
    }

    fn read_back(body: &[u8]) -> String {
        String::from_utf8(from_request_json(body, DialectName::OpenAiResponses).expect("reads")).expect("utf-8")
    }

    #[test]
    fn items_with_their_ids_follow_the_blocks_and_read_back() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"openai","content":[
                {"type":"thinking","thinking":"plan","signature":"ENC","item_id":"rs_1"},
                {"type":"text","text":"a","item_id":"msg_1"},{"type":"text","text":"b","item_id":"msg_1",
                 "citations":[{"kind":"url_citation","url":"https://u","title":"U","start_index":0,"end_index":1}]},
                {"type":"tool_call","id":"call_1","name":"f","arguments":"{\"x\": 1}","item_id":"fc_1"}]},
            {"type":"tool_result","id":"r","timestamp":"t","tool_call_id":"call_1","is_error":true,"status":"error",
             "content":[{"type":"text","text":"no"}]}
        ]"#;
        let converted = convert(doc, &Options { system_prompt: Some("sys".into()), ..Options::default() });
        let body = String::from_utf8(converted.body).expect("utf-8");
        assert_eq!(
            body,
            concat!(
                r#"{"instructions":"sys","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},"#,
                r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"ENC"},"#,
                r#"{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"a","annotations":[]},"#,
                r#"{"type":"output_text","text":"b","annotations":[{"type":"url_citation","end_index":1,"start_index":0,"title":"U","url":"https://u"}]}]},"#,
                r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"x\": 1}"},"#,
                r#"{"type":"function_call_output","call_id":"call_1","output":"no"}]}"#
            )
        );
        let kinds: Vec<(usize, &str)> = converted.report.iter().map(|l| (l.message, l.kind)).collect();
        assert_eq!(kinds, [(2, "is_error")]);
        assert_eq!(
            read_back(body.as_bytes()),
            concat!(
                r#"{"system_prompt":"sys","messages":[{"type":"user","content":[{"type":"text","text":"q"}]},"#,
                r#"{"type":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"ENC","item_id":"rs_1"},"#,
                r#"{"type":"text","text":"a","item_id":"msg_1"},{"type":"text","text":"b","citations":[{"kind":"url_citation","#,
                r#""url":"https://u","title":"U","cited_text":"b","start_index":0,"end_index":1}],"item_id":"msg_1"},"#,
                r#"{"type":"tool_call","id":"call_1","name":"f","arguments":"{\"x\": 1}","item_id":"fc_1"}],"provider":"openai"},"#,
                r#"{"type":"tool_result","tool_call_id":"call_1","tool_name":"f","content":[{"type":"text","text":"no"}]}]}"#
            )
        );
    }

    #[test]
    fn without_item_ids_text_is_an_easy_message_and_reasoning_follows_the_policy() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"openai","content":[
                {"type":"thinking","thinking":"plan","signature":"ENC"},{"type":"text","text":"a"},{"type":"text","text":"b"},
                {"type":"tool_call","id":"call_1","name":"f","arguments":""}]},
            {"type":"tool_result","id":"r","timestamp":"t","tool_call_id":"call_1","content":[{"type":"text","text":"ok"}]}
        ]"#;
        let converted = convert(doc, &Options::default());
        let body = String::from_utf8(converted.body).expect("utf-8");
        assert_eq!(
            body,
            concat!(
                r#"{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},"#,
                r#"{"role":"assistant","content":"a"},{"role":"assistant","content":"b"},"#,
                r#"{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"},"#,
                r#"{"type":"function_call_output","call_id":"call_1","output":"ok"}]}"#
            )
        );
        let kinds: Vec<(usize, Option<usize>, &str, Action)> =
            converted.report.iter().map(|l| (l.message, l.block, l.kind, l.action)).collect();
        assert_eq!(kinds, [(1, Some(0), "thinking", Action::Drop)]);
        assert!(converted.report[0].reason.contains("id"), "{:?}", converted.report);
        // the easy messages read back as the text blocks they were
        assert!(read_back(body.as_bytes()).contains(r#"{"type":"text","text":"a"},{"type":"text","text":"b"}"#));
        let policy = super::super::Policy { thinking: super::super::Replay::ToText, ..Default::default() };
        let converted = convert(doc, &Options { policy, ..Options::default() });
        let body = String::from_utf8(converted.body).expect("utf-8");
        assert!(body.contains(r#"{"role":"assistant","content":"<thinking>\nplan\n</thinking>"}"#), "{body}");
        assert_eq!(converted.report[0].action, Action::ToText);
    }
}
