//! Ollama's native `/api/chat` stream: NDJSON, one object per line, `message.content` and
//! `message.thinking` as deltas, tool calls whole with object arguments, and a last line with
//! `done: true`, `done_reason` and the token counts. An `{"error": "..."}` line ends it badly.
//! `/api/generate` streams the same lines with the text in `response` and the reasoning in a
//! top-level `thinking` (no `message`): they are read the same way.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::walk::{Walk, walk_or_parse};
use super::{Dialect, provider_error};
use super::{StopTable, read_stop};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;

/// Ollama's done reasons, written (the first word) and read (the first reason holding the
/// word; a turn with calls is `ToolUse`, no reason at all `EndTurn`).
pub(crate) const STOP: StopTable = &[
    (StopReason::EndTurn, &["stop", "load", "unload"]),
    (StopReason::ToolUse, &["stop"]),
    (StopReason::Length, &["length"]),
];

#[derive(Debug, Default)]
pub struct Ollama {
    done: bool,
}

#[derive(Deserialize, Debug)]
struct Line<'a> {
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<LineMessage<'a>>,
    done: Option<bool>,
    #[serde(borrow)]
    done_reason: Option<Cow<'a, str>>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    // rare and large: boxed, so the line moved on every delta stays small
    error: Option<Box<serde_json::Value>>,
    /// `/api/generate`: the text delta.
    #[serde(borrow)]
    response: Option<Cow<'a, str>>,
    /// `/api/generate`: the reasoning delta.
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
struct LineMessage<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize, Debug)]
struct ToolCall<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize, Debug)]
struct Function<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

// --- the fast walk of a line's usual shape (anything else is serde's: see `walk`) ---

fn walk_line(data: &str) -> Option<Line<'_>> {
    let mut walk = Walk::new(data);
    let mut line = Line {
        model: None,
        message: None,
        done: None,
        done_reason: None,
        prompt_eval_count: None,
        eval_count: None,
        error: None,
        response: None,
        thinking: None,
    };
    let keys =
        ["model", "message", "done", "done_reason", "prompt_eval_count", "eval_count", "response", "thinking", "error"];
    let present = walk.object(&keys, |w, key| {
        match key {
            0 => line.model = w.str()?,
            1 => {
                let mut message = LineMessage { content: None, thinking: None, tool_calls: None };
                let present = w.object(&["content", "thinking", "tool_calls"], |w, key| {
                    match key {
                        0 => message.content = w.str()?,
                        1 => message.thinking = w.str()?,
                        _ => w.null()?, // tool calls (their arguments kept raw): serde reads them
                    }
                    Some(())
                })?;
                line.message = present.then_some(message);
            }
            2 => line.done = w.bool()?,
            3 => line.done_reason = w.str()?,
            4 => line.prompt_eval_count = w.u64()?,
            5 => line.eval_count = w.u64()?,
            6 => line.response = w.str()?,
            7 => line.thinking = w.str()?,
            _ => w.null()?,
        }
        Some(())
    })?;
    walk.finish()?;
    present.then_some(line)
}

impl Dialect for Ollama {
    fn on_payload(&mut self, _event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        if self.done {
            builder.diagnostic("data_after_done", "a line after done:true was ignored");
            return Ok(());
        }
        let line = walk_or_parse(data, walk_line, builder)?;
        if let Some(error) = line.error.as_ref().filter(|e| !e.is_null()) {
            return Err(provider_error(error, builder));
        }
        builder.start(None, line.model.as_deref());
        builder.thinking(line.thinking.as_deref().unwrap_or(""));
        builder.text(line.response.as_deref().unwrap_or(""));
        if let Some(message) = line.message {
            builder.thinking(message.thinking.as_deref().unwrap_or(""));
            builder.text(message.content.as_deref().unwrap_or(""));
            for call in message.tool_calls.into_iter().flatten() {
                let function = call.function.as_ref();
                let name = function.and_then(|f| f.name.as_deref()).unwrap_or("");
                let id = match call.id.as_deref().filter(|id| !id.is_empty()) {
                    Some(id) => Cow::Borrowed(id),
                    None => Cow::Owned(builder.synthetic_call_id(builder.message().content.len(), data)),
                };
                let block = builder.begin_tool(&id, name);
                let arguments = function.and_then(|f| f.arguments).map_or("{}", RawValue::get);
                // Ollama sends arguments as an object; a string holding JSON is taken as that JSON.
                let arguments = match serde_json::from_str::<Cow<'_, str>>(arguments) {
                    Ok(text) => builder.tool_args(block, &text),
                    Err(_) => builder.tool_args(block, arguments),
                };
                arguments?;
                builder.end_tool(block);
            }
        }
        if line.done == Some(true) {
            self.done = true;
            builder.usage(Usage {
                input_tokens: line.prompt_eval_count.unwrap_or(0),
                output_tokens: line.eval_count.unwrap_or(0),
                ..Usage::default()
            });
            let reason = line.done_reason.as_deref();
            let stop = match reason.map_or(StopReason::EndTurn, |word| read_stop(STOP, word)) {
                StopReason::Length => StopReason::Length,
                _ if builder.has_tool_calls() => StopReason::ToolUse,
                read => read,
            };
            builder.finish(stop, reason);
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if self.done { Ok(()) } else { Err(Error::truncated("no line with done:true", builder.offset())) }
    }
}
