//! Delta assembly: the canonical assistant message, built from what a dialect decodes.
//!
//! Every dialect drives one [`Builder`]: it says "text arrived", "a tool call with this id
//! began", "these argument bytes belong to block 3", and the builder keeps the message, writes
//! the matching [`Event`]s into the batch (when events are wanted), enforces the argument size
//! limit and records [`Diagnostic`]s. Dialects own the provider's keying rules (OpenAI's
//! `index`, Anthropic's block index, Responses' `item_id`); the builder only knows positions in
//! the final `content`.

use serde_json::value::RawValue;

use crate::canonical::{AssistantMessage, Block, Citation, StopReason, TextBlock, ThinkingBlock, ToolCallBlock, Usage};
use crate::error::{Error, ErrorKind};
pub use crate::event::Diagnostic;
use crate::event::{Event, EventBatch, EventSink, SinkContext};
use crate::limits::Limits;
use crate::partial::{JsonLimits, PartialJson};

/// The mark of an item id msgwire made up (a Responses reply written for a block without one):
/// read back, such an id is not kept, so it is never sent to a provider as its own.
pub const MADE_UP_ITEM: &str = "_msgwire_";

/// How the builder is set up for one stream.
#[derive(Debug, Clone)]
pub struct BuilderOptions {
    pub id: String,
    pub timestamp: String,
    pub provider: String,
    /// Write events into a batch (off for the `assemble` fast path, which only wants the message).
    pub record_events: bool,
    /// Parse tool arguments as they stream, so each `ToolCallDelta` carries them parsed so far.
    pub partial_args: bool,
    pub limits: Limits,
}

/// How the text that streamed for a piece compares with the provider's final word on it
/// ([`Builder::settle_tail`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The same text.
    Same,
    /// What streamed (`streamed` bytes of it, maybe none) is the start of the final text, and the
    /// rest was appended.
    Completed { streamed: usize },
    /// The texts differ: what streamed is kept.
    Differs,
}

/// The state of one tool-call block while its arguments stream.
#[derive(Debug, Default)]
struct ToolState {
    /// `ToolCallBegin` was emitted (it waits for the name when arguments come first).
    begun: bool,
    ended: bool,
    /// Bytes of `arguments` already reported in `ToolCallDelta` events.
    reported: usize,
    /// The arguments parsed so far (with `partial_args`), fed each fragment once.
    parser: Option<PartialJson>,
    /// How deep the arguments are nested so far, within `max_depth`.
    depth: Depth,
    /// The arguments came whole in their first fragment (a response's, a whole-call dialect's)
    /// and are valid JSON: checked then, `end_tool` need not check again.
    valid: bool,
}

/// The nesting depth of JSON text read in fragments (brackets inside strings do not count):
/// tool arguments deeper than `max_depth` are refused as they arrive, whether or not they are
/// parsed (`partial_args`), as `max_tool_args_size` refuses arguments that are too large.
#[derive(Debug, Default, Clone, Copy)]
struct Depth {
    /// Arrays and objects open at this point.
    open: usize,
    in_string: bool,
    escaped: bool,
}

impl Depth {
    /// Read `fragment`; an error when an array or object opens deeper than `max_depth`.
    fn feed(&mut self, fragment: &[u8], max_depth: usize) -> Result<(), ErrorKind> {
        let mut at = 0;
        while let Some(&byte) = fragment.get(at) {
            at += 1;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    continue;
                }
                // string text is most of a call's arguments: skip to its next quote or backslash
                at -= 1;
                at += memchr::memchr2(b'"', b'\\', &fragment[at..]).unwrap_or(fragment.len() - at);
                match fragment.get(at) {
                    Some(b'\\') => self.escaped = true,
                    Some(_) => self.in_string = false,
                    None => {}
                }
                at += 1;
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.open += 1;
                    if self.open > max_depth {
                        return Err(ErrorKind::JsonTooDeep { max_depth });
                    }
                }
                b']' | b'}' => self.open = self.open.saturating_sub(1),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The context a sink gets with each event: borrows the message, the diagnostics and the
/// offset field by field, so that the event may borrow the message too.
macro_rules! cx {
    ($builder:ident) => {
        SinkContext { message: &$builder.message, diagnostics: &mut $builder.diagnostics, offset: $builder.offset }
    };
}

/// Builds one canonical assistant message and the events that describe its arrival.
#[derive(Debug)]
pub struct Builder {
    message: AssistantMessage,
    provider: String,
    started: bool,
    finished: bool,
    tools: Vec<Option<ToolState>>,
    events: Option<Box<dyn EventSink>>,
    diagnostics: Vec<Diagnostic>,
    limits: Limits,
    offset: u64,
    partial_args: bool,
    /// Scratch space for argument marks, reused across deltas.
    snapshot: Vec<u8>,
}

impl Builder {
    pub fn new(options: BuilderOptions) -> Self {
        let sink = options.record_events.then(|| Box::new(EventBatch::default()) as Box<dyn EventSink>);
        Self::with_sink(options, sink)
    }

    /// A builder whose events go to `sink` (another dialect's writer, say) instead of a JSON
    /// batch; `record_events` is ignored.
    pub fn with_sink(options: BuilderOptions, sink: Option<Box<dyn EventSink>>) -> Self {
        let record_events = sink.is_some();
        Self {
            message: AssistantMessage {
                id: options.id,
                timestamp: options.timestamp,
                provider: Some(options.provider.clone()),
                ..AssistantMessage::default()
            },
            provider: options.provider,
            started: false,
            finished: false,
            tools: Vec::new(),
            events: sink,
            diagnostics: Vec::new(),
            limits: options.limits,
            offset: 0,
            partial_args: options.partial_args && record_events,
            snapshot: Vec::new(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The stream offset of the event being decoded (for diagnostics and errors).
    pub fn set_offset(&mut self, offset: u64) {
        self.offset = offset;
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// The message, moved out (see [`crate::decoder::StreamDecoder::take_message`]).
    pub fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.message)
    }

    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Whether the provider said the message is over (a finish reason, `message_delta`, ...).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The output written since the last call: the events as one JSON array, or the bytes of
    /// the sink the builder was given.
    pub fn take_events(&mut self) -> Vec<u8> {
        self.events.as_mut().map_or_else(|| b"[]".to_vec(), |sink| sink.take())
    }

    fn emit(&mut self, event: &Event<'_>) {
        if let Some(sink) = self.events.as_mut() {
            sink.push(event, cx!(self));
        }
    }

    /// The stream failed with `error`: the sink writes what its output says about that.
    pub fn fail_output(&mut self, error: &Error) {
        if let Some(sink) = self.events.as_mut() {
            sink.fail(error, cx!(self));
        }
    }

    pub fn diagnostic(&mut self, code: &'static str, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic { code, message: message.into(), offset: self.offset });
    }

    /// Response id and model as the provider reports them; the first call emits `MessageStart`,
    /// later calls only fill what is still missing.
    pub fn start(&mut self, response_id: Option<&str>, model: Option<&str>) {
        if self.message.response_id.is_none() {
            self.message.response_id = response_id.filter(|s| !s.is_empty()).map(str::to_owned);
        }
        if self.message.model.is_none() {
            self.message.model = model.filter(|s| !s.is_empty()).map(str::to_owned);
        }
        if !self.started {
            self.started = true;
            let event = Event::MessageStart {
                message_id: Some(&self.message.id),
                response_id: self.message.response_id.as_deref(),
                model: self.message.model.as_deref(),
                provider: Some(&self.provider),
            };
            if let Some(sink) = self.events.as_mut() {
                sink.push(&event, cx!(self));
            }
        }
    }

    fn ensure_started(&mut self) {
        if !self.started {
            self.start(None, None);
        }
    }

    fn push_block(&mut self, block: Block) -> usize {
        self.ensure_started();
        self.message.content.push(block);
        self.message.content.len() - 1
    }

    /// Index of the last block when it is a text block, else of a new empty one.
    pub fn open_text(&mut self) -> usize {
        match self.message.content.last() {
            Some(Block::Text(_)) => self.message.content.len() - 1,
            _ => self.push_block(Block::Text(TextBlock::default())),
        }
    }

    /// Index of the last block when it is a (non-redacted) thinking block, else of a new one.
    pub fn open_thinking(&mut self) -> usize {
        match self.message.content.last() {
            Some(Block::Thinking(t)) if t.redacted.is_none() => self.message.content.len() - 1,
            _ => self.push_block(Block::Thinking(ThinkingBlock::default())),
        }
    }

    /// A new, empty text block even when the last block is text (a provider's block boundary).
    pub fn new_text(&mut self) -> usize {
        self.push_block(Block::Text(TextBlock::default()))
    }

    /// A new, empty thinking block even when the last block is thinking.
    pub fn new_thinking(&mut self) -> usize {
        self.push_block(Block::Thinking(ThinkingBlock::default()))
    }

    /// Append text to the text block at `index` (sequential dialects use [`Builder::text`]).
    pub fn push_text(&mut self, index: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Block::Text(block)) = self.message.content.get_mut(index) {
            block.text.push_str(text);
            self.emit(&Event::TextDelta { text, index });
        }
    }

    /// Text that continues the current text block (or starts one).
    pub fn text(&mut self, text: &str) {
        if !text.is_empty() {
            let index = self.open_text();
            self.push_text(index, text);
        }
    }

    pub fn push_thinking(&mut self, index: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Block::Thinking(block)) = self.message.content.get_mut(index) {
            block.thinking.push_str(text);
            self.emit(&Event::ThinkingDelta { thinking: text, signature: None, redacted: None, index });
        }
    }

    /// The provider's final word on the text of a piece of the text or thinking block at `index`:
    /// the piece that starts at byte `from` and runs to the block's end (a block that does not
    /// exist yet holds nothing). What streamed is compared with `final_text`: when it is the start
    /// of it, the rest is appended as any text is (so the events still add up to the block); when
    /// it differs, what streamed is kept, as the events that carried it are out. The dialect says
    /// which piece it was in a diagnostic (see [`Settled`]).
    pub fn settle_tail(&mut self, index: usize, from: usize, final_text: &str) -> Settled {
        let streamed = match self.message.content.get(index) {
            Some(Block::Text(block)) => block.text.get(from..),
            Some(Block::Thinking(block)) => block.thinking.get(from..),
            _ => None,
        };
        let Some(streamed) = streamed else { return Settled::Differs };
        if streamed == final_text {
            return Settled::Same;
        }
        if !final_text.starts_with(streamed) {
            return Settled::Differs;
        }
        let streamed = streamed.len();
        let rest = &final_text[streamed..];
        match self.message.content.get(index) {
            Some(Block::Text(_)) => self.push_text(index, rest),
            _ => self.push_thinking(index, rest),
        }
        Settled::Completed { streamed }
    }

    /// Reasoning that continues the current thinking block (or starts one).
    pub fn thinking(&mut self, text: &str) {
        if !text.is_empty() {
            let index = self.open_thinking();
            self.push_thinking(index, text);
        }
    }

    /// The signature of the thinking block at `index` (appended: some providers send it in pieces).
    pub fn thinking_signature(&mut self, index: usize, signature: &str) {
        if signature.is_empty() {
            return;
        }
        if let Some(Block::Thinking(block)) = self.message.content.get_mut(index) {
            block.signature.get_or_insert_with(String::new).push_str(signature);
            self.emit(&Event::ThinkingDelta { thinking: "", signature: Some(signature), redacted: None, index });
        }
    }

    /// A redacted (encrypted) thinking block: opaque data, sent back as-is.
    pub fn redacted_thinking(&mut self, data: &str) -> usize {
        let block = ThinkingBlock { redacted: Some(data.to_owned()), ..ThinkingBlock::default() };
        let index = self.push_block(Block::Thinking(block));
        self.emit(&Event::ThinkingDelta { thinking: "", signature: None, redacted: Some(data), index });
        index
    }

    /// A provider block this schema has no type for (server tool use, search results, ...),
    /// kept as raw JSON so nothing is lost; nested at most `max_depth` deep, as it will be parsed.
    pub fn unknown_block(&mut self, raw: Box<RawValue>) -> Result<usize, Error> {
        self.check_depth(&raw)?;
        Ok(self.push_block(Block::Unknown(raw)))
    }

    /// Replace the raw JSON of an unknown block (when a provider completes it later).
    pub fn set_unknown_block(&mut self, index: usize, raw: Box<RawValue>) -> Result<(), Error> {
        self.check_depth(&raw)?;
        if let Some(block @ Block::Unknown(_)) = self.message.content.get_mut(index) {
            *block = Block::Unknown(raw);
        }
        Ok(())
    }

    /// A citation of the text block at `index` (no event: the block carries it).
    pub fn cite(&mut self, index: usize, citation: Citation) -> Result<(), Error> {
        if let Some(raw) = &citation.raw {
            self.check_depth(&raw.0)?;
        }
        if let Some(Block::Text(block)) = self.message.content.get_mut(index) {
            block.citations.push(citation);
        }
        Ok(())
    }

    /// Replace the citations of the text block at `index` (a provider's final word on them).
    pub fn set_citations(&mut self, index: usize, citations: Vec<Citation>) -> Result<(), Error> {
        for raw in citations.iter().filter_map(|c| c.raw.as_ref()) {
            self.check_depth(&raw.0)?;
        }
        if let Some(Block::Text(block)) = self.message.content.get_mut(index) {
            block.citations = citations;
        }
        Ok(())
    }

    /// The id of the provider item the block at `index` came in (Responses items).
    pub fn set_item_id(&mut self, index: usize, item_id: &str) {
        if item_id.contains(MADE_UP_ITEM) {
            return; // written by msgwire for a block that had none: no provider knows it
        }
        let slot = match self.message.content.get_mut(index) {
            Some(Block::Text(b)) => &mut b.item_id,
            Some(Block::Thinking(b)) => &mut b.item_id,
            Some(Block::ToolCall(b)) => &mut b.item_id,
            _ => return,
        };
        if !item_id.is_empty() && slot.is_none() {
            *slot = Some(item_id.to_owned());
        }
    }

    /// A block that arrives whole (a server tool call or result), placed now; [`Builder::end_whole`]
    /// says it is complete. Its raw JSON is bounded as an unknown block's.
    pub fn begin_whole(&mut self, block: Block) -> Result<usize, Error> {
        self.check_whole(&block)?;
        Ok(self.push_block(block))
    }

    /// Replace a block placed with [`Builder::begin_whole`] (the provider completed it).
    pub fn set_whole(&mut self, index: usize, block: Block) -> Result<(), Error> {
        self.check_whole(&block)?;
        if let Some(slot @ (Block::ServerToolCall(_) | Block::ServerToolResult(_))) =
            self.message.content.get_mut(index)
        {
            *slot = block;
        }
        Ok(())
    }

    /// The block at `index` is complete: `BlockEnd` carries it.
    pub fn end_whole(&mut self, index: usize) {
        if let (Some(block), Some(sink)) = (self.message.content.get(index), self.events.as_mut()) {
            sink.push(&Event::BlockEnd { index, block }, cx!(self));
        }
    }

    fn check_whole(&self, block: &Block) -> Result<(), Error> {
        match block {
            Block::ServerToolCall(call) => {
                self.check_depth(&call.raw.0)?;
                self.check_depth_text(&call.arguments)
            }
            Block::ServerToolResult(result) => self.check_depth(&result.raw.0),
            _ => Ok(()),
        }
    }

    fn check_depth_text(&self, json: &str) -> Result<(), Error> {
        match RawValue::from_string(json.to_owned()) {
            Ok(raw) => self.check_depth(&raw),
            Err(_) => Ok(()),
        }
    }

    /// Raw JSON kept in the message must not be nested deeper than `max_depth`: whoever reads
    /// the message parses it.
    fn check_depth(&self, raw: &RawValue) -> Result<(), Error> {
        let mut depth = Depth::default();
        depth.feed(raw.get().as_bytes(), self.limits.max_depth).map_err(|kind| too_deep(kind, self.offset))?;
        // Nor hold a lone surrogate escape (`"\ud800"`): serde_json keeps one in a raw value, and
        // the message would be JSON that msgspec (and serde_json) refuse to read.
        crate::partial::validate(raw.get(), usize::MAX)
            .map_err(|e| Error { offset: usize::try_from(self.offset).ok(), ..e })
    }

    // --- tool calls -------------------------------------------------------------------------

    /// A new tool-call block. `ToolCallBegin` is emitted now when the name is known, else when
    /// it arrives (see [`Builder::tool_name`]) or when the call ends.
    pub fn begin_tool(&mut self, id: &str, name: &str) -> usize {
        let block = ToolCallBlock {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: String::new(),
            approval: crate::canonical::Approval::Pending,
            malformed: false,
            item_id: None,
            cache_control: None,
        };
        let index = self.push_block(Block::ToolCall(block));
        if self.tools.len() <= index {
            self.tools.resize_with(index + 1, || None);
        }
        let parser = self.partial_args.then(|| {
            PartialJson::new(JsonLimits { max_depth: self.limits.max_depth, max_size: self.limits.max_tool_args_size })
        });
        self.tools[index] = Some(ToolState { parser, ..ToolState::default() });
        if !name.is_empty() {
            self.announce_tool(index);
        }
        index
    }

    fn tool(&self, index: usize) -> Option<(&ToolCallBlock, &ToolState)> {
        match (self.message.content.get(index), self.tools.get(index)) {
            (Some(Block::ToolCall(block)), Some(Some(state))) => Some((block, state)),
            _ => None,
        }
    }

    fn tool_mut(&mut self, index: usize) -> Option<(&mut ToolCallBlock, &mut ToolState)> {
        tool_parts(&mut self.message.content, &mut self.tools, index)
    }

    /// The id of the tool call at `index`.
    pub fn tool_id(&self, index: usize) -> Option<&str> {
        self.tool(index).map(|(block, _)| block.id.as_str())
    }

    /// Bytes of arguments received so far by the tool call at `index`.
    pub fn tool_args_len(&self, index: usize) -> usize {
        self.tool(index).map_or(0, |(block, _)| block.arguments.len())
    }

    pub fn tool_is_open(&self, index: usize) -> bool {
        self.tool(index).is_some_and(|(_, state)| !state.ended)
    }

    /// Emit `ToolCallBegin`, then one delta with any arguments that arrived before it.
    fn announce_tool(&mut self, index: usize) {
        let (Some(Block::ToolCall(block)), Some(Some(state))) =
            (self.message.content.get(index), self.tools.get_mut(index))
        else {
            return;
        };
        if state.begun {
            return;
        }
        state.begun = true;
        state.reported = block.arguments.len();
        if let Some(sink) = self.events.as_mut() {
            sink.push(&Event::ToolCallBegin { index, id: &block.id, name: &block.name }, cx!(self));
            if !block.arguments.is_empty() {
                let parsed = mark(state.parser.as_mut(), &mut self.snapshot);
                sink.push_tool_call_delta(index, &block.arguments, parsed, cx!(self));
            }
        }
    }

    /// An id for a call the provider sent without one (Gemini before 3, Ollama), derived from
    /// the response and the block's index: a hash of the response's id when it has one (Gemini's
    /// `responseId`: the same id however the reply is read, streamed, transcoded or written by
    /// `to_response` and read back), else of the payload that carried the call (Ollama). The same
    /// bytes give the same ids however they are cut, and calls of different responses differ.
    pub fn synthetic_call_id(&self, index: usize, payload: &str) -> String {
        // FNV-1a, 64 bits: stable across builds and platforms (std's hasher is not)
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let seed = self.message.response_id.as_deref().filter(|id| !id.is_empty()).unwrap_or(payload);
        for byte in seed.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("call_{:012x}_{index}", hash >> 16)
    }

    /// Fill the id of a call that began without one.
    pub fn tool_set_id(&mut self, index: usize, id: &str) {
        if let Some((block, state)) = self.tool_mut(index) {
            if block.id.is_empty() && !id.is_empty() {
                if state.ended {
                    return self.after_end(index, "its id");
                }
                id.clone_into(&mut block.id);
            }
        }
    }

    /// The name of a call that began without one (some servers send arguments first).
    pub fn tool_name(&mut self, index: usize, name: &str) {
        if name.is_empty() {
            return;
        }
        let Some((block, state)) = self.tool_mut(index) else { return };
        if block.name.is_empty() {
            if state.ended {
                return self.after_end(index, "its name");
            }
            name.clone_into(&mut block.name);
            let late = !block.arguments.is_empty() && !state.begun;
            if late {
                self.diagnostic("name_after_arguments", format!("tool call {index} got its name after arguments"));
            }
            self.announce_tool(index);
        } else if block.name != name {
            // Some servers repeat the name on later deltas; a different one is worth knowing.
            let message = format!("tool call {index} renamed from {:?} to {name:?}; kept the first", block.name);
            self.diagnostic("tool_name_changed", message);
        }
    }

    /// Append an argument fragment, within `max_tool_args_size` and `max_depth`.
    pub fn tool_args(&mut self, index: usize, fragment: &str) -> Result<(), Error> {
        if fragment.is_empty() {
            return Ok(());
        }
        if self.tool(index).is_some_and(|(_, state)| state.ended) {
            self.after_end(index, "arguments");
            return Ok(());
        }
        let Limits { max_tool_args_size: limit, max_depth, .. } = self.limits;
        let offset = self.offset;
        let Some((block, state)) = tool_parts(&mut self.message.content, &mut self.tools, index) else {
            return Ok(());
        };
        if block.arguments.len() + fragment.len() > limit {
            return Err(Error::limit("max_tool_args_size", limit, offset));
        }
        // A first fragment is checked whole (a response's arguments, a whole-call dialect's come
        // in one): valid JSON is within `max_depth` and leaves the depth where it was (0), so
        // only other text is fed to the depth count, for its error, and checked at the end.
        state.valid = block.arguments.is_empty() && crate::partial::validate(fragment, max_depth).is_ok();
        if !state.valid {
            state.depth.feed(fragment.as_bytes(), max_depth).map_err(|kind| too_deep(kind, offset))?;
        }
        block.arguments.push_str(fragment);
        if let Some(parser) = state.parser.as_mut() {
            // A parse error is not the stream's: the call ends up `malformed`, the text kept.
            let _ = parser.feed(fragment);
        }
        if !state.begun {
            return Ok(());
        }
        state.reported = block.arguments.len();
        if let Some(sink) = self.events.as_mut() {
            let parser = self.tools.get_mut(index).and_then(Option::as_mut).and_then(|t| t.parser.as_mut());
            let parsed = mark(parser, &mut self.snapshot);
            sink.push_tool_call_delta(index, fragment, parsed, cx!(self));
        }
        Ok(())
    }

    /// Replace the arguments with the complete text (Responses `.done`, whole-call dialects);
    /// a disagreement with what streamed is a diagnostic, and the complete text wins. When what
    /// streamed is the start of the complete text, the rest is appended as a fragment (the deltas
    /// then still add up to the arguments), with a diagnostic: deltas were lost on the way.
    pub fn tool_set_args(&mut self, index: usize, arguments: &str) -> Result<(), Error> {
        let Some((block, state)) = self.tool(index) else { return Ok(()) };
        if block.arguments == arguments {
            return Ok(());
        }
        if state.ended {
            self.after_end(index, "arguments");
            return Ok(());
        }
        if block.arguments.is_empty() {
            return self.tool_args(index, arguments);
        }
        if let Some(rest) = arguments.strip_prefix(block.arguments.as_str()) {
            let message = format!(
                "tool call {index}: the deltas gave {} of the {} bytes of its final arguments; the rest appended",
                block.arguments.len(),
                arguments.len()
            );
            self.diagnostic("deltas_incomplete", message);
            return self.tool_args(index, rest);
        }
        let (max_depth, max_size) = (self.limits.max_depth, self.limits.max_tool_args_size);
        if arguments.len() > max_size {
            return Err(Error::limit("max_tool_args_size", max_size, self.offset));
        }
        let mut depth = Depth::default();
        depth.feed(arguments.as_bytes(), max_depth).map_err(|kind| too_deep(kind, self.offset))?;
        self.diagnostic("arguments_mismatch", format!("tool call {index}: final arguments differ from the deltas"));
        if let Some((block, state)) = self.tool_mut(index) {
            arguments.clone_into(&mut block.arguments);
            state.depth = depth;
            state.valid = false;
            // Later snapshots must describe the replacement, not what streamed before.
            if let Some(parser) = state.parser.as_mut() {
                let mut fresh = PartialJson::new(JsonLimits { max_depth, max_size });
                let _ = fresh.feed(arguments);
                *parser = fresh;
            }
        }
        Ok(())
    }

    /// What a call gets after it ended (an id, a name, arguments) is dropped: its `ToolCallEnd`
    /// carried the call as final (a consumer may have run it), `malformed` included.
    fn after_end(&mut self, index: usize, what: &str) {
        self.diagnostic("tool_call_after_end", format!("tool call {index} got {what} after it ended; dropped"));
    }

    /// Close a tool call: its arguments are checked (invalid JSON marks the block `malformed`
    /// and keeps the text) and `ToolCallEnd` carries the whole block.
    pub fn end_tool(&mut self, index: usize) {
        let max_depth = self.limits.max_depth;
        let Some((block, state)) = tool_parts(&mut self.message.content, &mut self.tools, index) else { return };
        if state.ended {
            return;
        }
        state.ended = true;
        let announce = !state.begun;
        let pending = block.arguments.len() > state.reported;
        let invalid = !state.valid && malformed(&block.arguments, max_depth);
        block.malformed = invalid;
        if invalid {
            let message = format!("tool call {index} ({}) has arguments that are not valid JSON", block.name);
            self.diagnostic("malformed_arguments", message);
        }
        if announce {
            if self.tool(index).is_some_and(|(block, _)| block.name.is_empty()) {
                self.diagnostic("tool_call_without_name", format!("tool call {index} ended without a name"));
            }
            self.announce_tool(index);
        } else if pending {
            // Arguments replaced after the last delta: report the tail so deltas add up.
            if let Some((block, state)) = self.tool_mut(index) {
                state.reported = block.arguments.len();
            }
        }
        if let (Some(Block::ToolCall(block)), Some(sink)) = (self.message.content.get(index), self.events.as_mut()) {
            sink.push(&Event::ToolCallEnd { index, block }, cx!(self));
        }
    }

    /// Close every tool call still open, in block order.
    pub fn end_open_tools(&mut self) {
        for index in 0..self.tools.len() {
            if self.tool_is_open(index) {
                self.end_tool(index);
            }
        }
    }

    pub fn has_tool_calls(&self) -> bool {
        self.message.content.iter().any(|b| matches!(b, Block::ToolCall(_)))
    }

    // --- usage and the end --------------------------------------------------------------------

    /// Usage so far (providers report cumulative figures: this replaces, never adds).
    pub fn usage(&mut self, usage: Usage) {
        self.ensure_started();
        if self.message.usage.as_ref() == Some(&usage) {
            return;
        }
        self.message.usage = Some(usage);
        if let (Some(usage), Some(sink)) = (self.message.usage.as_ref(), self.events.as_mut()) {
            sink.push(&Event::Usage { usage }, cx!(self));
        }
    }

    pub fn current_usage(&self) -> Usage {
        self.message.usage.clone().unwrap_or_default()
    }

    /// The provider's finish: open tool calls end and the stop reason is recorded. A second
    /// finish keeps the first and is recorded as a diagnostic. `MessageEnd` waits for
    /// [`Builder::complete`], because usage often arrives after the finish.
    pub fn finish(&mut self, stop_reason: StopReason, raw_stop_reason: Option<&str>) {
        if self.finished {
            if self.message.raw_stop_reason.as_deref() != raw_stop_reason {
                let message = format!(
                    "a second finish ({raw_stop_reason:?}) after {:?}; kept the first",
                    self.message.raw_stop_reason
                );
                self.diagnostic("second_finish", message);
            }
            return;
        }
        self.ensure_started();
        self.end_open_tools();
        self.finished = true;
        self.message.stop_reason = Some(stop_reason);
        self.message.raw_stop_reason = raw_stop_reason.map(str::to_owned);
    }

    /// The stream ended well: `MessageEnd`, the last event.
    pub fn complete(&mut self) {
        if !self.finished {
            self.finish(StopReason::Unknown, None);
        }
        self.end_open_tools();
        let stop_reason = self.message.stop_reason;
        if let Some(sink) = self.events.as_mut() {
            let raw_stop_reason = self.message.raw_stop_reason.as_deref();
            sink.push(&Event::MessageEnd { stop_reason, raw_stop_reason }, cx!(self));
        }
    }

    /// After a failure: the partial message says so (`stop_reason = error`), keeping what the
    /// provider had said in `raw_stop_reason`.
    pub fn mark_failed(&mut self) {
        self.message.stop_reason = Some(StopReason::Error);
        // A call cut short keeps its text, flagged so that no one runs it as if whole.
        let max_depth = self.limits.max_depth;
        for (block, state) in self.message.content.iter_mut().zip(&self.tools) {
            if let (Block::ToolCall(call), Some(state)) = (block, state) {
                if !state.ended && !state.valid && malformed(&call.arguments, max_depth) {
                    call.malformed = true;
                }
            }
        }
    }
}

/// The block and streaming state of the tool call at `index`, borrowing only those two fields
/// (so that the event batch can be written at the same time).
fn tool_parts<'a>(
    content: &'a mut [Block],
    tools: &'a mut [Option<ToolState>],
    index: usize,
) -> Option<(&'a mut ToolCallBlock, &'a mut ToolState)> {
    match (content.get_mut(index), tools.get_mut(index)) {
        (Some(Block::ToolCall(block)), Some(Some(state))) => Some((block, state)),
        _ => None,
    }
}

/// The error of tool arguments nested too deep, at the stream offset of the event that held them.
fn too_deep(kind: ErrorKind, offset: u64) -> Error {
    Error { kind, offset: usize::try_from(offset).ok() }
}

/// Whether tool arguments are malformed: not blank, and not one valid JSON document nested at
/// most `max_depth` deep.
fn malformed(arguments: &str, max_depth: usize) -> bool {
    !arguments.trim().is_empty() && crate::partial::validate(arguments, max_depth).is_err()
}

/// The arguments parsed so far, as a mark in `scratch` (none before any value started): the
/// text added since the call's previous mark and the tail that closes it
/// ([`PartialJson::mark_json`]), so that a delta costs O(its fragment), not O(the arguments).
fn mark<'s>(parser: Option<&mut PartialJson>, scratch: &'s mut Vec<u8>) -> Option<&'s [u8]> {
    let parser = parser?;
    scratch.clear();
    parser.mark_json(scratch).then_some(scratch.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builder(max_depth: usize, partial_args: bool) -> Builder {
        Builder::new(BuilderOptions {
            id: "id".to_owned(),
            timestamp: "t".to_owned(),
            provider: "p".to_owned(),
            record_events: true,
            partial_args,
            limits: Limits { max_depth, ..Limits::default() },
        })
    }

    /// A builder as a response's: no events.
    fn quiet(limits: Limits) -> Builder {
        let options = BuilderOptions {
            id: "id".to_owned(),
            timestamp: "t".to_owned(),
            provider: "p".to_owned(),
            record_events: false,
            partial_args: false,
            limits,
        };
        Builder::new(options)
    }

    /// Arguments checked whole when they come in one fragment have the outcomes of arguments
    /// that come in pieces (limits, nesting, validity).
    #[test]
    fn whole_arguments_read_as_the_same_in_pieces() {
        let texts = [
            r#"{"q": "a\"b", "n": [1, 2]}"#,
            "  \n\t ",
            r#"{"deep": [[[[1]]]]}"#,
            r#"{"broken": "#,
            "",
            r#"{"s": "\u0001\\"}"#,
            "{}",
        ];
        for text in texts {
            for (max_depth, max_size) in
                [(64, 1 << 20), (3, 1 << 20), (64, text.len()), (64, text.len().saturating_sub(1))]
            {
                let limits = Limits { max_depth, max_tool_args_size: max_size, ..Limits::default() };
                let cut = text.len() / 2;
                let outcomes: Vec<_> = [(quiet(limits), vec![text]), (quiet(limits), vec![&text[..cut], &text[cut..]])]
                    .into_iter()
                    .map(|(mut b, pieces)| {
                        let index = b.begin_tool("c", "f");
                        let result = pieces.iter().try_for_each(|p| b.tool_args(index, p)).map_err(|e| e.kind);
                        b.end_tool(index);
                        let Some(Block::ToolCall(call)) = b.message().content.get(index) else { panic!("a call") };
                        (result, call.malformed)
                    })
                    .collect();
                // refused, the whole keeps nothing and the pieces what came before
                let (whole, pieces) = (&outcomes[0], &outcomes[1]);
                assert_eq!(whole.0, pieces.0, "{text:?} depth {max_depth} size {max_size}");
                if whole.0.is_ok() {
                    assert_eq!(whole.1, pieces.1, "{text:?} depth {max_depth} size {max_size}");
                }
            }
        }
        // a valid first fragment and more after it: the whole is checked at the end
        let mut builder = quiet(Limits::default());
        let index = builder.begin_tool("c", "f");
        builder.tool_args(index, "{}").expect("a fragment");
        builder.tool_args(index, "x").expect("the rest");
        builder.end_tool(index);
        let Some(Block::ToolCall(call)) = builder.message().content.get(index) else { panic!("a call") };
        assert!(call.malformed, "`{{}}x` is not JSON");
    }

    #[test]
    fn depth_ignores_brackets_in_strings_split_anywhere() {
        let text = r#"{"a": "[[{\"\\[", "b": [[1]]}"#;
        for cut in 0..=text.len() {
            let mut depth = Depth::default();
            assert_eq!(depth.feed(&text.as_bytes()[..cut], 3), Ok(()));
            assert_eq!(depth.feed(&text.as_bytes()[cut..], 3), Ok(()));
            assert_eq!(depth.open, 0);
        }
        let mut depth = Depth::default();
        assert_eq!(depth.feed(text.as_bytes(), 2), Err(ErrorKind::JsonTooDeep { max_depth: 2 }));
    }

    #[test]
    fn tool_arguments_deeper_than_max_depth_are_refused() {
        for partial_args in [false, true] {
            let mut b = builder(2, partial_args);
            b.set_offset(40);
            let call = b.begin_tool("c", "f");
            assert_eq!(b.tool_args(call, r#"{"a": ["#), Ok(()));
            let err = b.tool_args(call, "[1]]}").expect_err("3 deep");
            assert_eq!(err, Error { kind: ErrorKind::JsonTooDeep { max_depth: 2 }, offset: Some(40) });
            assert_eq!(b.tool_args_len(call), 7, "the fragment past the limit is not kept");
            // a replacement is checked too
            let mut b = builder(2, partial_args);
            let call = b.begin_tool("c", "f");
            assert_eq!(b.tool_args(call, "[]"), Ok(()));
            assert!(b.tool_set_args(call, "[[[]]]").is_err());
            assert_eq!(b.tool_set_args(call, "[[]]"), Ok(()));
        }
        // 100000 brackets: refused at once, never parsed
        let mut b = builder(200, true);
        let call = b.begin_tool("c", "f");
        assert!(b.tool_args(call, &"[".repeat(100_000)).is_err());
    }

    /// Found by `fuzz/fuzz_targets/openai.rs`: deltas after `finish_reason` changed calls whose
    /// `ToolCallEnd` was out (arguments appended, a missing id or name filled in), so the
    /// message and the events disagreed, and `malformed` described other arguments.
    #[test]
    fn a_call_does_not_change_after_its_end() {
        for partial_args in [false, true] {
            let mut b = builder(200, partial_args);
            let call = b.begin_tool("c", "f");
            assert_eq!(b.tool_args(call, "{}"), Ok(()));
            let nameless = b.begin_tool("", "");
            b.finish(StopReason::ToolUse, Some("tool_calls"));
            let events = String::from_utf8(b.take_events()).expect("UTF-8");
            assert!(events.contains(r#""type":"tool_call_end","index":0,"block":{"id":"c","name":"f"}"#), "{events}");
            assert_eq!(b.tool_args(call, r#""x""#), Ok(()));
            assert_eq!(b.tool_set_args(call, "[1]"), Ok(()));
            assert_eq!(b.tool_set_args(call, "{}"), Ok(()), "the same arguments again: nothing to say");
            b.tool_set_id(nameless, "late");
            b.tool_name(nameless, "g");
            assert_eq!(b.take_events(), b"[]");
            let calls: Vec<_> = b
                .message()
                .content
                .iter()
                .filter_map(|block| match block {
                    Block::ToolCall(call) => Some((call.id.as_str(), call.name.as_str(), call.arguments.as_str())),
                    _ => None,
                })
                .collect();
            assert_eq!(calls, [("c", "f", "{}"), ("", "", "")]);
            let codes: Vec<_> = b.diagnostics().iter().map(|d| d.code).collect();
            let after_end = ["tool_call_after_end"; 4];
            assert_eq!(codes, [&["tool_call_without_name"][..], &after_end].concat());
        }
    }

    /// Found by `fuzz/fuzz_targets/openai_responses.rs`: an unknown item holding `"\ud800"` was
    /// kept, and the message written with it was not JSON that Python could read.
    #[test]
    fn raw_blocks_with_a_lone_surrogate_are_refused() {
        let raw = |json: &str| RawValue::from_string(json.to_owned()).expect("serde_json takes it");
        let mut b = builder(200, false);
        b.set_offset(70);
        let index = b.unknown_block(raw(r#"{"type": "x", "a": "\ud83d\ude00"}"#)).expect("a pair is a character");
        let lone =
            Err(Error { kind: ErrorKind::JsonSyntax(crate::error::JsonSyntax::LoneSurrogate), offset: Some(70) });
        assert_eq!(b.unknown_block(raw(r#"{"type": "x", "a": "\ud800"}"#)), lone);
        assert_eq!(b.set_unknown_block(index, raw(r#"{"type": "x", "a": ["\udc00"]}"#)), lone.map(|_| ()));
        assert_eq!(b.message().content.len(), 1, "the refused block was not added");
    }

    #[test]
    fn raw_blocks_deeper_than_max_depth_are_refused() {
        let raw = |json: &str| RawValue::from_string(json.to_owned()).expect("valid JSON");
        let mut b = builder(2, false);
        let index = b.unknown_block(raw(r#"{"type": "x", "a": [1]}"#)).expect("2 deep");
        assert!(b.unknown_block(raw(r#"{"type": "x", "a": [[1]]}"#)).is_err());
        assert!(b.set_unknown_block(index, raw(r#"{"type": "x", "a": [{}]}"#)).is_err());
        assert_eq!(b.message().content.len(), 1, "the refused block was not added");
    }
}
