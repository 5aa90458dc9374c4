//! The order a target writes blocks in: one at a time, in the order of the final message.
//!
//! Canonical events name blocks by their index in the final `content`, and a source may
//! interleave them (the arguments of parallel OpenAI tool calls). The sequencer keeps one block
//! open in the output. An event for a later block closes the open one unless it is a tool call
//! still streaming, in which case the later block waits. A block opened late is written with
//! everything that arrived for it so far (read from the message), then live. Closing a block
//! writes any tail the events did not carry (arguments replaced after their last delta).

use crate::assemble::Diagnostic;
use crate::canonical::{Block, ThinkingBlock};
use crate::error::Error;
use crate::event::{Event, EventSink, SinkContext};

use super::{Delta, Encoder};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No event named it yet (or never will: a raw provider block).
    Unseen,
    /// Named by an event, waiting behind the open block.
    Waiting,
    Open,
    Closed,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    state: State,
    /// A tool call whose `ToolCallEnd` arrived.
    ended: bool,
}

#[derive(Debug)]
pub(crate) struct Sequencer<E> {
    encoder: E,
    out: Vec<u8>,
    slots: Vec<Slot>,
    /// The block open in the output.
    open: Option<usize>,
    /// Bytes of the open block's text (or arguments) and of its signature written so far.
    written: usize,
    signed: usize,
    /// Blocks below this index are closed or were skipped.
    next: usize,
    ended: bool,
}

impl<E: Encoder> Sequencer<E> {
    pub(crate) fn new(encoder: E) -> Self {
        Self { encoder, out: Vec::new(), slots: Vec::new(), open: None, written: 0, signed: 0, next: 0, ended: false }
    }

    fn slot(&mut self, index: usize) -> &mut Slot {
        if self.slots.len() <= index {
            self.slots.resize(index + 1, Slot { state: State::Unseen, ended: false });
        }
        &mut self.slots[index]
    }

    /// An event for block `index` with `delta` as its payload.
    fn on_block(&mut self, index: usize, delta: Option<Delta<'_>>, ends_tool: bool, cx: &mut SinkContext<'_>) {
        let slot = self.slot(index);
        slot.ended |= ends_tool;
        match slot.state {
            State::Open => {
                match (delta, cx.message.content.get(index)) {
                    // arguments through `catch_up`, which holds back whitespace alone
                    (Some(Delta::Arguments(_)), Some(block)) => self.catch_up(block),
                    (Some(delta), block) => {
                        self.encoder.delta(&mut self.out, delta);
                        (self.written, self.signed) = written_len(block);
                    }
                    (None, _) => {}
                }
                if ends_tool {
                    self.close_open(cx.message.content.as_slice(), cx.diagnostics, cx.offset);
                    self.drain(cx.message.content.as_slice(), false, cx.diagnostics, cx.offset);
                }
            }
            State::Closed => {
                // Only an interleaving no target can express (more text for a block the output
                // already closed) gets here.
                let message = format!("block {index} got more content after the output closed it; not transcoded");
                cx.diagnostic("transcode_late_content", message);
            }
            State::Unseen | State::Waiting => {
                if index < self.next {
                    let message = format!("block {index} began after later blocks were written; not transcoded");
                    cx.diagnostic("transcode_late_block", message);
                    return;
                }
                self.slots[index].state = State::Waiting;
                // What arrived for the block is in the message: opening it writes that.
                let blocked = self.open.is_some_and(|open| self.is_streaming_tool(open, cx.message.content.as_slice()));
                if !blocked {
                    self.close_open(cx.message.content.as_slice(), cx.diagnostics, cx.offset);
                    self.drain(cx.message.content.as_slice(), false, cx.diagnostics, cx.offset);
                }
            }
        }
    }

    /// Whether the target writes this block as a block: a server tool block only to its own
    /// dialect, where that streams them (a diagnostic says what another dialect dropped).
    fn carries(&self, block: &Block, diagnostics: &mut Vec<Diagnostic>, offset: u64) -> bool {
        let (dialect, kind) = match block {
            Block::ServerToolCall(c) => (c.dialect.as_str(), c.kind.as_str()),
            Block::ServerToolResult(r) => (r.dialect.as_str(), r.kind.as_str()),
            _ => return true,
        };
        if dialect == self.encoder.dialect() {
            return self.encoder.streams_server_tools();
        }
        let message = format!(
            "a server tool block of {dialect} ({kind}) has no place in a {} stream; dropped",
            self.encoder.dialect()
        );
        diagnostics.push(Diagnostic { code: "transcode_server_tool_dropped", message, offset });
        false
    }

    fn is_streaming_tool(&self, index: usize, content: &[Block]) -> bool {
        matches!(content.get(index), Some(Block::ToolCall(_))) && !self.slots.get(index).is_some_and(|s| s.ended)
    }

    /// Open the waiting blocks in order, each with what arrived for it so far; close each one
    /// that is complete. Stops at the first that may still grow, unless `all`.
    fn drain(&mut self, content: &[Block], all: bool, diagnostics: &mut Vec<Diagnostic>, offset: u64) {
        while self.open.is_none() {
            let Some(index) = (self.next..self.slots.len()).find(|&i| self.slots[i].state == State::Waiting) else {
                return;
            };
            let Some(block) = content.get(index) else { return };
            self.next = index + 1;
            if !self.carries(block, diagnostics, offset) {
                self.slots[index].state = State::Closed;
                continue;
            }
            self.slots[index].state = State::Open;
            self.open = Some(index);
            self.encoder.open(&mut self.out, index, block);
            (self.written, self.signed) = (0, 0);
            self.catch_up(block);
            let later_waiting = self.slots[index + 1..].iter().any(|s| s.state == State::Waiting);
            let complete = match block {
                Block::ToolCall(_) => self.slots[index].ended,
                Block::ServerToolCall(_) | Block::ServerToolResult(_) => true,
                _ => later_waiting,
            };
            if complete || all {
                self.close_open(content, diagnostics, offset);
            }
        }
    }

    /// Write what the open block holds beyond what was written of it.
    fn catch_up<'b>(&mut self, block: &'b Block) {
        let (text, delta): (&'b str, fn(&'b str) -> Delta<'b>) = match block {
            Block::Text(text) => (&text.text, Delta::Text),
            Block::Thinking(ThinkingBlock { redacted: Some(_), .. }) => return,
            Block::Thinking(ThinkingBlock { thinking, .. }) => (thinking, Delta::Thinking),
            // Whitespace alone is not arguments yet: held back, so that a call whose arguments
            // stay blank goes out as the encoder's `{}` (`arguments_text`), not as the
            // whitespace followed by `{}`; the first other character sends it all.
            Block::ToolCall(call) if self.written == 0 && call.arguments.trim().is_empty() => return,
            Block::ToolCall(call) => (&call.arguments, Delta::Arguments),
            _ => return,
        };
        if let Some(tail) = text.get(self.written..).filter(|tail| !tail.is_empty()) {
            self.encoder.delta(&mut self.out, delta(tail));
        }
        self.written = text.len();
        if let Block::Thinking(ThinkingBlock { signature: Some(signature), .. }) = block {
            if let Some(tail) = signature.get(self.signed..).filter(|tail| !tail.is_empty()) {
                self.encoder.delta(&mut self.out, Delta::Signature(tail));
            }
            self.signed = signature.len();
        }
    }

    fn close_open(&mut self, content: &[Block], diagnostics: &mut Vec<Diagnostic>, offset: u64) {
        let Some(index) = self.open.take() else { return };
        self.slots[index].state = State::Closed;
        if let Some(block) = content.get(index) {
            if let Block::Text(text) = block {
                let dropped: Vec<&str> =
                    text.citations.iter().filter(|c| !self.encoder.cites(c)).map(|c| c.kind.as_str()).collect();
                if !dropped.is_empty() {
                    let message = format!(
                        "citations of block {index} have no place in a {} stream ({}); dropped",
                        self.encoder.dialect(),
                        dropped.join(", ")
                    );
                    diagnostics.push(Diagnostic { code: "transcode_citations_dropped", message, offset });
                }
            }
            self.catch_up(block);
            self.encoder.close(&mut self.out, block);
        }
    }
}

/// Bytes of a block's growing text (text, thinking, or tool-call arguments) and signature.
fn written_len(block: Option<&Block>) -> (usize, usize) {
    match block {
        Some(Block::Text(text)) => (text.text.len(), 0),
        Some(Block::Thinking(thinking)) => {
            (thinking.thinking.len(), thinking.signature.as_ref().map_or(0, String::len))
        }
        Some(Block::ToolCall(call)) => (call.arguments.len(), 0),
        _ => (0, 0),
    }
}

impl<E: Encoder> EventSink for Sequencer<E> {
    fn push(&mut self, event: &Event<'_>, mut cx: SinkContext<'_>) {
        if self.ended {
            return;
        }
        match *event {
            Event::MessageStart { .. } => self.encoder.start(&mut self.out, cx.message),
            Event::TextDelta { text, index } => self.on_block(index, Some(Delta::Text(text)), false, &mut cx),
            Event::ThinkingDelta { thinking, signature, redacted, index } => {
                let delta = match (thinking, signature) {
                    (_, _) if redacted.is_some() => None,
                    ("", Some(signature)) => Some(Delta::Signature(signature)),
                    ("", None) => None,
                    (thinking, _) => Some(Delta::Thinking(thinking)),
                };
                self.on_block(index, delta, false, &mut cx);
            }
            Event::ToolCallBegin { index, .. } => self.on_block(index, None, false, &mut cx),
            Event::ToolCallDelta { index, fragment } => {
                self.on_block(index, Some(Delta::Arguments(fragment)), false, &mut cx);
            }
            Event::ToolCallEnd { index, .. } | Event::BlockEnd { index, .. } => {
                self.on_block(index, None, true, &mut cx);
            }
            Event::Usage { .. } => {}
            Event::MessageEnd { .. } => {
                let content = cx.message.content.as_slice();
                self.close_open(content, cx.diagnostics, cx.offset);
                self.drain(content, true, cx.diagnostics, cx.offset);
                self.encoder.finish(&mut self.out, cx.message);
                self.ended = true;
            }
        }
    }

    fn fail(&mut self, error: &Error, cx: SinkContext<'_>) {
        if !self.ended {
            self.ended = true;
            self.encoder.fail(&mut self.out, error, cx.message);
        }
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}
