//! Writes an Anthropic Messages stream: `message_start`, per block `content_block_start`,
//! `content_block_delta`s (`text_delta`, `thinking_delta`, `signature_delta`,
//! `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason and the
//! cumulative usage) and `message_stop`. A failure is an `event: error`.

use crate::canonical::{AssistantMessage, Block, ServerToolCallBlock, Usage};
use crate::dialect::anthropic::STOP;
use crate::error::Error;

use super::{Delta, Encoder, error_parts, json_num, json_str, response_id, stop_string, usage_of};

#[derive(Debug, Default)]
pub(crate) struct Anthropic {
    /// Blocks opened so far; the open one is `blocks - 1`.
    blocks: usize,
}

impl Anthropic {
    fn block_delta(&self, out: &mut Vec<u8>, kind: &str, field: &str, value: &str) {
        out.extend_from_slice(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":");
        json_num(out, self.blocks.saturating_sub(1) as u64);
        out.extend_from_slice(b",\"delta\":{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"");
        out.extend_from_slice(field.as_bytes());
        out.extend_from_slice(b"\":");
        json_str(out, value);
        out.extend_from_slice(b"}}\n\n");
    }
}

/// A server tool call's block as its `content_block_start` carries it: its input empty (`{}`),
/// the input then streamed as it came (`arguments`), as Anthropic streams it. A block without
/// an `input` object is written whole. The other members are written as they were, numbers
/// included (`crate::raw`), so that the block read back is the block.
fn without_input(call: &ServerToolCallBlock) -> std::borrow::Cow<'_, str> {
    let raw = call.raw.get();
    let input = crate::raw::Members::of(raw).and_then(|block| block.get("input"));
    if !input.is_some_and(|input| input.get().starts_with('{')) || call.arguments.trim() == "{}" {
        return raw.into();
    }
    crate::raw::with_member(raw, "input", "{}").map_or_else(|| raw.into(), |block| block.get().to_owned().into())
}

/// Usage as Anthropic counts it: `input_tokens` excludes cache reads and writes.
fn write_usage(out: &mut Vec<u8>, usage: &Usage) {
    let uncached = usage.input_tokens.saturating_sub(usage.cache_read_tokens.saturating_add(usage.cache_write_tokens));
    out.extend_from_slice(b"{\"input_tokens\":");
    json_num(out, uncached);
    out.extend_from_slice(b",\"cache_creation_input_tokens\":");
    json_num(out, usage.cache_write_tokens);
    out.extend_from_slice(b",\"cache_read_input_tokens\":");
    json_num(out, usage.cache_read_tokens);
    out.extend_from_slice(b",\"output_tokens\":");
    json_num(out, usage.output_tokens);
    out.push(b'}');
}

impl Encoder for Anthropic {
    fn dialect(&self) -> &'static str {
        "anthropic"
    }

    fn cites(&self, citation: &crate::canonical::Citation) -> bool {
        crate::citation::anthropic_writes(citation)
    }

    fn streams_server_tools(&self) -> bool {
        true
    }

    fn start(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        out.extend_from_slice(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":");
        json_str(out, &response_id(message, "msg_"));
        out.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
        json_str(out, message.model.as_deref().unwrap_or(""));
        out.extend_from_slice(b",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
        write_usage(out, &usage_of(message));
        out.extend_from_slice(b"}}\n\n");
    }

    fn open(&mut self, out: &mut Vec<u8>, _index: usize, block: &Block) {
        out.extend_from_slice(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":");
        json_num(out, self.blocks as u64);
        self.blocks += 1;
        out.extend_from_slice(b",\"content_block\":");
        match block {
            Block::Thinking(thinking) => match thinking.redacted.as_deref() {
                Some(data) => {
                    out.extend_from_slice(b"{\"type\":\"redacted_thinking\",\"data\":");
                    json_str(out, data);
                    out.push(b'}');
                }
                None => out.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}"),
            },
            // the provider's own block, whole (`streams_server_tools`: only Anthropic's come here)
            Block::ServerToolCall(call) => out.extend_from_slice(without_input(call).as_bytes()),
            Block::ServerToolResult(result) => out.extend_from_slice(result.raw.get().as_bytes()),
            Block::ToolCall(call) => {
                out.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
                json_str(out, &call.id);
                out.extend_from_slice(b",\"name\":");
                json_str(out, &call.name);
                out.extend_from_slice(b",\"input\":{}}");
            }
            _ => out.extend_from_slice(b"{\"type\":\"text\",\"text\":\"\"}"),
        }
        out.extend_from_slice(b"}\n\n");
    }

    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>) {
        match delta {
            Delta::Text(text) => self.block_delta(out, "text_delta", "text", text),
            Delta::Thinking(text) => self.block_delta(out, "thinking_delta", "thinking", text),
            Delta::Signature(signature) => self.block_delta(out, "signature_delta", "signature", signature),
            Delta::Arguments(fragment) => self.block_delta(out, "input_json_delta", "partial_json", fragment),
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, block: &Block) {
        if let Block::ServerToolCall(call) = block {
            if without_input(call) != call.raw.get() {
                self.block_delta(out, "input_json_delta", "partial_json", &call.arguments);
            }
        }
        if let Block::Text(text) = block {
            for citation in crate::citation::anthropic_citations(&text.citations) {
                out.extend_from_slice(
                    b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":",
                );
                json_num(out, self.blocks.saturating_sub(1) as u64);
                out.extend_from_slice(b",\"delta\":{\"type\":\"citations_delta\",\"citation\":");
                out.extend_from_slice(citation.get().as_bytes());
                out.extend_from_slice(b"}}\n\n");
            }
        }
        out.extend_from_slice(b"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":");
        json_num(out, self.blocks.saturating_sub(1) as u64);
        out.extend_from_slice(b"}\n\n");
    }

    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        out.extend_from_slice(b"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
        json_str(out, stop_string(message, STOP, "end_turn"));
        out.extend_from_slice(b",\"stop_sequence\":null},\"usage\":");
        write_usage(out, &usage_of(message));
        out.extend_from_slice(b"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    }

    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, _message: &AssistantMessage) {
        let (kind, text) = error_parts(error);
        out.extend_from_slice(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":");
        json_str(out, kind);
        out.extend_from_slice(b",\"message\":");
        json_str(out, &text);
        out.extend_from_slice(b"}}\n\n");
    }
}
