//! Gemini `generateContent` requests: `{"systemInstruction"?, "contents": [...], "tools"?: [...]}`.
//!
//! The provider's rules, all of them here:
//! - the system prompt is `systemInstruction: {"parts": [{"text"}]}` (left out when there is none,
//!   or it is empty);
//! - roles are `user` and `model`; consecutive contents of the same role are merged into one
//!   (Gemini wants the roles to alternate);
//! - an assistant message is a `model` content: text parts `{"text"}`, calls
//!   `{"functionCall": {"name", "args": {...}, "id"?}}` (the arguments a JSON object, see
//!   `object_arguments`: empty is `{}`, malformed is wrapped or refused by policy);
//! - a call id is sent unless it is empty or msgwire made it up (`call_<hex>_<n>`, for a call
//!   that came without one), and then the result's `id` is left out too; an id repeating an
//!   earlier call's is replaced (see the plan);
//! - a tool result is a `user` part `{"functionResponse": {"name", "id"?, "response": {...}}}`,
//!   right after the content of the call, one per call (a call without a result gets one with
//!   `{"error": "<missing_result text>"}`, see the plan): `name` is its call's;
//!   `response` is `{"result": "<its text>"}`, or `{"error": "<its text>"}` when the tool failed
//!   (its text parts joined by a blank line); a result read from a response of any other shape
//!   holds it whole (a `provider_part` of the `response` object) and writes it back unchanged;
//! - thought signatures: msgwire's Gemini decoder keeps a `thoughtSignature` that came on a text
//!   or call part as an empty, signed thinking block right before that part: such a block is sent
//!   as the `thoughtSignature` of the next part (of a `{"text": ""}` part when none follows).
//!   Signatures of another provider are never sent;
//! - thinking text is sent as `{"text", "thought": true, "thoughtSignature"?}` only when the policy
//!   keeps it (`thinking="keep"`); otherwise Gemini's own thinking text is dropped (reported):
//!   Gemini needs the signatures, not the thought summaries, and thinking of another provider
//!   follows the policy as for every dialect (dropped by default). No redacted thinking;
//! - images in user messages: base64 as `inlineData {mimeType, data}`, URLs as
//!   `fileData {mimeType, fileUri}` (the media type guessed from the URL's extension,
//!   `image/jpeg` when it has none known); elsewhere an image is its recognized text, or dropped;
//! - no text part is empty ("Unable to submit request because it has an empty text parameter"):
//!   an empty text block is left out, unreported (it carries nothing the model reads); the one
//!   empty text part sent is the carrier of a thought signature (`{"text": "", "thoughtSignature"}`,
//!   as Gemini itself returns it). Text of whitespace only is sent. A result's text is a value in
//!   its `response` object, not a part: it may be empty;
//! - every content has parts ("contents.parts must not be empty"): a message left with nothing to
//!   send is dropped (reported), and the contents around it merge, so roles still alternate. An
//!   assistant message that makes calls always has them to send;
//! - the conversation opens with a user content when the input opens with a user message (a
//!   function call turn must come right after a user turn or a function response turn): if that
//!   message (and any user message right after it) is left with nothing to send, the first is
//!   sent as `EMPTY_MESSAGE` (`(empty message)`), reported as a placeholder.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::ServerTools;
use super::{
    Action, Arguments, BlockOut, CallIds, EMPTY_MESSAGE, EmptyArray, EmptyText, Item, Loss, MessageOut, Options, Part,
    Plan, Refusals, Replay, Role, SessionOut, SourceOut, Target, ToolEntry, Turns, joined_text, keep_opening, lower,
    object_arguments, offset_in, parse_in, result_parts, settings, to_vec, tool_entries, tool_losses,
};
use crate::canonical::{Block, ImageSource};
use crate::error::Error;

pub(super) const TARGET: Target = Target {
    dialect: "gemini",
    provider: "gemini",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: true,
    images: [true, false, false],
    image_media_types: &[],
    call_ids: CallIds::Optional,
    cites: None,
    server_tools: ServerTools::Nowhere,
};

const REFUSES: Refusals = Refusals { empty_text: EmptyText::Refused, non_user_opening: true };

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Instruction<'a>>,
    contents: EmptyArray,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolEntry<'a, ToolGroup<'a>>>,
}

#[derive(Serialize)]
struct Instruction<'a> {
    parts: [TextOnly<'a>; 1],
}

#[derive(Serialize)]
struct TextOnly<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<OutPart<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum OutPart<'a> {
    Part {
        #[serde(flatten)]
        kind: Kind<'a>,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    /// A provider part of this dialect, written as it was read.
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(untagged)]
enum Kind<'a> {
    Thought {
        text: &'a str,
        thought: bool,
    },
    Text {
        text: Cow<'a, str>,
    },
    Call {
        #[serde(rename = "functionCall")]
        function_call: Call<'a>,
    },
    Response {
        #[serde(rename = "functionResponse")]
        function_response: Response<'a>,
    },
    Inline {
        #[serde(rename = "inlineData")]
        inline_data: Inline<'a>,
    },
    File {
        #[serde(rename = "fileData")]
        file_data: File<'a>,
    },
}

#[derive(Serialize)]
struct Call<'a> {
    name: &'a str,
    args: Arguments<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
}

#[derive(Serialize)]
struct Response<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "response")]
    outcome: Outcome<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Outcome<'a> {
    Result { result: Cow<'a, str> },
    Error { error: Cow<'a, str> },
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Inline<'a> {
    mime_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct File<'a> {
    mime_type: &'static str,
    file_uri: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolGroup<'a> {
    function_declarations: Vec<FunctionDecl<'a>>,
}

#[derive(Serialize)]
struct FunctionDecl<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a RawValue,
}

/// The id sent with a call or its result: none when it is empty or msgwire made it up.
fn sent_id(id: &str) -> Option<&str> {
    super::ids::sent(TARGET.call_ids, id).then_some(id)
}

/// The media type of an image URL, from its extension.
fn url_media_type(url: &str) -> &'static str {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e).to_ascii_lowercase();
    match extension.as_str() {
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "heif" => "image/heif",
        _ => "image/jpeg",
    }
}

/// The parts of a user or assistant message.
struct Parts<'a> {
    out: Vec<OutPart<'a>>,
    /// A signature waiting for the next part.
    signature: Option<&'a str>,
}

impl<'a> Parts<'a> {
    fn push(&mut self, kind: Kind<'a>) {
        self.out.push(OutPart::Part { kind, thought_signature: self.signature.take() });
    }

    fn raw(&mut self, raw: &'a RawValue) {
        if self.signature.is_some() {
            self.push(Kind::Text { text: Cow::Borrowed("") });
        }
        self.out.push(OutPart::Raw(raw));
    }

    fn finish(mut self) -> Vec<OutPart<'a>> {
        if self.signature.is_some() {
            self.push(Kind::Text { text: Cow::Borrowed("") });
        }
        self.out
    }
}

fn message_parts<'a>(
    message: usize,
    blocks: &'a [Block],
    role: Role,
    provider: Option<&str>,
    plan: &'a Plan<'_>,
    policy: super::Policy,
    report: &mut Vec<Loss>,
) -> Result<Vec<OutPart<'a>>, Error> {
    let native = provider.is_none_or(|p| p == TARGET.provider);
    let mut parts = Parts { out: Vec::with_capacity(blocks.len()), signature: None };
    for part in lower(message, blocks, role, provider, &TARGET, policy, report) {
        match part {
            // An empty text part is refused, except as the carrier of a waiting signature: the
            // reader gives `{"text": "", "thoughtSignature"}` before another part back as a signed
            // thinking block and an empty text, and this writes it back as it was.
            Part::Text(text) if REFUSES.empty_text.refuses(&text) && parts.signature.is_none() => {}
            Part::Text(text) => parts.push(Kind::Text { text }),
            // never lowered for this target (it takes no citations)
            Part::Cited { text, .. } => parts.push(Kind::Text { text: Cow::Borrowed(&text.text) }),
            Part::Image(ImageSource::Base64 { media_type, data }) => {
                parts.push(Kind::Inline { inline_data: Inline { mime_type: media_type, data } });
            }
            Part::Image(ImageSource::Url { url }) => {
                parts.push(Kind::File { file_data: File { mime_type: url_media_type(url), file_uri: url } });
            }
            Part::Thinking { block, thinking, signature } => {
                let signature = (!signature.is_empty()).then_some(signature);
                if !native && signature.is_some() {
                    report.push(Loss::new(
                        message,
                        Some(block),
                        "signature",
                        Action::Strip,
                        "a signature of another provider is never sent to Gemini",
                    ));
                }
                let signature = signature.filter(|_| native);
                if thinking.is_empty() {
                    if signature.is_some() {
                        parts.signature = signature;
                    }
                } else if policy.thinking == Replay::Keep {
                    let thought_signature = signature.or_else(|| parts.signature.take());
                    parts.out.push(OutPart::Part {
                        kind: Kind::Thought { text: thinking, thought: true },
                        thought_signature,
                    });
                } else {
                    report.push(Loss::new(
                        message,
                        Some(block),
                        "thinking",
                        Action::Drop,
                        "Gemini thinking text is sent only by policy (thinking=keep)",
                    ));
                }
            }
            Part::ToolCall { block, call } => {
                let args = object_arguments(message, block, call, policy, report)?;
                let id = sent_id(plan.call_id(message, block, &call.id));
                parts.push(Kind::Call { function_call: Call { name: &call.name, args, id } });
            }
            Part::Raw(raw) => parts.raw(raw),
            // never lowered for this target (paths, redacted thinking)
            Part::Image(ImageSource::Path { .. }) | Part::Redacted(_) | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
    Ok(parts.finish())
}

/// The conversation array of the request: `contents`.
pub(super) const ARRAY: &str = "contents";

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
    // the last turn, open until the next item takes the other role
    let mut open: Option<Content<'_>> = None;
    let mut first_role = None;
    for (k, &item) in plan.items.iter().enumerate().skip(from) {
        let at = report.len();
        let (i, role, parts) = match item {
            Item::User(i, m) => (i, "user", message_parts(i, &m.content, Role::User, None, plan, policy, report)?),
            Item::Assistant(i, m) => {
                let provider = m.provider.as_deref();
                (i, "model", message_parts(i, &m.content, Role::Assistant, provider, plan, policy, report)?)
            }
            Item::ToolResult(i, r, call) => {
                // the text goes in the `response` object, where it may be empty
                let lowered = result_parts(i, r, &TARGET, EmptyText::Sent, policy, report);
                let outcome = if let [Part::Raw(raw)] = lowered.as_slice() {
                    Outcome::Raw(raw)
                } else {
                    let mut texts: Vec<Cow<'_, str>> = Vec::new();
                    for p in lowered {
                        match p {
                            Part::Text(text) => texts.push(text),
                            Part::Raw(raw) => texts.push(Cow::Borrowed(raw.get())),
                            _ => {}
                        }
                    }
                    let text =
                        if texts.len() == 1 { texts.pop().unwrap_or_default() } else { Cow::Owned(texts.join("\n\n")) };
                    if super::is_error(r) { Outcome::Error { error: text } } else { Outcome::Result { result: text } }
                };
                // the call's name: Gemini matches a response to its call by it
                let name = call.call.name.as_str();
                let function_response = Response { name, id: sent_id(plan.id(&call)), outcome };
                (i, "user", vec![OutPart::Part { kind: Kind::Response { function_response }, thought_signature: None }])
            }
            Item::Missing(call) => {
                let outcome = Outcome::Error { error: Cow::Borrowed(options.missing_result()) };
                let function_response = Response { name: &call.call.name, id: sent_id(plan.id(&call)), outcome };
                let part = OutPart::Part { kind: Kind::Response { function_response }, thought_signature: None };
                (call.message, "user", vec![part])
            }
        };
        if parts.is_empty() {
            report.push(Loss::nothing_left(i));
        } else if let Some(last) = open.as_mut().filter(|c| c.role == role) {
            last.parts.extend(parts);
        } else {
            if let Some(turn) = open.take() {
                out.push(&turn)?;
            }
            first_role.get_or_insert(role);
            out.begin(k, at);
            open = Some(Content { role, parts });
        }
    }
    if let Some(turn) = open.take() {
        out.push(&turn)?;
    }
    // resumed, the opening turns are kept ones: the rule below was applied when they were written
    if from == 0 && keep_opening(plan, REFUSES, first_role == Some("user"), report).is_some() {
        let text = OutPart::Part { kind: Kind::Text { text: Cow::Borrowed(EMPTY_MESSAGE) }, thought_signature: None };
        out.prepend(&Content { role: "user", parts: vec![text] })?;
    }
    Ok(())
}

/// The body around the conversation array (written empty): system instruction, tools, settings.
pub(super) fn body(system: Option<&str>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    tool_losses(options, "Gemini", false, false, report);
    let declared = if options.tools.is_empty() {
        Vec::new()
    } else {
        vec![ToolGroup {
            function_declarations: options
                .tools
                .iter()
                .map(|t| FunctionDecl {
                    name: &t.name,
                    description: t.description.as_deref(),
                    parameters: t.parameters,
                })
                .collect(),
        }]
    };
    let system = system.filter(|s| !REFUSES.empty_text.refuses(s));
    let system_instruction = system.map(|text| Instruction { parts: [TextOnly { text }] });
    let tools = tool_entries(declared, options, TARGET.dialect);
    let body = to_vec(&Body { system_instruction, contents: EmptyArray, tools })?;
    settings::gemini::DIALECT.finish(body, options, report)
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InBody<'a> {
    #[serde(borrow, default)]
    system_instruction: Option<InInstruction<'a>>,
    #[serde(borrow)]
    contents: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct InInstruction<'a> {
    #[serde(borrow)]
    parts: &'a RawValue,
}

#[derive(Deserialize)]
struct InContent<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    parts: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InPart<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(borrow, default)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function_call: Option<InCall<'a>>,
    #[serde(borrow, default)]
    function_response: Option<InResponse<'a>>,
    #[serde(borrow, default)]
    inline_data: Option<InInline<'a>>,
    #[serde(borrow, default)]
    file_data: Option<InFile<'a>>,
}

#[derive(Deserialize)]
struct InCall<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct InResponse<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InInline<'a> {
    #[serde(borrow)]
    mime_type: Cow<'a, str>,
    #[serde(borrow)]
    data: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InFile<'a> {
    #[serde(borrow, default)]
    mime_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    file_uri: Cow<'a, str>,
}

/// A `response` of exactly `{"result": "<text>"}` or `{"error": "<text>"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
enum InOutcome<'a> {
    #[serde(rename = "result", borrow)]
    Result(Cow<'a, str>),
    #[serde(rename = "error", borrow)]
    Error(Cow<'a, str>),
}

fn signed(signature: Option<Cow<'_, str>>) -> Option<BlockOut<'_>> {
    signature.filter(|s| !s.is_empty()).map(|s| BlockOut::Thinking {
        thinking: Cow::Borrowed(""),
        signature: Some(s),
        redacted: None,
    })
}

/// The canonical blocks of one user or model part (`None`: a tool result, read apart).
fn part_blocks<'a>(
    raw: &'a RawValue,
    p: InPart<'a>,
    model: bool,
    last: bool,
    call_id: impl FnOnce() -> String,
) -> Vec<BlockOut<'a>> {
    let keep = || vec![BlockOut::ProviderPart { dialect: TARGET.dialect, part: raw }];
    match p {
        InPart { function_call: Some(call), text: None, inline_data: None, file_data: None, .. } if model => {
            let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| Cow::Owned(call_id()));
            let arguments = call.args.map_or(Cow::Borrowed("{}"), |a| Cow::Borrowed(a.get()));
            let mut out: Vec<BlockOut<'a>> = signed(p.thought_signature).into_iter().collect();
            out.push(BlockOut::ToolCall { id, name: call.name, arguments });
            out
        }
        InPart { text: Some(text), thought: Some(true), function_call: None, .. } if model => {
            vec![BlockOut::Thinking { thinking: text, signature: p.thought_signature, redacted: None }]
        }
        InPart {
            text: Some(text),
            thought: None | Some(false),
            function_call: None,
            inline_data: None,
            file_data: None,
            ..
        } => {
            let signature = signed(p.thought_signature);
            // a signature on an empty last part is written back as that part (see `Parts::finish`)
            let carrier = last && text.is_empty() && signature.is_some();
            let mut out: Vec<BlockOut<'a>> = signature.into_iter().collect();
            if !carrier {
                out.push(BlockOut::Text { text });
            }
            out
        }
        InPart {
            inline_data: Some(d),
            text: None,
            function_call: None,
            file_data: None,
            thought_signature: None,
            ..
        } if !model => {
            vec![BlockOut::Image { source: SourceOut::Base64 { media_type: d.mime_type, data: d.data }, detail: None }]
        }
        InPart {
            file_data: Some(f),
            text: None,
            function_call: None,
            inline_data: None,
            thought_signature: None,
            ..
        } if !model && f.mime_type.as_deref() == Some(url_media_type(&f.file_uri)) => {
            vec![BlockOut::Image { source: SourceOut::Url { url: f.file_uri }, detail: None }]
        }
        _ => keep(),
    }
}

pub(super) fn read(body: &[u8]) -> Result<SessionOut<'_>, Error> {
    let parsed: InBody<'_> =
        serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
    let system_prompt = parsed.system_instruction.map(|s| joined_text(body, s.parts)).transpose()?;
    let mut messages = Vec::with_capacity(parsed.contents.len());
    // The calls of the last model content not answered yet: (name, id).
    let mut pending: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    for (index, raw) in parsed.contents.into_iter().enumerate() {
        let content: InContent<'_> = parse_in(body, raw)?;
        let model = match content.role.as_deref() {
            Some("model") => true,
            None | Some("user") => false,
            Some(other) => {
                let detail = format!("a content with role {other:?} (known: user, model)");
                return Err(Error::body("request body", detail, None).shifted(offset_in(body, raw)));
            }
        };
        if model {
            pending.clear();
            let mut out = Vec::new();
            let mut calls = 0;
            let count = content.parts.len();
            for (n, raw) in content.parts.into_iter().enumerate() {
                let p: InPart<'_> = parse_in(body, raw)?;
                let blocks = part_blocks(raw, p, true, n + 1 == count, || format!("call_{index}_{calls}"));
                for b in &blocks {
                    if let BlockOut::ToolCall { id, name, .. } = b {
                        pending.push((name.clone(), id.clone()));
                        calls += 1;
                    }
                }
                out.extend(blocks);
            }
            messages.push(MessageOut::Assistant { content: out, provider: TARGET.provider, name: None });
            continue;
        }
        let mut waiting = Vec::new();
        for (n, raw) in content.parts.into_iter().enumerate() {
            let mut p: InPart<'_> = parse_in(body, raw)?;
            let Some(response) = p.function_response.take() else {
                waiting.extend(part_blocks(raw, p, false, false, String::new));
                continue;
            };
            if !waiting.is_empty() {
                messages.push(MessageOut::User { content: std::mem::take(&mut waiting), name: None });
            }
            let at = match &response.id {
                Some(id) => pending.iter().position(|(_, i)| i == id),
                None => pending.iter().position(|(name, _)| *name == response.name),
            };
            let call = at.map(|at| pending.remove(at));
            let tool_call_id = match (response.id, call) {
                (Some(id), _) | (None, Some((_, id))) => id,
                (None, None) => Cow::Owned(format!("call_{index}_{n}")),
            };
            let outcome = response.response.and_then(|r| serde_json::from_str::<InOutcome<'_>>(r.get()).ok());
            let (content, is_error) = match (outcome, response.response) {
                (Some(InOutcome::Result(text)), _) if text.is_empty() => (Vec::new(), false),
                (Some(InOutcome::Result(text)), _) => (vec![BlockOut::Text { text }], false),
                (Some(InOutcome::Error(text)), _) => (vec![BlockOut::Text { text }], true),
                (None, Some(part)) => (vec![BlockOut::ProviderPart { dialect: TARGET.dialect, part }], false),
                (None, None) => (Vec::new(), false),
            };
            messages.push(MessageOut::ToolResult {
                tool_call_id,
                tool_name: Some(response.name),
                content,
                is_error,
                status: is_error.then_some("error"),
                cache_control: None,
            });
        }
        if !waiting.is_empty() {
            messages.push(MessageOut::User { content: waiting, name: None });
        }
    }
    let (tools, settings) = settings::gemini::DIALECT.read(body)?;
    Ok(SessionOut { system_prompt, messages, tools, settings })
}

#[cfg(test)]
mod tests {
    use super::super::{Converted, Policy, from_request_json, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn convert(messages: &str, options: &Options<'_>) -> Result<Converted, Error> {
        to_request_json(messages.as_bytes(), DialectName::Gemini, options)
    }

    fn body(converted: &Converted) -> String {
        String::from_utf8(converted.body.clone()).expect("utf-8")
    }

    #[test]
    fn signatures_attach_to_the_next_part_and_results_are_wrapped() {
        let doc = r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"gemini","content":[
                {"type":"thinking","thinking":"plan"},
                {"type":"thinking","signature":"SIG"},{"type":"tool_call","id":"c1","name":"f","arguments":"{\"a\": 1}"},
                {"type":"tool_call","id":"call_1_1","name":"g"},{"type":"thinking","signature":"END"}]},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1","content":[{"type":"text","text":"one"}]},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"call_1_1","is_error":true,"status":"error",
             "content":[{"type":"text","text":"bad"}]}
        ]"#;
        let converted = convert(doc, &Options { system_prompt: Some("sys".into()), ..Options::default() }).expect("ok");
        assert_eq!(
            body(&converted),
            concat!(
                r#"{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"q"}]},"#,
                r#"{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a": 1},"id":"c1"},"thoughtSignature":"SIG"},"#,
                r#"{"functionCall":{"name":"g","args":{}}},{"text":"","thoughtSignature":"END"}]},"#,
                r#"{"role":"user","parts":[{"functionResponse":{"name":"f","id":"c1","response":{"result":"one"}}},"#,
                r#"{"functionResponse":{"name":"g","response":{"error":"bad"}}}]}]}"#
            )
        );
        let kinds: Vec<(usize, Option<usize>, &str)> =
            converted.report.iter().map(|l| (l.message, l.block, l.kind)).collect();
        assert_eq!(kinds, [(1, Some(0), "thinking")]);
        let policy = Policy { thinking: Replay::Keep, ..Policy::default() };
        let kept = body(&convert(doc, &Options { policy, ..Options::default() }).expect("ok"));
        assert!(kept.contains(r#"{"role":"model","parts":[{"text":"plan","thought":true},"#), "{kept}");
    }

    #[test]
    fn reads_back_signatures_and_results() {
        let body = br#"{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]},
            {"role":"model","parts":[{"text":"t","thought":true},{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"S"}]},
            {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"error":"x"}}},{"text":"and?"}]}]}"#;
        let session = String::from_utf8(from_request_json(body, DialectName::Gemini).expect("reads")).expect("utf-8");
        assert_eq!(
            session,
            concat!(
                r#"{"system_prompt":"s","messages":[{"type":"user","content":[{"type":"text","text":"hi"}]},"#,
                r#"{"type":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"thinking","signature":"S"},"#,
                r#"{"type":"tool_call","id":"call_1_0","name":"f","arguments":"{\"a\":1}"}],"provider":"gemini"},"#,
                r#"{"type":"tool_result","tool_call_id":"call_1_0","tool_name":"f","content":[{"type":"text","text":"x"}],"is_error":true,"status":"error"},"#,
                r#"{"type":"user","content":[{"type":"text","text":"and?"}]}]}"#
            )
        );
    }
}
