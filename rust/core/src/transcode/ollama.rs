//! Writes Ollama's native `/api/chat` stream: NDJSON, `message.content` and
//! `message.thinking` as deltas, tool calls whole with object arguments (written when the call
//! is complete), and a last line with `done: true`, `done_reason` and the token counts. A
//! failure is an `{"error": "..."}` line.

use crate::canonical::{AssistantMessage, Block};
use crate::dialect::ollama::STOP;
use crate::error::Error;

use super::{Delta, Encoder, error_parts, json_num, json_object_arguments, json_str, stop_string, usage_of};

#[derive(Debug, Default)]
pub(crate) struct Ollama {
    /// `{"model":..,"created_at":..,"message":{"role":"assistant",` — every line begins with it.
    head: Vec<u8>,
}

impl Ollama {
    fn line(&self, out: &mut Vec<u8>, message: impl FnOnce(&mut Vec<u8>)) {
        out.extend_from_slice(&self.head);
        message(out);
        out.extend_from_slice(b"},\"done\":false}\n");
    }
}

impl Encoder for Ollama {
    fn dialect(&self) -> &'static str {
        "ollama"
    }

    fn start(&mut self, _out: &mut Vec<u8>, message: &AssistantMessage) {
        self.head.extend_from_slice(b"{\"model\":");
        json_str(&mut self.head, message.model.as_deref().unwrap_or(""));
        self.head.extend_from_slice(b",\"created_at\":");
        json_str(&mut self.head, &message.timestamp);
        self.head.extend_from_slice(b",\"message\":{\"role\":\"assistant\",");
    }

    fn open(&mut self, _out: &mut Vec<u8>, _index: usize, _block: &Block) {}

    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>) {
        match delta {
            Delta::Text(text) => self.line(out, |out| {
                out.extend_from_slice(b"\"content\":");
                json_str(out, text);
            }),
            Delta::Thinking(text) => self.line(out, |out| {
                out.extend_from_slice(b"\"content\":\"\",\"thinking\":");
                json_str(out, text);
            }),
            Delta::Signature(_) | Delta::Arguments(_) => {} // no signatures; calls go out whole
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, block: &Block) {
        let Block::ToolCall(call) = block else { return };
        self.line(out, |out| {
            out.extend_from_slice(b"\"content\":\"\",\"tool_calls\":[{");
            if !call.id.is_empty() {
                out.extend_from_slice(b"\"id\":");
                json_str(out, &call.id);
                out.push(b',');
            }
            out.extend_from_slice(b"\"function\":{\"name\":");
            json_str(out, &call.name);
            out.extend_from_slice(b",\"arguments\":");
            json_object_arguments(out, &call.arguments);
            out.extend_from_slice(b"}}]");
        });
    }

    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        let usage = usage_of(message);
        out.extend_from_slice(&self.head);
        out.extend_from_slice(b"\"content\":\"\"},\"done\":true,\"done_reason\":");
        json_str(out, stop_string(message, STOP, "stop"));
        out.extend_from_slice(b",\"prompt_eval_count\":");
        json_num(out, usage.input_tokens);
        out.extend_from_slice(b",\"eval_count\":");
        json_num(out, usage.output_tokens);
        out.extend_from_slice(b"}\n");
    }

    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, _message: &AssistantMessage) {
        let (_, text) = error_parts(error);
        out.extend_from_slice(b"{\"error\":");
        json_str(out, &text);
        out.extend_from_slice(b"}\n");
    }
}
