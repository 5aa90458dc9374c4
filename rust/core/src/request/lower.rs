//! The lowering: each canonical block becomes a part the dialect writes, or text, or nothing,
//! as the replay policy and the target's abilities say; every lossy step is reported.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Action, CallIds, Loss, Malformed, Policy, Replay, file_text, image_text, marked, mcp_text};
use crate::canonical::{self, Block, ImageBlock, ImageSource, ModeUsed, ToolResultMessage};
use crate::error::Error;

/// Which message a block is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
    ToolResult,
}

/// What a dialect's request can carry (declared in each dialect file).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// The dialect's name (`provider_part` blocks of this dialect are written back).
    pub dialect: &'static str,
    /// The `provider` of assistant messages whose thinking is native.
    pub provider: &'static str,
    /// Assistant messages carry thinking (with its signature, when `signed`).
    pub thinking: bool,
    /// Thinking needs a signature to be sent as thinking (else it is foreign, see [`Policy`]).
    pub signed: bool,
    /// Assistant messages carry redacted thinking (opaque data).
    pub redacted: bool,
    /// Images may be URLs (else only base64 images are sent as images).
    pub url_images: bool,
    /// Which messages may hold an image part: user, assistant, tool result.
    pub images: [bool; 3],
    /// The image media types a base64 image may have (empty: any).
    pub image_media_types: &'static [&'static str],
    /// How requests carry tool-call ids, and which they accept.
    pub call_ids: CallIds,
    /// The writer takes whole text blocks ([`Part::Cited`]: their citations and item ids), and
    /// writes the citations this says yes to (the others are reported as dropped).
    pub cites: Option<fn(&canonical::Citation) -> bool>,
    /// Where the dialect's own server tool blocks go.
    pub server_tools: ServerTools,
}

/// Where a dialect writes its own server tool calls and results (those of another dialect
/// follow [`Policy::server_tools`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerTools {
    /// As parts of the message ([`Part::Raw`], the provider's object).
    Parts,
    /// Elsewhere in the body, by the writer (Gemini's grounding metadata, on the candidate).
    Apart,
    /// Nowhere: dropped, reported.
    Nowhere,
}

/// The empty content a dialect's requests refuse (declared in each dialect file beside its
/// [`Target`]; apart from it, since a provider's responses may hold what its requests may not).
///
/// A message left with nothing to send is dropped by every writer (reported); an assistant
/// message that makes calls always has them to send, and a tool result is always sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refusals {
    /// Which text parts the provider refuses.
    pub empty_text: EmptyText,
    /// The provider refuses a conversation that opens with the model's turn: a user message
    /// that opened the input is sent as [`EMPTY_MESSAGE`](super::EMPTY_MESSAGE) rather than dropped (see
    /// [`keep_opening`](super::keep_opening)).
    pub non_user_opening: bool,
}

/// Which text a provider refuses as a text part (block) of a request.
///
/// Such text carries nothing a model reads: it is left out without a report entry. The
/// message it leaves empty, if any, is dropped and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmptyText {
    /// Any text is sent, `""` included.
    Sent,
    /// `""` is refused (Gemini: "Unable to submit request because it has an empty text parameter").
    Refused,
    /// Text of whitespace only is refused too (Anthropic: "text content blocks must contain
    /// non-whitespace text").
    BlankRefused,
}

impl EmptyText {
    /// Whether the provider refuses `text` as a text part.
    pub fn refuses(self, text: &str) -> bool {
        match self {
            Self::Sent => false,
            Self::Refused => text.is_empty(),
            Self::BlankRefused => text.chars().all(is_blank),
        }
    }

    /// `parts` without the text parts the provider refuses.
    pub fn strip(self, mut parts: Vec<Part<'_>>) -> Vec<Part<'_>> {
        if self != Self::Sent {
            parts.retain(|p| match p {
                Part::Text(text) => !self.refuses(text),
                Part::Cited { text, .. } => !self.refuses(&text.text),
                _ => true,
            });
        }
        parts
    }
}

/// Whitespace as a provider's check may count it: Unicode `White_Space` (Rust's), and what other
/// languages' checks add, U+001C-U+001F (Python's `str.isspace`) and U+FEFF (JavaScript's `\s`).
pub(crate) fn is_blank(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{1c}'..='\u{1f}' | '\u{feff}')
}

/// A block as the dialect writes it.
#[derive(Debug, Clone)]
pub(crate) enum Part<'a> {
    Text(Cow<'a, str>),
    /// A text block with citations or an item id, for a target that takes them
    /// ([`Target::cites`]); `block` indexes it in its message (for the report).
    Cited {
        block: usize,
        text: &'a canonical::TextBlock,
    },
    /// A URL or base64 image (never a path).
    Image(&'a ImageSource),
    Thinking {
        /// Index of the block in its message (for the report).
        block: usize,
        thinking: &'a str,
        signature: &'a str,
    },
    Redacted(&'a str),
    ToolCall {
        block: usize,
        call: &'a canonical::ToolCallBlock,
    },
    /// JSON written as is: a provider part of this dialect (or an unknown block kept by policy).
    Raw(&'a RawValue),
    /// A prompt-cache breakpoint after the part before it (only for a dialect that carries one).
    CacheBreak(&'a canonical::CacheControl),
    /// The `detail` of the image part before it (only for a dialect that carries one).
    Detail(&'a str),
}

/// Fields of messages and blocks that only some dialects carry (the others report them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Carries {
    /// `cache_control` breakpoints (Anthropic).
    pub cache_control: bool,
    /// An image's `detail` (OpenAI Chat, Responses).
    pub image_detail: bool,
    /// A message's participant `name` (OpenAI Chat).
    pub names: bool,
}

impl Carries {
    pub(crate) fn of(dialect: &str) -> Self {
        Self {
            cache_control: dialect == "anthropic",
            image_detail: matches!(dialect, "openai" | "openai-responses"),
            names: dialect == "openai",
        }
    }
}

/// The cache breakpoint and the image detail of a block, if it has them.
fn marks(block: &Block) -> (Option<&canonical::CacheControl>, Option<&str>) {
    match block {
        Block::Text(t) => (t.cache_control.as_ref(), None),
        Block::Image(i) => (i.cache_control.as_ref(), i.detail.as_deref()),
        Block::ToolCall(c) => (c.cache_control.as_ref(), None),
        _ => (None, None),
    }
}

/// An unknown block that holds a whole provider part (see the module documentation).
#[derive(Deserialize)]
struct ProviderPartIn<'a> {
    #[serde(rename = "type", borrow)]
    tag: Cow<'a, str>,
    #[serde(borrow)]
    dialect: Cow<'a, str>,
    #[serde(borrow)]
    part: &'a RawValue,
}

pub(crate) const PROVIDER_PART: &str = "provider_part";

/// The parts of one message's blocks for `target`; every lossy step goes to `report`.
pub(crate) fn lower<'a>(
    message: usize,
    blocks: &'a [Block],
    role: Role,
    provider: Option<&str>,
    target: &Target,
    policy: Policy,
    report: &mut Vec<Loss>,
) -> Vec<Part<'a>> {
    let mut parts = Vec::with_capacity(blocks.len());
    let carries = Carries::of(target.dialect);
    for (b, block) in blocks.iter().enumerate() {
        let sent = parts.len();
        let mut loss = |kind: &'static str, action: Action, reason: Cow<'static, str>| {
            report.push(Loss::new(message, Some(b), kind, action, reason));
        };
        match block {
            Block::Text(t) => {
                let writes = target.cites.unwrap_or(|_| false);
                let dropped: Vec<&str> = t.citations.iter().filter(|c| !writes(c)).map(|c| c.kind.as_str()).collect();
                if !dropped.is_empty() {
                    let reason = format!("citations the target cannot carry ({})", dropped.join(", "));
                    loss("citation", Action::Drop, reason.into());
                }
                if target.cites.is_some() && (!t.citations.is_empty() || t.item_id.is_some()) {
                    parts.push(Part::Cited { block: b, text: t });
                } else {
                    parts.push(Part::Text(Cow::Borrowed(t.text.as_str())));
                }
            }
            Block::ServerToolCall(_) | Block::ServerToolResult(_) => {
                let (part, step) = lower_server_tool(block, role, target, policy);
                parts.extend(part);
                if let Some((kind, action, why)) = step {
                    loss(kind, action, why);
                }
            }
            Block::Thinking(t) => {
                let (part, step) = lower_thinking(b, t, role, provider, target, policy);
                parts.extend(part);
                if let Some((kind, action, why)) = step {
                    loss(kind, action, why);
                }
            }
            Block::Image(image) => {
                let (part, step) = lower_image(image, role, target, policy);
                parts.extend(part);
                if let Some((action, why)) = step {
                    loss("image", action, why);
                }
            }
            Block::FileReference(file) => {
                if policy.file_reference == Replay::Drop {
                    loss("file_reference", Action::Drop, "the policy drops file references".into());
                } else {
                    parts.push(Part::Text(Cow::Owned(file_text(file))));
                    loss("file_reference", Action::ToText, "no provider has a file reference part".into());
                }
            }
            Block::McpResource(resource) => {
                if policy.mcp_resource == Replay::Drop {
                    loss("mcp_resource", Action::Drop, "the policy drops MCP resources".into());
                } else {
                    parts.push(Part::Text(Cow::Owned(mcp_text(resource))));
                    loss("mcp_resource", Action::ToText, "no provider has an MCP resource part".into());
                }
            }
            Block::ToolCall(call) => {
                if role == Role::Assistant {
                    parts.push(Part::ToolCall { block: b, call });
                } else {
                    loss("tool_call", Action::Drop, "a tool call outside an assistant message".into());
                }
            }
            Block::Unknown(raw) => {
                let part =
                    serde_json::from_str::<ProviderPartIn<'_>>(raw.get()).ok().filter(|p| p.tag == PROVIDER_PART);
                match (part, policy.unknown) {
                    (Some(p), _) if p.dialect == target.dialect => parts.push(Part::Raw(p.part)),
                    (_, Replay::Drop) => loss("unknown_block", Action::Drop, unknown_reason(raw)),
                    (p, Replay::Keep) => {
                        parts.push(Part::Raw(p.map_or(&**raw, |p| p.part)));
                        loss("unknown_block", Action::Fallback, unknown_reason(raw));
                    }
                    (p, Replay::ToText) => {
                        parts.push(Part::Text(Cow::Borrowed(p.map_or(&**raw, |p| p.part).get())));
                        loss("unknown_block", Action::ToText, unknown_reason(raw));
                    }
                }
            }
        }
        if parts.len() > sent {
            mark(&mut parts, message, b, block, target.dialect, carries, report);
        }
    }
    parts
}

/// An image as the target takes it: its image part, its recognized text, or nothing (the step
/// taken, when the image is not sent as it is).
fn lower_image<'a>(
    image: &'a ImageBlock,
    role: Role,
    target: &Target,
    policy: Policy,
) -> (Option<Part<'a>>, Option<(Action, Cow<'static, str>)>) {
    let allowed = target.images[role as usize];
    let sendable = match &image.source {
        ImageSource::Url { .. } => target.url_images,
        ImageSource::Base64 { media_type, .. } => {
            target.image_media_types.is_empty() || target.image_media_types.contains(&media_type.as_str())
        }
        ImageSource::Path { .. } => false,
    };
    let read_by_ocr = image.mode_used == Some(ModeUsed::Ocr);
    if policy.images == Replay::Keep && allowed && sendable && !read_by_ocr {
        return (Some(Part::Image(&image.source)), None);
    }
    if policy.images == Replay::Drop {
        return (None, Some((Action::Drop, "the policy drops images".into())));
    }
    let reason = image_reason(policy.images, allowed, sendable, read_by_ocr);
    match image_text(image) {
        Some(text) => (Some(Part::Text(Cow::Owned(text))), Some((Action::ToText, reason.into()))),
        None => (None, Some((Action::Drop, format!("{reason}, and it has no recognized text").into()))),
    }
}

/// After the parts of `block`: its image detail and cache breakpoint as marker parts where the
/// dialect carries them, reported where it does not.
fn mark<'a>(
    parts: &mut Vec<Part<'a>>,
    message: usize,
    b: usize,
    block: &'a Block,
    dialect: &str,
    carries: Carries,
    report: &mut Vec<Loss>,
) {
    let (cache, detail) = marks(block);
    if let (Some(detail), Some(Part::Image(_))) = (detail, parts.last()) {
        if carries.image_detail {
            parts.push(Part::Detail(detail));
        } else {
            let reason = format!("{dialect} images have no `detail`");
            report.push(Loss::new(message, Some(b), "image_detail", Action::Strip, reason));
        }
    }
    if let Some(cache) = cache {
        if carries.cache_control {
            parts.push(Part::CacheBreak(cache));
        } else {
            let reason = format!("{dialect} has no cache breakpoints (its prompt caching is automatic)");
            report.push(Loss::new(message, Some(b), "cache_control", Action::Strip, reason));
        }
    }
}

/// A step of [`lower`] that loses something: `(kind, action, reason)`.
type Lost = Option<(&'static str, Action, Cow<'static, str>)>;

/// The part of a server tool call or result: the provider's object for its own dialect where
/// the dialect has a place for it, else what the policy says (see [`Policy::server_tools`]).
fn lower_server_tool<'a>(block: &'a Block, role: Role, target: &Target, policy: Policy) -> (Option<Part<'a>>, Lost) {
    let (kind, dialect, raw, text) = match block {
        Block::ServerToolCall(c) => {
            let text = marked("server_tool_call", &[("name", &c.name), ("kind", &c.kind)], &c.arguments);
            ("server_tool_call", c.dialect.as_str(), &c.raw, text)
        }
        Block::ServerToolResult(r) => {
            let mut attributes = vec![("tool_call_id", r.tool_call_id.as_str()), ("kind", r.kind.as_str())];
            if r.is_error {
                attributes.push(("is_error", "true"));
            }
            ("server_tool_result", r.dialect.as_str(), &r.raw, marked("server_tool_result", &attributes, r.raw.get()))
        }
        _ => return (None, None),
    };
    if role != Role::Assistant {
        return (None, Some((kind, Action::Drop, "a server tool block outside an assistant message".into())));
    }
    if dialect == target.dialect {
        return match target.server_tools {
            ServerTools::Parts => (Some(Part::Raw(&raw.0)), None),
            ServerTools::Apart => (None, None),
            ServerTools::Nowhere => {
                (None, Some((kind, Action::Drop, format!("{dialect} has no place for it here").into())))
            }
        };
    }
    let reason = || format!("a server tool of another dialect ({dialect}), which the target cannot run").into();
    match policy.server_tools {
        Replay::Drop => (None, Some((kind, Action::Drop, reason()))),
        Replay::ToText | Replay::Keep => (Some(Part::Text(Cow::Owned(text))), Some((kind, Action::ToText, reason()))),
    }
}

/// The part of a thinking block (see [`Policy`]), and what was lost.
fn lower_thinking<'a>(
    block: usize,
    t: &'a canonical::ThinkingBlock,
    role: Role,
    provider: Option<&str>,
    target: &Target,
    policy: Policy,
) -> (Option<Part<'a>>, Lost) {
    let native = provider.is_none_or(|p| p == target.provider);
    let sendable = target.thinking && role == Role::Assistant;
    let reason = || thinking_reason(sendable, role, native, provider);
    if let Some(data) = &t.redacted {
        return if sendable && target.redacted && (native || policy.redacted_thinking == Replay::Keep) {
            (Some(Part::Redacted(data)), None)
        } else if sendable && !target.redacted {
            (None, Some(("redacted_thinking", Action::Drop, "the target's requests carry no redacted thinking".into())))
        } else {
            (None, Some(("redacted_thinking", Action::Drop, reason())))
        };
    }
    let keep = native || policy.thinking == Replay::Keep;
    match (&t.signature, policy.thinking) {
        (Some(signature), _) if sendable && keep => {
            (Some(Part::Thinking { block, thinking: &t.thinking, signature }), None)
        }
        // thinking with its provider's item id names that item (Responses), signed or not
        (None, _) if sendable && keep && ((!target.signed && !t.thinking.is_empty()) || t.item_id.is_some()) => {
            (Some(Part::Thinking { block, thinking: &t.thinking, signature: "" }), None)
        }
        (_, Replay::Drop) => (None, Some(("thinking", Action::Drop, reason()))),
        _ if t.thinking.is_empty() => (None, Some(("thinking", Action::Drop, "thinking without text".into()))),
        _ => (
            Some(Part::Text(Cow::Owned(marked("thinking", &[], &t.thinking)))),
            Some(("thinking", Action::ToText, reason())),
        ),
    }
}

/// The parts of a tool result: its blocks, or its error message when it has no content
/// (`empty_text`: the text the provider refuses in a result, left out).
pub(crate) fn result_parts<'a>(
    message: usize,
    result: &'a ToolResultMessage,
    target: &Target,
    empty_text: EmptyText,
    policy: Policy,
    report: &mut Vec<Loss>,
) -> Vec<Part<'a>> {
    let mut parts = empty_text.strip(lower(message, &result.content, Role::ToolResult, None, target, policy, report));
    if let (true, Some(error)) = (parts.is_empty(), &result.error) {
        if !empty_text.refuses(&error.message) {
            parts.push(Part::Text(Cow::Borrowed(&error.message)));
        }
    }
    parts
}

/// Tool-call arguments as a JSON object, for the targets that need one (see [`object_arguments`]).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Arguments<'a> {
    /// The arguments' JSON object, embedded as it was received.
    Raw(&'a RawValue),
    /// Empty arguments: `{}`.
    Empty {},
    /// Arguments that are not a JSON object: `{"_raw": "<the text>"}`.
    Wrapped {
        #[serde(rename = "_raw")]
        raw: &'a str,
    },
}

/// A tool call's arguments as a JSON object: the object embedded as it was received; empty
/// arguments are `{}`; arguments that are not a JSON object (malformed, or an array) are sent as
/// `{"_raw": "<the text>"}` and reported, or refused by policy.
pub(crate) fn object_arguments<'a>(
    message: usize,
    block: usize,
    call: &'a canonical::ToolCallBlock,
    policy: Policy,
    report: &mut Vec<Loss>,
) -> Result<Arguments<'a>, Error> {
    let arguments = call.arguments.as_str();
    match as_object(arguments) {
        Ok(object) => Ok(object),
        Err(what) => {
            if policy.malformed_arguments == Malformed::Error {
                let detail = format!("the arguments of tool call {:?} (message {message}) are {what}", call.id);
                return Err(Error::body("tool call arguments", detail, None));
            }
            let reason = format!("arguments {what}: sent as {{\"_raw\": <the text>}}");
            report.push(Loss::new(message, Some(block), "arguments", Action::Fallback, reason));
            Ok(Arguments::Wrapped { raw: arguments })
        }
    }
}

/// [`object_arguments`] written into `out`, wrapped when not an object and without a report (for
/// a stream transcoder's targets that send arguments as an object: Gemini, Ollama).
pub(crate) fn json_object_arguments(out: &mut Vec<u8>, arguments: &str) {
    let object = as_object(arguments).unwrap_or(Arguments::Wrapped { raw: arguments });
    // Writing into a Vec cannot fail.
    let _ = crate::json_out::to_writer(out, &object);
}

/// The rule of [`object_arguments`]: `arguments` as the object it is (or `{}` when empty), else
/// what it is instead (`not valid JSON`, `not a JSON object`).
fn as_object(arguments: &str) -> Result<Arguments<'_>, &'static str> {
    if arguments.trim().is_empty() {
        return Ok(Arguments::Empty {});
    }
    // serde_json does not check a raw value's escapes: a lone surrogate (`"\ud800"`) is not JSON
    // either, and embedded it would make the body invalid
    let surrogate = arguments.contains("\\u") && crate::partial::validate(arguments, usize::MAX).is_err();
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') && !surrogate => Ok(Arguments::Raw(raw)),
        Ok(_) if !surrogate => Err("not a JSON object"),
        _ => Err("not valid JSON"),
    }
}

/// A call's arguments as a JSON string field carries them (OpenAI Chat, Responses): the text as
/// received, `"{}"` for none (`json.loads`, which the SDKs' users call on it, refuses `""`).
pub(crate) fn arguments_text(call: &canonical::ToolCallBlock) -> &str {
    if call.arguments.trim().is_empty() { "{}" } else { &call.arguments }
}

/// The text blocks (or the thinking) of one reply as one string, for a dialect whose message has
/// one: concatenated as they are, as a stream of the same message carries them (its deltas
/// add up) and as `AssistantMessage.text` and the providers' SDKs (`output_text`, `.text`) join
/// them. A provider splits one reply into blocks mid-sentence (Anthropic at each citation), so
/// nothing is put between them; only a block sent as marked text (a file, thinking as text:
/// [`marked`](fn@marked)) stands apart, a blank line on each side. Borrowed when there is one.
pub(crate) fn join_reply(mut texts: Vec<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    let is_marked = |t: &str| t.starts_with('<') && t.ends_with('>');
    match texts.len() {
        0 => None,
        1 => texts.pop(),
        _ => {
            let mut out = String::with_capacity(texts.iter().map(|t| t.len() + 2).sum());
            for (i, text) in texts.iter().enumerate() {
                if i > 0 && (is_marked(text) || is_marked(&texts[i - 1])) {
                    out.push_str("\n\n");
                }
                out.push_str(text);
            }
            Some(Cow::Owned(out))
        }
    }
}

/// Whether a tool result reports a failure (`is_error`, or a status other than success).
pub(crate) fn is_error(result: &ToolResultMessage) -> bool {
    result.is_error || result.status != canonical::ToolStatus::Success
}

fn thinking_reason(sendable: bool, role: Role, native: bool, provider: Option<&str>) -> Cow<'static, str> {
    match (sendable, native, provider) {
        _ if role != Role::Assistant => "thinking outside an assistant message".into(),
        (false, _, _) => "the target's requests carry no thinking".into(),
        (true, false, Some(p)) => format!("thinking made by another provider ({p})").into(),
        (true, _, _) => "thinking without a signature".into(),
    }
}

fn image_reason(policy: Replay, allowed: bool, sendable: bool, read_by_ocr: bool) -> &'static str {
    match (policy, allowed, sendable) {
        (Replay::ToText, _, _) => "the policy sends images as their recognized text",
        _ if read_by_ocr => "the image was read by OCR: its text is sent",
        (_, false, _) => "the target has no image part in this message",
        _ => "the image source cannot be sent (a local path, or an unsupported media type)",
    }
}

fn unknown_reason(raw: &RawValue) -> Cow<'static, str> {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        tag: Option<Cow<'a, str>>,
        #[serde(borrow)]
        dialect: Option<Cow<'a, str>>,
    }
    match serde_json::from_str::<Tag<'_>>(raw.get()) {
        Ok(Tag { tag: Some(t), dialect: Some(d) }) if t == PROVIDER_PART => {
            format!("a part of another dialect ({d})").into()
        }
        Ok(Tag { tag: Some(t), .. }) => format!("a block of a type this version does not know ({t})").into(),
        _ => "a block of a type this version does not know".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_the_same_object_in_a_request_and_in_a_transcoded_stream() {
        // a lone surrogate escape is not JSON: wrapped by both (a transcoded stream embedded it)
        let texts = ["", " ", r#"{"a":1}"#, " {\"a\": 1} ", "[1]", "null", "{", r#"{"a":"\ud83d\ude00"}"#];
        let lone = [r#"{"city": "T\ud83d-\ude00o"}"#, r#"{"a":"\udc00"}"#, r#"["\ud800"]"#];
        for text in texts.into_iter().chain(lone) {
            let call = canonical::ToolCallBlock {
                id: "c1".into(),
                name: "f".into(),
                arguments: text.into(),
                approval: canonical::Approval::default(),
                malformed: false,
                item_id: None,
                cache_control: None,
            };
            let mut report = Vec::new();
            let request = object_arguments(0, 0, &call, Policy::default(), &mut report).expect("wraps");
            let request = serde_json::to_string(&request).expect("writes");
            let mut stream = Vec::new();
            json_object_arguments(&mut stream, text);
            assert_eq!(String::from_utf8(stream).expect("utf-8"), request, "{text:?}");
            let wrapped = request.starts_with(r#"{"_raw":"#);
            assert_eq!(wrapped, !report.is_empty(), "{text:?}: wrapped exactly when reported");
            if lone.contains(&text) {
                assert_eq!(report[0].reason, "arguments not valid JSON: sent as {\"_raw\": <the text>}", "{text:?}");
            }
        }
    }

    #[test]
    fn a_reply_runs_together_but_marked_text_stands_apart() {
        fn join(texts: &[&str]) -> Option<String> {
            join_reply(texts.iter().map(|t| Cow::Borrowed(*t)).collect()).map(Cow::into_owned)
        }
        assert_eq!(join(&[]), None);
        assert_eq!(join(&["Tokyo has ", "37 million", " people."]).as_deref(), Some("Tokyo has 37 million people."));
        let file = marked("file", &[("path", "a")], "x");
        assert_eq!(join(&["see", &file, "done"]).as_deref(), Some(format!("see\n\n{file}\n\ndone").as_str()));
    }
}
