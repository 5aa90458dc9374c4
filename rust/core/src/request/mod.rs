//! Request bodies: a canonical session written as one provider's request fields, and back.
//!
//! [`to_request_json`] reads canonical JSON (a session envelope, or a bare array of messages)
//! and writes the fields of a provider's request body that carry the conversation: for OpenAI
//! Chat `{"messages", "tools"?}`, for Anthropic `{"system"?, "messages", "tools"?}`, for Ollama
//! `{"messages", "tools"?}`, for Gemini `{"systemInstruction"?, "contents", "tools"?}`, for OpenAI
//! Responses `{"instructions"?, "input", "tools"?}`. [`from_request_json`] is the inverse: a
//! request body becomes a canonical session.
//!
//! The rules (how calls and results are paired, placeholders, call ids, the lowering of blocks
//! under the replay [`Policy`], empty content, marked text, the normal form and provider parts)
//! are written once in `docs/formats.md`. Each dialect file owns its provider's rules; this
//! module and the files below hold what they share.
//!
//! Files: this one is the entrance; `options` (the options, the policy, the report's [`Loss`]),
//! `plan` and `ids` (which messages and call ids are sent), `lower` (blocks to parts), `marked`
//! (marked text), `writer` (each dialect's writer), `turns` and `cache` (writing turn by turn,
//! re-building a grown conversation), `read` (reading a body back), one file per dialect.

pub(crate) mod anthropic; // its blocks are also a response's (crate::response)
mod cache;
mod gemini;
pub(crate) mod ids;
mod lower;
mod marked;
mod ollama;
mod openai_chat;
mod openai_responses;
mod options;
mod plan;
mod read;
pub mod settings;
mod turns;
mod writer;

use crate::canonical::{self, Message};
use crate::dialect::DialectName;
use crate::error::Error;
pub use cache::{RequestCache, Written, content_key};
pub(crate) use ids::CallIds;
pub use ids::{IdFormat, made_up as made_up_call_id};
use lower::Carries;
pub(crate) use lower::{
    Arguments, EmptyText, PROVIDER_PART, Part, Refusals, Role, ServerTools, Target, arguments_text, is_blank, is_error,
    join_reply, json_object_arguments, lower, object_arguments, result_parts,
};
pub(crate) use marked::{file_text, image_text, marked, mcp_text};
pub use options::{
    Action, Converted, EMPTY_MESSAGE, Loss, MISSING_RESULT, Malformed, Options, Policy, Replay, SystemRole, Tool,
    report_json,
};
use options::{FunctionTool, ToolEntry, function_tools, tool_entries, tool_losses};
pub(crate) use plan::{Item, Plan, keep_opening, plan};
pub(crate) use read::{BlockOut, MessageOut, SessionOut, SourceOut, joined_text, offset_in, parse_in, to_vec};
pub use settings::Settings;
pub(crate) use turns::Turns;
pub(crate) use writer::{EmptyArray, Resume, Writer};

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

/// Read a request body of `dialect` (its `messages`, and `system` where the dialect has it)
/// into canonical session JSON, without ids and timestamps (see the module documentation).
pub fn from_request_json(body: &[u8], dialect: DialectName) -> Result<Vec<u8>, Error> {
    // serde_json does not check the raw JSON it keeps: a lone surrogate escape (`"\ud800"`) in a
    // part kept whole would be copied into the session, which no canonical reader accepts.
    // Refused at its offset (only when the body may hold one, so valid bodies pay a scan).
    if crate::partial::may_hold_surrogate(body) {
        crate::partial::validate_bytes(body, usize::MAX)?;
    }
    let session = match dialect {
        DialectName::OpenAi => openai_chat::read(body)?,
        DialectName::Anthropic => anthropic::read(body)?,
        DialectName::Ollama => ollama::read(body)?,
        DialectName::Gemini => gemini::read(body)?,
        DialectName::OpenAiResponses => openai_responses::read(body)?,
    };
    crate::canonical::write(&session)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_has_a_request_format() {
        for dialect in DialectName::ALL {
            let converted = to_request_json(b"[]", dialect, &Options::default()).expect("converts");
            let session = from_request_json(&converted.body, dialect).expect("reads back");
            assert_eq!(session, br#"{"system_prompt":null,"messages":[]}"#, "{}", dialect.as_str());
        }
    }
}
