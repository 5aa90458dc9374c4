//! Gemini `streamGenerateContent?alt=sse`: every event is a whole `GenerateContentResponse`
//! whose parts are deltas; function calls arrive whole; usage is cumulative; the stream ends
//! at EOF after a chunk with a `finishReason` (there is no end marker).
//!
//! A `thoughtSignature` on a thought part signs that thinking block. On a text or function
//! call part it becomes an empty thinking block holding only the signature, placed right
//! before that part, so it can be sent back on the same part.
//!
//! A candidate's `groundingMetadata` (Google Search grounding) is a server tool call block
//! (`grounding_metadata`, kept whole, `crate::server_tool`) and the citations of the text
//! blocks its supports point into (`crate::citation`); a later one replaces both.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::walk::{Walk, walk_or_parse};
use super::{Dialect, provider_error};
use super::{StopTable, read_stop};
use crate::assemble::Builder;
use crate::canonical::{Block, Citation, StopReason, Usage};
use crate::error::Error;

/// Gemini's finish reasons: the words written for each canonical reason (the first one), and
/// read back as the first reason whose words hold them (`STOP` on a turn with calls is read as
/// `ToolUse` by the dialect).
pub(crate) const STOP: StopTable = &[
    (StopReason::EndTurn, &["STOP"]),
    (StopReason::ToolUse, &["STOP"]),
    (StopReason::Length, &["MAX_TOKENS"]),
    (
        StopReason::ContentFilter,
        &["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"],
    ),
    (StopReason::Refusal, &["SAFETY"]),
    (StopReason::Error, &["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]),
];

#[derive(Debug, Default)]
pub struct Gemini {
    other_candidates_seen: bool,
    /// The grounding block, once grounding metadata came.
    grounding: Option<usize>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Chunk<'a> {
    #[serde(borrow)]
    candidates: Option<Vec<Candidate<'a>>>,
    usage_metadata: Option<UsageMetadata>,
    #[serde(borrow)]
    model_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    response_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    prompt_feedback: Option<PromptFeedback<'a>>,
    // rare and large: boxed, so the chunk moved on every delta stays small
    error: Option<Box<serde_json::Value>>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Candidate<'a> {
    #[serde(borrow)]
    content: Option<Content<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    index: Option<u64>,
    #[serde(borrow)]
    grounding_metadata: Option<&'a RawValue>,
}

#[derive(Deserialize, Debug)]
struct Content<'a> {
    #[serde(borrow)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    thought: Option<bool>,
    #[serde(borrow)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Deserialize, Debug)]
struct FunctionCall<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback<'a> {
    #[serde(borrow)]
    block_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_field_names)] // Gemini's own names
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    thoughts_token_count: Option<u64>,
    cached_content_token_count: Option<u64>,
}

// --- the fast walk of a chunk's usual shape (anything else is serde's: see `walk`) ---

fn walk_chunk(data: &str) -> Option<Chunk<'_>> {
    let mut walk = Walk::new(data);
    let mut chunk = Chunk {
        candidates: None,
        usage_metadata: None,
        model_version: None,
        response_id: None,
        prompt_feedback: None,
        error: None,
    };
    let keys = ["candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "error"];
    let present = walk.object(&keys, |w, key| {
        match key {
            0 => chunk.candidates = w.array(walk_candidate)?,
            1 => chunk.usage_metadata = walk_usage(w)?,
            2 => chunk.model_version = w.str()?,
            3 => chunk.response_id = w.str()?,
            _ => w.null()?, // `promptFeedback`, `error`: serde reads them
        }
        Some(())
    })?;
    walk.finish()?;
    present.then_some(chunk)
}

fn walk_candidate<'a>(w: &mut Walk<'a>) -> Option<Candidate<'a>> {
    let mut candidate = Candidate { content: None, finish_reason: None, index: None, grounding_metadata: None };
    let present = w.object(&["content", "finishReason", "index", "groundingMetadata"], |w, key| {
        match key {
            0 => {
                let mut parts = None;
                let present = w.object(&["parts"], |w, _| {
                    parts = w.array(walk_part)?;
                    Some(())
                })?;
                candidate.content = present.then_some(Content { parts });
            }
            1 => candidate.finish_reason = w.str()?,
            2 => candidate.index = w.u64()?,
            _ => w.null()?,
        }
        Some(())
    })?;
    present.then_some(candidate)
}

fn walk_part<'a>(w: &mut Walk<'a>) -> Option<Part<'a>> {
    let mut part = Part { text: None, thought: None, thought_signature: None, function_call: None };
    let present = w.object(&["text", "thought", "thoughtSignature", "functionCall"], |w, key| {
        match key {
            0 => part.text = w.str()?,
            1 => part.thought = w.bool()?,
            2 => part.thought_signature = w.str()?,
            _ => w.null()?,
        }
        Some(())
    })?;
    present.then_some(part)
}

#[allow(clippy::option_option)] // `None`: serde reads the chunk; `Some(None)`: `null`
fn walk_usage(w: &mut Walk<'_>) -> Option<Option<UsageMetadata>> {
    let mut usage = UsageMetadata {
        prompt_token_count: None,
        candidates_token_count: None,
        thoughts_token_count: None,
        cached_content_token_count: None,
    };
    let keys = ["promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount"];
    let present = w.object(&keys, |w, key| {
        let count = w.u64()?;
        match key {
            0 => usage.prompt_token_count = count,
            1 => usage.candidates_token_count = count,
            2 => usage.thoughts_token_count = count,
            _ => usage.cached_content_token_count = count,
        }
        Some(())
    })?;
    Some(present.then_some(usage))
}

impl Dialect for Gemini {
    fn on_payload(&mut self, _event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        let chunk = walk_or_parse(data, walk_chunk, builder)?;
        if let Some(error) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return Err(provider_error(error, builder));
        }
        builder.start(chunk.response_id.as_deref(), chunk.model_version.as_deref());
        for candidate in chunk.candidates.unwrap_or_default() {
            if candidate.index.unwrap_or(0) != 0 {
                if !self.other_candidates_seen {
                    self.other_candidates_seen = true;
                    builder.diagnostic("extra_choices", "candidates other than index 0 were not assembled");
                }
                continue;
            }
            for part in candidate.content.and_then(|c| c.parts).unwrap_or_default() {
                part_into(part, data, builder)?;
            }
            if let Some(metadata) = candidate.grounding_metadata {
                self.ground(metadata, builder)?;
            }
            if let Some(reason) = candidate.finish_reason {
                builder.finish(map_finish_reason(&reason, builder.has_tool_calls()), Some(&reason));
            }
        }
        if let Some(usage) = chunk.usage_metadata {
            let thoughts = usage.thoughts_token_count.unwrap_or(0);
            builder.usage(Usage {
                input_tokens: usage.prompt_token_count.unwrap_or(0),
                // Gemini counts thoughts apart from candidates; canonical output includes them.
                output_tokens: usage.candidates_token_count.unwrap_or(0).saturating_add(thoughts),
                cache_read_tokens: usage.cached_content_token_count.unwrap_or(0),
                cache_write_tokens: 0,
                reasoning_tokens: thoughts,
            });
        }
        if let Some(reason) = chunk.prompt_feedback.and_then(|f| f.block_reason) {
            builder.finish(StopReason::ContentFilter, Some(&reason));
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if !builder.is_finished() {
            return Err(Error::truncated("no finishReason", builder.offset()));
        }
        if let Some(block) = self.grounding {
            builder.end_whole(block);
        }
        Ok(())
    }
}

impl Gemini {
    /// Grounding metadata: the grounding block, and the citations of the text blocks.
    fn ground(&mut self, metadata: &RawValue, builder: &mut Builder) -> Result<(), Error> {
        let empty = metadata.get().strip_prefix('{').is_some_and(|rest| rest.trim_start() == "}");
        if empty || metadata.get() == "null" {
            return Ok(());
        }
        let texts: Vec<(usize, &str)> = builder
            .message()
            .content
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b {
                Block::Text(t) => Some((i, t.text.as_str())),
                _ => None,
            })
            .collect();
        let strings: Vec<&str> = texts.iter().map(|(_, t)| *t).collect();
        let mut cited: Vec<(usize, Vec<Citation>)> = texts.iter().map(|(i, _)| (*i, Vec::new())).collect();
        for (n, citation) in crate::citation::from_gemini(metadata.get(), &strings) {
            cited[n].1.push(citation);
        }
        for (block, citations) in cited {
            builder.set_citations(block, citations)?;
        }
        // its id: made from the metadata (its value, not its bytes: a body re-encoded, a
        // transcoded stream carry the same), so that any reading of it gives the same
        let index = self.grounding.unwrap_or(builder.message().content.len());
        let value = serde_json::from_str::<serde_json::Value>(metadata.get()).map(|v| v.to_string());
        let id = builder.synthetic_call_id(index, value.as_deref().unwrap_or(metadata.get()));
        let Some(block) = crate::server_tool::from_gemini(metadata.get(), id) else {
            return Ok(());
        };
        match self.grounding {
            Some(index) => builder.set_whole(index, block)?,
            None => self.grounding = Some(builder.begin_whole(block)?),
        }
        Ok(())
    }
}

/// `payload`: the event's data (a call without an id gets one derived from it).
fn part_into(part: Part<'_>, payload: &str, builder: &mut Builder) -> Result<(), Error> {
    let signature = part.thought_signature.as_deref().filter(|s| !s.is_empty());
    if part.thought == Some(true) {
        let block = builder.open_thinking();
        builder.push_thinking(block, part.text.as_deref().unwrap_or(""));
        if let Some(signature) = signature {
            builder.thinking_signature(block, signature);
        }
        return Ok(());
    }
    if let Some(signature) = signature {
        let block = builder.new_thinking();
        builder.thinking_signature(block, signature);
    }
    if let Some(text) = part.text.as_deref() {
        builder.text(text);
    }
    if let Some(call) = part.function_call {
        let name = call.name.as_deref().unwrap_or("");
        // Gemini before version 3 sends no ids; results must still find their call.
        let id = match call.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(builder.synthetic_call_id(builder.message().content.len(), payload)),
        };
        let block = builder.begin_tool(&id, name);
        builder.tool_args(block, call.args.map_or("{}", RawValue::get))?;
        builder.end_tool(block);
    }
    Ok(())
}

fn map_finish_reason(reason: &str, tool_calls: bool) -> StopReason {
    match reason {
        "STOP" if tool_calls => StopReason::ToolUse,
        _ => read_stop(STOP, reason),
    }
}
