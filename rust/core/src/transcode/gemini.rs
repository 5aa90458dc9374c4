//! Writes a Gemini `streamGenerateContent?alt=sse` stream: each chunk a `GenerateContentResponse`
//! whose parts are deltas (`{"text"}`, `{"text", "thought": true}`, a `thoughtSignature`),
//! function calls whole (`{"functionCall": {"id", "name", "args"}}`, written when the call is
//! complete), and a last chunk with `finishReason` and `usageMetadata`. Google ends events
//! with CRLF pairs; so does this. A failure is a chunk holding `{"error": {...}}`.

use crate::canonical::{AssistantMessage, Block};
use crate::dialect::gemini::STOP;
use crate::error::Error;

use super::{
    Delta, Encoder, error_parts, json_num, json_object_arguments, json_str, response_id, stop_string, usage_of,
};

#[derive(Debug)]
pub(crate) struct Gemini {
    /// `,"modelVersion":..,"responseId":..}` — every chunk ends with it.
    tail: Vec<u8>,
}

const PARTS: &[u8] = b"data: {\"candidates\":[{\"content\":{\"parts\":[";
const END: &[u8] = b"\r\n\r\n";

impl Gemini {
    fn chunk(&self, out: &mut Vec<u8>, part: impl FnOnce(&mut Vec<u8>)) {
        out.extend_from_slice(PARTS);
        part(out);
        out.extend_from_slice(b"],\"role\":\"model\"},\"index\":0}]");
        out.extend_from_slice(&self.tail);
        out.extend_from_slice(END);
    }
}

impl Default for Gemini {
    fn default() -> Self {
        Self { tail: b"}".to_vec() }
    }
}

impl Encoder for Gemini {
    fn dialect(&self) -> &'static str {
        "gemini"
    }

    fn cites(&self, citation: &crate::canonical::Citation) -> bool {
        crate::citation::gemini_writes(citation)
    }

    fn start(&mut self, _out: &mut Vec<u8>, message: &AssistantMessage) {
        self.tail.clear();
        self.tail.extend_from_slice(b",\"modelVersion\":");
        json_str(&mut self.tail, message.model.as_deref().unwrap_or(""));
        self.tail.extend_from_slice(b",\"responseId\":");
        json_str(&mut self.tail, &response_id(message, ""));
        self.tail.push(b'}');
    }

    fn open(&mut self, _out: &mut Vec<u8>, _index: usize, _block: &Block) {}

    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>) {
        match delta {
            Delta::Text(text) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"text\":");
                json_str(out, text);
                out.push(b'}');
            }),
            Delta::Thinking(text) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"text\":");
                json_str(out, text);
                out.extend_from_slice(b",\"thought\":true}");
            }),
            Delta::Signature(signature) => self.chunk(out, |out| {
                out.extend_from_slice(b"{\"thought\":true,\"thoughtSignature\":");
                json_str(out, signature);
                out.push(b'}');
            }),
            Delta::Arguments(_) => {} // the call goes out whole when it closes
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, block: &Block) {
        let Block::ToolCall(call) = block else { return };
        self.chunk(out, |out| {
            out.extend_from_slice(b"{\"functionCall\":{");
            if !call.id.is_empty() {
                out.extend_from_slice(b"\"id\":");
                json_str(out, &call.id);
                out.push(b',');
            }
            out.extend_from_slice(b"\"name\":");
            json_str(out, &call.name);
            out.extend_from_slice(b",\"args\":");
            json_object_arguments(out, &call.arguments);
            out.extend_from_slice(b"}}");
        });
    }

    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        let usage = usage_of(message);
        out.extend_from_slice(PARTS);
        out.extend_from_slice(b"],\"role\":\"model\"},\"finishReason\":");
        json_str(out, stop_string(message, STOP, "OTHER"));
        if let Some(metadata) = crate::server_tool::grounding(message) {
            out.extend_from_slice(b",\"groundingMetadata\":");
            out.extend_from_slice(metadata.get().as_bytes());
        }
        out.extend_from_slice(b",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":");
        json_num(out, usage.input_tokens);
        // Gemini counts thoughts apart from the candidates.
        out.extend_from_slice(b",\"candidatesTokenCount\":");
        json_num(out, usage.output_tokens.saturating_sub(usage.reasoning_tokens));
        if usage.reasoning_tokens > 0 {
            out.extend_from_slice(b",\"thoughtsTokenCount\":");
            json_num(out, usage.reasoning_tokens);
        }
        if usage.cache_read_tokens > 0 {
            out.extend_from_slice(b",\"cachedContentTokenCount\":");
            json_num(out, usage.cache_read_tokens);
        }
        out.extend_from_slice(b",\"totalTokenCount\":");
        json_num(out, usage.input_tokens.saturating_add(usage.output_tokens));
        out.push(b'}');
        out.extend_from_slice(&self.tail);
        out.extend_from_slice(END);
    }

    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, _message: &AssistantMessage) {
        let (kind, text) = error_parts(error);
        out.extend_from_slice(b"data: {\"error\":{\"code\":500,\"message\":");
        json_str(out, &text);
        out.extend_from_slice(b",\"status\":");
        json_str(out, kind);
        out.extend_from_slice(b"}}");
        out.extend_from_slice(END);
    }
}
