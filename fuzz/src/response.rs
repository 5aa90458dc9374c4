//! `response`: non-streamed response bodies (`response::from_response_json`, `to_response_json`).
//!
//! Input: `[mode] [body...]`, mode bits 0-2 the dialect (modulo 5, in the order of
//! `DialectName::ALL`); the body is read as that dialect's response body.
//!
//! Invariants:
//! - reading fails with an error placed in the body (an offset inside it, and a JSON path from
//!   `$` when it has an offset), or gives one canonical assistant message that is JSON;
//! - that message written back (`to_response_json`, default policy) is JSON with a JSON report,
//!   the same bytes twice, and reads again into the very same message: the same id and time
//!   are given to both readings, and a message read from a body holds only what its dialect
//!   carries (the joins, the usage and stop reasons the writer normalizes are already those of
//!   a body read, see `tests/formats/test_responses.py` `expected()`), so nothing may differ.

use msgwire_core::DialectName;
use msgwire_core::partial::validate;
use msgwire_core::request::{made_up_call_id, report_json};
use msgwire_core::response::{Options, ResponseError, from_response_json, to_response_json};

use crate::json::Json;
use crate::request::dialect;

/// The id and time both readings get (whole seconds: what OpenAI's `created` can hold).
const ID: &str = "0196a3f2-7c10-7000-8000-00000000f022";
const TIMESTAMP: &str = "2026-01-01T00:00:00Z";

pub fn check(data: &[u8]) {
    let (&mode, body) = data.split_first().unwrap_or((&0, &[]));
    let dialect = dialect(mode);
    let message = match from_response_json(body, dialect, ID, TIMESTAMP) {
        Ok(message) => message,
        Err(error) => return assert_placed(&error, body),
    };
    let text = std::str::from_utf8(&message).expect("the message is UTF-8");
    assert_eq!(validate(text, 10_000), Ok(()), "{dialect}: the message is JSON: {text}");

    let options = Options::default();
    let written = to_response_json(&message, dialect, &options);
    let written = written.unwrap_or_else(|e| panic!("{dialect}: a message read does not write: {e}\n{text}"));
    let twice = to_response_json(&message, dialect, &options).expect("writes again");
    assert!(twice == written, "{dialect}: writing twice differs");
    let body_text = std::str::from_utf8(&written.body).expect("the body is UTF-8");
    assert_eq!(validate(body_text, 10_000), Ok(()), "{dialect}: the body is JSON: {body_text}");
    let report = String::from_utf8(report_json(&written.report)).expect("UTF-8");
    assert_eq!(validate(&report, 1000), Ok(()), "the report is JSON: {report}");

    // a lossy step (a block the dialect cannot carry: unsigned thinking for Anthropic, ...) is
    // reported; without one, the message must come back
    let again = read_written(&message, dialect, &written.body);
    if written.report.is_empty() {
        same_up_to_the_dialect(dialect, text, &again, body_text);
    }

    // the message read again is a fixed point (up to the same)
    let second = to_response_json(&again, dialect, &options).expect("a message read writes");
    let third = read_written(&again, dialect, &second.body);
    if second.report.is_empty() {
        let (again, second) = (String::from_utf8_lossy(&again), String::from_utf8_lossy(&second.body));
        same_up_to_the_dialect(dialect, &again, &third, &second);
    }
}

/// `got` (read from `body`, written from `message`) is `message`, but for what the dialect does
/// not carry (`tests/formats/test_responses.py` `expected()`): the id made for a body when the message
/// has no `response_id`, zero usage for a missing one where the body always has usage, and a
/// raw stop reason the writer replaces by the dialect's own value for the stop reason (the stop
/// reason itself is kept, but for "unknown", whose value may read as a known one). Compared as
/// [`Json`]: the raw JSON a message keeps comes back byte for byte, numbers included (`1e400`).
fn same_up_to_the_dialect(dialect: DialectName, message: &str, got: &[u8], body: &str) {
    let mut want = Json::parse(message);
    let mut got = Json::parse_bytes(got);
    let Some(object) = want.as_object_mut() else { panic!("{dialect}: a message is an object: {message}") };
    if !object.contains_key("response_id") {
        let prefix = match dialect {
            DialectName::OpenAi => Some("chatcmpl-"),
            DialectName::Anthropic => Some("msg_"),
            DialectName::OpenAiResponses => Some("resp_"),
            DialectName::Gemini => Some(""),
            DialectName::Ollama => None,
        };
        if let Some(prefix) = prefix {
            object.insert("response_id".to_owned(), Json::String(format!("{prefix}{ID}")));
        }
    }
    // a call without arguments is written `{}` (what the SDKs' `json.loads` takes), which some
    // dialects read back as `""` or `"{}"`: the same empty arguments on both sides
    // an id msgwire made up for a call (Gemini, Ollama) is not written, so the call read back
    // gets one made from the body written (with the response id the writer gave it)
    let carries_ids = !matches!(dialect, DialectName::Gemini | DialectName::Ollama);
    for m in [&mut want, &mut got] {
        without_empty_arguments(m);
        if !carries_ids {
            without_made_up_call_ids(m);
        }
    }
    let Some(object) = want.as_object_mut() else { unreachable!() };
    if matches!(dialect, DialectName::Anthropic | DialectName::Ollama) && !object.contains_key("usage") {
        object.insert("usage".to_owned(), Json::Object(std::collections::BTreeMap::new()));
    }
    let stop = |m: &Json| m.get("stop_reason").cloned();
    let unknown = stop(&want).is_none_or(|s| s.as_str() == Some("unknown"));
    if unknown || stop(&want) == stop(&got) {
        for m in [&mut want, &mut got] {
            if let Some(object) = m.as_object_mut() {
                object.remove("raw_stop_reason");
                if unknown {
                    object.remove("stop_reason");
                }
            }
        }
    }
    assert!(
        want == got,
        "{dialect}: from_response(to_response(m)) != m\nm:     {message}\nagain: {got}\nbody:  {body}"
    );
}

/// Drops a tool call's `arguments` when they are empty (`""`, blanks or `{}`).
fn without_empty_arguments(message: &mut Json) {
    let Some(Json::Array(content)) = message.get_mut("content") else { return };
    for block in content.iter_mut().filter_map(Json::as_object_mut) {
        let empty = block.get("arguments").and_then(Json::as_str).is_some_and(|a| {
            let a = a.trim();
            a.is_empty() || a == "{}"
        });
        if block.get("type").and_then(Json::as_str) == Some("tool_call") && empty {
            block.remove("arguments");
        }
    }
}

/// Replaces the ids msgwire made up for calls by one placeholder.
fn without_made_up_call_ids(message: &mut Json) {
    let Some(Json::Array(content)) = message.get_mut("content") else { return };
    for block in content.iter_mut().filter_map(Json::as_object_mut) {
        if block.get("id").and_then(Json::as_str).is_some_and(made_up_call_id) {
            block.insert("id".to_owned(), Json::String("made up".to_owned()));
        }
    }
}

/// `body`, written from `message`, read back.
fn read_written(message: &[u8], dialect: DialectName, body: &[u8]) -> Vec<u8> {
    from_response_json(body, dialect, ID, TIMESTAMP).unwrap_or_else(|e| {
        let (message, body) = (String::from_utf8_lossy(message), String::from_utf8_lossy(body));
        panic!("{dialect}: the body written does not read: {e}\nmessage: {message}\nbody: {body}")
    })
}

fn assert_placed(error: &ResponseError, body: &[u8]) {
    let Some(offset) = error.error.offset else { return };
    assert!(offset <= body.len(), "error offset {offset} past the body ({} bytes): {error}", body.len());
    if let Some(path) = &error.path {
        assert!(path.starts_with('$'), "a JSON path starts at `$`: {path}");
    }
}
