//! One target per dialect (`openai`, `openai_responses`, `anthropic`, `gemini`, `ollama`): a
//! [`StreamDecoder`] over a whole provider stream.
//!
//! Mode byte: bit 0 turns `partial_args` off; bits 1-2 pick the limits: default, small tool
//! arguments (64 bytes, 4 deep), small events and lines (512 and 256 bytes), or both.
//!
//! Invariants:
//! - fed whole or in the header's chunks, the decoder gives the same message, events,
//!   diagnostics and error;
//! - without events (`record_events` off, the `assemble` fast path) the message, diagnostics and
//!   error are the same too;
//! - every event batch is a JSON array (the parsed tool arguments in it included);
//! - the events add up to the message: text, thinking and signatures are the concatenation of
//!   their deltas, a `ToolCallEnd` carries the call as it ends up, tool-call deltas add up to the
//!   arguments, one `MessageStart` first and one `MessageEnd` last exactly when the stream
//!   finished well;
//! - after a failure the message is marked `stop_reason = error` and still serializes;
//! - the message written, read back and written again is the same text.

use std::collections::BTreeMap;

use msgwire_core::assemble::BuilderOptions;
use msgwire_core::canonical::{self, AssistantMessage, Block, StopReason};
use msgwire_core::partial::validate;
use msgwire_core::{DialectName, Error, Limits, StreamDecoder};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::Case;

/// Everything observable about one decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Each event's JSON text, in order, whatever batches they came in.
    pub events: Vec<String>,
    /// The message as `canonical::write` writes it.
    pub message: String,
    /// `(code, message, offset)` of each diagnostic.
    pub diagnostics: Vec<(String, String, u64)>,
    /// The failure that ended the stream, if one did.
    pub error: Option<Error>,
}

/// The options the mode byte selects.
pub fn options(name: DialectName, mode: u8, record_events: bool) -> BuilderOptions {
    let mut limits = Limits::default();
    if mode & 2 != 0 {
        limits.max_tool_args_size = 64;
        limits.max_depth = 4;
    }
    if mode & 4 != 0 {
        limits.max_event_size = 512;
        limits.max_line_size = 256;
    }
    BuilderOptions {
        id: "0196a3f2-7c10-7000-8000-00000000f022".to_owned(),
        timestamp: "2026-01-01T00:00:00Z".to_owned(),
        provider: name.provider().to_owned(),
        record_events,
        partial_args: mode & 1 == 0,
        limits,
    }
}

/// Feed `chunks`, then finish (unless feeding failed); check the batches on the way.
pub fn run(name: DialectName, options: BuilderOptions, chunks: &[&[u8]]) -> (Outcome, AssistantMessage) {
    let mut decoder = StreamDecoder::new(name, options);
    let mut events = Vec::new();
    let mut error = None;
    for chunk in chunks {
        let fed = decoder.feed(chunk);
        events.extend(batch(&mut decoder));
        if let Err(err) = fed {
            error = Some(err);
            break;
        }
    }
    if error.is_none() {
        error = decoder.finish().err();
    }
    events.extend(batch(&mut decoder));
    assert_eq!(decoder.failure(), error.as_ref(), "the failure is kept");
    if let Some(err) = &error {
        assert_eq!(decoder.feed(b"data: {}\n\n{}\n").as_ref(), Err(err), "a failed decoder fails again");
        assert_eq!(decoder.finish().as_ref(), Err(err), "a failed decoder fails again");
        assert_eq!(batch(&mut decoder), Vec::<String>::new(), "no events after the failure");
    }
    let message = decoder.builder().message().clone();
    let written = canonical::write(&message).expect("the message serializes");
    let diagnostics =
        decoder.builder().diagnostics().iter().map(|d| (d.code.to_owned(), d.message.clone(), d.offset)).collect();
    let outcome = Outcome { events, message: String::from_utf8(written).expect("UTF-8"), diagnostics, error };
    (outcome, message)
}

/// The events of one batch, each as its JSON text; the batch must be a JSON array.
fn batch(decoder: &mut StreamDecoder) -> Vec<String> {
    let json = decoder.take_events();
    let text = std::str::from_utf8(&json).expect("a batch is UTF-8");
    assert_eq!(validate(text, 1000), Ok(()), "a batch is JSON: {text}");
    let events: Vec<Box<RawValue>> = serde_json::from_str(text).expect("a batch is a JSON array");
    events.into_iter().map(|e| e.get().to_owned()).collect()
}

/// The fields of an event that the checks read.
#[derive(Debug, Deserialize)]
struct Ev {
    #[serde(rename = "type")]
    kind: String,
    index: Option<usize>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    redacted: Option<String>,
    fragment: Option<String>,
    block: Option<Box<RawValue>>,
}

/// What the deltas of one block add up to.
#[derive(Debug, Default)]
struct Sums {
    text: String,
    thinking: String,
    signature: Option<String>,
    redacted: Option<String>,
    arguments: String,
    begins: usize,
    ends: usize,
    /// The block of the `ToolCallEnd`.
    end: Option<String>,
}

/// The events must add up to the message.
fn check_events(outcome: &Outcome, message: &AssistantMessage) {
    let events: Vec<Ev> =
        outcome.events.iter().map(|e| serde_json::from_str(e).expect("an event has a type")).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    let count = |kind: &str| kinds.iter().filter(|k| **k == kind).count();
    if let Some(first) = kinds.first() {
        assert_eq!(*first, "message_start", "{kinds:?}");
    }
    assert!(count("message_start") <= 1, "{kinds:?}");
    if outcome.error.is_none() {
        assert_eq!(kinds.last(), Some(&"message_end"), "{kinds:?}");
        assert_eq!(count("message_end"), 1, "{kinds:?}");
    } else {
        assert_eq!(count("message_end"), 0, "{kinds:?}");
    }

    let mut sums: BTreeMap<usize, Sums> = BTreeMap::new();
    for event in &events {
        let Some(index) = event.index else { continue };
        let sum = sums.entry(index).or_default();
        assert!(index < message.content.len(), "event for block {index} of {}", message.content.len());
        match event.kind.as_str() {
            "text_delta" => sum.text.push_str(event.text.as_deref().unwrap_or_default()),
            "thinking_delta" => {
                sum.thinking.push_str(event.thinking.as_deref().unwrap_or_default());
                if let Some(signature) = &event.signature {
                    sum.signature.get_or_insert_with(String::new).push_str(signature);
                }
                if let Some(redacted) = &event.redacted {
                    sum.redacted.get_or_insert_with(String::new).push_str(redacted);
                }
            }
            "tool_call_begin" => {
                assert_eq!(sum.begins + sum.ends, 0, "a second ToolCallBegin, or one after the end, for {index}");
                sum.begins += 1;
            }
            "tool_call_delta" => {
                assert_eq!((sum.begins, sum.ends), (1, 0), "a ToolCallDelta outside its call, for {index}");
                sum.arguments.push_str(event.fragment.as_deref().unwrap_or_default());
            }
            "tool_call_end" => {
                assert_eq!(sum.ends, 0, "a second ToolCallEnd for {index}");
                sum.ends += 1;
                sum.end = event.block.as_ref().map(|b| b.get().to_owned());
            }
            _ => {}
        }
    }
    let replaced = outcome.diagnostics.iter().any(|(code, _, _)| code == "arguments_mismatch");
    for (index, block) in message.content.iter().enumerate() {
        let sum = sums.remove(&index).unwrap_or_default();
        let (text, thinking, signature, redacted) = match block {
            Block::Text(b) => (b.text.as_str(), "", None, None),
            Block::Thinking(b) => ("", b.thinking.as_str(), b.signature.as_deref(), b.redacted.as_deref()),
            _ => ("", "", None, None),
        };
        assert_eq!(sum.text, text, "the text deltas of block {index}");
        assert_eq!(sum.thinking, thinking, "the thinking deltas of block {index}");
        assert_eq!(sum.signature.as_deref(), signature, "the signature deltas of block {index}");
        assert_eq!(sum.redacted.as_deref(), redacted, "the redacted deltas of block {index}");
        if let Block::ToolCall(call) = block {
            if let Some(end) = &sum.end {
                let now = serde_json::to_string(call).expect("serializes");
                assert_eq!(end, &now, "ToolCallEnd of block {index} is not the call as it ended up");
            }
            if sum.begins == 1 && !replaced {
                assert_eq!(sum.arguments, call.arguments, "the argument deltas of block {index}");
            }
        } else {
            assert_eq!(sum.begins + sum.ends, 0, "tool-call events for block {index}, not a tool call");
        }
    }
}

pub fn check(name: DialectName, data: &[u8]) {
    let case = Case::new(data);
    let (whole, message) = run(name, options(name, case.mode, true), &[case.body]);
    let (split, _) = run(name, options(name, case.mode, true), &case.chunks);
    assert_eq!(split, whole, "split as {:?}", case.chunks);
    let (quiet, _) = run(name, options(name, case.mode, false), &[case.body]);
    assert_eq!(quiet.events, Vec::<String>::new());
    assert_eq!(
        (&quiet.message, &quiet.diagnostics, &quiet.error),
        (&whole.message, &whole.diagnostics, &whole.error),
        "without events"
    );

    check_events(&whole, &message);
    if whole.error.is_some() {
        assert_eq!(message.stop_reason, Some(StopReason::Error), "a failed message says so");
    }
    assert_eq!(validate(&whole.message, 1000), Ok(()), "the message is JSON");
    let reread: AssistantMessage = serde_json::from_str(&whole.message).expect("the message reads back");
    let again = String::from_utf8(canonical::write(&reread).expect("writes")).expect("UTF-8");
    assert_eq!(again, whole.message, "the message round-trips");
}
