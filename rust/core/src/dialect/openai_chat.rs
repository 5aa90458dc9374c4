//! OpenAI Chat Completions streams, and every server compatible with them (Azure, vLLM,
//! Ollama `/v1`, DeepSeek, OpenRouter, Groq, Mistral, Gemini's compatible endpoint).
//!
//! Each event is `data: <chat.completion.chunk>`; the stream ends with `data: [DONE]`.
//! Tool calls are keyed by `index`, and real servers bend that rule, so each bend is handled
//! and recorded as a diagnostic: no `index` (keyed by id, then by position), a repeated
//! `index` with a different id (a second call), the name after the first arguments.

mod frame;

use std::borrow::Cow;

use serde::Deserialize;

use super::StopTable;
use super::walk::{KeyOrder, Walk, walk_or_parse};
use super::{Dialect, TextOrParts, parse, provider_error};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;

/// One tool call seen so far: how the server keys it, and its block.
/// The finish reasons written for each canonical reason (the first word). Reading is the
/// dialect's `finish`: compatible servers' words too, and context (calls, a refusal).
pub(crate) const STOP: StopTable = &[
    // OpenAI's own words only (the SDK's types refuse others): a compatible server's `eos` is
    // written as `stop`
    (StopReason::EndTurn, &["stop"]),
    (StopReason::ToolUse, &["tool_calls", "function_call"]),
    (StopReason::Length, &["length"]),
    (StopReason::ContentFilter, &["content_filter"]),
    (StopReason::Refusal, &["stop"]),
];

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
    /// The order this stream sends the keys of its chunks, choices and deltas in (providers
    /// differ: Azure sorts them, OpenRouter adds `provider`, ...).
    order: Orders,
    /// The bytes its text chunks repeat around the text (see `frame`).
    frame: frame::Frame,
}

/// Key orders learned for a chunk, a choice and a delta.
#[derive(Debug, Default)]
struct Orders {
    chunk: KeyOrder,
    choice: KeyOrder,
    delta: KeyOrder,
}

#[derive(Deserialize, Debug)]
struct Chunk<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    usage: Option<ChatUsage>,
    // rare and large: boxed, so the chunk moved on every delta stays small
    x_groq: Option<Box<XGroq>>,
    error: Option<Box<serde_json::Value>>,
}

#[derive(Deserialize, Debug)]
struct Choice<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
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
    function_call: Option<Box<FunctionDelta<'a>>>,
}

#[derive(Deserialize, Debug)]
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

#[derive(Deserialize, Debug)]
struct ToolCallDelta<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
    /// `type: "custom"` tools: free-form `input` instead of JSON `arguments`.
    #[serde(borrow)]
    custom: Option<Box<CustomDelta<'a>>>,
}

#[derive(Deserialize, Debug)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
struct CustomDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
struct Part<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    /// Magistral: `{"type":"thinking","thinking":[{"type":"text","text":"..."}]}`.
    #[serde(borrow)]
    thinking: Option<TextOrParts<'a, Part<'a>>>,
}

#[derive(Deserialize, Default, Debug)]
struct ChatUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek's name for cached prompt tokens.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize, Default, Debug)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default, Debug)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize, Debug)]
struct XGroq {
    usage: Option<ChatUsage>,
}

// --- the fast walk of a chunk's usual shape (anything else is serde's: see `walk`) ---

fn walk_chunk<'a>(data: &'a str, order: &mut Orders) -> Option<Chunk<'a>> {
    let mut walk = Walk::new(data);
    let mut chunk = Chunk { id: None, model: None, choices: None, usage: None, x_groq: None, error: None };
    // in the order OpenAI sends them (others are learned); the keys a chunk does not read are
    // listed for their place
    let keys = [
        "id",
        "object",
        "created",
        "model",
        "service_tier",
        "system_fingerprint",
        "usage",
        "choices",
        "obfuscation",
        "x_groq",
        "error",
    ];
    let present = walk.object_in(&keys, &mut order.chunk, |w, key| {
        match key {
            0 => chunk.id = w.str()?,
            1 | 2 | 4 | 5 | 8 => w.skip()?,
            3 => chunk.model = w.str()?,
            6 => chunk.usage = walk_usage(w)?,
            7 => {
                let choices = chunk.choices.insert(Vec::with_capacity(1));
                if !w.elements(|w| walk_choice(w, choices, &mut order.choice, &mut order.delta))? {
                    chunk.choices = None;
                }
            }
            _ => w.null()?, // `x_groq`, `error`: serde reads them
        }
        Some(())
    })?;
    walk.finish()?;
    present.then_some(chunk)
}

/// One choice, built in place at the end of `choices`.
fn walk_choice<'a>(
    w: &mut Walk<'a>,
    choices: &mut Vec<Choice<'a>>,
    order: &mut KeyOrder,
    delta_order: &mut KeyOrder,
) -> Option<()> {
    choices.push(Choice { index: None, delta: None, finish_reason: None });
    let choice = choices.last_mut()?;
    let present = w.object_in(&["index", "delta", "logprobs", "finish_reason"], order, |w, key| {
        match key {
            0 => choice.index = w.u64()?,
            1 => walk_delta(w, &mut choice.delta, delta_order)?,
            2 => w.skip()?,
            _ => choice.finish_reason = w.str()?,
        }
        Some(())
    })?;
    present.then_some(())
}

/// The delta, written in place into `slot` (`None` for `null`; the delta is the chunk's largest
/// part, and moving it out of a return value cost ~5% of the decode). `None`: serde reads the chunk.
fn walk_delta<'a>(w: &mut Walk<'a>, slot: &mut Option<Delta<'a>>, order: &mut KeyOrder) -> Option<()> {
    let delta = slot.insert(Delta {
        content: None,
        refusal: None,
        reasoning_content: None,
        reasoning: None,
        reasoning_details: None,
        tool_calls: None,
        function_call: None,
    });
    let keys = [
        "role",
        "content",
        "refusal",
        "reasoning_content",
        "reasoning",
        "tool_calls",
        "reasoning_details",
        "function_call",
    ];
    let present = w.object_in(&keys, order, |w, key| {
        match key {
            0 => w.skip()?,
            1 => delta.content = w.str()?.map(TextOrParts::Text),
            2 => delta.refusal = w.str()?,
            3 => delta.reasoning_content = w.str()?,
            4 => delta.reasoning = w.str()?,
            5 => delta.tool_calls = w.array(walk_tool_call)?,
            _ => w.null()?,
        }
        Some(())
    })?;
    if !present {
        *slot = None;
    }
    Some(())
}

fn walk_tool_call<'a>(w: &mut Walk<'a>) -> Option<ToolCallDelta<'a>> {
    let mut call = ToolCallDelta { index: None, id: None, function: None, custom: None };
    let present = w.object(&["index", "id", "function", "custom"], |w, key| {
        match key {
            0 => call.index = w.u64()?,
            1 => call.id = w.str()?,
            2 => {
                let mut function = FunctionDelta { name: None, arguments: None };
                let present = w.object(&["name", "arguments"], |w, key| {
                    match key {
                        0 => function.name = w.str()?,
                        _ => function.arguments = w.str()?,
                    }
                    Some(())
                })?;
                call.function = present.then_some(function);
            }
            _ => w.null()?,
        }
        Some(())
    })?;
    present.then_some(call)
}

/// A whole non-streamed Chat Completions body (`chat.completion`) in its usual shape, walked in
/// one pass: the first choice's message is walked in place as the delta of the one chunk a
/// stream of the reply would carry (`crate::response` otherwise copies it into such a chunk and
/// walks it there, after skipping it once to find its end). `None`: not the usual shape (an
/// error body, a `function_call`, an escaped key, ...), and the caller replays the body.
#[derive(Debug)]
pub(crate) struct ResponseWalk<'a> {
    pub id: Option<Cow<'a, str>>,
    pub object: Option<Cow<'a, str>>,
    pub created: Option<f64>,
    pub model: Option<Cow<'a, str>>,
    /// The chunk the replay would read: the choice with index 0 (made index 0), and the usage.
    chunk: Chunk<'a>,
}

impl ResponseWalk<'_> {
    /// Read the chunk into `builder`, as a fresh decoder reads the replayed event.
    pub(crate) fn replay(self, builder: &mut Builder) -> Result<(), Error> {
        // the payload only seeds the ids of `function_call`s, which the walk leaves to the replay
        OpenAiChat::default().on_chunk(self.chunk, "", builder)
    }
}

pub(crate) fn walk_response(body: &str) -> Option<ResponseWalk<'_>> {
    let mut walk = Walk::new(body);
    let chunk = Chunk { id: None, model: None, choices: None, usage: None, x_groq: None, error: None };
    let mut read = ResponseWalk { id: None, object: None, created: None, model: None, chunk };
    let keys = ["id", "object", "created", "model", "choices", "usage", "error"];
    let present = walk.object(&keys, |w, key| {
        match key {
            0 => read.id = w.str()?,
            1 => read.object = w.str()?,
            2 => read.created = w.whole_f64()?,
            3 => read.model = w.str()?,
            4 => {
                // the first choice with index 0 is kept (one allocation, not a list of them all)
                let mut first = None;
                let present = w.elements(|w| {
                    let choice = walk_response_choice(w)?;
                    if first.is_none() && choice.index.unwrap_or(0) == 0 {
                        first = Some(Choice { index: Some(0), ..choice });
                    }
                    Some(())
                })?;
                if !present {
                    return None; // no choices (`null`): the replay reports it
                }
                read.chunk.choices = Some(first.into_iter().collect());
            }
            5 => read.chunk.usage = walk_usage(w)?,
            _ => w.null()?, // an error body is the replay's
        }
        Some(())
    })?;
    walk.finish()?;
    (present && read.chunk.choices.is_some()).then_some(read)
}

fn walk_response_choice<'a>(w: &mut Walk<'a>) -> Option<Choice<'a>> {
    let mut choice = Choice { index: None, delta: None, finish_reason: None };
    let present = w.object(&["index", "message", "finish_reason"], |w, key| {
        match key {
            0 => choice.index = w.u64()?,
            1 => walk_delta(w, &mut choice.delta, &mut KeyOrder::new())?,
            _ => choice.finish_reason = w.str()?,
        }
        Some(())
    })?;
    present.then_some(choice)
}

#[allow(clippy::option_option)] // `None`: serde reads the chunk; `Some(None)`: `null`
fn walk_usage(w: &mut Walk<'_>) -> Option<Option<ChatUsage>> {
    let mut usage = ChatUsage::default();
    let keys = [
        "prompt_tokens",
        "completion_tokens",
        "prompt_cache_hit_tokens",
        "prompt_tokens_details",
        "completion_tokens_details",
    ];
    let present = w.object(&keys, |w, key| {
        match key {
            0 => usage.prompt_tokens = w.u64()?,
            1 => usage.completion_tokens = w.u64()?,
            2 => usage.prompt_cache_hit_tokens = w.u64()?,
            3 => {
                let mut details = PromptDetails::default();
                let present = w.object(&["cached_tokens"], |w, _| {
                    details.cached_tokens = w.u64()?;
                    Some(())
                })?;
                usage.prompt_tokens_details = present.then_some(details);
            }
            _ => {
                let mut details = CompletionDetails::default();
                let present = w.object(&["reasoning_tokens"], |w, _| {
                    details.reasoning_tokens = w.u64()?;
                    Some(())
                })?;
                usage.completion_tokens_details = present.then_some(details);
            }
        }
        Some(())
    })?;
    Some(present.then_some(usage))
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
        let (order, frame) = (&mut self.order, &mut self.frame);
        let walk = |data| {
            frame.read(data).or_else(|| {
                let chunk = walk_chunk(data, order)?;
                frame.learn(data, &chunk);
                Some(chunk)
            })
        };
        let chunk = walk_or_parse(payload, walk, builder)?;
        self.on_chunk(chunk, payload, builder)
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
    /// One chunk read from `payload` (a call without an id gets one derived from it).
    fn on_chunk(&mut self, chunk: Chunk<'_>, payload: &str, builder: &mut Builder) -> Result<(), Error> {
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
        for choice in chunk.choices.iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                if !self.other_choices_seen {
                    self.other_choices_seen = true;
                    builder.diagnostic("extra_choices", "choices other than index 0 (n > 1) were not assembled");
                }
                continue;
            }
            if let Some(delta) = &choice.delta {
                self.delta(delta, payload, builder)?;
            }
            if let Some(reason) = &choice.finish_reason {
                self.finish(reason, builder);
            }
        }
        let usage = chunk.usage.or_else(|| chunk.x_groq.and_then(|x| x.usage));
        if let Some(usage) = usage {
            builder.usage(usage.canonical());
        }
        Ok(())
    }

    /// `payload`: the event's data (a call without an id gets one derived from it).
    fn delta(&mut self, delta: &Delta<'_>, payload: &str, builder: &mut Builder) -> Result<(), Error> {
        let reasoning = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref());
        if let Some(text) = reasoning {
            builder.thinking(text);
        }
        for detail in delta.reasoning_details.iter().flatten() {
            Self::reasoning_detail(detail, reasoning.is_none(), builder);
        }
        if let Some(content) = &delta.content {
            Self::content(content, builder);
        }
        if let Some(refusal) = delta.refusal.as_deref().filter(|r| !r.is_empty()) {
            self.refusal = true;
            builder.text(refusal);
        }
        for call in delta.tool_calls.iter().flatten() {
            let (name, arguments) = match (&call.function, &call.custom) {
                (Some(f), _) => (&f.name, &f.arguments),
                (None, Some(c)) => (&c.name, &c.input),
                (None, None) => (&None, &None),
            };
            self.tool_call(call.index, call.id.as_deref(), name.as_deref(), arguments.as_deref(), builder)?;
        }
        if let Some(function) = &delta.function_call {
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

    fn content(content: &TextOrParts<'_, Part<'_>>, builder: &mut Builder) {
        let parts = match content {
            TextOrParts::Text(text) => return builder.text(text),
            TextOrParts::Parts(parts) => parts,
        };
        for part in parts {
            if part.kind.as_deref() != Some("thinking") {
                builder.text(part.text.as_deref().unwrap_or(""));
                continue;
            }
            match &part.thinking {
                Some(TextOrParts::Text(text)) => builder.thinking(text),
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
                // a response's calls (no index) are looked up by id, each new one against every
                // call before it: the last byte first (ids of one server share their length and
                // prefix), which spares most calls of `memcmp`
                Some(id) => {
                    self.calls.iter().rposition(|c| c.id.as_bytes().last() == id.as_bytes().last() && c.id == id)
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk reads the usual shape, and on every odd one either agrees with serde or leaves
    /// the chunk to serde (`None`): never a different reading, never an accepted error.
    #[test]
    fn the_walk_agrees_with_serde_or_steps_aside() {
        let usual = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","usage":null,"choices":[{"index":0,"delta":{"role":"assistant","content":"h\u00e9\n","refusal":null,"tool_calls":[{"index":0,"id":"call","type":"function","function":{"name":"f","arguments":"{\"a\""}}]},"logprobs":null,"finish_reason":null}],"obfuscation":"x"}"#;
        let walked = walk_chunk(usual, &mut Orders::default()).expect("the usual shape is walked");
        let parsed: Chunk<'_> = serde_json::from_str(usual).expect("JSON");
        assert_eq!(format!("{walked:?}"), format!("{parsed:?}"));
        let odd = [
            r#"{"id":"a","id":"b"}"#,                            // duplicate field: serde's error
            r#"{"\u0069d":"a"}"#,                                // escaped key
            r#"{"choices":[{"index":1.0}]}"#,                    // a float index
            r#"{"choices":[{"index":-1}]}"#,                     // a negative index
            r#"{"choices":[{"index":18446744073709551616}]}"#,   // beyond u64
            r#"{"choices":[{"index":01}]}"#,                     // a leading zero
            r#"{"created":1.5e+3,"x":-0.0,"y":true,"z":false}"#, // skipped numbers and literals
            r#"{"created":1.e3}"#,                               // a bad number
            r#"{"created":-}"#,
            r#"{"obfuscation":"a\u0000b","s":"\ud800"}"#, // escapes in skipped strings
            "{\"obfuscation\":\"a\u{1}b\"}",              // a raw control character
            r#"{"model":"\ud83d\ude00","id":"\ud800"}"#,  // surrogates, one lone
            r#"{"choices":[{"delta":{"content":["a"]}}]}"#, // content parts: serde's
            r#"{"choices":[{"delta":["x"]}]}"#,           // a struct as a sequence
            r#"{"choices":[null]}"#,
            r#"{"choices":{}}"#,
            r#"{"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":0}}}"#,
            r#"{"prompt_filter_results":[{"a":1}]}"#, // an unknown key holding an array
            r#"{"logprobs":{"content":[{"token":"a","bytes":[97],"top":[]}],"x":{}},"id":"a"}"#,
            r#"{"x":[1,],"id":"a"}"#, // invalid inside a skipped value
            r#"{"x":{"a" 1}}"#,
            r#"{"x":{1:2}}"#,
            r#"{"x":{"\u0061":"\n"},"id":"a"}"#, // escapes inside a skipped value
            r#"{"x":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]],"id":"a"}"#, // deeper than the walk skips
            r#"{"x":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]],"id":"a"}"#, // unbalanced
            r#"{"error":null,"x_groq":null}"#,
            r#"{"error":{"message":"m"}}"#,
            "{} x",
            " { } ",
            r#"{"id":"a",}"#,
            r#"{"id" "a"}"#,
            "null",
            "[]",
        ];
        for chunk in odd {
            let parsed = serde_json::from_str::<Chunk<'_>>(chunk);
            if let Some(walked) = walk_chunk(chunk, &mut Orders::default()) {
                let parsed = parsed.unwrap_or_else(|e| panic!("the walk accepted {chunk}, serde: {e}"));
                assert_eq!(format!("{walked:?}"), format!("{parsed:?}"), "{chunk}");
            }
        }
        assert!(walk_chunk(odd[16], &mut Orders::default()).is_some(), "usage with details is walked");
        assert!(walk_chunk(odd[18], &mut Orders::default()).is_some(), "nested unknown values are skipped");
    }
}
