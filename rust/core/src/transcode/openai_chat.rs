//! Writes OpenAI Chat Completions chunks: `data: {"object": "chat.completion.chunk", ...}`,
//! text as `delta.content`, thinking as `delta.reasoning_content` (DeepSeek's and vLLM's field;
//! OpenAI's own SDK ignores it), tool calls as `delta.tool_calls` numbered from 0, a chunk with
//! `finish_reason`, a usage chunk (`choices: []`, as with `include_usage`), then `data: [DONE]`.
//! A failure is a `data: {"error": {...}}` chunk, which the SDK raises as an `APIError`.

use crate::canonical::{AssistantMessage, Block};
use crate::dialect::openai_chat::STOP;
use crate::error::Error;

use super::{Delta, Encoder, error_parts, json_created, json_num, json_str, response_id, stop_string, usage_of};

#[derive(Debug, Default)]
pub(crate) struct OpenAiChat {
    /// `data: {"id":..,"object":..,"created":..,"model":..` — every chunk begins with it.
    head: Vec<u8>,
    /// Tool calls opened so far; the open one is `tools - 1`.
    tools: usize,
}

const CHOICE: &[u8] = b",\"choices\":[{\"index\":0,\"delta\":";
const NOT_FINISHED: &[u8] = b",\"finish_reason\":null}]}\n\n";

impl OpenAiChat {
    fn chunk(&self, out: &mut Vec<u8>, delta: impl FnOnce(&mut Vec<u8>)) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(CHOICE);
        delta(out);
        out.extend_from_slice(NOT_FINISHED);
    }
}

impl Encoder for OpenAiChat {
    fn dialect(&self) -> &'static str {
        "openai"
    }

    fn start(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        self.head.extend_from_slice(b"data: {\"id\":");
        json_str(&mut self.head, &response_id(message, "chatcmpl-"));
        self.head.extend_from_slice(b",\"object\":\"chat.completion.chunk\",\"created\":");
        json_created(&mut self.head, message);
        self.head.extend_from_slice(b",\"model\":");
        json_str(&mut self.head, message.model.as_deref().unwrap_or(""));
        self.chunk(out, |out| out.extend_from_slice(b"{\"role\":\"assistant\",\"content\":\"\"}"));
    }

    fn open(&mut self, out: &mut Vec<u8>, _index: usize, block: &Block) {
        let Block::ToolCall(call) = block else { return };
        let index = self.tools;
        self.tools += 1;
        self.chunk(out, |out| {
            out.extend_from_slice(b"{\"tool_calls\":[{\"index\":");
            json_num(out, index as u64);
            out.extend_from_slice(b",\"id\":");
            json_str(out, &call.id);
            out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
            json_str(out, &call.name);
            out.extend_from_slice(b",\"arguments\":\"\"}}]}");
        });
    }

    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>) {
        let tool = self.tools.saturating_sub(1);
        match delta {
            Delta::Text(text) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"content\":");
                json_str(out, text);
                out.push(b'}');
            }),
            Delta::Thinking(text) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"reasoning_content\":");
                json_str(out, text);
                out.push(b'}');
            }),
            Delta::Arguments(fragment) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"tool_calls\":[{\"index\":");
                json_num(out, tool as u64);
                out.extend_from_slice(b",\"function\":{\"arguments\":");
                json_str(out, fragment);
                out.extend_from_slice(b"}}]}");
            }),
            Delta::Signature(_) => {} // no place for it in a chunk
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, block: &Block) {
        // a call without arguments: `"{}"`, which `json.loads` reads (`""` it does not)
        if let Block::ToolCall(call) = block {
            if call.arguments.trim().is_empty() {
                self.delta(out, Delta::Arguments("{}"));
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(CHOICE);
        out.extend_from_slice(b"{},\"finish_reason\":");
        json_str(out, stop_string(message, STOP, "stop"));
        out.extend_from_slice(b"}]}\n\n");
        if let Some(usage) = message.usage.as_ref().map(|_| usage_of(message)) {
            out.extend_from_slice(&self.head);
            out.extend_from_slice(b",\"choices\":[],\"usage\":{\"prompt_tokens\":");
            json_num(out, usage.input_tokens);
            out.extend_from_slice(b",\"completion_tokens\":");
            json_num(out, usage.output_tokens);
            out.extend_from_slice(b",\"total_tokens\":");
            json_num(out, usage.input_tokens.saturating_add(usage.output_tokens));
            out.extend_from_slice(b",\"prompt_tokens_details\":{\"cached_tokens\":");
            json_num(out, usage.cache_read_tokens);
            out.extend_from_slice(b"},\"completion_tokens_details\":{\"reasoning_tokens\":");
            json_num(out, usage.reasoning_tokens);
            out.extend_from_slice(b"}}}\n\n");
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
    }

    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, _message: &AssistantMessage) {
        let (kind, text) = error_parts(error);
        out.extend_from_slice(b"data: {\"error\":{\"message\":");
        json_str(out, &text);
        out.extend_from_slice(b",\"type\":");
        json_str(out, kind);
        out.extend_from_slice(b",\"code\":null}}\n\n");
    }
}
