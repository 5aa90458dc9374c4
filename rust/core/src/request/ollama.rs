//! Ollama native `/api/chat` requests: `{"messages": [...], "tools"?: [...]}`.
//!
//! The provider's rules, all of them here:
//! - the system prompt is the first message, role `system`;
//! - a message's `content` is one string: its text blocks joined by a blank line (`""` when it
//!   has none); images go apart, as `images` (base64 data, no media type) on the message, in the
//!   user messages and tool results;
//! - only base64 images are sent as images: a URL image (Ollama does not fetch URLs) or a local
//!   path becomes the image's recognized text, or is dropped, following the policy (reported);
//! - an assistant message has its thinking as `thinking` (the thinking blocks joined by a blank
//!   line; Ollama's thinking has no signature: native unsigned thinking is sent, and the
//!   signature of thinking kept by policy is left out, reported), and its calls as
//!   `tool_calls: [{"function": {"name", "arguments": {...}}}]`, the arguments being a JSON object
//!   (see `object_arguments`: empty is `{}`, malformed is wrapped or refused by policy); Ollama
//!   requests carry no call ids and no redacted thinking;
//! - each tool result is one `tool` message `{"content", "tool_name"}` (the name of its call),
//!   right after the assistant message that made the call; it has no error flag (`is_error` is
//!   left out, reported); a call without a result gets one with the `missing_result` text (see
//!   the plan);
//! - Ollama is lenient about empty content: empty text is sent as it is (`"content": ""`), and a
//!   user or assistant message is dropped (reported) only when it has nothing at all to send (no
//!   text block, image, thinking or call). The conversation may open with any role.
//!
//! Reading: calls get the id the body gives (`id`), else a made-up one (`call_<message>_<n>`);
//! a result is matched to its call by `tool_call_id` when the body has it (newer Ollama
//! versions), else to the first unanswered call of that name in the last assistant message. A
//! base64 image's media type is guessed from its first bytes (`application/octet-stream` when
//! unknown). Ids, like the order of text and images inside a message, are not written back.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::ServerTools;
use super::{
    Action, Arguments, BlockOut, CallIds, EmptyArray, EmptyText, FunctionTool, Item, Loss, MessageOut, Options, Part,
    Plan, Refusals, Role, SessionOut, SourceOut, Target, ToolEntry, Turns, function_tools, lower, object_arguments,
    offset_in, parse_in, result_parts, settings, to_vec, tool_entries, tool_losses,
};
use crate::canonical::ImageSource;
use crate::error::Error;

pub(super) const TARGET: Target = Target {
    dialect: "ollama",
    provider: "ollama",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: false,
    images: [true, false, true],
    image_media_types: &[],
    call_ids: CallIds::Unsent,
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
struct Msg<'a> {
    role: &'static str,
    content: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
}

impl<'a> Msg<'a> {
    fn new(role: &'static str, content: Cow<'a, str>) -> Self {
        Self { role, content, thinking: None, images: Vec::new(), tool_calls: Vec::new(), tool_name: None }
    }
}

#[derive(Serialize)]
struct Call<'a> {
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: Arguments<'a>,
}

/// Strings joined by a blank line, borrowed when there is one.
fn join(mut texts: Vec<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    match texts.len() {
        0 => None,
        1 => texts.pop(),
        _ => Some(Cow::Owned(texts.join("\n\n"))),
    }
}

/// A message's parts sorted into its text, thinking and images (calls are written apart).
#[derive(Default)]
struct Sorted<'a> {
    text: Vec<Cow<'a, str>>,
    thinking: Vec<Cow<'a, str>>,
    images: Vec<&'a str>,
}

impl<'a> Sorted<'a> {
    fn push(&mut self, message: usize, part: Part<'a>, report: &mut Vec<Loss>) {
        match part {
            Part::Text(text) => self.text.push(text),
            // never lowered for this target (it takes no citations)
            Part::Cited { text, .. } => self.text.push(Cow::Borrowed(&text.text)),
            Part::Raw(raw) => self.text.push(Cow::Borrowed(raw.get())),
            Part::Image(ImageSource::Base64 { data, .. }) => self.images.push(data),
            Part::Thinking { block, thinking, signature } => {
                if !signature.is_empty() {
                    report.push(Loss::new(
                        message,
                        Some(block),
                        "signature",
                        Action::Strip,
                        "Ollama thinking has no signature",
                    ));
                }
                // an empty `thinking` reads back as no thinking: leave it out
                if !thinking.is_empty() {
                    self.thinking.push(Cow::Borrowed(thinking));
                }
            }
            // never lowered for this target (URL and path images, redacted thinking), or written
            // apart (calls)
            Part::Image(_) | Part::Redacted(_) | Part::ToolCall { .. } | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
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
        out.push(&Msg::new("system", Cow::Borrowed(system)))?;
    }
    for (k, &item) in plan.items.iter().enumerate().skip(from) {
        let at = report.len();
        let msg = match item {
            Item::User(i, m) => {
                let mut sorted = Sorted::default();
                for p in REFUSES.empty_text.strip(lower(i, &m.content, Role::User, None, &TARGET, policy, report)) {
                    sorted.push(i, p, report);
                }
                if sorted.text.is_empty() && sorted.images.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                let mut msg = Msg::new("user", join(sorted.text).unwrap_or_default());
                msg.images = sorted.images;
                msg
            }
            Item::Assistant(i, m) => {
                let mut sorted = Sorted::default();
                let mut tool_calls = Vec::new();
                let parts = lower(i, &m.content, Role::Assistant, m.provider.as_deref(), &TARGET, policy, report);
                for p in REFUSES.empty_text.strip(parts) {
                    if let Part::ToolCall { block, call } = p {
                        let arguments = object_arguments(i, block, call, policy, report)?;
                        tool_calls.push(Call { function: Function { name: &call.name, arguments } });
                    } else {
                        sorted.push(i, p, report);
                    }
                }
                if sorted.text.is_empty() && sorted.thinking.is_empty() && tool_calls.is_empty() {
                    report.push(Loss::nothing_left(i));
                    continue;
                }
                let mut msg = Msg::new("assistant", super::join_reply(sorted.text).unwrap_or_default());
                msg.thinking = super::join_reply(sorted.thinking);
                msg.tool_calls = tool_calls;
                msg
            }
            Item::ToolResult(i, r, call) => {
                let mut sorted = Sorted::default();
                for p in result_parts(i, r, &TARGET, REFUSES.empty_text, policy, report) {
                    sorted.push(i, p, report);
                }
                if super::is_error(r) {
                    report.push(Loss::new(
                        i,
                        None,
                        "is_error",
                        Action::Strip,
                        "Ollama tool messages have no error flag",
                    ));
                }
                let mut msg = Msg::new("tool", join(sorted.text).unwrap_or_default());
                msg.images = sorted.images;
                // the call's name: Ollama matches a result to its call by it
                msg.tool_name = Some(&call.call.name);
                msg
            }
            Item::Missing(call) => {
                let mut msg = Msg::new("tool", Cow::Borrowed(options.missing_result()));
                msg.tool_name = Some(&call.call.name);
                msg
            }
        };
        out.begin(k, at);
        out.push(&msg)?;
    }
    Ok(())
}

/// The body around the conversation array (written empty): tools and settings.
pub(super) fn body(_system: Option<&str>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    tool_losses(options, "Ollama", false, false, report);
    let tools = tool_entries(function_tools(options, false), options, TARGET.dialect);
    let body = to_vec(&Body { messages: EmptyArray, tools })?;
    settings::ollama::DIALECT.finish(body, options, report)
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
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    images: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<InCall<'a>>>,
    #[serde(borrow, default)]
    tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct InCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: InFunction<'a>,
}

#[derive(Deserialize)]
struct InFunction<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// The media type of base64 image data, from its first bytes.
fn media_type(data: &str) -> &'static str {
    const KNOWN: [(&str, &str); 4] =
        [("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"), ("UklGR", "image/webp")];
    KNOWN.iter().find(|(prefix, _)| data.starts_with(prefix)).map_or("application/octet-stream", |(_, m)| m)
}

/// A message's text and images as blocks: an empty text is left out, unless the message would
/// be empty without it (`also`: it has other blocks).
fn blocks<'a>(content: Option<Cow<'a, str>>, images: Option<Vec<Cow<'a, str>>>, also: bool) -> Vec<BlockOut<'a>> {
    let images = images.unwrap_or_default();
    let keep_empty = !also && images.is_empty();
    let mut out: Vec<BlockOut<'a>> =
        content.filter(|t| keep_empty || !t.is_empty()).map(|text| BlockOut::Text { text }).into_iter().collect();
    out.extend(images.into_iter().map(|data| BlockOut::Image {
        source: SourceOut::Base64 { media_type: Cow::Borrowed(media_type(&data)), data },
        detail: None,
    }));
    out
}

/// A call's arguments text: the JSON object as it is, or the text of a string.
fn arguments_text<'a>(body: &[u8], raw: Option<&'a RawValue>) -> Result<Cow<'a, str>, Error> {
    match raw {
        None => Ok(Cow::Borrowed("{}")),
        Some(raw) if raw.get().starts_with('"') => parse_in(body, raw),
        Some(raw) => Ok(Cow::Borrowed(raw.get())),
    }
}

pub(super) fn read(body: &[u8]) -> Result<SessionOut<'_>, Error> {
    let parsed: InBody<'_> =
        serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
    let mut system: Vec<Cow<'_, str>> = Vec::new();
    let mut messages = Vec::with_capacity(parsed.messages.len());
    // The calls of the last assistant message not answered yet: (name, id).
    let mut pending: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    for (index, raw) in parsed.messages.into_iter().enumerate() {
        let m: InMsg<'_> = parse_in(body, raw)?;
        match m.role.as_ref() {
            "system" => {
                if let Some(content) = m.content {
                    system.push(content);
                }
            }
            "user" => messages.push(MessageOut::User { content: blocks(m.content, m.images, false), name: None }),
            "assistant" => {
                let mut content = Vec::new();
                if let Some(thinking) = m.thinking.filter(|t| !t.is_empty()) {
                    content.push(BlockOut::Thinking { thinking, signature: None, redacted: None });
                }
                let calls = m.tool_calls.as_ref().is_some_and(|c| !c.is_empty());
                content.extend(blocks(m.content, m.images, calls || !content.is_empty()));
                pending.clear();
                for (n, call) in m.tool_calls.unwrap_or_default().into_iter().enumerate() {
                    let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| format!("call_{index}_{n}").into());
                    let arguments = arguments_text(body, call.function.arguments)?;
                    pending.push((call.function.name.clone(), id.clone()));
                    content.push(BlockOut::ToolCall { id, name: call.function.name, arguments });
                }
                messages.push(MessageOut::Assistant { content, provider: TARGET.provider, name: None });
            }
            "tool" => {
                let at = match (&m.tool_call_id, &m.tool_name) {
                    (Some(id), _) => pending.iter().position(|(_, i)| i == id),
                    (None, Some(name)) => pending.iter().position(|(n, _)| n == name),
                    (None, None) => None,
                };
                let call = at.map(|at| pending.remove(at));
                let tool_call_id = match (m.tool_call_id, &call) {
                    (Some(id), _) => id,
                    (None, Some((_, id))) => id.clone(),
                    (None, None) => Cow::Owned(format!("call_{index}")),
                };
                let tool_name = m.tool_name.or(call.map(|(name, _)| name));
                messages.push(MessageOut::ToolResult {
                    tool_call_id,
                    tool_name,
                    content: blocks(m.content, m.images, true),
                    is_error: false,
                    status: None,
                    cache_control: None,
                });
            }
            other => {
                let detail = format!("a message with role {other:?} (known: system, user, assistant, tool)");
                return Err(Error::body("request body", detail, None).shifted(offset_in(body, raw)));
            }
        }
    }
    let (tools, settings) = settings::ollama::DIALECT.read(body)?;
    Ok(SessionOut { system_prompt: join(system), messages, tools, settings })
}

#[cfg(test)]
mod tests {
    use super::super::{Converted, Malformed, Policy, from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn convert(messages: &str, options: &Options<'_>) -> Result<Converted, Error> {
        to_request_json(messages.as_bytes(), DialectName::Ollama, options)
    }

    fn body(converted: &Converted) -> String {
        String::from_utf8(converted.body.clone()).expect("utf-8")
    }

    #[test]
    fn empty_thinking_is_left_out() {
        // `"thinking": ""` would read back as no thinking at all
        let doc = r#"[{"type":"assistant","id":"a","timestamp":"t","provider":"ollama","content":[
            {"type":"thinking","thinking":"","signature":""},{"type":"text","text":"hi"}]}]"#;
        let converted = convert(doc, &Options::default()).expect("converts");
        assert_eq!(body(&converted), r#"{"messages":[{"role":"assistant","content":"hi"}]}"#);
    }

    #[test]
    fn calls_are_objects_results_are_named_and_images_base64_only() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"look"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
                {"type":"image","source":{"type":"url","url":"https://x/a.png"},"recognized_text":"A"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"ollama","content":[
                {"type":"thinking","thinking":"hm"},{"type":"tool_call","id":"c1","name":"f","arguments":"{\"q\": 1}"},
                {"type":"tool_call","id":"c2","name":"g","arguments":""}]},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2","content":[{"type":"text","text":"two"}]},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1","is_error":true,"status":"error"}
        ]"#;
        let converted = convert(doc, &Options { system_prompt: Some("sys".into()), ..Options::default() }).expect("ok");
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"messages":[{"role":"system","content":"sys"},"#,
                r#"{"role":"user","content":"look\n\n<image url=\"https://x/a.png\">\nA\n</image>","images":["iVBORw0KGgo="]},"#,
                r#"{"role":"assistant","content":"","thinking":"hm","tool_calls":[{"function":{"name":"f","arguments":{"q": 1}}},"#,
                r#"{"function":{"name":"g","arguments":{}}}]},"#,
                r#"{"role":"tool","content":"two","tool_name":"g"},{"role":"tool","content":"","tool_name":"f"}]}"#
            )
        );
        let kinds: Vec<(usize, &str, Action)> =
            converted.report.iter().map(|l| (l.message, l.kind, l.action)).collect();
        assert_eq!(kinds, [(0, "image", Action::ToText), (3, "is_error", Action::Strip)]);
    }

    #[test]
    fn malformed_arguments_follow_the_policy() {
        let doc = r#"[{"type":"assistant","id":"a","timestamp":"t","content":[
            {"type":"tool_call","id":"t1","name":"f","arguments":"{\"q\": "}]}]"#;
        let converted = convert(doc, &Options::default()).expect("wraps");
        assert!(body(&converted).contains(r#""arguments":{"_raw":"{\"q\": "}"#), "{}", body(&converted));
        let policy = Policy { malformed_arguments: Malformed::Error, ..Policy::default() };
        assert!(convert(doc, &Options { policy, ..Options::default() }).is_err());
    }

    #[test]
    fn reads_back_calls_matched_by_name() {
        let body = br#"{"model":"llama3.2","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},
            {"role":"assistant","content":"","thinking":"t","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}},
              {"function":{"name":"g","arguments":{}}}]},
            {"role":"tool","content":"G","tool_name":"g"},{"role":"tool","content":"F","tool_name":"f"}]}"#;
        let session = String::from_utf8(from_request_json(body, DialectName::Ollama).expect("reads")).expect("utf-8");
        assert_eq!(
            session,
            concat!(
                r#"{"system_prompt":"s","messages":[{"type":"user","content":[{"type":"text","text":"hi"}]},"#,
                r#"{"type":"assistant","content":[{"type":"thinking","thinking":"t"},"#,
                r#"{"type":"tool_call","id":"call_2_0","name":"f","arguments":"{\"a\":1}"},"#,
                r#"{"type":"tool_call","id":"call_2_1","name":"g","arguments":"{}"}],"provider":"ollama"},"#,
                r#"{"type":"tool_result","tool_call_id":"call_2_1","tool_name":"g","content":[{"type":"text","text":"G"}]},"#,
                r#"{"type":"tool_result","tool_call_id":"call_2_0","tool_name":"f","content":[{"type":"text","text":"F"}]}],"model":"llama3.2"}"#
            )
        );
        let err = from_request_json(br#"{"messages":[{"role":"critic","content":"x"}]}"#, DialectName::Ollama);
        assert!(err.is_err());
    }
}
