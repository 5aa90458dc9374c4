//! What the `request`, `request_read` and `response` fuzz targets found (fuzz/src/request.rs,
//! fuzz/src/response.rs), each input also in `fuzz/regressions/<target>/`.

use msgwire_core::error::JsonSyntax;
use msgwire_core::partial::validate_bytes;
use msgwire_core::request::{Options, from_request_json, to_request_json};
use msgwire_core::response::{Options as ResponseOptions, from_response_json, to_response_json};
use msgwire_core::{DialectName, ErrorKind};

/// A lone surrogate escape in a part kept whole was copied into the session, which no reader
/// of canonical JSON accepts: the body is refused at the escape instead, in every dialect.
#[test]
fn a_lone_surrogate_in_a_kept_part_is_refused_at_its_offset() {
    let bodies: [(DialectName, &str); 5] = [
        (
            DialectName::OpenAiResponses,
            r#"{"input":[{"type":"message","role":"user","content":[{"type":"x","t":"\ud800"}]}]}"#,
        ),
        (DialectName::OpenAi, r#"{"messages":[{"role":"user","content":[{"type":"input_audio","t":"\ud800"}]}]}"#),
        (DialectName::Anthropic, r#"{"messages":[{"role":"user","content":[{"type":"document","t":"\ud800"}]}]}"#),
        (DialectName::Gemini, r#"{"contents":[{"role":"user","parts":[{"executableCode":{"code":"\ud800"}}]}]}"#),
        (DialectName::Ollama, r#"{"messages":[{"role":"user","content":"a\ud800"}]}"#),
    ];
    for (dialect, body) in bodies {
        let at = body.find("\\ud800").expect("the escape");
        match from_request_json(body.as_bytes(), dialect) {
            Ok(session) => assert_eq!(validate_bytes(&session, 1000), Ok(()), "{dialect}: the session is JSON"),
            Err(error) => {
                assert_eq!(error.kind, ErrorKind::JsonSyntax(JsonSyntax::LoneSurrogate), "{dialect}");
                assert_eq!(error.offset, Some(at), "{dialect}");
            }
        }
    }
}

/// Tool-call arguments holding a lone surrogate escape are not JSON: embedded as an object they
/// made the body invalid JSON (a request of the dialects that send an object, and an Ollama
/// response read back from one). They are sent as `{"_raw": "<the text>"}`, like any arguments
/// that are not JSON, and reported.
#[test]
fn arguments_with_a_lone_surrogate_are_wrapped_not_embedded() {
    let session = r#"[{"type":"assistant","id":"a","timestamp":"2026-01-01T00:00:00Z","provider":"x","content":[
        {"type":"tool_call","id":"c1","name":"f","arguments":"{\"city\": \"T\\ud83d-\\ude00o\"}"}]}]"#;
    for dialect in [DialectName::Anthropic, DialectName::Gemini, DialectName::Ollama] {
        let converted = to_request_json(session.as_bytes(), dialect, &Options::default()).expect("converts");
        assert_eq!(validate_bytes(&converted.body, 1000), Ok(()), "{dialect}: the body is JSON");
        let text = String::from_utf8(converted.body).expect("UTF-8");
        assert!(text.contains(r#"{"_raw":"{\"city\": \"T\\ud83d-\\ude00o\"}"}"#), "{dialect}: {text}");
        assert!(converted.report.iter().any(|l| l.kind == "arguments"), "{dialect}: reported");
    }
    // the Ollama response the `response` target found: read, written back, read again
    let body = r#"{"model":"m","created_at":"2025-09-02T18:35:41Z","message":{"role":"assistant","content":"",
        "tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"T\ud83d-\ude00o"}}}]},"done":true,"done_reason":"stop"}"#;
    let id = "0196a3f2-7c10-7000-8000-00000000f022";
    let message = from_response_json(body.as_bytes(), DialectName::Ollama, id, "2026-01-01T00:00:00Z");
    let message = message.expect("reads");
    let written = to_response_json(&message, DialectName::Ollama, &ResponseOptions::default()).expect("writes");
    assert_eq!(validate_bytes(&written.body, 1000), Ok(()), "the response body is JSON");
}
