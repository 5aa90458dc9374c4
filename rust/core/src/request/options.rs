//! The options of a conversion and its report: the replay policy, the tools declared, the
//! placeholders' texts, and each lossy step ([`Loss`]).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{IdFormat, Settings};
use crate::canonical;
use crate::error::Error;

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
/// (`Refusals::non_user_opening`): dropping it would open the request with the model's turn.
pub const EMPTY_MESSAGE: &str = "(empty message)";

/// Options of [`to_request_json`](super::to_request_json), readable from JSON (what the Python binding passes).
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
    /// output, reasoning, metadata (see [`settings`](super::settings)).
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
    /// settings, see `Loss::setting`).
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

/// The report as JSON: an array of `{message, block, kind, action, reason}`.
pub fn report_json(report: &[Loss]) -> Vec<u8> {
    crate::json_out::to_vec(report).unwrap_or_else(|_| b"[]".to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
