//! Writes an OpenAI Responses stream: `response.created` and `.in_progress`, then per block an
//! output item: `message` (`content_part.added`, `output_text.delta`s, the `.done` events),
//! `reasoning` (summary text deltas; a signature becomes the item's `encrypted_content`) or
//! `function_call` (`function_call_arguments.delta`s and `.done`); each item added, then done
//! whole. It ends with `response.completed` (or `.incomplete` when cut by a limit or a filter)
//! carrying the whole response. Every event has its `sequence_number`. A failure is an `error`
//! event followed by `response.failed`.
//!
//! Items keep the provider's item ids where the blocks have them (a Responses source); others get
//! ids made from the message id and their position (`msg_`, `rs_`, `fc_` as OpenAI's own
//! prefixes). A text's citations that a Responses stream can carry are its part's annotations
//! (`output_text.annotation.added`, then in the `.done` events); a call without arguments has
//! `"{}"`; a built-in tool item of a Responses source is written back whole.

use crate::canonical::{AssistantMessage, Block, StopReason, TextBlock};
use crate::error::Error;

use super::{Delta, Encoder, error_parts, json_created, json_num, json_str, response_id, usage_of};

#[derive(Debug)]
struct Item {
    id: String,
    /// The index in the message of the block it is written from (the final response reads it).
    block: usize,
}

#[derive(Debug, Default)]
pub(crate) struct OpenAiResponses {
    sequence: u64,
    /// The `response` object's fields before `status` (`id`, `object`, `created_at`).
    head: Vec<u8>,
    /// The fields after `output` and `usage` (model and the request echo).
    model: Vec<u8>,
    items: Vec<Item>,
    /// A reasoning item's summary part was added (on its first text).
    summary_open: bool,
    /// The end of the message id: item ids are `msg_<stem>_<n>`, unique across messages.
    stem: String,
}

impl OpenAiResponses {
    /// `data: {"type":<kind>,"sequence_number":N` — the caller writes the rest and `}\n\n`.
    fn event(&mut self, out: &mut Vec<u8>, kind: &str) {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\ndata: {\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"sequence_number\":");
        json_num(out, self.sequence);
        self.sequence += 1;
    }

    /// `,"item_id":..,"output_index":N` of the open item.
    fn item_ref(&self, out: &mut Vec<u8>) {
        let index = self.items.len().saturating_sub(1);
        out.extend_from_slice(b",\"item_id\":");
        json_str(out, self.items.last().map_or("", |item| item.id.as_str()));
        out.extend_from_slice(b",\"output_index\":");
        json_num(out, index as u64);
    }

    fn response(&self, out: &mut Vec<u8>, status: &str, message: &AssistantMessage, end: Option<&[u8]>) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(status.as_bytes());
        out.extend_from_slice(b"\",\"output\":[");
        if end.is_some() {
            for (i, item) in self.items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if let Some(block) = message.content.get(item.block) {
                    write_item(out, &item.id, block, "completed");
                }
            }
        }
        out.extend_from_slice(b"]");
        out.extend_from_slice(end.unwrap_or(b",\"error\":null,\"incomplete_details\":null"));
        if let Some(usage) = message.usage.as_ref().filter(|_| end.is_some()).map(|_| usage_of(message)) {
            out.extend_from_slice(b",\"usage\":{\"input_tokens\":");
            json_num(out, usage.input_tokens);
            out.extend_from_slice(b",\"input_tokens_details\":{\"cached_tokens\":");
            json_num(out, usage.cache_read_tokens);
            out.extend_from_slice(b"},\"output_tokens\":");
            json_num(out, usage.output_tokens);
            out.extend_from_slice(b",\"output_tokens_details\":{\"reasoning_tokens\":");
            json_num(out, usage.reasoning_tokens);
            out.extend_from_slice(b"},\"total_tokens\":");
            json_num(out, usage.input_tokens.saturating_add(usage.output_tokens));
            out.push(b'}');
        }
        out.extend_from_slice(&self.model);
    }
}

/// One output item as `output_item.added` (`status` `in_progress`, nothing yet) or `.done` and
/// the final response (`completed`, whole) carry it.
fn write_item(out: &mut Vec<u8>, id: &str, block: &Block, status: &str) {
    let done = status == "completed";
    if let Block::ServerToolCall(call) = block {
        out.extend_from_slice(call.raw.get().as_bytes()); // the provider's item, as it was
        return;
    }
    out.extend_from_slice(b"{\"id\":");
    json_str(out, id);
    match block {
        Block::ToolCall(call) => {
            out.extend_from_slice(b",\"type\":\"function_call\",\"status\":\"");
            out.extend_from_slice(status.as_bytes());
            out.extend_from_slice(b"\",\"arguments\":");
            json_str(out, if done { arguments(call) } else { "" });
            out.extend_from_slice(b",\"call_id\":");
            json_str(out, &call.id);
            out.extend_from_slice(b",\"name\":");
            json_str(out, &call.name);
        }
        Block::Thinking(thinking) => {
            out.extend_from_slice(b",\"type\":\"reasoning\",\"summary\":[");
            if done && !thinking.thinking.is_empty() {
                out.extend_from_slice(b"{\"type\":\"summary_text\",\"text\":");
                json_str(out, &thinking.thinking);
                out.push(b'}');
            }
            out.push(b']');
            let encrypted = thinking.signature.as_deref().or(thinking.redacted.as_deref());
            if let Some(encrypted) = encrypted.filter(|_| done) {
                out.extend_from_slice(b",\"encrypted_content\":");
                json_str(out, encrypted);
            }
        }
        block => {
            out.extend_from_slice(b",\"type\":\"message\",\"status\":\"");
            out.extend_from_slice(status.as_bytes());
            out.extend_from_slice(b"\",\"role\":\"assistant\",\"content\":[");
            if let (true, Block::Text(text)) = (done, block) {
                write_text_part(out, text);
            }
            out.push(b']');
        }
    }
    out.push(b'}');
}

fn write_text_part(out: &mut Vec<u8>, text: &TextBlock) {
    out.extend_from_slice(b"{\"type\":\"output_text\",\"text\":");
    json_str(out, &text.text);
    out.extend_from_slice(b",\"annotations\":");
    let annotations = crate::citation::responses_annotations(&text.citations, &text.text);
    let _ = crate::json_out::to_writer(out, &annotations); // into a Vec: cannot fail
    out.push(b'}');
}

use crate::request::arguments_text as arguments;

impl Encoder for OpenAiResponses {
    fn dialect(&self) -> &'static str {
        "openai-responses"
    }

    fn cites(&self, citation: &crate::canonical::Citation) -> bool {
        crate::citation::responses_writes(citation)
    }

    fn streams_server_tools(&self) -> bool {
        true
    }

    fn start(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        self.stem = message.id.chars().filter(char::is_ascii_alphanumeric).collect();
        self.stem.drain(..self.stem.len().saturating_sub(12));
        self.head.extend_from_slice(b"{\"id\":");
        json_str(&mut self.head, &response_id(message, "resp_"));
        self.head.extend_from_slice(b",\"object\":\"response\",\"created_at\":");
        json_created(&mut self.head, message);
        self.model.extend_from_slice(b",\"model\":");
        json_str(&mut self.model, message.model.as_deref().unwrap_or(""));
        self.model.extend_from_slice(
            b",\"instructions\":null,\"metadata\":{},\"parallel_tool_calls\":true,\"temperature\":null,\
              \"tool_choice\":\"auto\",\"tools\":[],\"top_p\":null}",
        );
        for kind in ["response.created", "response.in_progress"] {
            self.event(out, kind);
            out.extend_from_slice(b",\"response\":");
            self.response(out, "in_progress", message, None);
            out.extend_from_slice(b"}\n\n");
        }
    }

    fn open(&mut self, out: &mut Vec<u8>, index: usize, block: &Block) {
        let (prefix, own) = match block {
            Block::ToolCall(call) => ("fc_", call.item_id.as_deref()),
            Block::Thinking(thinking) => ("rs_", thinking.item_id.as_deref()),
            Block::Text(text) => ("msg_", text.item_id.as_deref()),
            Block::ServerToolCall(call) => ("", Some(call.id.as_str())),
            _ => ("msg_", None),
        };
        // an item id once only (the text parts of one provider item are an item each here)
        let id = match own.filter(|id| !self.items.iter().any(|item| item.id == *id)) {
            Some(id) => id.to_owned(),
            None => format!("{prefix}{}_{}", self.stem, self.items.len()),
        };
        self.items.push(Item { id, block: index });
        self.summary_open = false;
        self.event(out, "response.output_item.added");
        out.extend_from_slice(b",\"output_index\":");
        json_num(out, (self.items.len() - 1) as u64);
        out.extend_from_slice(b",\"item\":");
        if let Some(item) = self.items.last() {
            write_item(out, &item.id, block, "in_progress");
        }
        out.extend_from_slice(b"}\n\n");
        if !matches!(block, Block::ToolCall(_) | Block::Thinking(_) | Block::ServerToolCall(_)) {
            self.event(out, "response.content_part.added");
            self.item_ref(out);
            out.extend_from_slice(b",\"content_index\":0,\"part\":");
            write_text_part(out, &TextBlock::default());
            out.extend_from_slice(b"}\n\n");
        }
    }

    fn delta(&mut self, out: &mut Vec<u8>, delta: Delta<'_>) {
        match delta {
            Delta::Text(text) => {
                self.event(out, "response.output_text.delta");
                self.item_ref(out);
                out.extend_from_slice(b",\"content_index\":0,\"delta\":");
                json_str(out, text);
                out.extend_from_slice(b",\"logprobs\":[]}\n\n");
            }
            Delta::Thinking(text) => {
                if !self.summary_open {
                    self.summary_open = true;
                    self.event(out, "response.reasoning_summary_part.added");
                    self.item_ref(out);
                    out.extend_from_slice(
                        b",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}}\n\n",
                    );
                }
                self.event(out, "response.reasoning_summary_text.delta");
                self.item_ref(out);
                out.extend_from_slice(b",\"summary_index\":0,\"delta\":");
                json_str(out, text);
                out.extend_from_slice(b"}\n\n");
            }
            Delta::Arguments(fragment) => {
                self.event(out, "response.function_call_arguments.delta");
                self.item_ref(out);
                out.extend_from_slice(b",\"delta\":");
                json_str(out, fragment);
                out.extend_from_slice(b"}\n\n");
            }
            Delta::Signature(_) => {} // the item's encrypted_content, written when it is done
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, block: &Block) {
        match block {
            Block::Text(text) => {
                let annotations = crate::citation::responses_annotations(&text.citations, &text.text);
                for (n, annotation) in annotations.iter().enumerate() {
                    self.event(out, "response.output_text.annotation.added");
                    self.item_ref(out);
                    out.extend_from_slice(b",\"content_index\":0,\"annotation_index\":");
                    json_num(out, n as u64);
                    out.extend_from_slice(b",\"annotation\":");
                    let _ = crate::json_out::to_writer(out, annotation); // into a Vec: cannot fail
                    out.extend_from_slice(b"}\n\n");
                }
                self.event(out, "response.output_text.done");
                self.item_ref(out);
                out.extend_from_slice(b",\"content_index\":0,\"text\":");
                json_str(out, &text.text);
                out.extend_from_slice(b",\"logprobs\":[]}\n\n");
                self.event(out, "response.content_part.done");
                self.item_ref(out);
                out.extend_from_slice(b",\"content_index\":0,\"part\":");
                write_text_part(out, text);
                out.extend_from_slice(b"}\n\n");
            }
            Block::Thinking(thinking) if self.summary_open => {
                self.event(out, "response.reasoning_summary_text.done");
                self.item_ref(out);
                out.extend_from_slice(b",\"summary_index\":0,\"text\":");
                json_str(out, &thinking.thinking);
                out.extend_from_slice(b"}\n\n");
                self.event(out, "response.reasoning_summary_part.done");
                self.item_ref(out);
                out.extend_from_slice(b",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":");
                json_str(out, &thinking.thinking);
                out.extend_from_slice(b"}}\n\n");
            }
            Block::ToolCall(call) => {
                if call.arguments.trim().is_empty() {
                    self.delta(out, Delta::Arguments("{}"));
                }
                self.event(out, "response.function_call_arguments.done");
                self.item_ref(out);
                out.extend_from_slice(b",\"arguments\":");
                json_str(out, arguments(call));
                out.extend_from_slice(b"}\n\n");
            }
            _ => {}
        }
        self.event(out, "response.output_item.done");
        out.extend_from_slice(b",\"output_index\":");
        json_num(out, (self.items.len() - 1) as u64);
        out.extend_from_slice(b",\"item\":");
        if let Some(item) = self.items.last() {
            write_item(out, &item.id, block, "completed");
        }
        out.extend_from_slice(b"}\n\n");
    }

    fn finish(&mut self, out: &mut Vec<u8>, message: &AssistantMessage) {
        let incomplete = match message.stop_reason {
            Some(StopReason::Length) => Some("max_output_tokens"),
            Some(StopReason::ContentFilter) => Some("content_filter"),
            _ => None,
        };
        let mut end = b",\"error\":null,\"incomplete_details\":".to_vec();
        match incomplete {
            Some(reason) => {
                end.extend_from_slice(b"{\"reason\":\"");
                end.extend_from_slice(reason.as_bytes());
                end.extend_from_slice(b"\"}");
            }
            None => end.extend_from_slice(b"null"),
        }
        let (kind, status) = if incomplete.is_some() {
            ("response.incomplete", "incomplete")
        } else {
            ("response.completed", "completed")
        };
        self.event(out, kind);
        out.extend_from_slice(b",\"response\":");
        self.response(out, status, message, Some(&end));
        out.extend_from_slice(b"}\n\n");
    }

    fn fail(&mut self, out: &mut Vec<u8>, error: &Error, message: &AssistantMessage) {
        let (kind, text) = error_parts(error);
        self.event(out, "error");
        out.extend_from_slice(b",\"code\":");
        json_str(out, kind);
        out.extend_from_slice(b",\"message\":");
        json_str(out, &text);
        out.extend_from_slice(b",\"param\":null}\n\n");
        if self.head.is_empty() {
            return; // nothing started: there is no response to fail
        }
        let mut end = b",\"error\":{\"code\":".to_vec();
        json_str(&mut end, kind);
        end.extend_from_slice(b",\"message\":");
        json_str(&mut end, &text);
        end.extend_from_slice(b"},\"incomplete_details\":null");
        self.event(out, "response.failed");
        out.extend_from_slice(b",\"response\":");
        self.response(out, "failed", message, Some(&end));
        out.extend_from_slice(b"}\n\n");
    }
}
