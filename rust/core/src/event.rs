//! The canonical stream events (`docs/design.md` §3), as every dialect reports them.
//!
//! They serialize to the JSON the Python `msgwire.Event` Structs decode, and borrow everything
//! they carry: an event is written to the output batch at once and never stored.

use serde::Serialize;

use crate::canonical::{AssistantMessage, Block, StopReason, ToolCallBlock, Usage};
use crate::error::Error;

/// Something unusual the stream did that the decoder handled: never merged silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// A stable, machine-readable name (`tool_call_without_index`, `second_finish`, ...).
    pub code: &'static str,
    pub message: String,
    /// Byte offset in the stream of the event that caused it.
    pub offset: u64,
}

/// One step of an assistant message arriving. `index` is the position of the block in the
/// final message's `content`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event<'a> {
    MessageStart {
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        response_id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider: Option<&'a str>,
    },
    TextDelta {
        text: &'a str,
        index: usize,
    },
    ThinkingDelta {
        #[serde(skip_serializing_if = "str::is_empty")]
        thinking: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        redacted: Option<&'a str>,
        index: usize,
    },
    ToolCallBegin {
        index: usize,
        id: &'a str,
        name: &'a str,
    },
    /// Written by [`EventBatch::push_tool_call_delta`], which adds the parsed arguments.
    ToolCallDelta {
        index: usize,
        fragment: &'a str,
    },
    ToolCallEnd {
        index: usize,
        block: &'a ToolCallBlock,
    },
    /// A block that arrived whole (a server tool call or result).
    BlockEnd {
        index: usize,
        block: &'a Block,
    },
    Usage {
        usage: &'a Usage,
    },
    MessageEnd {
        #[serde(skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        #[serde(skip_serializing_if = "Option::is_none")]
        raw_stop_reason: Option<&'a str>,
    },
}

/// What the builder hands each event to, with the message as it stands after the event.
pub struct SinkContext<'a> {
    pub message: &'a AssistantMessage,
    /// Where a sink records what it could not write as it was (see [`Diagnostic`]).
    pub diagnostics: &'a mut Vec<Diagnostic>,
    /// The stream offset of the payload being decoded.
    pub offset: u64,
}

impl SinkContext<'_> {
    pub fn diagnostic(&mut self, code: &'static str, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic { code, message: message.into(), offset: self.offset });
    }
}

/// Where the events of a stream go: the JSON batch Python reads ([`EventBatch`]), or another
/// dialect's wire format (`crate::transcode`). Output accumulates until [`EventSink::take`].
pub trait EventSink: Send + Sync + std::fmt::Debug {
    fn push(&mut self, event: &Event<'_>, cx: SinkContext<'_>);

    /// A `ToolCallDelta` with the arguments parsed so far, when they are parsed: a mark of
    /// [`crate::partial::PartialJson::mark_json`] (JSON text).
    fn push_tool_call_delta(&mut self, index: usize, fragment: &str, _parsed: Option<&[u8]>, cx: SinkContext<'_>) {
        self.push(&Event::ToolCallDelta { index, fragment }, cx);
    }

    /// The stream failed: write what the output says about it (nothing, for the JSON batch).
    fn fail(&mut self, _error: &Error, _cx: SinkContext<'_>) {}

    /// The output written since the last call; the sink is empty afterwards.
    fn take(&mut self) -> Vec<u8>;
}

/// Events written one after another into a JSON array: the batch that crosses to Python in
/// one piece per `feed`.
#[derive(Debug, Default)]
pub struct EventBatch {
    json: Vec<u8>,
    count: usize,
}

impl EventBatch {
    pub fn push(&mut self, event: &Event<'_>) {
        self.json.push(if self.count == 0 { b'[' } else { b',' });
        // Writing borrowed strings and numbers into a Vec cannot fail.
        if crate::json_out::to_writer(&mut self.json, event).is_err() {
            self.json.extend_from_slice(b"null");
        }
        self.count += 1;
    }

    /// A `ToolCallDelta`, with the mark of the arguments parsed so far written in as its
    /// `parsed` (JSON text, valid by construction, so not parsed again; Python turns the marks
    /// into values when they are read).
    pub fn push_tool_call_delta(&mut self, index: usize, fragment: &str, parsed: Option<&[u8]>) {
        self.push(&Event::ToolCallDelta { index, fragment });
        if let Some(parsed) = parsed {
            self.json.pop(); // the closing brace
            self.json.extend_from_slice(b",\"parsed\":");
            self.json.extend_from_slice(parsed);
            self.json.push(b'}');
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The batch as a JSON array (`[]` when empty); the batch is empty afterwards.
    pub fn take(&mut self) -> Vec<u8> {
        if self.count == 0 {
            return b"[]".to_vec();
        }
        self.json.push(b']');
        self.count = 0;
        // The next batch starts at about this one's size: a batch of one small event grew from
        // nothing through six reallocations, per `feed`, when a stream is read an event at a time.
        let hint = self.json.len().clamp(64, 64 * 1024);
        std::mem::replace(&mut self.json, Vec::with_capacity(hint))
    }
}

impl EventSink for EventBatch {
    fn push(&mut self, event: &Event<'_>, _cx: SinkContext<'_>) {
        EventBatch::push(self, event);
    }

    fn push_tool_call_delta(&mut self, index: usize, fragment: &str, parsed: Option<&[u8]>, _cx: SinkContext<'_>) {
        EventBatch::push_tool_call_delta(self, index, fragment, parsed);
    }

    fn take(&mut self) -> Vec<u8> {
        EventBatch::take(self)
    }
}
