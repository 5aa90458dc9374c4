//! The canonical JSON of a message read from a response, written field by field.
//!
//! Why: through serde's derive (a call per field, the tag of each block added by a wrapper), the
//! message's JSON was a quarter of reading a small response, more than walking the body. The
//! usual blocks (text, thinking, tool calls without the fields only some dialects fill) and the
//! message's own fields are written here in the derive's order with its rules for what is left
//! out; any other block is serde's. In debug builds (the tests, every fuzz target) each message
//! is also written by serde, and the two must agree byte for byte.

use serde::Serialize;

use crate::canonical::{Approval, AssistantMessage, Block, Usage};
use crate::json_out::{to_writer, write_str};

/// Append the message's canonical JSON, tagged `"type": "assistant"`.
pub(super) fn write(out: &mut Vec<u8>, message: &AssistantMessage) -> Result<(), serde_json::Error> {
    out.extend_from_slice(br#"{"type":"assistant","id":"#);
    write_str(out, &message.id);
    out.extend_from_slice(br#","timestamp":"#);
    write_str(out, &message.timestamp);
    if !message.content.is_empty() {
        out.extend_from_slice(br#","content":["#);
        for (i, block) in message.content.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_block(out, block)?;
        }
        out.push(b']');
    }
    if let Some(stop_reason) = &message.stop_reason {
        field(out, "stop_reason", stop_reason)?;
    }
    optional(out, "raw_stop_reason", message.raw_stop_reason.as_deref());
    if let Some(usage) = &message.usage {
        out.extend_from_slice(br#","usage":"#);
        write_usage(out, usage)?;
    }
    optional(out, "model", message.model.as_deref());
    optional(out, "provider", message.provider.as_deref());
    optional(out, "response_id", message.response_id.as_deref());
    optional(out, "name", message.name.as_deref());
    out.push(b'}');
    Ok(())
}

fn write_block(out: &mut Vec<u8>, block: &Block) -> Result<(), serde_json::Error> {
    match block {
        Block::Text(text) if text.citations.is_empty() && text.item_id.is_none() && text.cache_control.is_none() => {
            out.extend_from_slice(br#"{"type":"text","text":"#);
            write_str(out, &text.text);
        }
        Block::Thinking(thinking) if thinking.item_id.is_none() => {
            out.extend_from_slice(br#"{"type":"thinking""#);
            if !thinking.thinking.is_empty() {
                out.extend_from_slice(br#","thinking":"#);
                write_str(out, &thinking.thinking);
            }
            optional(out, "signature", thinking.signature.as_deref());
            optional(out, "redacted", thinking.redacted.as_deref());
        }
        Block::ToolCall(call)
            if call.approval == Approval::Pending && call.item_id.is_none() && call.cache_control.is_none() =>
        {
            out.extend_from_slice(br#"{"type":"tool_call","id":"#);
            write_str(out, &call.id);
            out.extend_from_slice(br#","name":"#);
            write_str(out, &call.name);
            if call.arguments != "{}" {
                out.extend_from_slice(br#","arguments":"#);
                write_str(out, &call.arguments);
            }
            if call.malformed {
                out.extend_from_slice(br#","malformed":true"#);
            }
        }
        other => return to_writer(out, other),
    }
    out.push(b'}');
    Ok(())
}

/// The counts that are not 0 (the derive leaves zeros out).
fn write_usage(out: &mut Vec<u8>, usage: &Usage) -> Result<(), serde_json::Error> {
    let counts = [
        ("input_tokens", usage.input_tokens),
        ("output_tokens", usage.output_tokens),
        ("cache_read_tokens", usage.cache_read_tokens),
        ("cache_write_tokens", usage.cache_write_tokens),
        ("reasoning_tokens", usage.reasoning_tokens),
    ];
    out.push(b'{');
    let mut first = true;
    for (name, count) in counts.into_iter().filter(|&(_, count)| count != 0) {
        if !first {
            out.push(b',');
        }
        first = false;
        key(out, name);
        serde_json::to_writer(&mut *out, &count)?;
    }
    out.push(b'}');
    Ok(())
}

/// `"name":` (a field name: no escape to make).
fn key(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// `,"name":value`, the value written by serde (the enums' names).
fn field<T: Serialize>(out: &mut Vec<u8>, name: &str, value: &T) -> Result<(), serde_json::Error> {
    out.push(b',');
    key(out, name);
    to_writer(out, value)
}

/// `,"name":"text"`, or nothing without a text.
fn optional(out: &mut Vec<u8>, name: &str, text: Option<&str>) {
    if let Some(text) = text {
        out.push(b',');
        key(out, name);
        write_str(out, text);
    }
}

#[cfg(test)]
mod tests {
    use crate::canonical::{
        Approval, AssistantMessage, Block, CacheControl, Citation, Message, StopReason, TextBlock, ThinkingBlock,
        ToolCallBlock, Usage,
    };

    /// serde's JSON of the message as a `Message` (tagged), which `write` must equal.
    fn by_serde(message: &AssistantMessage) -> Vec<u8> {
        crate::canonical::write(&Message::Assistant(message.clone())).expect("writes")
    }

    #[test]
    fn every_field_is_written_as_serde_writes_it() {
        let call = |arguments: &str, approval, malformed, item_id: Option<&str>| {
            Block::ToolCall(ToolCallBlock {
                id: "c\"1".to_owned(),
                name: "f".to_owned(),
                arguments: arguments.to_owned(),
                approval,
                malformed,
                item_id: item_id.map(str::to_owned),
                cache_control: None,
            })
        };
        let thinking = |thinking: &str, signature: Option<&str>, item_id: Option<&str>| {
            Block::Thinking(ThinkingBlock {
                thinking: thinking.to_owned(),
                signature: signature.map(str::to_owned),
                redacted: None,
                item_id: item_id.map(str::to_owned),
            })
        };
        let cited = TextBlock {
            citations: vec![serde_json::from_str::<Citation>(r#"{"kind":"url","url":"u"}"#).expect("a citation")],
            ..TextBlock::new("cited")
        };
        let cached = TextBlock {
            cache_control: Some(CacheControl { kind: "ephemeral".to_owned(), ttl: None }),
            ..TextBlock::new("x")
        };
        let raw = serde_json::value::RawValue::from_string(r#"{"type":"other","a":[1]}"#.to_owned()).expect("raw");
        let full = AssistantMessage {
            id: "id".to_owned(),
            timestamp: "2026-01-01T00:00:00Z".to_owned(),
            content: vec![
                thinking("", None, None),
                thinking("hm\n\"é\"", Some("sig"), None),
                thinking("t", None, Some("rs_1")),
                Block::Text(TextBlock::new("a\u{1}b\\")),
                Block::Text(cited),
                Block::Text(cached),
                call("{}", Approval::Pending, false, None),
                call("{\"a\": 1}", Approval::Pending, true, None),
                call("", Approval::Approved, false, None),
                call("x", Approval::Pending, false, Some("fc_1")),
                Block::Unknown(raw),
            ],
            stop_reason: Some(StopReason::Unknown),
            raw_stop_reason: Some("tool_calls".to_owned()),
            usage: Some(Usage { input_tokens: 3, reasoning_tokens: u64::MAX, ..Usage::default() }),
            model: Some("m".to_owned()),
            provider: Some("openai".to_owned()),
            response_id: Some("r".to_owned()),
            name: Some("n".to_owned()),
        };
        let bare = AssistantMessage { usage: Some(Usage::default()), ..AssistantMessage::default() };
        for message in [full, bare, AssistantMessage::default()] {
            let mut out = Vec::new();
            super::write(&mut out, &message).expect("writes");
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&by_serde(&message)));
        }
    }
}
