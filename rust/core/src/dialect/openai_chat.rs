//! OpenAI Chat Completions streams, and every server compatible with them (Azure, vLLM,
//! Ollama `/v1`, DeepSeek, OpenRouter, Groq, Mistral, Gemini's compatible endpoint).
//!
//! Each event is `data: <chat.completion.chunk>`; the stream ends with `data: [DONE]`.
//! Tool calls are keyed by `index`, and real servers bend that rule, so each bend is handled
//! and recorded as a diagnostic: no `index` (keyed by id, then by position), a repeated
//! `index` with a different id (a second call), the name after the first arguments.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Dialect, TextOrParts, parse, provider_error};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;

/// One tool call seen so far: how the server keys it, and its block.
#[derive(Debug)]
struct Call {
    index: Option<u64>,
    id: String,
    block: usize,
    /// Deltas came with another id but no name (recorded once).
    id_changed: bool,
}

#[derive(Debug, Default)]
pub struct OpenAiChat {
    /// `data: [DONE]` was seen.
    done: bool,
    calls: Vec<Call>,
    refusal: bool,
    other_choices_seen: bool,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    usage: Option<ChatUsage>,
    x_groq: Option<XGroq>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    /// A string, or (Mistral's Magistral) an array of typed parts.
    #[serde(borrow)]
    content: Option<TextOrParts<'a, Part<'a>>>,
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
    /// DeepSeek and older vLLM.
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter, Ollama `/v1`, Groq, newer vLLM.
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
    /// OpenRouter: the same reasoning with signatures and encrypted parts.
    #[serde(borrow)]
    reasoning_details: Option<Vec<ReasoningDetail<'a>>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    /// The deprecated single `function_call` (no index, no id).
    #[serde(borrow)]
    function_call: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct ReasoningDetail<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow)]
    data: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
    /// `type: "custom"` tools: free-form `input` instead of JSON `arguments`.
    #[serde(borrow)]
    custom: Option<CustomDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CustomDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    /// Magistral: `{"type":"thinking","thinking":[{"type":"text","text":"..."}]}`.
    #[serde(borrow)]
    thinking: Option<TextOrParts<'a, Part<'a>>>,
}

#[derive(Deserialize, Default)]
struct ChatUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct XGroq {
    usage: Option<ChatUsage>,
}

impl ChatUsage {
    fn canonical(&self) -> Usage {
        let cached = self.prompt_tokens_details.as_ref().and_then(|d| d.cached_tokens);
        Usage {
            input_tokens: self.prompt_tokens.unwrap_or(0),
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_read_tokens: cached.or(self.prompt_cache_hit_tokens).unwrap_or(0),
            cache_write_tokens: 0,
            reasoning_tokens: self.completion_tokens_details.as_ref().and_then(|d| d.reasoning_tokens).unwrap_or(0),
        }
    }
}

impl Dialect for OpenAiChat {
    fn on_payload(&mut self, event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        let payload = data.trim_ascii();
        if self.done {
            builder.diagnostic("data_after_done", "an event after [DONE] was ignored");
            return Ok(());
        }
        if payload.starts_with("[DONE]") {
            self.done = true;
            return Ok(());
        }
        if event == "error" {
            let body: serde_json::Value = parse(payload, builder)?;
            return Err(provider_error(body.get("error").unwrap_or(&body), builder));
        }
        let chunk: Chunk<'_> = parse(payload, builder)?;
        if let Some(error) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            // The usage sent with the error (OpenRouter does) was billed: the partial message keeps it.
            if let Some(usage) = chunk.usage.as_ref().or(chunk.x_groq.as_ref().and_then(|x| x.usage.as_ref())) {
                builder.usage(usage.canonical());
            }
            return Err(provider_error(error, builder));
        }
        // Azure's first frame (`prompt_filter_results`) has an empty id and model: the
        // MessageStart waits for a chunk that names them.
        if [&chunk.id, &chunk.model].iter().any(|s| s.as_deref().is_some_and(|s| !s.is_empty())) {
            builder.start(chunk.id.as_deref(), chunk.model.as_deref());
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                if !self.other_choices_seen {
                    self.other_choices_seen = true;
                    builder.diagnostic("extra_choices", "choices other than index 0 (n > 1) were not assembled");
                }
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, payload, builder)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.finish(&reason, builder);
            }
        }
        let usage = chunk.usage.or_else(|| chunk.x_groq.and_then(|x| x.usage));
        if let Some(usage) = usage {
            builder.usage(usage.canonical());
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if !self.done {
            if !builder.is_finished() {
                return Err(Error::truncated("no finish_reason and no [DONE]", builder.offset()));
            }
            builder.diagnostic("missing_done", "the stream ended after its finish_reason but without [DONE]");
        }
        Ok(())
    }
}

impl OpenAiChat {
    /// `payload`: the event's data (a call without an id gets one derived from it).
    fn delta(&mut self, delta: Delta<'_>, payload: &str, builder: &mut Builder) -> Result<(), Error> {
        let reasoning = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref());
        if let Some(text) = reasoning {
            builder.thinking(text);
        }
        for detail in delta.reasoning_details.iter().flatten() {
            Self::reasoning_detail(detail, reasoning.is_none(), builder);
        }
        if let Some(content) = delta.content {
            Self::content(content, builder);
        }
        if let Some(refusal) = delta.refusal.as_deref().filter(|r| !r.is_empty()) {
            self.refusal = true;
            builder.text(refusal);
        }
        for call in delta.tool_calls.into_iter().flatten() {
            let (name, arguments) = match (call.function, call.custom) {
                (Some(f), _) => (f.name, f.arguments),
                (None, Some(c)) => (c.name, c.input),
                (None, None) => (None, None),
            };
            self.tool_call(call.index, call.id.as_deref(), name.as_deref(), arguments.as_deref(), builder)?;
        }
        if let Some(function) = delta.function_call {
            // The deprecated `function_call` never has an id: the call gets one (as Gemini's and
            // Ollama's do), or a tool result could not answer it.
            let id = match self.calls.iter().rposition(|c| c.index == Some(0)) {
                Some(pos) => self.calls[pos].id.clone(),
                None => builder.synthetic_call_id(builder.message().content.len(), payload),
            };
            self.tool_call(Some(0), Some(&id), function.name.as_deref(), function.arguments.as_deref(), builder)?;
        }
        Ok(())
    }

    fn reasoning_detail(detail: &ReasoningDetail<'_>, use_text: bool, builder: &mut Builder) {
        if detail.kind.as_deref() == Some("reasoning.encrypted") {
            if let Some(data) = detail.data.as_deref().filter(|d| !d.is_empty()) {
                builder.redacted_thinking(data);
            }
            return;
        }
        // `reasoning` repeats the text of `reasoning.text` details: take it once.
        if use_text {
            if let Some(text) = detail.text.as_deref() {
                builder.thinking(text);
            }
        }
        if let Some(signature) = detail.signature.as_deref().filter(|s| !s.is_empty()) {
            let index = builder.open_thinking();
            builder.thinking_signature(index, signature);
        }
    }

    fn content(content: TextOrParts<'_, Part<'_>>, builder: &mut Builder) {
        let parts = match content {
            TextOrParts::Text(text) => return builder.text(&text),
            TextOrParts::Parts(parts) => parts,
        };
        for part in parts {
            if part.kind.as_deref() != Some("thinking") {
                builder.text(part.text.as_deref().unwrap_or(""));
                continue;
            }
            match part.thinking {
                Some(TextOrParts::Text(text)) => builder.thinking(&text),
                Some(TextOrParts::Parts(inner)) => {
                    for text in inner.iter().filter_map(|p| p.text.as_deref()) {
                        builder.thinking(text);
                    }
                }
                None => {}
            }
        }
    }

    /// Route one tool-call delta to its call, creating the call when it is new.
    fn tool_call(
        &mut self,
        index: Option<u64>,
        id: Option<&str>,
        name: Option<&str>,
        arguments: Option<&str>,
        builder: &mut Builder,
    ) -> Result<(), Error> {
        let id = id.filter(|id| !id.is_empty());
        let name = name.filter(|n| !n.is_empty());
        let existing = match index {
            Some(index) => {
                let found = self.calls.iter().rposition(|c| c.index == Some(index));
                match (found, id) {
                    (Some(pos), Some(id)) if !self.calls[pos].id.is_empty() && self.calls[pos].id != id => {
                        if name.is_some() {
                            let message = format!("tool call index {index} reused with a new id {id:?}: a second call");
                            builder.diagnostic("repeated_index_new_id", message);
                            None
                        } else {
                            // Without a name a delta cannot start a call: LM Studio sends every
                            // fragment with a fresh id. The call keeps its first id.
                            if !self.calls[pos].id_changed {
                                self.calls[pos].id_changed = true;
                                let message = format!("tool call index {index} continued under another id {id:?}");
                                builder.diagnostic("tool_call_id_changed", message);
                            }
                            Some(pos)
                        }
                    }
                    (found, _) => found,
                }
            }
            None => match id {
                Some(id) => self.calls.iter().rposition(|c| c.id == id),
                // No index and no id: a new call when it has a name, else the latest call goes on.
                None if name.is_none() => self.calls.len().checked_sub(1),
                None => None,
            },
        };
        let block = if let Some(pos) = existing {
            let call = &mut self.calls[pos];
            if let (true, Some(id)) = (call.id.is_empty(), id) {
                id.clone_into(&mut call.id);
                builder.tool_set_id(call.block, id);
            }
            if let Some(name) = name {
                builder.tool_name(call.block, name);
            }
            call.block
        } else {
            if index.is_none() {
                builder.diagnostic("tool_call_without_index", "a tool call came without an index");
            }
            let block = builder.begin_tool(id.unwrap_or(""), name.unwrap_or(""));
            self.calls.push(Call { index, id: id.unwrap_or("").to_owned(), block, id_changed: false });
            block
        };
        if let Some(arguments) = arguments {
            builder.tool_args(block, arguments)?;
        }
        Ok(())
    }

    fn finish(&mut self, reason: &str, builder: &mut Builder) {
        let stop = match reason {
            "stop" | "end_turn" if builder.has_tool_calls() => {
                builder.diagnostic("stop_with_tool_calls", "finish_reason \"stop\" on a turn with tool calls");
                StopReason::ToolUse
            }
            "stop" | "end_turn" if self.refusal => StopReason::Refusal,
            "stop" | "end_turn" | "eos" => StopReason::EndTurn,
            "length" | "model_length" | "max_tokens" => StopReason::Length,
            "tool_calls" | "function_call" | "tool_use" => StopReason::ToolUse,
            "content_filter" => StopReason::ContentFilter,
            "error" => StopReason::Error,
            _ => StopReason::Unknown,
        };
        builder.finish(stop, Some(reason));
    }
}
