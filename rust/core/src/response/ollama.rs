//! Ollama native `/api/chat` responses (`"stream": false`): the one object with `done: true`.
//!
//! Writing: `{"model", "created_at", "message": {"role": "assistant", "content", "thinking"?,
//! "tool_calls"?}, "done": true, "done_reason", "prompt_eval_count"?, "eval_count"?}`. The
//! message has one string of each kind: `content` (the text blocks joined by a blank line) and
//! `thinking` (the thinking, likewise; Ollama thinking has no signature and no redacted form,
//! reported), then `tool_calls: [{"id"?, "function": {"name", "arguments": {...}}}]`, the
//! arguments a JSON object as in a request, the id written even when msgwire made it up
//! (Ollama ignores it; read back, the call keeps it). `created_at` is the message's timestamp. `done_reason` is `length`, or
//! `stop` (or the message's own `load` / `unload`) for every other reason. Usage is
//! `prompt_eval_count` and `eval_count`; cache and reasoning counts have no field (reported).
//! The durations Ollama reports are not kept.
//!
//! Reading: a response body is the last line of an NDJSON stream: it is decoded as it is.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{BodyReplay, native_blocks, parts, size_hint, stop_value, to_vec, usage, utf8};
use crate::assemble::BuilderOptions;
use crate::canonical::AssistantMessage;
use crate::dialect::DialectName;
use crate::dialect::ollama::STOP;
use crate::error::Error;
use crate::request::ServerTools;
use crate::request::{Action, Arguments, CallIds, Loss, Part, Policy, Target, object_arguments};

const TARGET: Target = Target {
    dialect: "ollama",
    provider: "ollama",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: false,
    images: [false, false, false],
    image_media_types: &[],
    call_ids: CallIds::Optional,
    cites: None,
    server_tools: ServerTools::Nowhere,
};

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    created_at: &'a str,
    message: Msg<'a>,
    done: bool,
    done_reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_eval_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_count: Option<u64>,
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call<'a>>,
}

#[derive(Serialize)]
struct Call<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: Arguments<'a>,
}

fn lost(report: &mut Vec<Loss>, block: Option<usize>, kind: &'static str, reason: &'static str) {
    report.push(Loss::new(0, block, kind, Action::Strip, reason));
}

pub(super) fn write(message: &AssistantMessage, policy: Policy, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let blocks = native_blocks(message, &TARGET, false);
    let (mut text, mut thinking, mut tool_calls) = (Vec::new(), Vec::new(), Vec::new());
    for part in parts(message, &blocks, &TARGET, policy, report) {
        match part {
            Part::Text(t) => text.push(t),
            // never lowered for this target (it takes no citations)
            Part::Cited { text: t, .. } => text.push(Cow::Borrowed(&t.text)),
            Part::Thinking { block, thinking: t, signature } => {
                if !signature.is_empty() {
                    lost(report, Some(block), "signature", "Ollama thinking has no signature");
                }
                if !t.is_empty() {
                    thinking.push(Cow::Borrowed(t));
                }
            }
            Part::ToolCall { block, call } => {
                let arguments = object_arguments(0, block, call, policy, report)?;
                // a made-up id too: Ollama pairs results by name and order and ignores it, and
                // read back it is the call's id again (one derived from the body would differ)
                let id = Some(call.id.as_str()).filter(|id| !id.is_empty());
                tool_calls.push(Call { id, function: Function { name: &call.name, arguments } });
            }
            Part::Raw(_) => lost(report, None, "unknown_block", "an Ollama message has no place for parts"),
            // never lowered for this target (no images or redacted thinking in its replies)
            Part::Image(_) | Part::Redacted(_) | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
    let u = usage(message);
    if u.cache_read_tokens > 0 || u.cache_write_tokens > 0 || u.reasoning_tokens > 0 {
        lost(report, None, "usage", "Ollama counts only prompt and output tokens");
    }
    let counted = message.usage.is_some();
    to_vec(
        &Body {
            model: message.model.as_deref().unwrap_or(""),
            created_at: &message.timestamp,
            message: Msg {
                role: "assistant",
                content: crate::request::join_reply(text).unwrap_or_default(),
                thinking: crate::request::join_reply(thinking),
                tool_calls,
            },
            done: true,
            done_reason: stop_value(message, STOP, "stop", report),
            prompt_eval_count: counted.then_some(u.input_tokens),
            eval_count: counted.then_some(u.output_tokens),
        },
        size_hint(message),
    )
}

// --- reading ------------------------------------------------------------------------------------

/// What the replay needs first (the decoder reads the rest).
#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow, default)]
    created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

pub(super) fn read(body: &[u8], mut options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let parsed: InBody<'_> = super::parse(body)?;
    if parsed.message.is_none() && parsed.error.is_none() {
        return Err(super::missing(body, "message"));
    }
    if let Some(timestamp) = parsed.created_at.as_deref().and_then(super::rfc3339_timestamp) {
        options.timestamp = timestamp;
    }
    let mut replay = BodyReplay::new(DialectName::Ollama, options);
    replay.whole(utf8(body)?)?;
    Ok(replay.finish())
}
