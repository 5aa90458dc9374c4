//! Every recorded provider stream, decoded whole and split in many ways: the same events and the
//! same message every time, and the facts each recording is known to hold.

use std::path::PathBuf;

use msgwire_core::assemble::BuilderOptions;
use msgwire_core::canonical::{self, Block, StopReason};
use msgwire_core::{DialectName, ErrorKind, Limits, StreamDecoder};

fn fixture(path: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/wire");
    std::fs::read(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn options() -> BuilderOptions {
    BuilderOptions {
        id: "0196a3f2-7c10-7000-8000-00000000abcd".into(),
        timestamp: "2026-01-01T00:00:00Z".into(),
        provider: "test".into(),
        record_events: true,
        partial_args: true,
        limits: Limits::default(),
    }
}

/// What one decoding produced: all events (one JSON array), the message, the diagnostics and
/// the error, all as text so that runs compare exactly.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<serde_json::Value>,
    message: String,
    diagnostics: Vec<String>,
    error: Option<String>,
}

fn decode(dialect: DialectName, chunks: &[&[u8]]) -> Outcome {
    let mut decoder = StreamDecoder::new(dialect, options());
    let mut events = Vec::new();
    let mut error = None;
    for chunk in chunks {
        let fed = decoder.feed(chunk);
        events.extend(batch(&mut decoder));
        if let Err(e) = fed {
            error = Some(e.to_string());
            break;
        }
    }
    if error.is_none() {
        if let Err(e) = decoder.finish() {
            error = Some(e.to_string());
        }
    }
    events.extend(batch(&mut decoder));
    let message = String::from_utf8(canonical::write(decoder.builder().message()).expect("writes")).expect("utf-8");
    let diagnostics = decoder.builder().diagnostics().iter().map(|d| format!("{}@{}", d.code, d.offset)).collect();
    Outcome { events, message, diagnostics, error }
}

fn batch(decoder: &mut StreamDecoder) -> Vec<serde_json::Value> {
    let json = decoder.take_events();
    serde_json::from_slice::<Vec<serde_json::Value>>(&json).expect("a batch is a JSON array")
}

/// Deterministic pseudo-random cut points (xorshift), so failures reproduce.
fn random_cuts(len: usize, seed: u64, max_piece: usize) -> Vec<usize> {
    let mut state = seed | 1;
    let mut cuts = vec![0];
    let mut at = 0;
    while at < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        at = (at + 1 + usize::try_from(state % max_piece as u64).expect("small")).min(len);
        cuts.push(at);
    }
    cuts
}

fn pieces<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    cuts.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// Decode whole, byte by byte, and in random pieces: all must agree.
fn decode_every_way(dialect: DialectName, path: &str) -> Outcome {
    let bytes = fixture(path);
    let whole = decode(dialect, &[&bytes]);
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode(dialect, &singles), whole, "{path}: 1-byte chunks differ");
    for seed in 1..=8 {
        let cuts = random_cuts(bytes.len(), seed, 97);
        assert_eq!(decode(dialect, &pieces(&bytes, &cuts)), whole, "{path}: random split {seed} differs");
    }
    whole
}

fn message(outcome: &Outcome) -> canonical::AssistantMessage {
    serde_json::from_str(&outcome.message).expect("the message reads back")
}

fn text_of(message: &canonical::AssistantMessage) -> String {
    message.content.iter().filter_map(|b| if let Block::Text(t) = b { Some(t.text.as_str()) } else { None }).collect()
}

fn tool_calls(message: &canonical::AssistantMessage) -> Vec<&canonical::ToolCallBlock> {
    message.content.iter().filter_map(|b| if let Block::ToolCall(t) = b { Some(t) } else { None }).collect()
}

fn event_types(outcome: &Outcome) -> Vec<&str> {
    outcome.events.iter().map(|e| e["type"].as_str().expect("tagged")).collect()
}

#[test]
fn openai_parallel_tool_calls_with_usage() {
    let outcome = decode_every_way(DialectName::OpenAi, "openai/chat-parallel-tool-calls-usage.sse");
    assert_eq!(outcome.error, None);
    let message = message(&outcome);
    let calls = tool_calls(&message);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "get_weather");
    assert_eq!(calls[1].name, "get_product_name");
    assert!(calls.iter().all(|c| !c.malformed && c.id.starts_with("call_")));
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(message.raw_stop_reason.as_deref(), Some("tool_calls"));
    assert!(message.usage.as_ref().is_some_and(|u| u.input_tokens > 0 && u.output_tokens > 0));
    let types = event_types(&outcome);
    assert_eq!(types.first(), Some(&"message_start"));
    assert_eq!(types.last(), Some(&"message_end"));
    assert_eq!(types.iter().filter(|t| **t == "tool_call_end").count(), 2);
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
}

#[test]
fn openai_text_with_usage_chunk() {
    let outcome = decode_every_way(DialectName::OpenAi, "openai/chat-text-include-usage.sse");
    assert_eq!(outcome.error, None);
    let message = message(&outcome);
    assert!(!text_of(&message).is_empty());
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(message.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert!(message.response_id.as_deref().is_some_and(|id| id.starts_with("chatcmpl-")));
    // Usage arrives after the finish chunk, and still before MessageEnd.
    let types = event_types(&outcome);
    assert_eq!(&types[types.len() - 2..], ["usage", "message_end"]);
}

#[test]
fn openai_compatible_servers() {
    let deepseek = decode_every_way(DialectName::OpenAi, "openai-compat/deepseek-reasoning-content.sse");
    let message = message(&deepseek);
    assert!(matches!(&message.content[0], Block::Thinking(t) if !t.thinking.is_empty()));
    assert!(!text_of(&message).is_empty());
    assert!(message.usage.as_ref().is_some_and(|u| u.reasoning_tokens > 0));

    let openrouter = decode_every_way(DialectName::OpenAi, "openai-compat/openrouter-reasoning-details-comments.sse");
    let message = self::message(&openrouter);
    let Block::Thinking(thinking) = &message.content[0] else { panic!("thinking first: {message:?}") };
    assert!(thinking.signature.as_deref().is_some_and(|s| s.starts_with("Et0B")));
    assert!(thinking.thinking.starts_with("This"));
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn)); // the later null finish_reason is no second finish

    let groq = decode_every_way(DialectName::OpenAi, "openai-compat/groq-reasoning-tool-call-x_groq-usage.sse");
    let message = self::message(&groq);
    let calls = tool_calls(&message);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, r#"{"name":"example"}"#);
    assert!(message.usage.as_ref().is_some_and(|u| u.input_tokens == 304 && u.reasoning_tokens == 23));

    let mistral = decode_every_way(DialectName::OpenAi, "openai-compat/mistral-magistral-content-array-thinking.sse");
    let message = self::message(&mistral);
    assert!(matches!(&message.content[0], Block::Thinking(t) if t.thinking.starts_with("Okay")));
    assert!(!text_of(&message).is_empty());
}

#[test]
fn in_band_errors_keep_the_partial_message() {
    let groq = decode_every_way(DialectName::OpenAi, "openai-compat/groq-event-error.sse");
    let error = groq.error.as_deref().expect("an error");
    assert!(error.contains("tool_use_failed") || error.contains("invalid_request_error"), "{error}");
    let message = message(&groq);
    assert_eq!(message.stop_reason, Some(StopReason::Error));
    assert!(matches!(&message.content[0], Block::Thinking(t) if !t.thinking.is_empty()));

    let openrouter = decode_every_way(DialectName::OpenAi, "openai-compat/openrouter-midstream-error.sse");
    let error = openrouter.error.as_deref().expect("an error");
    assert!(error.contains("Token limit reached"), "{error}");
    assert_eq!(message_of(&openrouter).raw_stop_reason.as_deref(), Some("length"));
}

fn message_of(outcome: &Outcome) -> canonical::AssistantMessage {
    message(outcome)
}

#[test]
fn anthropic_recordings() {
    let thinking = decode_every_way(DialectName::Anthropic, "anthropic/thinking-signature-text.sse");
    assert_eq!(thinking.error, None);
    let message = message(&thinking);
    let Block::Thinking(block) = &message.content[0] else { panic!("thinking first") };
    assert!(block.signature.as_deref().is_some_and(|s| !s.is_empty()));
    assert!(matches!(&message.content[1], Block::Text(_)));
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));

    let empty_args = decode_every_way(DialectName::Anthropic, "anthropic/thinking-then-tool-use-empty-args.sse");
    let message = self::message(&empty_args);
    let calls = tool_calls(&message);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, "");
    assert!(!calls[0].malformed);
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert!(message.usage.as_ref().is_some_and(|u| u.reasoning_tokens == 53 && u.output_tokens == 92));

    let redacted = decode_every_way(DialectName::Anthropic, "anthropic/redacted-thinking-text.sse");
    let message = self::message(&redacted);
    let redacted_blocks =
        message.content.iter().filter(|b| matches!(b, Block::Thinking(t) if t.redacted.is_some())).count();
    assert_eq!(redacted_blocks, 2);

    let server = decode_every_way(DialectName::Anthropic, "anthropic/server-tool-use-then-tool-use-with-args.sse");
    let message = self::message(&server);
    assert_eq!(message.content.len(), 5, "{message:?}");
    let Block::ServerToolCall(call) = &message.content[1] else { panic!("a server tool call") };
    assert_eq!((call.kind.as_str(), call.dialect.as_str()), ("server_tool_use", "anthropic"));
    assert!(call.raw.get().contains("tool_search_tool_bm25"));
    assert!(serde_json::from_str::<serde_json::Value>(&call.arguments).is_ok(), "{}", call.arguments);
    let Block::ServerToolResult(result) = &message.content[2] else { panic!("its result") };
    assert_eq!(result.tool_call_id, call.id);
    let calls = tool_calls(&message);
    assert_eq!(calls[0].name, "get_exchange_rate");
    assert!(serde_json::from_str::<serde_json::Value>(&calls[0].arguments).is_ok());

    let emoji = decode_every_way(DialectName::Anthropic, "anthropic/text-with-emoji.sse");
    assert!(text_of(&message_of(&emoji)).contains('😄'));
    for path in ["anthropic/text-minimal.sse", "anthropic/web-search-citations.sse"] {
        assert_eq!(decode_every_way(DialectName::Anthropic, path).error, None, "{path}");
    }
    let cited = self::message(&decode_every_way(DialectName::Anthropic, "anthropic/web-search-citations.sse"));
    let citations: Vec<_> = cited
        .content
        .iter()
        .filter_map(|b| if let Block::Text(t) = b { Some(&t.citations) } else { None })
        .flatten()
        .collect();
    assert!(!citations.is_empty(), "the citations are the text's");
    assert!(citations.iter().all(|c| c.kind == "web_search_result_location" && c.url.is_some() && c.raw.is_some()));
}

#[test]
fn responses_recordings() {
    let outcome =
        decode_every_way(DialectName::OpenAiResponses, "openai/responses-encrypted-reasoning-text-function-call.sse");
    assert_eq!(outcome.error, None);
    let message = message(&outcome);
    let Block::Thinking(thinking) = &message.content[0] else { panic!("reasoning first") };
    assert!(thinking.signature.as_deref().is_some_and(|s| s.starts_with("gAAAA")));
    assert!(text_of(&message).contains("PotatoLand"));
    let calls = tool_calls(&message);
    assert_eq!(calls[0].id, "call_LabG58Uhrq9kZvR52BYKjToD");
    assert_eq!(calls[0].arguments, r#"{"country":"PotatoLand"}"#);
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));
    assert!(message.usage.as_ref().is_some_and(|u| u.reasoning_tokens == 26));

    let summary = decode_every_way(DialectName::OpenAiResponses, "openai/responses-reasoning-summary-text.sse");
    let message = self::message(&summary);
    let Block::Thinking(thinking) = &message.content[0] else { panic!("reasoning first") };
    assert!(thinking.thinking.matches("\n\n").count() >= 3, "4 summary parts joined by blank lines");
    assert!(text_of(&message).len() > 1000);

    let old = decode_every_way(DialectName::OpenAiResponses, "openai/responses-function-call-2025-03-no-seqnum.sse");
    assert_eq!(old.error, None);
    assert_eq!(tool_calls(&self::message(&old)).len(), 1);
}

#[test]
fn gemini_recordings() {
    let crlf = decode_every_way(DialectName::Gemini, "gemini/function-call-thought-signature-crlf.sse");
    assert_eq!(crlf.error, None);
    let message = message(&crlf);
    let Block::Thinking(signature) = &message.content[0] else { panic!("signature block first: {message:?}") };
    assert!(signature.thinking.is_empty() && signature.signature.is_some());
    assert_eq!(tool_calls(&message).len(), 1);
    assert_eq!(message.stop_reason, Some(StopReason::ToolUse));

    let with_id = decode_every_way(DialectName::Gemini, "gemini/function-call-with-id.sse");
    assert_eq!(tool_calls(&message_of(&with_id))[0].id, "96c1su3s");

    let single = decode_every_way(DialectName::Gemini, "gemini/function-call-single-chunk-2.0-flash.sse");
    let message = self::message(&single);
    let id = &tool_calls(&message)[0].id;
    assert!(id.starts_with("call_"));
    // The synthetic id is known before ToolCallBegin, so events and message agree.
    let begin = single.events.iter().find(|e| e["type"] == "tool_call_begin").expect("a begin event");
    assert_eq!(begin["id"].as_str(), Some(id.as_str()));

    let thoughts = decode_every_way(DialectName::Gemini, "gemini/thought-parts-then-text.sse");
    let message = self::message(&thoughts);
    assert!(matches!(&message.content[0], Block::Thinking(t) if !t.thinking.is_empty()));
    assert!(!text_of(&message).is_empty());
    assert!(message.usage.as_ref().is_some_and(|u| u.reasoning_tokens > 0));
}

#[test]
fn ollama_recordings() {
    let local = decode_every_way(DialectName::Ollama, "ollama/local-gemma3-text.ndjson");
    assert_eq!(local.error, None);
    let message = message(&local);
    assert!(!text_of(&message).is_empty());
    assert_eq!(message.stop_reason, Some(StopReason::EndTurn));
    assert!(message.usage.as_ref().is_some_and(|u| u.input_tokens > 0));

    let cloud = decode_every_way(DialectName::Ollama, "ollama/cloud-gpt-oss-thinking-text.ndjson");
    let message = self::message(&cloud);
    assert!(matches!(&message.content[0], Block::Thinking(t) if t.thinking.starts_with("User")));
}

#[test]
fn a_cut_stream_is_truncated_and_keeps_its_message() {
    for (dialect, path) in [
        (DialectName::OpenAi, "openai/chat-parallel-tool-calls-usage.sse"),
        (DialectName::Anthropic, "anthropic/thinking-signature-text.sse"),
        (DialectName::OpenAiResponses, "openai/responses-encrypted-reasoning-text-function-call.sse"),
        (DialectName::Gemini, "gemini/thought-parts-then-text.sse"),
        (DialectName::Ollama, "ollama/local-gemma3-text.ndjson"),
    ] {
        let bytes = fixture(path);
        let cut = &bytes[..bytes.len() * 2 / 3];
        let mut decoder = StreamDecoder::new(dialect, options());
        decoder.feed(cut).expect("the first two thirds decode");
        let error = decoder.finish().expect_err("a cut stream is an error");
        assert!(matches!(error.kind, ErrorKind::Truncated { .. }), "{path}: {error}");
        assert!(error.offset.is_some());
        let message = decoder.builder().message();
        assert_eq!(message.stop_reason, Some(StopReason::Error));
        assert!(!message.content.is_empty(), "{path}: the partial message keeps what arrived");
        // The error is sticky.
        assert_eq!(decoder.feed(b"more").expect_err("still failed"), error);
    }
}
