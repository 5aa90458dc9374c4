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
//!   as msgwire's stream decoder stores it). msgwire keeps no item ids: none are written. The
//!   text ending one assistant message and the text starting the next are one message item.
//!   Thinking of another provider, or without a signature, follows the policy (dropped by
//!   default; kept, it is a reasoning item without `encrypted_content`, the signature reported);
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
//! Reading: an item msgwire can hold exactly (the shapes above) becomes canonical blocks;
//! any other item, or an item with fields msgwire has no place for (a reasoning item's `id`,
//! several summary parts, an assistant message's `id`, `status` or `annotations`), is kept whole
//! as a `provider_part` of the assistant message (of the user message for a content part), and
//! written back unchanged. A call's `id` and `status` are not kept (the call is needed
//! canonical, to match its output). `system` and `developer` messages join the instructions.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai_chat::image_source;
use super::{
    Action, BlockOut, CallIds, EmptyText, IdFormat, Item, Loss, MessageOut, Options, Part, Plan, Refusals, Role,
    SessionOut, Target, lower, offset_in, parse_in, plan, result_parts, to_vec,
};
use crate::canonical::{ImageSource, Message};
use crate::error::Error;

const TARGET: Target = Target {
    dialect: "openai-responses",
    provider: "openai",
    thinking: true,
    signed: true,
    redacted: false,
    url_images: true,
    images: [true, false, false],
    image_media_types: &[],
    call_ids: CallIds::Required(IdFormat::OpenAiResponses),
};

const REFUSES: Refusals = Refusals { empty_text: EmptyText::Sent, non_user_opening: false };

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<OutItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDecl<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutItem<'a> {
    Message {
        role: &'static str,
        content: Vec<OutPart<'a>>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Output<'a>,
    },
    Reasoning {
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutPart<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: Cow<'a, str>,
        detail: &'static str,
    },
    OutputText {
        text: Cow<'a, str>,
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
        Part::Image(ImageSource::Url { url }) => OutPart::InputImage { image_url: Cow::Borrowed(url), detail: "auto" },
        Part::Image(ImageSource::Base64 { media_type, data }) => {
            OutPart::InputImage { image_url: Cow::Owned(format!("data:{media_type};base64,{data}")), detail: "auto" }
        }
        Part::Raw(raw) => OutPart::Raw(raw),
        // never lowered in user messages (paths, thinking, calls)
        Part::Image(ImageSource::Path { .. }) | Part::Thinking { .. } | Part::Redacted(_) | Part::ToolCall { .. } => {
            return None;
        }
    })
}

/// The items of an assistant message, in the order of its blocks.
fn assistant_items<'a>(
    i: usize,
    m: &'a crate::canonical::AssistantMessage,
    plan: &'a Plan<'_>,
    options: &Options<'_>,
    report: &mut Vec<Loss>,
) -> Vec<OutItem<'a>> {
    let native = m.provider.as_deref().is_none_or(|p| p == TARGET.provider);
    let mut items = Vec::new();
    let mut text: Vec<OutPart<'a>> = Vec::new();
    let flush = |text: &mut Vec<OutPart<'a>>, items: &mut Vec<OutItem<'a>>| {
        if !text.is_empty() {
            items.push(OutItem::Message { role: "assistant", content: std::mem::take(text) });
        }
    };
    let parts = lower(i, &m.content, Role::Assistant, m.provider.as_deref(), &TARGET, options.policy, report);
    for part in REFUSES.empty_text.strip(parts) {
        match part {
            Part::Text(t) => text.push(OutPart::OutputText { text: t }),
            Part::Thinking { block, thinking, signature } => {
                flush(&mut text, &mut items);
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
                items.push(OutItem::Reasoning { summary, encrypted_content });
            }
            Part::ToolCall { block, call } => {
                flush(&mut text, &mut items);
                let call_id = plan.call_id(i, block, &call.id);
                items.push(OutItem::FunctionCall { call_id, name: &call.name, arguments: &call.arguments });
            }
            Part::Raw(raw) => {
                flush(&mut text, &mut items);
                items.push(OutItem::Raw(raw));
            }
            // never lowered in assistant messages (images, redacted thinking)
            Part::Image(_) | Part::Redacted(_) => {}
        }
    }
    flush(&mut text, &mut items);
    items
}

pub(super) fn write(
    messages: &[Message],
    system: Option<&str>,
    options: &Options<'_>,
    report: &mut Vec<Loss>,
) -> Result<Vec<u8>, Error> {
    let policy = options.policy;
    let plan = plan(messages, &TARGET, options, report);
    let mut input = Vec::with_capacity(plan.items.len());
    for &item in &plan.items {
        match item {
            Item::User(i, m) => {
                let content: Vec<_> = REFUSES
                    .empty_text
                    .strip(lower(i, &m.content, Role::User, None, &TARGET, policy, report))
                    .into_iter()
                    .filter_map(user_part)
                    .collect();
                if content.is_empty() {
                    report.push(Loss::nothing_left(i));
                } else {
                    input.push(OutItem::Message { role: "user", content });
                }
            }
            Item::Assistant(i, m) => {
                let mut items = assistant_items(i, m, &plan, options, report).into_iter();
                let Some(first) = items.next() else {
                    report.push(Loss::nothing_left(i));
                    continue;
                };
                // consecutive assistant text is one message item (as it reads back)
                match (input.last_mut(), first) {
                    (
                        Some(OutItem::Message { role: "assistant", content }),
                        OutItem::Message { role: "assistant", content: more },
                    ) => content.extend(more),
                    (_, first) => input.push(first),
                }
                input.extend(items);
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
                input.push(OutItem::FunctionCallOutput { call_id: plan.id(&call), output });
            }
            Item::Missing(call) => {
                let output = Output::Text(Cow::Borrowed(options.missing_result()));
                input.push(OutItem::FunctionCallOutput { call_id: plan.id(&call), output });
            }
        }
    }
    let tools = options
        .tools
        .iter()
        .map(|t| ToolDecl {
            kind: "function",
            name: &t.name,
            description: t.description.as_deref(),
            parameters: t.parameters,
            strict: false,
        })
        .collect();
    to_vec(&Body { instructions: system, input, tools })
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

/// An assistant message item msgwire holds exactly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactAssistant<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: Vec<ExactText<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactText<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Cow<'a, str>,
}

/// A reasoning item msgwire holds exactly.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExactReasoning<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    summary: Vec<ExactText<'a>>,
    #[serde(borrow)]
    encrypted_content: Cow<'a, str>,
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
            if image.kind == "input_image" && image.detail == "auto" {
                BlockOut::Image { source: image_source(image.image_url) }
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
            (Some(id), Some(name)) => {
                vec![BlockOut::ToolCall { id, name, arguments: head.arguments.unwrap_or(Cow::Borrowed("")) }]
            }
            _ => keep(),
        },
        Some("reasoning") => match serde_json::from_str::<ExactReasoning<'a>>(raw.get()) {
            Ok(r)
                if r.kind == "reasoning"
                    && r.summary.len() <= 1
                    && r.summary.iter().all(|s| s.kind == "summary_text" && !s.text.is_empty()) =>
            {
                let thinking = r.summary.into_iter().next().map_or(Cow::Borrowed(""), |s| s.text);
                vec![BlockOut::Thinking { thinking, signature: Some(r.encrypted_content), redacted: None }]
            }
            _ => keep(),
        },
        Some("message") | None => match serde_json::from_str::<ExactAssistant<'a>>(raw.get()) {
            Ok(m)
                if m.kind == "message"
                    && m.role == "assistant"
                    && !m.content.is_empty()
                    && m.content.iter().all(|t| t.kind == "output_text") =>
            {
                m.content.into_iter().map(|t| BlockOut::Text { text: t.text }).collect()
            }
            _ => keep(),
        },
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
        messages.push(MessageOut::User { content: vec![BlockOut::Text { text: parse_in(body, parsed.input)? }] });
        Vec::new()
    } else {
        parse_in(body, parsed.input)?
    };
    for raw in raws {
        let head: Head<'_> = parse_in(body, raw)?;
        let is_message = matches!(head.kind.as_deref(), None | Some("message"));
        match (head.kind.as_deref(), head.role.as_deref()) {
            (_, Some("user")) if is_message => {
                messages.push(MessageOut::User { content: user_blocks(body, head.content)? });
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
                });
            }
            _ => {
                let blocks = assistant_blocks(raw, head);
                for b in &blocks {
                    if let BlockOut::ToolCall { id, name, .. } = b {
                        names.insert(id.clone(), name.clone());
                    }
                }
                if let Some(MessageOut::Assistant { content, .. }) = messages.last_mut() {
                    content.extend(blocks);
                } else {
                    messages.push(MessageOut::Assistant { content: blocks, provider: TARGET.provider });
                }
            }
        }
    }
    let system_prompt = match system.len() {
        0 => None,
        1 => system.pop(),
        _ => Some(Cow::Owned(system.join("\n\n"))),
    };
    Ok(SessionOut { system_prompt, messages })
}

#[cfg(test)]
mod tests {
    use super::super::{from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    #[test]
    fn items_follow_the_blocks_and_read_back() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"openai","content":[
                {"type":"thinking","thinking":"plan","signature":"ENC"},{"type":"text","text":"a"},{"type":"text","text":"b"},
                {"type":"tool_call","id":"call_1","name":"f","arguments":"{\"x\": 1}"}]},
            {"type":"tool_result","id":"r","timestamp":"t","tool_call_id":"call_1","is_error":true,"status":"error",
             "content":[{"type":"text","text":"no"}]}
        ]"#;
        let options = Options { system_prompt: Some("sys".into()), ..Options::default() };
        let converted = to_request_json(doc.as_bytes(), DialectName::OpenAiResponses, &options).expect("ok");
        let body = String::from_utf8(converted.body).expect("utf-8");
        assert_eq!(
            body,
            concat!(
                r#"{"instructions":"sys","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},"#,
                r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"ENC"},"#,
                r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]},"#,
                r#"{"type":"function_call","call_id":"call_1","name":"f","arguments":"{\"x\": 1}"},"#,
                r#"{"type":"function_call_output","call_id":"call_1","output":"no"}]}"#
            )
        );
        let kinds: Vec<(usize, &str)> = converted.report.iter().map(|l| (l.message, l.kind)).collect();
        assert_eq!(kinds, [(2, "is_error")]);
        let session =
            String::from_utf8(from_request_json(body.as_bytes(), DialectName::OpenAiResponses).expect("reads"))
                .expect("utf-8");
        assert_eq!(
            session,
            concat!(
                r#"{"system_prompt":"sys","messages":[{"type":"user","content":[{"type":"text","text":"q"}]},"#,
                r#"{"type":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"ENC"},{"type":"text","text":"a"},"#,
                r#"{"type":"text","text":"b"},{"type":"tool_call","id":"call_1","name":"f","arguments":"{\"x\": 1}"}],"provider":"openai"},"#,
                r#"{"type":"tool_result","tool_call_id":"call_1","tool_name":"f","content":[{"type":"text","text":"no"}]}]}"#
            )
        );
    }
}
