//! Gemini `generateContent` responses: the `GenerateContentResponse` object.
//!
//! Writing: `{"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason"}],
//! "usageMetadata"?, "modelVersion", "responseId"}`. Parts follow the message's blocks in order:
//! text `{"text"}`, thinking `{"text", "thought": true, "thoughtSignature"?}` (Gemini's own thought
//! summaries are written, unlike in a request), calls `{"functionCall": {"id"?, "name", "args"}}`
//! (`args` the arguments' JSON object as in a request; the id left out when msgwire made it up
//! for a call that came without one). A signature-only thinking block (how the decoder keeps a
//! `thoughtSignature` that came on a text or call part) becomes the `thoughtSignature` of the
//! next part, or of an empty text part when none follows, as in a request. `finishReason` is
//! `STOP` (end of turn, tool use), `MAX_TOKENS`, a safety reason (the message's own, else
//! `SAFETY`; also for a refusal), a tool-call error (the message's own, else
//! `MALFORMED_FUNCTION_CALL`), and `OTHER` for every other reason. Usage: `promptTokenCount`,
//! `candidatesTokenCount` (output less thoughts: Gemini counts them apart), `thoughtsTokenCount`,
//! `cachedContentTokenCount`, `totalTokenCount`; cache writes have no field (reported). Gemini's
//! API response has no creation time (Vertex's `createTime` is not read).
//! The candidate's `groundingMetadata` is the one of the message's Gemini grounding block, as it
//! came (its citations are in it; another provider's citations are dropped, reported).
//! Not kept, so not written back: `safetyRatings`, `citationMetadata`, `avgLogprobs`, a
//! candidate's `index`, the per-modality token details, candidates after the first; ids of
//! calls that came without one (msgwire makes one up, and leaves it out again).
//!
//! Reading: a response body is one event of a `streamGenerateContent` stream: it is decoded
//! as it is.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{BodyReplay, native_blocks, parts, response_id, size_hint, stop_value, to_vec, usage, utf8};
use crate::assemble::BuilderOptions;
use crate::canonical::AssistantMessage;
use crate::dialect::DialectName;
use crate::dialect::gemini::STOP;
use crate::error::Error;
use crate::request::ServerTools;
use crate::request::ids::made_up;
use crate::request::{Action, Arguments, CallIds, Loss, Part, Policy, Target, object_arguments};

const TARGET: Target = Target {
    dialect: "gemini",
    provider: "gemini",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: false,
    images: [false, false, false],
    image_media_types: &[],
    call_ids: CallIds::Optional,
    cites: Some(crate::citation::gemini_writes),
    server_tools: ServerTools::Apart,
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    candidates: [Candidate<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage_metadata: Option<UsageMetadata>,
    model_version: &'a str,
    response_id: Cow<'a, str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    content: Content<'a>,
    finish_reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    grounding_metadata: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<OutPart<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum OutPart<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        thought: bool,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    Call {
        #[serde(rename = "functionCall")]
        function_call: Call<'a>,
        #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    Raw(&'a RawValue),
}

#[derive(Serialize)]
struct Call<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    args: Arguments<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_field_names)] // Gemini's own names
struct UsageMetadata {
    prompt_token_count: u64,
    candidates_token_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    thoughts_token_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_content_token_count: Option<u64>,
    total_token_count: u64,
}

pub(super) fn write(message: &AssistantMessage, policy: Policy, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let blocks = native_blocks(message, &TARGET, false);
    let native = message.provider.as_deref().is_none_or(|p| p == TARGET.provider);
    let mut out: Vec<OutPart<'_>> = Vec::with_capacity(blocks.len());
    // a signature waiting for the next part
    let mut pending: Option<&str> = None;
    for part in parts(message, &blocks, &TARGET, policy, report) {
        match part {
            Part::Text(text) => out.push(OutPart::Text { text, thought: false, thought_signature: pending.take() }),
            // its grounding citations are in the grounding metadata (written on the candidate)
            Part::Cited { text, .. } => out.push(OutPart::Text {
                text: Cow::Borrowed(&text.text),
                thought: false,
                thought_signature: pending.take(),
            }),
            Part::Thinking { block, thinking, signature } => {
                let signature = Some(signature).filter(|s| !s.is_empty());
                if signature.is_some() && !native {
                    let reason = "a signature of another provider is never written for Gemini";
                    report.push(Loss::new(0, Some(block), "signature", Action::Strip, reason));
                }
                let signature = signature.filter(|_| native);
                if thinking.is_empty() {
                    pending = signature.or(pending);
                } else {
                    let thought_signature = signature.or_else(|| pending.take());
                    out.push(OutPart::Text { text: Cow::Borrowed(thinking), thought: true, thought_signature });
                }
            }
            Part::ToolCall { block, call } => {
                let args = object_arguments(0, block, call, policy, report)?;
                let id = Some(call.id.as_str()).filter(|id| !id.is_empty() && !made_up(id));
                out.push(OutPart::Call {
                    function_call: Call { id, name: &call.name, args },
                    thought_signature: pending.take(),
                });
            }
            Part::Raw(raw) => {
                if let Some(signature) = pending.take() {
                    out.push(OutPart::Text {
                        text: Cow::Borrowed(""),
                        thought: false,
                        thought_signature: Some(signature),
                    });
                }
                out.push(OutPart::Raw(raw));
            }
            // never lowered for this target (no images or redacted thinking in its candidates)
            Part::Image(_) | Part::Redacted(_) | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
    if let Some(signature) = pending {
        out.push(OutPart::Text { text: Cow::Borrowed(""), thought: false, thought_signature: Some(signature) });
    }
    let usage_metadata = message.usage.is_some().then(|| {
        let u = usage(message);
        if u.cache_write_tokens > 0 {
            let reason = "Gemini usage has no cache writes";
            report.push(Loss::new(0, None, "cache_write_tokens", Action::Strip, reason));
        }
        UsageMetadata {
            prompt_token_count: u.input_tokens,
            candidates_token_count: u.output_tokens.saturating_sub(u.reasoning_tokens),
            thoughts_token_count: (u.reasoning_tokens > 0).then_some(u.reasoning_tokens),
            cached_content_token_count: (u.cache_read_tokens > 0).then_some(u.cache_read_tokens),
            total_token_count: u.input_tokens.saturating_add(u.output_tokens),
        }
    });
    to_vec(
        &Body {
            candidates: [Candidate {
                content: Content { role: "model", parts: out },
                finish_reason: stop_value(message, STOP, "OTHER", report),
                grounding_metadata: crate::server_tool::grounding(message),
            }],
            usage_metadata,
            model_version: message.model.as_deref().unwrap_or(""),
            response_id: response_id(message, ""),
        },
        size_hint(message),
    )
}

// --- reading ------------------------------------------------------------------------------------

/// What a response must have one of (the decoder reads the rest).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InBody<'a> {
    #[serde(borrow, default)]
    candidates: Option<&'a RawValue>,
    #[serde(borrow, default)]
    prompt_feedback: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

pub(super) fn read(body: &[u8], options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let parsed: InBody<'_> = super::parse(body)?;
    if parsed.candidates.is_none() && parsed.prompt_feedback.is_none() && parsed.error.is_none() {
        return Err(super::missing(body, "candidates"));
    }
    let mut replay = BodyReplay::new(DialectName::Gemini, options);
    replay.whole(utf8(body)?)?;
    Ok(replay.finish())
}
