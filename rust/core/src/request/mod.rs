//! Request bodies: a canonical session written as one provider's request fields, and back.
//!
//! [`to_request_json`] reads canonical JSON (a session envelope, or a bare array of messages)
//! and writes the fields of a provider's request body that carry the conversation: for OpenAI
//! Chat `{"messages", "tools"?}`, for Anthropic `{"system"?, "messages", "tools"?}`, for Ollama
//! `{"messages", "tools"?}`, for Gemini `{"systemInstruction"?, "contents", "tools"?}`, for OpenAI
//! Responses `{"instructions"?, "input", "tools"?}`. Each dialect file owns its provider's rules;
//! this module holds what they share (with [`object_arguments`], tool-call arguments as a JSON
//! object for the dialects that need one):
//!
//! - the plan ([`plan`](plan::plan)): which messages are sent, in what order, and with which
//!   tool-call ids, so that every call and result pair up as each provider requires: each tool
//!   result right after the assistant message that made its call, a result that answers no
//!   call (or a call already answered) dropped, a placeholder error result for a call without
//!   one, and every call id one the target accepts ([`ids`]); all of it reported.
//! - the lowering ([`lower`]): each canonical block becomes a [`Part`] the dialect can write, or
//!   text, or nothing, following the replay [`Policy`] and the dialect's [`Target`] abilities.
//!   Every lossy step is recorded as a [`Loss`].
//! - empty content ([`Refusals`], declared by each dialect): a text part the provider refuses
//!   (`""` for Gemini, blank for Anthropic) is left out unreported, as it carries nothing the
//!   model reads; a message left with nothing to send is dropped (reported) and the turns
//!   around it merge where roles must alternate; where the conversation must open with a user
//!   turn, a user message opening the input is sent as [`EMPTY_MESSAGE`] rather than dropped
//!   ([`keep_opening`], reported as a placeholder).
//! - the marked text of what no provider has a part for (file references, MCP resources, an
//!   image known only by its recognized text, thinking replayed as text).
//!
//! [`from_request_json`] is the inverse: a request body becomes a canonical session. A request
//! carries no message ids or times, so the session written leaves out `id` and `timestamp`
//! (of the messages and of the envelope): the Python types fill them with fresh values.
//! A provider part msgwire has no block for is kept whole as an unknown block
//! `{"type": "provider_part", "dialect", "part"}`, written back unchanged to the same dialect.

pub(crate) mod anthropic; // its blocks are also a response's (crate::response)
mod cache;
mod gemini;
pub(crate) mod ids;
mod ollama;
mod openai_chat;
mod openai_responses;
mod plan;
pub mod settings;
mod turns;

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::canonical::{self, Block, FileStatus, ImageBlock, ImageSource, Message, ModeUsed, ToolResultMessage};
use crate::dialect::DialectName;
use crate::error::Error;
pub use cache::{RequestCache, Written, content_key};
pub(crate) use ids::CallIds;
pub use ids::{IdFormat, made_up as made_up_call_id};
pub(crate) use plan::{Item, Plan, keep_opening, plan};
pub use settings::Settings;
pub(crate) use turns::Turns;

/// What to do with a block the target cannot carry as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// Send it as the target's own part where it has one (else as text, when there is text).
    #[default]
    Keep,
    /// Send its text, marked with where it came from.
    ToText,
    /// Leave it out.
    Drop,
}

/// What a lossy step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The block or message was left out.
    Drop,
    /// The block was sent as marked text.
    ToText,
    /// A field the target has no place for was left out (a signature, `is_error`).
    Strip,
    /// A value the target cannot read was replaced (malformed tool arguments).
    Fallback,
    /// Something the target requires was added: an error result for a tool call without one, or
    /// the text of a user message that opens the request (see [`EMPTY_MESSAGE`]).
    Placeholder,
    /// An identifier the target refuses (or one that repeats) was replaced: a tool-call id.
    Rewrite,
}

/// What to do with tool-call arguments that are not a JSON object, for a target that needs one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Malformed {
    /// Send `{"_raw": "<the text>"}` and report it.
    #[default]
    Wrap,
    /// Refuse the conversion with an error naming the call.
    Error,
}

/// The replay policy: per block kind, what happens when the target cannot carry a block as is.
///
/// Blocks the target carries natively are always sent unchanged (that is what makes a
/// provider -> canonical -> same provider round trip lossless). "Foreign" thinking is thinking
/// an assistant message made with another provider (its `provider` set and not the target's),
/// or thinking without a signature, or any thinking for a target whose requests have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// Foreign thinking: `drop` (default), `to_text` (`<thinking>` text, signature stripped),
    /// or `keep` (sent as the target's thinking block with its signature, if it has one).
    pub thinking: Replay,
    /// Foreign redacted thinking (opaque data): `drop` (default) or `keep`; never text.
    pub redacted_thinking: Replay,
    /// Images: `keep` (default: the target's image part, or the recognized text when that is
    /// all the target can take), `to_text` (only the recognized text), `drop`.
    pub images: Replay,
    /// File references: `to_text` (default; `keep` is the same) or `drop`.
    pub file_reference: Replay,
    /// MCP resources: `to_text` (default; `keep` is the same) or `drop`.
    pub mcp_resource: Replay,
    /// Unknown blocks and other dialects' provider parts: `drop` (default), `keep` (raw JSON
    /// as a part) or `to_text` (raw JSON as text).
    pub unknown: Replay,
    /// Server tool calls and results of another dialect: `drop` (default) or `to_text` (marked
    /// text with their JSON; `keep` is the same).
    pub server_tools: Replay,
    /// Tool-call arguments that are not a JSON object where the target needs one.
    pub malformed_arguments: Malformed,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            thinking: Replay::Drop,
            redacted_thinking: Replay::Drop,
            images: Replay::Keep,
            file_reference: Replay::ToText,
            mcp_resource: Replay::ToText,
            unknown: Replay::Drop,
            server_tools: Replay::Drop,
            malformed_arguments: Malformed::Wrap,
        }
    }
}

/// Which role the system prompt is sent as (OpenAI Chat only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemRole {
    #[default]
    System,
    Developer,
}

/// A tool the model may call: its declaration, converted to each dialect's form.
#[derive(Debug, Clone, Deserialize)]
pub struct Tool<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow, default)]
    pub description: Option<Cow<'a, str>>,
    /// JSON Schema of the arguments, written as it was given.
    #[serde(borrow)]
    pub parameters: &'a RawValue,
    /// Arguments must follow the schema exactly (OpenAI's structured outputs for tools).
    #[serde(default)]
    pub strict: Option<bool>,
    #[serde(default)]
    pub cache_control: Option<canonical::CacheControl>,
}

/// A tool as OpenAI Chat and Ollama declare it: `{"type":"function","function":{...}}`.
#[derive(Serialize)]
pub(super) struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDecl<'a>,
}

#[derive(Serialize)]
struct FunctionDecl<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

/// The tools of `options` as function declarations (OpenAI Chat, Ollama; `strict` where the
/// dialect has it).
pub(super) fn function_tools<'a>(options: &'a Options<'_>, strict: bool) -> Vec<FunctionTool<'a>> {
    let declare = |t: &'a Tool<'_>| FunctionTool {
        kind: "function",
        function: FunctionDecl {
            name: &t.name,
            description: t.description.as_deref(),
            parameters: t.parameters,
            strict: t.strict.filter(|_| strict),
        },
    };
    options.tools.iter().map(declare).collect()
}

/// A tool in a body's `tools`: the dialect's declaration of a function, or a provider's own tool
/// (a server tool, a built-in tool) kept whole from a body of the same dialect.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum ToolEntry<'a, T> {
    Declared(T),
    Provider(&'a serde_json::Value),
}

/// The declared tools, then the provider tools of `dialect` (the others are reported by the
/// settings).
pub(super) fn tool_entries<'a, T>(declared: Vec<T>, options: &'a Options<'_>, dialect: &str) -> Vec<ToolEntry<'a, T>> {
    let provider =
        options.settings.provider_tools.iter().filter(|t| t.dialect == dialect).map(|t| ToolEntry::Provider(&t.tool));
    declared.into_iter().map(ToolEntry::Declared).chain(provider).collect()
}

/// Report the tool fields `target` cannot carry (`strict`, `cache_control`).
pub(super) fn tool_losses(options: &Options<'_>, target: &str, strict: bool, cache: bool, report: &mut Vec<Loss>) {
    for tool in &options.tools {
        if tool.strict.is_some() && !strict {
            report.push(Loss::setting("tools", Action::Strip, format!("{target} tools have no `strict`")));
        }
        if tool.cache_control.is_some() && !cache {
            report.push(Loss::setting(
                "cache_control",
                Action::Strip,
                format!("{target} tools have no `cache_control`"),
            ));
        }
    }
}

/// The text of the error result sent for a tool call that has none (see [`Options::missing_result`]).
pub const MISSING_RESULT: &str = "No result: this tool call was not completed.";

/// The text sent for a user message left with nothing to send (its text empty, its images
/// dropped...) when it opens the conversation of a target that needs a user turn first
/// ([`Refusals::non_user_opening`]): dropping it would open the request with the model's turn.
pub const EMPTY_MESSAGE: &str = "(empty message)";

/// Options of [`to_request_json`], readable from JSON (what the Python binding passes).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Options<'a> {
    /// Overrides the session's system prompt (and is the system prompt of a bare message list).
    #[serde(borrow, default)]
    pub system_prompt: Option<Cow<'a, str>>,
    #[serde(default)]
    pub system_role: SystemRole,
    #[serde(borrow, default)]
    pub tools: Vec<Tool<'a>>,
    #[serde(default)]
    pub policy: Policy,
    /// The text of the error result sent in place of a missing one ([`MISSING_RESULT`] when
    /// `None`): every tool call without a result gets one, the calls of the last assistant
    /// message too (a request asks for a model reply; no provider accepts unanswered calls).
    #[serde(borrow, default)]
    pub missing_result: Option<Cow<'a, str>>,
    /// The id rule of the server behind the dialect, when it is stricter than the dialect's own
    /// (`mistral` for Mistral's OpenAI-compatible API; `anthropic` for a proxy to Claude): call
    /// ids must pass both, or are replaced.
    #[serde(default)]
    pub tool_call_ids: Option<IdFormat>,
    /// Everything else the request holds: model, sampling, limits, tool choice, structured
    /// output, reasoning, metadata (see [`settings`]).
    #[serde(default)]
    pub settings: Settings,
}

impl<'a> Options<'a> {
    /// Options from their JSON object (`{"system_prompt", "system_role", "tools", "policy",
    /// "missing_result", "tool_call_ids"}`).
    pub fn from_json(input: &'a [u8]) -> Result<Self, Error> {
        serde_json::from_slice(input).map_err(|e| Error::from_serde(&e, input))
    }

    /// The text of a placeholder result.
    pub fn missing_result(&self) -> &str {
        self.missing_result.as_deref().unwrap_or(MISSING_RESULT)
    }
}

/// One lossy step of a conversion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// Index of the message in the input (`usize::MAX`, written `null`: a step of the request's
    /// settings, see [`Loss::setting`]).
    #[serde(serialize_with = "message_index")]
    pub message: usize,
    /// Index of the block in that message's content, when the loss is a block's.
    pub block: Option<usize>,
    /// What was lost: a block kind (`thinking`, `redacted_thinking`, `image`, `file_reference`,
    /// `mcp_resource`, `tool_call`, `unknown_block`), `arguments`, `is_error`, `signature`,
    /// `tool_call_id`, or a message (`unknown_message`, `tool_result`, `message`). A placeholder
    /// result is reported as `tool_result` at its call's message and block.
    pub kind: &'static str,
    pub action: Action,
    pub reason: Cow<'static, str>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's serialize_with passes a reference
fn message_index<S: serde::Serializer>(message: &usize, serializer: S) -> Result<S::Ok, S::Error> {
    if *message == usize::MAX { serializer.serialize_none() } else { serializer.serialize_u64(*message as u64) }
}

impl Loss {
    pub(crate) fn new(
        message: usize,
        block: Option<usize>,
        kind: &'static str,
        action: Action,
        reason: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self { message, block, kind, action, reason: reason.into() }
    }

    /// A message the dialect's rules left with nothing to send, dropped.
    pub(crate) fn nothing_left(message: usize) -> Self {
        Self::new(message, None, "message", Action::Drop, "nothing left to send")
    }
}

/// A converted request: the body's JSON and the lossy steps taken, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    pub body: Vec<u8>,
    pub report: Vec<Loss>,
}

/// Write the request fields of `input` (a canonical session, or a JSON array of canonical
/// messages) for `dialect`.
pub fn to_request_json(input: &[u8], dialect: DialectName, options: &Options<'_>) -> Result<Converted, Error> {
    let (body, report) = to_request_body(input, dialect, options, true)?;
    Ok(Converted { body, report })
}

/// [`to_request_json`], the report only when `report` (else empty).
pub fn to_request_body(
    input: &[u8],
    dialect: DialectName,
    options: &Options<'_>,
    report: bool,
) -> Result<(Vec<u8>, Vec<Loss>), Error> {
    let first = input.iter().copied().find(|b| !b.is_ascii_whitespace());
    let (messages, session_prompt) = if first == Some(b'[') {
        let read =
            |input: &[u8], text: Option<&str>| canonical::parse(input, text).map_err(|e| Error::from_serde(&e, input));
        let messages: Vec<Message> = canonical::read_tag_first(input, read)?;
        (messages, None)
    } else {
        let session = canonical::read_session(input)?;
        (session.messages, session.system_prompt)
    };
    let system = options.system_prompt.as_deref().or(session_prompt.as_deref());
    let messages: Vec<&Message> = messages.iter().collect();
    let writer = Writer::of(dialect);
    let mut plan_report = Vec::new();
    let plan = plan(&messages, writer.target, options, &mut plan_report);
    let built = writer.write(&plan, plan_report, system, options, None, input.len())?;
    let report = if report { built.report() } else { Vec::new() };
    Ok((built.turns.array, report))
}

/// How a dialect writes a request: its abilities, its conversation array and the body around it.
#[derive(Clone, Copy)]
pub(crate) struct Writer {
    pub target: &'static Target,
    /// The conversation array's field (`messages`, `contents`, `input`).
    array: &'static str,
    /// The turns of the plan's items from an index on (see [`turns`]).
    turns: TurnsFn,
    /// The body with the conversation array empty: system prompt, tools, settings.
    body: BodyFn,
}

/// A dialect's writer of the turns of `plan`'s items from `from` on, the system prompt first when
/// from the start: `(plan, system, options, from, report, turns)`.
type TurnsFn =
    for<'p, 'o> fn(&Plan<'p>, Option<&str>, &Options<'o>, usize, &mut Vec<Loss>, &mut Turns) -> Result<(), Error>;

/// A dialect's writer of the body around its conversation array: `(system, options, report)`.
type BodyFn = for<'o> fn(Option<&str>, &Options<'o>, &mut Vec<Loss>) -> Result<Vec<u8>, Error>;

/// A build, with what the next one can resume from: the turns written and the writer's steps.
pub(crate) struct Built {
    /// The body (`turns.array`), and where each item began a turn in it.
    pub turns: Turns,
    pub plan_report: Vec<Loss>,
    pub writer_report: Vec<Loss>,
    pub body_report: Vec<Loss>,
}

impl Built {
    /// The report, in input order.
    pub fn report(&self) -> Vec<Loss> {
        turns::ordered(&self.plan_report, &self.writer_report, &self.body_report)
    }
}

/// Where a build resumes: at item `from`, after `turns` (of the items before it) and their steps.
pub(crate) struct Resume {
    pub from: usize,
    pub turns: Turns,
    pub writer_report: Vec<Loss>,
}

impl Writer {
    pub(crate) fn of(dialect: DialectName) -> Self {
        match dialect {
            DialectName::OpenAi => Self {
                target: &openai_chat::TARGET,
                array: openai_chat::ARRAY,
                turns: openai_chat::turns,
                body: openai_chat::body,
            },
            DialectName::Anthropic => Self {
                target: &anthropic::TARGET,
                array: anthropic::ARRAY,
                turns: anthropic::turns,
                body: anthropic::body,
            },
            DialectName::Ollama => {
                Self { target: &ollama::TARGET, array: ollama::ARRAY, turns: ollama::turns, body: ollama::body }
            }
            DialectName::Gemini => {
                Self { target: &gemini::TARGET, array: gemini::ARRAY, turns: gemini::turns, body: gemini::body }
            }
            DialectName::OpenAiResponses => Self {
                target: &openai_responses::TARGET,
                array: openai_responses::ARRAY,
                turns: openai_responses::turns,
                body: openai_responses::body,
            },
        }
    }

    /// The request of `plan` (whose steps are `plan_report`), from the start or resumed;
    /// `size` is the size of the canonical input (what the array is about to take).
    pub(crate) fn write(
        self,
        plan: &Plan<'_>,
        plan_report: Vec<Loss>,
        system: Option<&str>,
        options: &Options<'_>,
        resume: Option<Resume>,
        size: usize,
    ) -> Result<Built, Error> {
        let items = plan.items.len();
        let mut body_report = Vec::new();
        let skeleton = (self.body)(system, options, &mut body_report)?;
        let (head, tail) = skeleton.split_at(turns::array_at(&skeleton, self.array));
        // a build resumes after the same head (the same options write the same one)
        let resume = resume.filter(|r| r.turns.array.get(..r.turns.base) == Some(head));
        let Resume { from, mut turns, mut writer_report } = resume.unwrap_or_else(|| Resume {
            from: 0,
            turns: Turns::new(head, size + tail.len(), items),
            writer_report: Vec::new(),
        });
        (self.turns)(plan, system, options, from, &mut writer_report, &mut turns)?;
        if from > 0 && turns.written == 0 {
            // the last turn is a kept one: the rules about the request's end may change it
            return self.write(plan, plan_report, system, options, None, size);
        }
        turns.finish(tail);
        Ok(Built { turns, plan_report, writer_report, body_report })
    }
}

/// A conversation array written empty (the turns go between its brackets: see [`Turns`]).
pub(crate) struct EmptyArray;

impl Serialize for EmptyArray {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        serializer.serialize_seq(Some(0))?.end()
    }
}

/// Read a request body of `dialect` (its `messages`, and `system` where the dialect has it)
/// into canonical session JSON, without ids and timestamps (see the module documentation).
pub fn from_request_json(body: &[u8], dialect: DialectName) -> Result<Vec<u8>, Error> {
    // serde_json does not check the raw JSON it keeps: a lone surrogate escape (`"\ud800"`) in a
    // part kept whole would be copied into the session, which no canonical reader accepts.
    // Refused at its offset (only when the body may hold one, so valid bodies pay a scan).
    if memchr::memmem::find_iter(body, b"\\u").any(|at| matches!(body.get(at + 2), Some(b'd' | b'D'))) {
        crate::partial::validate_bytes(body, usize::MAX)?;
    }
    let session = match dialect {
        DialectName::OpenAi => openai_chat::read(body)?,
        DialectName::Anthropic => anthropic::read(body)?,
        DialectName::Ollama => ollama::read(body)?,
        DialectName::Gemini => gemini::read(body)?,
        DialectName::OpenAiResponses => openai_responses::read(body)?,
    };
    serde_json::to_vec(&session).map_err(|e| Error::write(&e))
}

/// The report as JSON: an array of `{message, block, kind, action, reason}`.
pub fn report_json(report: &[Loss]) -> Vec<u8> {
    serde_json::to_vec(report).unwrap_or_else(|_| b"[]".to_vec())
}

// --- the lowering: canonical blocks to parts ------------------------------------------------------

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
    /// that opened the input is sent as [`EMPTY_MESSAGE`] rather than dropped (see
    /// [`keep_opening`]).
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
            report.push(Loss { message, block: Some(b), kind, action, reason });
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
        (None, _) if sendable && keep && !target.signed && !t.thinking.is_empty() => {
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
    if arguments.trim().is_empty() {
        return Ok(Arguments::Empty {});
    }
    // serde_json does not check a raw value's escapes: a lone surrogate (`"\ud800"`) is not JSON
    // either, and embedded it would make the body invalid
    let surrogate = arguments.contains("\\u") && crate::partial::validate(arguments, usize::MAX).is_err();
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') && !surrogate => Ok(Arguments::Raw(raw)),
        parsed => {
            let what = if parsed.is_ok() && !surrogate { "not a JSON object" } else { "not valid JSON" };
            if policy.malformed_arguments == Malformed::Error {
                let detail = format!("the arguments of tool call {:?} (message {message}) are {what}", call.id);
                return Err(Error::body("tool call arguments", detail, None));
            }
            let reason = format!("arguments {what}: sent as {{\"_raw\": <the text>}}");
            report.push(Loss {
                message,
                block: Some(block),
                kind: "arguments",
                action: Action::Fallback,
                reason: reason.into(),
            });
            Ok(Arguments::Wrapped { raw: arguments })
        }
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
/// [`marked`]) stands apart, a blank line on each side. Borrowed when there is one.
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

// --- marked text --------------------------------------------------------------------------------

/// `<tag a="v" ...>\nbody\n</tag>`, or `<tag a="v" .../>` without a body. Attribute values are
/// escaped (`&`, `"`, `<`); the body is written as it is.
pub(crate) fn marked(tag: &str, attributes: &[(&str, &str)], body: &str) -> String {
    let mut out = String::with_capacity(tag.len() * 2 + body.len() + 16);
    out.push('<');
    out.push_str(tag);
    for (name, value) in attributes {
        let _ = write!(out, " {name}=\"");
        for c in value.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '"' => out.push_str("&quot;"),
                '<' => out.push_str("&lt;"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    if body.is_empty() {
        out.push_str("/>");
    } else {
        let _ = write!(out, ">\n{body}\n</{tag}>");
    }
    out
}

/// A file reference as text, its header naming the path and the lines:
/// `<file path="src/a.rs" lines="3-4">\n3 | x = 1\n4 | y = 2\n</file>`, each line numbered (numbers
/// right-aligned to the widest). Unresolved, the reference alone, saying why:
/// `<file path="a.rs" status="error" error="file not found"/>`, or `status="pending"` when nothing
/// read it before the request was built.
pub(crate) fn file_text(file: &canonical::FileReferenceBlock) -> String {
    let lines = match (file.start_line, file.end_line) {
        (Some(s), Some(e)) => format!("{s}-{e}"),
        (Some(s), None) => format!("{s}-"),
        (None, Some(e)) => format!("1-{e}"),
        (None, None) => String::new(),
    };
    let mut attributes = vec![("path", file.path.as_str())];
    if !lines.is_empty() {
        attributes.push(("lines", &lines));
    }
    if let Some(content) = &file.resolved_content {
        if content.is_empty() {
            return marked("file", &attributes, "(empty)");
        }
        return marked("file", &attributes, &numbered(content, file.start_line.unwrap_or(1)));
    }
    let (status, why) = match &file.error {
        Some(error) => ("error", error.as_str()),
        None => ("pending", "not read before the request was built"),
    };
    attributes.extend([("status", status), ("error", why)]);
    marked("file", &attributes, "")
}

/// `text` with each line prefixed by its number (from `first`) and ` | `, the numbers right-aligned.
fn numbered(text: &str, first: i64) -> String {
    // saturating: a start line near i64::MAX (the document says so) must not overflow
    let number = |i: usize| first.saturating_add(i64::try_from(i).unwrap_or(i64::MAX));
    let count = text.lines().count();
    let width = first.to_string().len().max(number(count.saturating_sub(1)).to_string().len());
    let mut out = String::with_capacity(text.len() + count * (width + 4));
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:>width$} | {line}", number(i));
    }
    out
}

/// An MCP resource as text: `<mcp_resource server="s" uri="u" mime_type="m">\n...\n</mcp_resource>`;
/// binary content as a note of its size (the model cannot read base64); unretrieved, saying why.
pub(crate) fn mcp_text(resource: &canonical::McpResourceBlock) -> String {
    let mut attributes = vec![("server", resource.server_name.as_str()), ("uri", resource.resource_uri.as_str())];
    if let Some(mime) = &resource.mime_type {
        attributes.push(("mime_type", mime));
    }
    if let Some(content) = &resource.content {
        return marked("mcp_resource", &attributes, content);
    }
    if let Some(blob) = &resource.blob {
        let bytes = base64_len(blob);
        return marked("mcp_resource", &attributes, &format!("(binary content, {bytes} bytes, not shown)"));
    }
    match (&resource.error, resource.status) {
        (Some(error), _) => attributes.extend([("status", "error"), ("error", error.as_str())]),
        (None, FileStatus::Pending) => {
            attributes.extend([("status", "pending"), ("error", "not retrieved before the request was built")]);
        }
        (None, _) => {}
    }
    marked("mcp_resource", &attributes, "")
}

/// The number of bytes base64 text decodes to (padding and whitespace not counted).
fn base64_len(text: &str) -> usize {
    let symbols = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').count();
    symbols * 3 / 4
}

/// An image as text, when it has some: `<image path="a.png">\nrecognized text\n</image>`.
pub(crate) fn image_text(image: &ImageBlock) -> Option<String> {
    let text = image.recognized_text.as_deref().or(image.vision_analysis.as_deref()).filter(|t| !t.is_empty())?;
    let attribute = match &image.source {
        ImageSource::Url { url } => ("url", url.as_str()),
        ImageSource::Base64 { media_type, .. } => ("media_type", media_type.as_str()),
        ImageSource::Path { path, .. } => ("path", path.as_str()),
    };
    Some(marked("image", &[attribute], text))
}

// --- reading requests: the canonical session written back -----------------------------------------

/// A canonical session without ids and times (the Python types fill them), with the rest of the
/// request (`msgwire.Request` reads all of it, `msgwire.Session` the conversation).
#[derive(Debug, Serialize)]
pub(crate) struct SessionOut<'a> {
    pub system_prompt: Option<Cow<'a, str>>,
    pub messages: Vec<MessageOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<settings::ToolOut>,
    #[serde(flatten)]
    pub settings: Settings,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum MessageOut<'a> {
    User {
        content: Vec<BlockOut<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    Assistant {
        content: Vec<BlockOut<'a>>,
        provider: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    ToolResult {
        tool_call_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_name: Option<Cow<'a, str>>,
        content: Vec<BlockOut<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<canonical::CacheControl>,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // a short-lived list per message read; boxing would only add allocations
pub(crate) enum BlockOut<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Thinking {
        #[serde(skip_serializing_if = "str::is_empty")]
        thinking: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        redacted: Option<Cow<'a, str>>,
    },
    Image {
        source: SourceOut<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<Cow<'a, str>>,
    },
    ToolCall {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        arguments: Cow<'a, str>,
    },
    ProviderPart {
        dialect: &'static str,
        part: &'a RawValue,
    },
    /// A block with a cache breakpoint (Anthropic's `cache_control`): the block with the field.
    #[serde(untagged)]
    Cached(serde_json::Value),
    /// A canonical block as it is (cited text, server tool blocks, blocks with item ids).
    #[serde(untagged)]
    Canonical(Block),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum SourceOut<'a> {
    Url { url: Cow<'a, str> },
    Base64 { media_type: Cow<'a, str>, data: Cow<'a, str> },
}

/// Parse `raw` (a piece of `body`) as `T`, with errors placed in `body`.
pub(crate) fn parse_in<'a, T: Deserialize<'a>>(body: &[u8], raw: &'a RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let base = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        let error = Error::from_serde(&e, raw.get().as_bytes()).in_body("request body");
        if base <= body.len() { error.shifted(base as u64) } else { error }
    })
}

/// Text that is either a JSON string or an array of `{"type": "text", "text"}` parts, joined by a
/// blank line (a system prompt).
pub(crate) fn joined_text<'a>(body: &[u8], raw: &'a RawValue) -> Result<Cow<'a, str>, Error> {
    #[derive(Deserialize)]
    struct TextPart<'a> {
        #[serde(borrow)]
        text: Cow<'a, str>,
    }
    if raw.get().starts_with('"') {
        return parse_in(body, raw);
    }
    let parts: Vec<TextPart<'a>> = parse_in(body, raw)?;
    if let [one] = parts.as_slice() {
        return Ok(one.text.clone());
    }
    Ok(Cow::Owned(parts.iter().map(|p| p.text.as_ref()).collect::<Vec<_>>().join("\n\n")))
}

/// Where `raw` (a piece of `body`) starts in `body`.
pub(crate) fn offset_in(body: &[u8], raw: &RawValue) -> u64 {
    (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize).min(body.len()) as u64
}

/// Serialize a request body.
pub(crate) fn to_vec<T: Serialize>(body: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(body).map_err(|e| Error::write(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_text_escapes_attributes_only() {
        assert_eq!(
            marked("file", &[("path", "a\"<&.rs")], "x < y"),
            "<file path=\"a&quot;&lt;&amp;.rs\">\nx < y\n</file>"
        );
        assert_eq!(marked("file", &[("path", "a")], ""), "<file path=\"a\"/>");
    }

    fn file(path: &str, lines: (Option<i64>, Option<i64>), content: Option<&str>, error: Option<&str>) -> String {
        file_text(&canonical::FileReferenceBlock {
            path: path.into(),
            start_line: lines.0,
            end_line: lines.1,
            resolved_content: content.map(Into::into),
            status: if content.is_some() { FileStatus::Resolved } else { FileStatus::Pending },
            error: error.map(Into::into),
        })
    }

    #[test]
    fn file_references_are_numbered_under_a_header() {
        assert_eq!(
            file("src/app.py", (Some(9), Some(10)), Some("x = 1\ny = 2\n"), None),
            "<file path=\"src/app.py\" lines=\"9-10\">\n 9 | x = 1\n10 | y = 2\n</file>"
        );
        assert_eq!(file("a.py", (None, None), Some("a\r\nb"), None), "<file path=\"a.py\">\n1 | a\n2 | b\n</file>");
        assert_eq!(file("e.txt", (None, None), Some(""), None), "<file path=\"e.txt\">\n(empty)\n</file>");
        assert!(file("big", (Some(i64::MAX), None), Some("a\nb"), None).ends_with(" | b\n</file>"));
        assert_eq!(
            file("m.txt", (Some(3), Some(4)), None, Some("file not found")),
            "<file path=\"m.txt\" lines=\"3-4\" status=\"error\" error=\"file not found\"/>"
        );
        assert_eq!(
            file("p.txt", (None, None), None, None),
            "<file path=\"p.txt\" status=\"pending\" error=\"not read before the request was built\"/>"
        );
    }

    #[test]
    fn mcp_resources_say_what_they_hold() {
        let resource = |content: Option<&str>, blob: Option<&str>, status, error: Option<&str>| {
            mcp_text(&canonical::McpResourceBlock {
                server_name: "docs".into(),
                resource_uri: "docs://a".into(),
                content: content.map(Into::into),
                mime_type: Some("text/plain".into()),
                retrieved_at: None,
                blob: blob.map(Into::into),
                status,
                error: error.map(Into::into),
            })
        };
        let head = "<mcp_resource server=\"docs\" uri=\"docs://a\" mime_type=\"text/plain\"";
        assert_eq!(resource(Some("hi"), None, FileStatus::Resolved, None), format!("{head}>\nhi\n</mcp_resource>"));
        assert_eq!(
            resource(None, Some("iVBORw0KGgo="), FileStatus::Resolved, None),
            format!("{head}>\n(binary content, 8 bytes, not shown)\n</mcp_resource>")
        );
        assert_eq!(
            resource(None, None, FileStatus::Error, Some("boom")),
            format!("{head} status=\"error\" error=\"boom\"/>")
        );
        assert_eq!(
            resource(None, None, FileStatus::Pending, None),
            format!("{head} status=\"pending\" error=\"not retrieved before the request was built\"/>")
        );
    }

    #[test]
    fn policy_reads_with_defaults() {
        let options = Options::from_json(br#"{"policy":{"thinking":"to_text"},"system_role":"developer"}"#);
        let options = options.expect("reads");
        assert_eq!(options.policy.thinking, Replay::ToText);
        assert_eq!(options.policy.redacted_thinking, Replay::Drop);
        assert_eq!(options.policy.file_reference, Replay::ToText);
        assert_eq!(options.system_role, SystemRole::Developer);
        assert!(Options::from_json(br#"{"policy":{"thinking":"maybe"}}"#).is_err());
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

    #[test]
    fn every_dialect_has_a_request_format() {
        for dialect in DialectName::ALL {
            let converted = to_request_json(b"[]", dialect, &Options::default()).expect("converts");
            let session = from_request_json(&converted.body, dialect).expect("reads back");
            assert_eq!(session, br#"{"system_prompt":null,"messages":[]}"#, "{}", dialect.as_str());
        }
    }
}
