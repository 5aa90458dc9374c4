//! OpenAI Chat Completions requests: `{<settings>, "messages": [...], "tools"?: [...]}` (the
//! settings: see `settings/openai_chat.rs`).
//!
//! The provider's rules, all of them here:
//! - the system prompt is the first message, role `system` (or `developer` by option);
//! - an assistant message has its text as `content` (`null` when it only calls tools) and its
//!   calls as `tool_calls`, `arguments` being the model's JSON text exactly as it was received;
//! - each tool result is one `tool` message, right after the assistant message that made the
//!   call; its content is text only (an image in it becomes its recognized text), and it has
//!   no error flag (`is_error` is left out, reported); a call without a result gets a `tool`
//!   message with the `missing_result` text (see the plan);
//! - call ids have at most 40 characters (others are replaced, see the plan);
//! - images are `image_url` parts of user messages (a URL, or a `data:` URL for base64);
//! - requests carry no thinking: every thinking block follows the policy (dropped by default);
//! - content that is exactly one text block is written as a string, otherwise as parts (the
//!   normal form `from_request` reads back to the same canonical blocks);
//! - empty text is sent (`"content": ""`, which the API takes, in every role), but no content
//!   array is ever empty ("array too short"): a user or assistant message left with no part is
//!   dropped (reported), an assistant message with calls and no part has `"content": null`, a
//!   tool message with no text has `""`. The conversation may open with any role.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::ServerTools;
use super::{
    Action, BlockOut, CallIds, EmptyArray, EmptyText, FunctionTool, IdFormat, Item, Loss, MessageOut, Options, Part,
    Plan, Refusals, Role, SessionOut, SourceOut, SystemRole, Target, ToolEntry, Turns, function_tools, joined_text,
    lower, parse_in, result_parts, settings, to_vec, tool_entries, tool_losses,
};
use crate::canonical::ImageSource;
use crate::error::Error;

pub(super) const TARGET: Target = Target {
    dialect: "openai",
    provider: "openai",
    thinking: false,
    signed: true,
    redacted: false,
    url_images: true,
    images: [true, false, false],
    image_media_types: &[],
    call_ids: CallIds::Required(IdFormat::OpenAi),
    cites: None,
    server_tools: ServerTools::Nowhere,
};

const REFUSES: Refusals = Refusals { empty_text: EmptyText::Sent, non_user_opening: false };

#[derive(Serialize)]
struct Body<'a> {
    messages: EmptyArray,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolEntry<'a, FunctionTool<'a>>>,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum Msg<'a> {
    System {
        content: &'a str,
    },
    Developer {
        content: &'a str,
    },
    User {
        content: Content<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
    },
    Assistant {
        content: Option<Content<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Content<'a>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<OutPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutPart<'a> {
    Text {
        text: Cow<'a, str>,
    },
    ImageUrl {
        image_url: ImageUrl<'a>,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// The content of a message from its parts: one text as a string, otherwise parts.
fn content(mut parts: Vec<OutPart<'_>>) -> Content<'_> {
    if let [OutPart::Text { .. }] = parts.as_slice() {
        if let Some(OutPart::Text { text }) = parts.pop() {
            return Content::Text(text);
        }
    }
    Content::Parts(parts)
}

fn part(part: Part<'_>) -> Option<OutPart<'_>> {
    Some(match part {
        Part::Text(text) => OutPart::Text { text },
        // never lowered for this target (it takes no citations)
        Part::Cited { text, .. } => OutPart::Text { text: Cow::Borrowed(&text.text) },
        Part::Image(ImageSource::Url { url }) => {
            OutPart::ImageUrl { image_url: ImageUrl { url: Cow::Borrowed(url), detail: None } }
        }
        Part::Image(ImageSource::Base64 { media_type, data }) => {
            let url = Cow::Owned(format!("data:{media_type};base64,{data}"));
            OutPart::ImageUrl { image_url: ImageUrl { url, detail: None } }
        }
        Part::Raw(raw) => OutPart::Raw(raw),
        // never lowered for this target (no thinking, no path images, no cache breakpoints;
        // calls and details handled apart)
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

/// The parts of a message: a `Detail` marker sets the detail of the image before it.
fn parts<'a>(lowered: Vec<Part<'a>>) -> Vec<OutPart<'a>> {
    let mut out: Vec<OutPart<'a>> = Vec::with_capacity(lowered.len());
    for p in lowered {
        if let Part::Detail(detail) = p {
            if let Some(OutPart::ImageUrl { image_url }) = out.last_mut() {
                image_url.detail = Some(detail);
            }
        } else if let Some(p) = part(p) {
            out.push(p);
        }
    }
    out
}

/// The conversation array of the request: `messages`.
pub(super) const ARRAY: &str = "messages";

/// The turns of the items of `plan` from `from` on (the system prompt first, when from the start).
pub(super) fn turns(
    plan: &Plan<'_>,
    system: Option<&str>,
    options: &Options<'_>,
    from: usize,
    report: &mut Vec<Loss>,
    out: &mut Turns,
) -> Result<(), Error> {
    let policy = options.policy;
    if let (Some(system), 0) = (system, from) {
        out.push(&match options.system_role {
            SystemRole::System => Msg::System { content: system },
            SystemRole::Developer => Msg::Developer { content: system },
        })?;
    }
    for (k, &item) in plan.items.iter().enumerate().skip(from) {
        let at = report.len();
        let msg = match item {
            Item::User(i, m) => {
                let parts =
                    parts(REFUSES.empty_text.strip(lower(i, &m.content, Role::User, None, &TARGET, policy, report)));
                if parts.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                Msg::User { content: content(parts), name: m.name.as_deref() }
            }
            Item::Assistant(i, m) => {
                let lowered = lower(i, &m.content, Role::Assistant, m.provider.as_deref(), &TARGET, policy, report);
                let lowered = REFUSES.empty_text.strip(lowered);
                let mut others = Vec::with_capacity(lowered.len());
                let mut tool_calls = Vec::new();
                for p in lowered {
                    if let Part::ToolCall { block, call } = p {
                        tool_calls.push(Call {
                            id: plan.call_id(i, block, &call.id),
                            kind: "function",
                            function: Function { name: &call.name, arguments: super::arguments_text(call) },
                        });
                    } else {
                        others.push(p);
                    }
                }
                let parts = parts(others);
                if parts.is_empty() && tool_calls.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                let content = if parts.is_empty() { None } else { Some(content(parts)) };
                Msg::Assistant { content, tool_calls, name: m.name.as_deref() }
            }
            Item::ToolResult(i, r, call) => {
                let parts = parts(result_parts(i, r, &TARGET, REFUSES.empty_text, policy, report));
                if super::is_error(r) {
                    report.push(Loss::new(
                        i,
                        None,
                        "is_error",
                        Action::Strip,
                        "OpenAI tool messages have no error flag",
                    ));
                }
                let content = if parts.is_empty() { Content::Text(Cow::Borrowed("")) } else { content(parts) };
                Msg::Tool { tool_call_id: plan.id(&call), content }
            }
            Item::Missing(call) => {
                let content = Content::Text(Cow::Borrowed(options.missing_result()));
                Msg::Tool { tool_call_id: plan.id(&call), content }
            }
        };
        out.begin(k, at);
        out.push(&msg)?;
    }
    Ok(())
}

/// The body around the conversation array (written empty): tools and settings.
pub(super) fn body(_system: Option<&str>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    tool_losses(options, "OpenAI Chat", true, false, report);
    let tools = tool_entries(function_tools(options, true), options, TARGET.dialect);
    let body = to_vec(&Body { messages: EmptyArray, tools })?;
    settings::openai_chat::DIALECT.finish(body, options, report)
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct InMsg<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<InCall<'a>>>,
    #[serde(borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct InCall<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    function: InFunction<'a>,
}

#[derive(Deserialize)]
struct InFunction<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Cow<'a, str>,
}

#[derive(Deserialize)]
struct InPart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    image_url: Option<InImageUrl<'a>>,
}

#[derive(Deserialize)]
struct InImageUrl<'a> {
    #[serde(borrow)]
    url: Cow<'a, str>,
    #[serde(borrow, default)]
    detail: Option<Cow<'a, str>>,
}

/// The blocks of a message's `content`: a string, an array of parts, or `null`.
fn blocks<'a>(body: &[u8], content: Option<&'a RawValue>) -> Result<Vec<BlockOut<'a>>, Error> {
    let Some(raw) = content else { return Ok(Vec::new()) };
    if raw.get().starts_with('"') {
        return Ok(vec![BlockOut::Text { text: parse_in(body, raw)? }]);
    }
    let parts: Vec<&'a RawValue> = parse_in(body, raw)?;
    let mut out = Vec::with_capacity(parts.len());
    for raw in parts {
        let p: InPart<'a> = parse_in(body, raw)?;
        out.push(match (p.kind.as_ref(), p.text, p.image_url) {
            ("text", Some(text), _) => BlockOut::Text { text },
            ("image_url", _, Some(image)) => BlockOut::Image { source: image_source(image.url), detail: image.detail },
            _ => BlockOut::ProviderPart { dialect: TARGET.dialect, part: raw },
        });
    }
    Ok(out)
}

/// A `data:<media type>;base64,<data>` URL as a base64 source, any other URL as a URL source.
pub(super) fn image_source(url: Cow<'_, str>) -> SourceOut<'_> {
    let data_url = |url: &str| {
        let (media_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
        Some((media_type.len(), data.len()))
    };
    match (data_url(&url), url) {
        (Some((m, d)), Cow::Borrowed(url)) => {
            SourceOut::Base64 { media_type: Cow::Borrowed(&url[5..5 + m]), data: Cow::Borrowed(&url[url.len() - d..]) }
        }
        (Some((m, d)), Cow::Owned(url)) => SourceOut::Base64 {
            media_type: Cow::Owned(url[5..5 + m].to_owned()),
            data: Cow::Owned(url[url.len() - d..].to_owned()),
        },
        (None, url) => SourceOut::Url { url },
    }
}

pub(super) fn read(body: &[u8]) -> Result<SessionOut<'_>, Error> {
    let parsed: InBody<'_> =
        serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
    let mut system: Vec<Cow<'_, str>> = Vec::new();
    let mut messages = Vec::with_capacity(parsed.messages.len());
    let mut names: HashMap<Cow<'_, str>, Cow<'_, str>> = HashMap::new();
    for raw in parsed.messages {
        let m: InMsg<'_> = parse_in(body, raw)?;
        match m.role.as_ref() {
            "system" | "developer" => {
                if let Some(content) = m.content {
                    system.push(joined_text(body, content)?);
                }
            }
            "user" => messages.push(MessageOut::User { content: blocks(body, m.content)?, name: m.name }),
            "assistant" => {
                let mut content = blocks(body, m.content)?;
                for call in m.tool_calls.unwrap_or_default() {
                    names.insert(call.id.clone(), call.function.name.clone());
                    content.push(BlockOut::ToolCall {
                        id: call.id,
                        name: call.function.name,
                        arguments: call.function.arguments,
                    });
                }
                messages.push(MessageOut::Assistant { content, provider: TARGET.provider, name: m.name });
            }
            "tool" => {
                let Some(tool_call_id) = m.tool_call_id else {
                    return Err(Error::body("request body", "a tool message without tool_call_id", None)
                        .shifted(offset(body, raw)));
                };
                let tool_name = names.get(&tool_call_id).cloned();
                let content = blocks(body, m.content)?;
                messages.push(MessageOut::ToolResult {
                    tool_call_id,
                    tool_name,
                    content,
                    is_error: false,
                    status: None,
                    cache_control: None,
                });
            }
            other => {
                let detail = format!("a message with role {other:?} (known: system, developer, user, assistant, tool)");
                return Err(Error::body("request body", detail, None).shifted(offset(body, raw)));
            }
        }
    }
    let system_prompt = match system.len() {
        0 => None,
        1 => system.pop(),
        _ => Some(Cow::Owned(system.join("\n\n"))),
    };
    let (tools, settings) = settings::openai_chat::DIALECT.read(body)?;
    Ok(SessionOut { system_prompt, messages, tools, settings })
}

/// Where `raw` starts in `body`.
fn offset(body: &[u8], raw: &RawValue) -> u64 {
    (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize).min(body.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::super::{Converted, Policy, Replay, from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn convert(messages: &str, options: &Options<'_>) -> Converted {
        to_request_json(messages.as_bytes(), DialectName::OpenAi, options).expect("converts")
    }

    fn body(converted: &Converted) -> String {
        String::from_utf8(converted.body.clone()).expect("utf-8")
    }

    const CALLS: &str = r#"[
        {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"weather?"}]},
        {"type":"assistant","id":"a","timestamp":"t","provider":"openai","content":[
            {"type":"tool_call","id":"c1","name":"w","arguments":"{\"city\": \"Paris\"}"},
            {"type":"tool_call","id":"c2","name":"w","arguments":""}]},
        {"type":"user","id":"u2","timestamp":"t","content":[{"type":"text","text":"hurry"}]},
        {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2","content":[{"type":"text","text":"rain"}]},
        {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1","is_error":true,"status":"error",
         "content":[{"type":"text","text":"timeout"}]}
    ]"#;

    #[test]
    fn tool_messages_follow_the_calls_arguments_kept_exactly_and_none_are_an_empty_object() {
        let converted = convert(CALLS, &Options { system_prompt: Some("be brief".into()), ..Options::default() });
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"},"#,
                r#"{"role":"assistant","content":null,"tool_calls":["#,
                r#"{"id":"c1","type":"function","function":{"name":"w","arguments":"{\"city\": \"Paris\"}"}},"#,
                r#"{"id":"c2","type":"function","function":{"name":"w","arguments":"{}"}}]},"#,
                r#"{"role":"tool","tool_call_id":"c2","content":"rain"},"#,
                r#"{"role":"tool","tool_call_id":"c1","content":"timeout"},"#,
                r#"{"role":"user","content":"hurry"}]}"#
            )
        );
        assert_eq!(converted.report.len(), 1);
        assert_eq!((converted.report[0].message, converted.report[0].kind), (4, "is_error"));
    }

    #[test]
    fn developer_role_and_images() {
        let doc = r#"[{"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"see"},
            {"type":"image","source":{"type":"url","url":"https://x/a.png"}},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
            {"type":"image","source":{"type":"path","path":"/tmp/b.png"},"recognized_text":"STOP"},
            {"type":"image","source":{"type":"path","path":"/tmp/c.png"}},
            {"type":"image","source":{"type":"url","url":"https://x/d.png"},"recognized_text":"GO","mode_used":"ocr"}]}]"#;
        let options =
            Options { system_prompt: Some("sys".into()), system_role: SystemRole::Developer, ..Options::default() };
        let converted = convert(doc, &options);
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"messages":[{"role":"developer","content":"sys"},{"role":"user","content":[{"type":"text","text":"see"},"#,
                r#"{"type":"image_url","image_url":{"url":"https://x/a.png"}},"#,
                r#"{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},"#,
                r#"{"type":"text","text":"<image path=\"/tmp/b.png\">\nSTOP\n</image>"},"#,
                r#"{"type":"text","text":"<image url=\"https://x/d.png\">\nGO\n</image>"}]}]}"#
            )
        );
        let actions: Vec<(Option<usize>, Action)> = converted.report.iter().map(|l| (l.block, l.action)).collect();
        assert_eq!(actions, [(Some(3), Action::ToText), (Some(4), Action::Drop), (Some(5), Action::ToText)]);
        assert_eq!(converted.report[2].reason, "the image was read by OCR: its text is sent");
    }

    #[test]
    fn thinking_follows_the_policy() {
        let doc = r#"[{"type":"assistant","id":"a","timestamp":"t","provider":"anthropic","content":[
            {"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"thinking","redacted":"xx"},
            {"type":"text","text":"hi"}]}]"#;
        let dropped = convert(doc, &Options::default());
        assert_eq!(body(&dropped), r#"{"messages":[{"role":"assistant","content":"hi"}]}"#);
        assert_eq!(dropped.report.len(), 2);
        let policy = Policy { thinking: Replay::ToText, ..Policy::default() };
        let text = convert(doc, &Options { policy, ..Options::default() });
        assert_eq!(
            body(&text),
            concat!(
                r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"<thinking>\nhmm\n</thinking>"},"#,
                r#"{"type":"text","text":"hi"}]}]}"#
            )
        );
        assert_eq!(text.report[0].action, Action::ToText);
        assert_eq!(text.report[1].kind, "redacted_thinking");
    }

    #[test]
    fn reads_back_what_it_writes() {
        let body = br#"{"model":"gpt","messages":[{"role":"system","content":"s"},{"role":"user","content":[
            {"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,QQ=="}},
            {"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]},
            {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c","content":"ok"}]}"#;
        let session = from_request_json(body, DialectName::OpenAi).expect("reads");
        let session = String::from_utf8(session).expect("utf-8");
        assert_eq!(
            session,
            concat!(
                r#"{"system_prompt":"s","messages":[{"type":"user","content":[{"type":"text","text":"a"},"#,
                r#"{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"QQ=="}},"#,
                r#"{"type":"provider_part","dialect":"openai","part":{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}}]},"#,
                r#"{"type":"assistant","content":[{"type":"tool_call","id":"c","name":"f","arguments":"{}"}],"provider":"openai"},"#,
                r#"{"type":"tool_result","tool_call_id":"c","tool_name":"f","content":[{"type":"text","text":"ok"}]}],"model":"gpt"}"#
            )
        );
    }

    #[test]
    fn unknown_roles_are_refused_at_their_offset() {
        let body = br#"{"messages":[{"role":"user","content":"a"}, {"role":"function","content":"x"}]}"#;
        let err = from_request_json(body, DialectName::OpenAi).expect_err("function role");
        assert_eq!(err.offset, Some(44));
        assert!(err.to_string().contains("\"function\""), "{err}");
    }
}
