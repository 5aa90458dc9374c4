//! Each piece of a Responses output arrives by deltas, `.done` events, `output_item.done` and
//! `response.completed`, with or without the events that announce parts: assembled once, it is
//! what `from_response` reads off the terminal event's `output`, and any difference is a
//! diagnostic.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::assemble::BuilderOptions;
use crate::canonical::{AssistantMessage, Block, Message};
use crate::decoder::StreamDecoder;
use crate::dialect::DialectName;
use crate::limits::Limits;

fn options() -> BuilderOptions {
    BuilderOptions {
        id: "m".to_owned(),
        timestamp: "2026-01-01T00:00:00Z".to_owned(),
        provider: "openai".to_owned(),
        record_events: true,
        partial_args: false,
        limits: Limits::default(),
    }
}

fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        let kind = event["type"].as_str().expect("typed");
        write!(out, "event: {kind}\ndata: {event}\n\n").expect("writes to a String");
    }
    out.into_bytes()
}

/// The message, the diagnostic codes, and what the events say each block holds.
fn assemble(events: &[Value]) -> (AssistantMessage, Vec<&'static str>) {
    let mut decoder = StreamDecoder::new(DialectName::OpenAiResponses, options());
    decoder.feed(&sse(events)).expect("decodes");
    decoder.finish().expect("ends");
    let batch: Vec<Value> = serde_json::from_slice(&decoder.take_events()).expect("a JSON array");
    let message = decoder.builder().message().clone();
    let codes = decoder.builder().diagnostics().iter().map(|d| d.code).collect();
    // the events add up to the message's text and thinking
    for (index, block) in message.content.iter().enumerate() {
        let sum = |key: &str| -> String {
            batch.iter().filter(|e| e["index"] == index).filter_map(|e| e[key].as_str()).collect()
        };
        match block {
            Block::Text(t) => assert_eq!(sum("text"), t.text, "the text deltas of block {index}"),
            Block::Thinking(t) => assert_eq!(sum("thinking"), t.thinking, "the thinking deltas of block {index}"),
            _ => {}
        }
    }
    (message, codes)
}

/// What `from_response` reads off the terminal event's `response`.
fn from_response(events: &[Value]) -> AssistantMessage {
    let last = events.last().expect("events");
    let body = serde_json::to_vec(&last["response"]).expect("JSON");
    let json = crate::response::from_response_json(&body, DialectName::OpenAiResponses, "m", "2026-01-01T00:00:00Z")
        .expect("reads");
    match serde_json::from_slice(&json).expect("a message") {
        Message::Assistant(message) => message,
        other => panic!("{other:?}"),
    }
}

/// The message without what differs by design: the signature (the server encrypts the reasoning
/// anew for each event that carries it) and the timestamp; as JSON, to compare.
fn comparable(mut message: AssistantMessage) -> Value {
    message.timestamp = String::new();
    for block in &mut message.content {
        if let Block::Thinking(t) = block {
            t.signature = None;
        }
    }
    serde_json::to_value(&message).expect("JSON")
}

fn thinking(message: &AssistantMessage) -> Vec<&str> {
    message
        .content
        .iter()
        .filter_map(|b| if let Block::Thinking(t) = b { Some(t.thinking.as_str()) } else { None })
        .collect()
}

fn texts(message: &AssistantMessage) -> Vec<&str> {
    message.content.iter().filter_map(|b| if let Block::Text(t) = b { Some(t.text.as_str()) } else { None }).collect()
}

fn created() -> Value {
    json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "model": "m", "status": "in_progress", "output": []}})
}

fn completed(output: &Value) -> Value {
    json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "model": "m", "status": "completed", "output": output}})
}

fn reasoning(summary: &[&str]) -> Value {
    let summary: Vec<Value> = summary.iter().map(|text| json!({"type": "summary_text", "text": text})).collect();
    json!({"id": "rs_1", "type": "reasoning", "summary": summary})
}

fn where_(summary_index: u64) -> Value {
    json!({"item_id": "rs_1", "output_index": 0, "summary_index": summary_index})
}

fn event(kind: &str, at: &Value, more: &Value) -> Value {
    let mut event = json!({"type": kind});
    for (key, value) in at.as_object().into_iter().flatten().chain(more.as_object().into_iter().flatten()) {
        event[key] = value.clone();
    }
    event
}

/// Issue 27, bug 6 (LiteLLM's Responses streams): a summary streamed without
/// `reasoning_summary_part.added` was appended again from `output_item.done`: "abcabc".
#[test]
fn a_summary_without_part_added_is_not_doubled() {
    let six = |with_part_added: bool| {
        let mut events =
            vec![created(), json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])})];
        if with_part_added {
            let part = json!({"part": {"type": "summary_text", "text": ""}});
            events.push(event("response.reasoning_summary_part.added", &where_(0), &part));
        }
        events.extend([
            event("response.reasoning_summary_text.delta", &where_(0), &json!({"delta": "abc"})),
            event("response.reasoning_summary_text.done", &where_(0), &json!({"text": "abc"})),
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning(&["abc"])}),
            completed(&json!([reasoning(&["abc"])])),
        ]);
        events
    };
    for with_part_added in [false, true] {
        let events = six(with_part_added);
        let (message, codes) = assemble(&events);
        assert_eq!(thinking(&message), ["abc"], "with part.added: {with_part_added}");
        assert_eq!(codes, Vec::<&str>::new());
        assert_eq!(comparable(message), comparable(from_response(&events)));
    }
}

/// A stream of two summary parts, two text parts and a call, with every optional event, and
/// that stream with each subset of them dropped: always the message `from_response` reads off
/// `response.completed`, and never a diagnostic.
#[test]
fn optional_events_may_be_missing() {
    let summary = ["first part", "second"];
    let texts_ = ["Hello, ", "world"];
    let message_item = |texts: &[&str]| {
        let content: Vec<Value> =
            texts.iter().map(|t| json!({"type": "output_text", "text": t, "annotations": []})).collect();
        json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": content})
    };
    let call =
        json!({"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{\"a\": 1}"});
    let output = json!([reasoning(&summary), message_item(&texts_), call]);
    // (optional, event)
    let mut events: Vec<(bool, Value)> = vec![
        (false, created()),
        (false, json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])})),
    ];
    for (j, text) in summary.iter().enumerate() {
        let at = where_(j as u64);
        let part = json!({"type": "summary_text", "text": text});
        events.push((
            true,
            event("response.reasoning_summary_part.added", &at, &json!({"part": {"type": "summary_text", "text": ""}})),
        ));
        let (a, b) = text.split_at(3);
        events.push((false, event("response.reasoning_summary_text.delta", &at, &json!({"delta": a}))));
        events.push((false, event("response.reasoning_summary_text.delta", &at, &json!({"delta": b}))));
        events.push((false, event("response.reasoning_summary_text.done", &at, &json!({"text": text}))));
        events.push((true, event("response.reasoning_summary_part.done", &at, &json!({"part": part}))));
    }
    events.push((false, json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning(&summary)})));
    events.push((false, json!({"type": "response.output_item.added", "output_index": 1, "item": message_item(&[])})));
    for (k, text) in texts_.iter().enumerate() {
        let at = json!({"item_id": "msg_1", "output_index": 1, "content_index": k});
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        events.push((
            true,
            event(
                "response.content_part.added",
                &at,
                &json!({"part": {"type": "output_text", "text": "", "annotations": []}}),
            ),
        ));
        events.push((false, event("response.output_text.delta", &at, &json!({"delta": text}))));
        events.push((false, event("response.output_text.done", &at, &json!({"text": text}))));
        events.push((true, event("response.content_part.done", &at, &json!({"part": part}))));
    }
    events
        .push((false, json!({"type": "response.output_item.done", "output_index": 1, "item": message_item(&texts_)})));
    let mut added = call.clone();
    added["arguments"] = json!("");
    events.push((false, json!({"type": "response.output_item.added", "output_index": 2, "item": added})));
    let at = json!({"item_id": "fc_1", "output_index": 2});
    events.push((false, event("response.function_call_arguments.delta", &at, &json!({"delta": "{\"a\""}))));
    events.push((false, event("response.function_call_arguments.delta", &at, &json!({"delta": ": 1}"}))));
    events.push((false, event("response.function_call_arguments.done", &at, &json!({"arguments": "{\"a\": 1}"}))));
    events.push((false, json!({"type": "response.output_item.done", "output_index": 2, "item": call})));
    events.push((false, completed(&output)));

    let optional: Vec<usize> = (0..events.len()).filter(|&i| events[i].0).collect();
    assert_eq!(optional.len(), 8);
    let expected = from_response(&[events[events.len() - 1].1.clone()]);
    assert_eq!(thinking(&expected), ["first part\n\nsecond"]);
    assert_eq!(texts(&expected), texts_);
    let expected = comparable(expected);
    for dropped in 0..(1u32 << optional.len()) {
        let kept: Vec<Value> = events
            .iter()
            .enumerate()
            .filter(|(i, _)| optional.iter().position(|o| o == i).is_none_or(|bit| dropped & (1 << bit) == 0))
            .map(|(_, (_, e))| e.clone())
            .collect();
        let (message, codes) = assemble(&kept);
        assert_eq!(codes, Vec::<&str>::new(), "dropped {dropped:b}");
        assert_eq!(comparable(message), expected, "dropped {dropped:b}");
    }
}

/// Text that never streamed as deltas arrives whole, once, from whichever final word comes
/// first: a part's `.done`, the item's `.done`, or `response.completed` alone.
#[test]
fn text_that_never_streamed_arrives_once() {
    let item = reasoning(&["abc", "de"]);
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]});
    let output = json!([item, message]);
    let added = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
    ];
    let part_done = vec![
        created(),
        added[0].clone(),
        event("response.reasoning_summary_text.done", &where_(0), &json!({"text": "abc"})),
        event(
            "response.reasoning_summary_part.done",
            &where_(1),
            &json!({"part": {"type": "summary_text", "text": "de"}}),
        ),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        added[1].clone(),
        event(
            "response.output_text.done",
            &json!({"item_id": "msg_1", "output_index": 1, "content_index": 0}),
            &json!({"text": "hi"}),
        ),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
        completed(&output),
    ];
    let item_done = vec![
        created(),
        added[0].clone(),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        added[1].clone(),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
        completed(&output),
    ];
    let completed_only = vec![created(), added[0].clone(), added[1].clone(), completed(&output)];
    for events in [part_done, item_done, completed_only] {
        let (message, codes) = assemble(&events);
        assert_eq!(thinking(&message), ["abc\n\nde"]);
        assert_eq!(texts(&message), ["hi"]);
        assert_eq!(codes, Vec::<&str>::new());
        assert_eq!(comparable(message), comparable(from_response(&events)));
    }
}

/// Where the final word differs from what streamed, it says so: deltas that stop short get the
/// rest appended (`deltas_incomplete`); other text is kept as it streamed, its events being out
/// (`final_text_differs`); an item only the terminal event has is added (`item_only_in_output`).
#[test]
fn a_final_word_that_differs_is_a_diagnostic() {
    let stream = |delta: &str, arguments_delta: &str, extra: bool| {
        let call =
            json!({"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{\"a\": 1}"});
        let mut added = call.clone();
        added["arguments"] = json!("");
        let mut output = vec![reasoning(&["abc"]), call.clone()];
        if extra {
            output.push(json!({"id": "msg_9", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "late"}]}));
        }
        vec![
            created(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])}),
            event("response.reasoning_summary_text.delta", &where_(0), &json!({"delta": delta})),
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning(&["abc"])}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": added}),
            event(
                "response.function_call_arguments.delta",
                &json!({"item_id": "fc_1", "output_index": 1}),
                &json!({"delta": arguments_delta}),
            ),
            json!({"type": "response.output_item.done", "output_index": 1, "item": call}),
            completed(&Value::Array(output)),
        ]
    };
    let calls = |m: &AssistantMessage| -> Vec<String> {
        m.content
            .iter()
            .filter_map(|b| if let Block::ToolCall(c) = b { Some(c.arguments.clone()) } else { None })
            .collect()
    };

    let (message, codes) = assemble(&stream("ab", "{\"a\"", false));
    assert_eq!((thinking(&message), calls(&message)), (vec!["abc"], vec!["{\"a\": 1}".to_owned()]));
    assert_eq!(codes, ["deltas_incomplete", "deltas_incomplete"]);

    let (message, codes) = assemble(&stream("xyz", "{\"a\": 1}", false));
    assert_eq!(thinking(&message), ["xyz"], "the streamed text is kept");
    // checked again against response.completed, and said once
    assert_eq!(codes, ["final_text_differs"]);

    let events = stream("abc", "{\"a\": 1}", true);
    let (message, codes) = assemble(&events);
    assert_eq!(texts(&message), ["late"]);
    assert_eq!(codes, ["item_only_in_output"]);
    assert_eq!(comparable(message), comparable(from_response(&events)));
}

/// `response.completed` restates every item: where it says more than `output_item.done` did (or
/// other text), that is a diagnostic too, even for a part that never streamed; where it says the
/// same, nothing.
#[test]
fn the_terminal_event_is_checked_against_each_items_done() {
    let message = |text: &str| json!({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]});
    let stream = |done: &str, terminal: &str| {
        vec![
            created(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning(&[done])}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": message("")}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": message(done)}),
            completed(&json!([reasoning(&[terminal]), message(terminal)])),
        ]
    };
    let (same, codes) = assemble(&stream("abc", "abc"));
    assert_eq!((thinking(&same), texts(&same), codes), (vec!["abc"], vec!["abc"], vec![]));
    // longer: the rest appended, and said
    let (longer, codes) = assemble(&stream("abc", "abcd"));
    assert_eq!((thinking(&longer), texts(&longer)), (vec!["abcd"], vec!["abcd"]));
    assert_eq!(codes, ["final_text_differs", "final_text_differs"]);
    // from nothing: the same
    let (late, codes) = assemble(&stream("", "x"));
    assert_eq!((thinking(&late), texts(&late)), (vec!["x"], vec!["x"]));
    assert_eq!(codes, ["final_text_differs", "final_text_differs"]);
    // other text: kept as the item's done said it
    let (other, codes) = assemble(&stream("abc", "xyz"));
    assert_eq!((thinking(&other), texts(&other)), (vec!["abc"], vec!["abc"]));
    assert_eq!(codes, ["final_text_differs", "final_text_differs"]);
}

/// A reasoning item's `reasoning_text` parts (gpt-oss on Responses servers) are its text, before
/// its summary parts; `content_part.added` and `.done` may announce them, or not.
#[test]
fn reasoning_text_parts_come_before_the_summary() {
    let item = |content: &str, summary: &[&str]| {
        let mut item = reasoning(summary);
        item["content"] = json!([{"type": "reasoning_text", "text": content}]);
        item
    };
    let at = json!({"item_id": "rs_1", "output_index": 0, "content_index": 0});
    for announced in [false, true] {
        for summary in [&[][..], &["in short"][..]] {
            let mut events = vec![
                created(),
                json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning(&[])}),
            ];
            let part = |text: &str| json!({"part": {"type": "reasoning_text", "text": text}});
            if announced {
                events.push(event("response.content_part.added", &at, &part("")));
            }
            events.push(event("response.reasoning_text.delta", &at, &json!({"delta": "think"})));
            events.push(event("response.reasoning_text.delta", &at, &json!({"delta": "ing"})));
            events.push(event("response.reasoning_text.done", &at, &json!({"text": "thinking"})));
            if announced {
                events.push(event("response.content_part.done", &at, &part("thinking")));
            }
            for (j, text) in summary.iter().enumerate() {
                events.push(event("response.reasoning_summary_text.delta", &where_(j as u64), &json!({"delta": text})));
            }
            events.push(
                json!({"type": "response.output_item.done", "output_index": 0, "item": item("thinking", summary)}),
            );
            events.push(completed(&json!([item("thinking", summary)])));
            let (message, codes) = assemble(&events);
            let want = if summary.is_empty() { "thinking" } else { "thinking\n\nin short" };
            assert_eq!((thinking(&message), codes), (vec![want], vec![]), "announced: {announced}");
            assert_eq!(comparable(message), comparable(from_response(&events)));
        }
    }
}

/// The walk reads the `.done` events' fields as serde does (`text`, `refusal` and `input` are
/// one field, so two of them are serde's duplicate), or leaves the event to serde.
#[test]
fn the_walk_agrees_with_serde_on_done_events() {
    let events = [
        r#"{"type":"response.output_text.done","item_id":"m","output_index":0,"content_index":0,"text":"a\"b","logprobs":[]}"#,
        r#"{"type":"response.refusal.done","item_id":"m","output_index":0,"content_index":0,"refusal":"no"}"#,
        r#"{"type":"response.custom_tool_call_input.done","item_id":"c","output_index":1,"input":"x"}"#,
        r#"{"type":"response.reasoning_summary_text.done","item_id":"r","summary_index":2,"text":""}"#,
        r#"{"type":"x","text":"a","refusal":"b"}"#,
        r#"{"type":"x","text":null,"refusal":"b"}"#,
        r#"{"type":"x","input":"a","input":"b"}"#,
        r#"{"type":"response.content_part.done","part":{"type":"refusal","refusal":"no","annotations":[]}}"#,
        r#"{"type":"x","summary_index":-1}"#,
    ];
    for event in events {
        let parsed = serde_json::from_str::<super::Payload<'_>>(event);
        if let Some(walked) = super::walk_payload(event, &mut crate::dialect::walk::KeyOrder::default()) {
            let parsed = parsed.unwrap_or_else(|e| panic!("the walk accepted {event}, serde: {e}"));
            assert_eq!(format!("{walked:?}"), format!("{parsed:?}"), "{event}");
        }
    }
    assert!(super::walk_payload(events[1], &mut crate::dialect::walk::KeyOrder::default()).is_some());
    assert!(serde_json::from_str::<super::Payload<'_>>(events[5]).is_err(), "a duplicate for serde");
}
