//! Ollama's native `/api/chat` stream: NDJSON, one object per line, `message.content` and
//! `message.thinking` as deltas, tool calls whole with object arguments, and a last line with
//! `done: true`, `done_reason` and the token counts. An `{"error": "..."}` line ends it badly.
//! `/api/generate` streams the same lines with the text in `response` and the reasoning in a
//! top-level `thinking` (no `message`): they are read the same way.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Dialect, parse, provider_error};
use crate::assemble::Builder;
use crate::canonical::{StopReason, Usage};
use crate::error::Error;

#[derive(Debug, Default)]
pub struct Ollama {
    done: bool,
}

#[derive(Deserialize)]
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
    error: Option<serde_json::Value>,
    /// `/api/generate`: the text delta.
    #[serde(borrow)]
    response: Option<Cow<'a, str>>,
    /// `/api/generate`: the reasoning delta.
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct LineMessage<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

impl Dialect for Ollama {
    fn on_payload(&mut self, _event: &str, data: &str, builder: &mut Builder) -> Result<(), Error> {
        if self.done {
            builder.diagnostic("data_after_done", "a line after done:true was ignored");
            return Ok(());
        }
        let line: Line<'_> = parse(data, builder)?;
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
            let stop = match reason {
                Some("length") => StopReason::Length,
                _ if builder.has_tool_calls() => StopReason::ToolUse,
                Some("stop" | "load" | "unload") | None => StopReason::EndTurn,
                Some(_) => StopReason::Unknown,
            };
            builder.finish(stop, reason);
        }
        Ok(())
    }

    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error> {
        if self.done { Ok(()) } else { Err(Error::truncated("no line with done:true", builder.offset())) }
    }
}
