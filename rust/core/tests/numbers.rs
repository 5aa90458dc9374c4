//! JSON numbers no double holds (`1e400`), integers beyond 64 bits, and the spellings a double
//! would change (`1e-400`, `-0`, `1.50`), on every path: the rules of `docs/wire.md`, "Numbers".
//!
//! - JSON msgwire keeps (unknown blocks and items, server tool blocks, tool-call arguments) keeps
//!   each number as the provider wrote it, and writes it back so;
//! - a number msgwire reads into a typed field (a token count, an index, a creation time) that the
//!   field cannot hold is an error placed at the number (offset, and a JSON path in a body).

use std::path::Path;

use msgwire_core::assemble::BuilderOptions;
use msgwire_core::response::{Options, from_response_json, to_response_json};
use msgwire_core::{DialectName, ErrorKind, Limits, StreamDecoder};

const ID: &str = "0196a3f2-7c10-7000-8000-00000000f022";
const TIMESTAMP: &str = "2026-01-01T00:00:00Z";

/// Numbers whose text a double would change (or refuse).
const NUMBERS: &[&str] = &[
    "1e400",
    "-1e400",
    "1E+309",
    "1e-400",
    "123456789012345678901234567890",
    "-0",
    "0e0",
    "1.50",
    "-9223372036854775809",
];

fn read(body: &str, dialect: DialectName) -> String {
    let message = from_response_json(body.as_bytes(), dialect, ID, TIMESTAMP)
        .unwrap_or_else(|e| panic!("{dialect}: {e}\n{body}"));
    String::from_utf8(message).expect("UTF-8")
}

/// The message read from `body`, written back as a body of its dialect and read again.
fn read_written_read(body: &str, dialect: DialectName) -> (String, String, String) {
    let message = read(body, dialect);
    let written = to_response_json(message.as_bytes(), dialect, &Options::default()).expect("writes");
    let written = String::from_utf8(written.body).expect("UTF-8");
    let again = read(&written, dialect);
    (message, written, again)
}

fn stream_options() -> BuilderOptions {
    BuilderOptions {
        id: ID.to_owned(),
        timestamp: TIMESTAMP.to_owned(),
        provider: "test".to_owned(),
        record_events: true,
        partial_args: true,
        limits: Limits::default(),
    }
}

/// The canonical message of a whole stream.
fn decode(stream: &str, dialect: DialectName) -> String {
    let mut decoder = StreamDecoder::new(dialect, stream_options());
    decoder.feed(stream.as_bytes()).and_then(|()| decoder.finish()).unwrap_or_else(|e| panic!("{e}\n{stream}"));
    let message = msgwire_core::canonical::write(decoder.builder().message()).expect("writes");
    String::from_utf8(message).expect("UTF-8")
}

#[test]
fn the_fuzzed_response_keeps_its_1e400_byte_for_byte() {
    // fuzz/regressions/response/: a mode byte (the dialect), then a Responses body whose one
    // output item msgwire has no type for holds `"typeary": [1e400]`
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/response/number-out-of-range-in-a-raw-item");
    let input = std::fs::read(path).expect("the regression input");
    let (&mode, body) = input.split_first().expect("a mode byte");
    assert_eq!(DialectName::ALL[usize::from(mode & 7) % 5], DialectName::OpenAiResponses);
    let body = std::str::from_utf8(body).expect("UTF-8");
    let (message, written, again) = read_written_read(body, DialectName::OpenAiResponses);
    let item = &body[body.find("{\n      \"id\": \"rs_").expect("the item")..];
    let item = &item[..=item.find("\n    }").expect("its end") + 5];
    assert!(item.contains("[1e400]"));
    assert!(message.contains(&format!(r#""part":{item}"#)), "the item kept whole: {message}");
    assert!(written.contains(&format!(r#""output":[{item}]"#)), "and written back so: {written}");
    // read again, the same (but for the response id the body lacked: `"id[DONE]"`, not `"id"`)
    let made_up = format!(r#","response_id":"resp_{ID}"}}"#);
    assert_eq!(again, message.replace(r#""provider":"openai"}"#, &format!(r#""provider":"openai"{made_up}"#)));
}

#[test]
fn kept_json_keeps_its_numbers_in_every_dialect() {
    for n in NUMBERS {
        let bodies = [
            (
                DialectName::OpenAi,
                format!(
                    r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"f","arguments":"{{\"x\":{n}}}"}}}}]}},"finish_reason":"tool_calls"}}]}}"#
                ),
                vec![format!(r#""arguments":"{{\"x\":{n}}}""#)],
            ),
            (
                DialectName::Anthropic,
                format!(
                    r#"{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{{"x":{n}}}}},{{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{{"x":{n}}}]}},{{"type":"container_upload","x":{n}}},{{"type":"tool_use","id":"toolu_1","name":"f","input":{{"x":{n}}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":1,"output_tokens":1}}}}"#
                ),
                vec![
                    format!(r#""arguments":"{{\"x\":{n}}}","kind":"server_tool_use""#),
                    format!(r#""content":[{{"x":{n}}}]}}"#),
                    format!(r#""part":{{"type":"container_upload","x":{n}}}"#),
                    format!(r#""name":"f","arguments":"{{\"x\":{n}}}""#),
                ],
            ),
            (
                DialectName::OpenAiResponses,
                format!(
                    r#"{{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{{"type":"web_search_call","id":"ws_1","status":"completed","action":{{"type":"search","query":"q","x":{n}}}}},{{"type":"zz","id":"z","x":[{n}]}},{{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{{\"x\": {n}}}","status":"completed"}}]}}"#
                ),
                vec![
                    // a built-in tool item is a server tool call whatever its numbers, its
                    // arguments in Value's normal form but for them
                    format!(
                        r#""type":"server_tool_call","id":"ws_1","name":"web_search","arguments":"{{\"query\":\"q\",\"type\":\"search\",\"x\":{n}}}""#
                    ),
                    format!(r#""part":{{"type":"zz","id":"z","x":[{n}]}}"#),
                    format!(r#""arguments":"{{\"x\": {n}}}""#),
                ],
            ),
            (
                DialectName::Gemini,
                format!(
                    r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"functionCall":{{"name":"f","args":{{"x":{n}}}}}}}]}},"finishReason":"STOP","index":0,"groundingMetadata":{{"webSearchQueries":["q"],"x":{n}}}}}],"modelVersion":"m","responseId":"r"}}"#
                ),
                vec![
                    format!(r#""arguments":"{{\"x\":{n}}}""#),
                    format!(r#""raw":{{"webSearchQueries":["q"],"x":{n}}}"#),
                ],
            ),
            (
                DialectName::Ollama,
                format!(
                    r#"{{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{{"role":"assistant","content":"","tool_calls":[{{"function":{{"name":"f","arguments":{{"x":{n}}}}}}}]}},"done":true,"done_reason":"stop"}}"#
                ),
                vec![format!(r#""arguments":"{{\"x\":{n}}}""#)],
            ),
        ];
        for (dialect, body, kept) in bodies {
            let (message, written, again) = read_written_read(&body, dialect);
            for text in kept {
                assert!(message.contains(&text), "{dialect}: {text} not in {message}");
            }
            assert!(written.contains(n), "{dialect}: {n} not written back: {written}");
            // what this dialect's body carries comes back the same (Gemini and Ollama make up
            // the call ids of their calls, which have none; the rest is the same)
            if !matches!(dialect, DialectName::Gemini | DialectName::Ollama) {
                assert_eq!(again, message, "{dialect}: read, written, read again");
            }
        }
    }
}

#[test]
fn an_anthropic_block_whose_input_streams_keeps_its_numbers() {
    for n in NUMBERS {
        let stream = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"server_tool_use\", \"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{{}},\"caller\":{{\"n\": {n}}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"x\\\": {n}\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\", \\\"y\\\": [{n}]}}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{{\"type\":\"zz_tool_use\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"[{n}]\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":1}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":2}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        );
        let message = decode(&stream, DialectName::Anthropic);
        // the block as it started, its members in order, the input as it streamed
        let input = format!(r#"{{"x": {n}, "y": [{n}]}}"#);
        let raw = format!(
            r#"{{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{input},"caller":{{"n": {n}}}}}"#
        );
        let arguments = serde_json::to_string(&input).expect("a string");
        assert!(
            message.contains(&format!(
                r#""arguments":{arguments},"kind":"server_tool_use","dialect":"anthropic","raw":{raw}"#
            )),
            "{message}"
        );
        assert!(message.contains(&format!(r#""part":{{"type":"zz_tool_use","input":[{n}]}}"#)), "{message}");

        // transcoded to Anthropic, the stream reads back as the same message
        let mut transcoder =
            msgwire_core::transcode::transcoder(DialectName::Anthropic, DialectName::Anthropic, stream_options());
        transcoder.feed(stream.as_bytes()).and_then(|()| transcoder.finish()).expect("transcodes");
        let out = String::from_utf8(transcoder.take_events()).expect("UTF-8");
        let back = decode(&out, DialectName::Anthropic);
        assert!(back.contains(&format!(r#""raw":{raw}"#)), "{out}\n{back}");
    }
}

#[test]
fn typed_numbers_out_of_range_are_errors_at_the_number() {
    let usage = |n: &str| {
        format!(
            r#"{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"text","text":"hi"}}],"stop_reason":"end_turn","usage":{{"input_tokens":{n},"output_tokens":1}}}}"#
        )
    };
    let created = |n: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion","created":{n},"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":"hi"}},"finish_reason":"stop"}}]}}"#
        )
    };
    let index = |n: &str| created("1").replace(r#""index":0"#, &format!(r#""index":{n}"#));
    for n in
        ["1e400", "-1e400", "1E+309", "123456789012345678901234567890", "18446744073709551616", "-1", "1.5", "1e-400"]
    {
        for (dialect, body, path) in [
            (DialectName::Anthropic, usage(n), "$.usage.input_tokens"),
            (DialectName::OpenAi, index(n), "$.choices[0].index"),
        ] {
            let error = from_response_json(body.as_bytes(), dialect, ID, TIMESTAMP).expect_err(&body);
            assert_eq!(error.path.as_deref(), Some(path), "{n}: {error}");
            let at = body.find(&format!(":{n}")).expect("the number") + 1;
            assert!((at..=at + n.len()).contains(&error.error.offset.expect("an offset")), "{n}: {error}");
            assert!(!matches!(error.error.kind, ErrorKind::Provider { .. }));
        }
    }
    // the same token count in a stream: a stream error at the number
    for n in ["1e400", "123456789012345678901234567890"] {
        let stream = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{{\"input_tokens\":{n}}}}}}}\n\n"
        );
        let mut decoder = StreamDecoder::new(DialectName::Anthropic, stream_options());
        let error = decoder.feed(stream.as_bytes()).expect_err(n);
        let at = stream.find(n).expect("the number");
        assert!((at..=at + n.len()).contains(&error.offset.expect("an offset")), "{n}: {error}");
    }
    // a creation time: a number no double holds is refused like any typed number; a double that
    // is no time msgwire can write (years 1 to 9999: milliseconds, say) gives the caller's time
    let error = from_response_json(created("1e400").as_bytes(), DialectName::OpenAi, ID, TIMESTAMP).expect_err("1e400");
    assert_eq!(error.path.as_deref(), Some("$.created"));
    for n in ["1785273853000", "123456789012345678901234567890", "-1e300"] {
        assert!(read(&created(n), DialectName::OpenAi).contains(&format!(r#""timestamp":"{TIMESTAMP}""#)), "{n}");
    }
    assert!(read(&created("1e-400"), DialectName::OpenAi).contains(r#""timestamp":"1970-01-01T00:00:00Z""#));
}

#[test]
fn a_request_keeps_its_conversation_numbers_and_reads_its_settings_as_values() {
    use msgwire_core::request::from_request_json;
    let read = |body: &str, dialect| {
        let session = from_request_json(body.as_bytes(), dialect).unwrap_or_else(|e| panic!("{e}\n{body}"));
        String::from_utf8(session).expect("UTF-8")
    };
    for n in NUMBERS {
        // the conversation: arguments and parts kept as written
        let body = format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}},{{"role":"assistant","content":[{{"type":"tool_use","id":"t","name":"f","input":{{"x":{n}}}}},{{"type":"zz","x":{n}}}]}}]}}"#
        );
        let session = read(&body, DialectName::Anthropic);
        assert!(session.contains(&format!(r#""arguments":"{{\"x\":{n}}}""#)), "{session}");
        assert!(session.contains(&format!(r#""part":{{"type":"zz","x":{n}}}"#)), "{session}");
    }
    // settings are values: a number a double (or a 64-bit integer) cannot hold as it is is
    // refused at its offset, anywhere among them
    for (body, dialect, n) in [
        (r#"{"messages":[],"temperature":1e400}"#, DialectName::OpenAi, "1e400"),
        (
            r#"{"messages":[],"seed":123456789012345678901234567890}"#,
            DialectName::OpenAi,
            "123456789012345678901234567890",
        ),
        (r#"{"messages":[],"metadata":{"a":[1,-1E+309]}}"#, DialectName::OpenAi, "-1E+309"),
        (
            r#"{"contents":[],"generationConfig":{"topK":18446744073709551616}}"#,
            DialectName::Gemini,
            "18446744073709551616",
        ),
        (
            r#"{"contents":[],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"maximum":1e999}}]}]}"#,
            DialectName::Gemini,
            "1e999",
        ),
    ] {
        let error = from_request_json(body.as_bytes(), dialect).expect_err(body);
        assert_eq!(error.offset, body.find(n), "{error}: {body}");
        assert!(error.to_string().contains(n), "{error}");
    }
    // a typed setting its field cannot hold stays as it was, an extra field of the dialect
    let session = read(r#"{"messages":[],"max_tokens":1e30,"temperature":1e-400}"#, DialectName::OpenAi);
    assert!(
        session.contains(r#""temperature":0.0,"extra":{"dialect":"openai","fields":{"max_tokens":1e+30}}"#),
        "{session}"
    );
    let body = r#"{"contents":[],"generationConfig":{"maxOutputTokens":-1,"thinkingConfig":{"thinkingBudget":1e30}}}"#;
    let session = read(body, DialectName::Gemini);
    assert!(
        session.contains(
            r#""fields":{"generationConfig":{"maxOutputTokens":-1,"thinkingConfig":{"thinkingBudget":1e+30}}}"#
        ),
        "{session}"
    );
    assert!(!session.contains("reasoning"), "{session}");
}
