//! Recorded provider streams (the repository's tests/fixtures/wire/, provenance in SOURCES.md there),
//! framed whole and in chunks of 1 to 7 bytes: the same events every time, nothing pending at
//! the end, and every payload the JSON its provider sent.

mod common;

use std::path::Path;

use common::{Outcome, XorShift, as_reference, random_chunks, reference, run};
use msgwire_core::Error;
use msgwire_core::ndjson::NdjsonParser;
use msgwire_core::sse::SseLimits;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/wire").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The body whole, in chunks of every size from 1 to 7, and in random chunks: all the same.
fn chunkings(body: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut all: Vec<Vec<&[u8]>> = vec![vec![body]];
    all.extend((1..=7).map(|size| body.chunks(size).collect()));
    let mut rng = XorShift::new(body.len() as u64);
    all.extend((0..4).map(|_| random_chunks(body, &mut rng, 512)));
    all
}

/// Frame an SSE fixture every way and check what every provider stream must satisfy.
fn sse_fixture(name: &str) -> (Vec<u8>, Outcome) {
    let body = fixture(name);
    let whole = run(SseLimits::default(), &[&body]);
    for chunks in chunkings(&body) {
        assert_eq!(run(SseLimits::default(), &chunks), whole, "{name} in chunks of {}", chunks[0].len());
    }
    assert_eq!(as_reference(&whole), reference(&body), "{name}: the reference parser disagrees");
    let pending = whole.pending.expect("no error");
    assert!(pending.is_clean(), "{name}: {pending:?}");
    for event in &whole.events {
        let block = body.get(usize::try_from(event.offset).expect("offset")..).expect("offset in body");
        assert!(block.starts_with(b"data:") || block.starts_with(b"event:"), "{name}: offset {}", event.offset);
        let data = body.get(usize::try_from(event.data_offset).expect("offset")..).expect("offset in body");
        assert!(data.starts_with(event.data.as_bytes()), "{name}: data_offset {}", event.data_offset);
        if event.data != "[DONE]" {
            serde_json::from_str::<serde_json::Value>(&event.data)
                .unwrap_or_else(|e| panic!("{name}: {e}: {}", event.data));
        }
    }
    (body, whole)
}

#[test]
fn openai_chat_parallel_tool_calls() {
    let (_, out) = sse_fixture("openai/chat-parallel-tool-calls-usage.sse");
    assert_eq!(out.events.len(), 12);
    assert!(out.events.iter().all(|e| e.event == "message" && e.id.is_empty() && e.retry.is_none()));
    assert_eq!(out.events.last().map(|e| e.data.as_str()), Some("[DONE]"));
}

#[test]
fn anthropic_event_types_match_their_payloads() {
    for (name, count) in [("anthropic/thinking-signature-text.sse", 118), ("anthropic/text-with-emoji.sse", 12)] {
        let (_, out) = sse_fixture(name);
        assert_eq!(out.events.len(), count, "{name}");
        for event in &out.events {
            let payload: serde_json::Value = serde_json::from_str(&event.data).expect("json");
            assert_eq!(payload["type"].as_str(), Some(event.event.as_str()), "{name}");
        }
    }
    let (_, out) = sse_fixture("anthropic/text-with-emoji.sse");
    assert!(out.events.iter().any(|e| e.data.contains('\u{1F604}')), "the 4-byte emoji survives every split");
}

#[test]
fn gemini_crlf() {
    let (body, out) = sse_fixture("gemini/function-call-thought-signature-crlf.sse");
    assert!(body.ends_with(b"\r\n\r\n"));
    assert_eq!(out.events.len(), 2);
    assert!(out.events.iter().all(|e| !e.data.contains('\r')));
}

#[test]
fn openrouter_keep_alive_comments() {
    let (_, out) = sse_fixture("openai-compat/openrouter-reasoning-details-comments.sse");
    assert_eq!((out.events.len(), out.comments), (15, 4));
    let (_, out) = sse_fixture("openai-compat/openrouter-midstream-error.sse");
    assert_eq!((out.events.len(), out.comments), (5, 17));
    assert!(out.events.iter().any(|e| e.data.contains("\"error\"")));
}

#[test]
fn groq_event_error() {
    let (_, out) = sse_fixture("openai-compat/groq-event-error.sse");
    assert_eq!(out.events.len(), 95);
    assert_eq!(out.events.iter().filter(|e| e.event == "error").count(), 1);
    assert_eq!(out.events.last().map(|e| e.event.as_str()), Some("error"));
}

/// Every line of an NDJSON body fed as `chunks`, and whether the last one had no LF.
fn ndjson_lines(chunks: &[&[u8]]) -> (Vec<(String, u64)>, bool) {
    let mut parser = NdjsonParser::default();
    let mut lines = Vec::new();
    let mut push = |line: msgwire_core::ndjson::NdjsonLine<'_>| {
        lines.push((line.text.to_owned(), line.offset));
        Ok::<_, Error>(())
    };
    for chunk in chunks {
        parser.feed(chunk, &mut push).expect("within limits");
    }
    let unterminated = parser.finish(&mut push).expect("ok");
    (lines, unterminated)
}

#[test]
fn ollama_ndjson() {
    for (name, count) in [("ollama/local-gemma3-text.ndjson", 203), ("ollama/cloud-gpt-oss-thinking-text.ndjson", 48)] {
        let body = fixture(name);
        let whole = ndjson_lines(&[&body]);
        for chunks in chunkings(&body) {
            assert_eq!(ndjson_lines(&chunks), whole, "{name} in chunks of {}", chunks[0].len());
        }
        let (lines, unterminated) = whole;
        assert!(!unterminated, "{name} ends with a LF");
        assert_eq!(lines.len(), count, "{name}");
        for (text, offset) in &lines {
            let at = body.get(usize::try_from(*offset).expect("offset")..).expect("in body");
            assert!(at.starts_with(text.as_bytes()), "{name}: offset {offset}");
            serde_json::from_str::<serde_json::Value>(text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
        }
        let last: serde_json::Value = serde_json::from_str(&lines[count - 1].0).expect("json");
        assert_eq!(last["done"], true, "{name}");
        // Without its final LF the last line still comes out, from finish.
        let cut = body.strip_suffix(b"\n").expect("final LF");
        let (cut_lines, unterminated) = ndjson_lines(&[cut]);
        assert_eq!((cut_lines, unterminated), (lines, true));
    }
}

/// Every recorded body (tests/fixtures/wire and the 85 real recordings in tests/fixtures/realworld)
/// decoded by its dialect. In this debug build each chunk the fast walk reads is parsed by serde
/// too and the two must agree (`dialect::walk`); errors are the recordings' own and allowed.
#[test]
fn every_recording_decodes_the_same_by_walk_and_by_serde() {
    use msgwire_core::assemble::BuilderOptions;
    use msgwire_core::{DialectName, Limits, StreamDecoder};

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut decoded = 0;
    for set in ["wire", "realworld"] {
        for folder in std::fs::read_dir(root.join(set)).expect("fixtures").flatten() {
            let name = folder.file_name().to_string_lossy().into_owned();
            let dialect = match name.as_str() {
                "openai" | "openai-compat" => DialectName::OpenAi,
                "openai-responses" => DialectName::OpenAiResponses,
                "anthropic" => DialectName::Anthropic,
                "gemini" => DialectName::Gemini,
                "ollama" => DialectName::Ollama,
                _ => continue,
            };
            for file in std::fs::read_dir(folder.path()).expect("folder").flatten() {
                let body = std::fs::read(file.path()).expect("recording");
                let options = BuilderOptions {
                    id: "m".into(),
                    timestamp: "2026-01-01T00:00:00Z".into(),
                    provider: dialect.provider().into(),
                    record_events: true,
                    partial_args: true,
                    limits: Limits::default(),
                };
                let mut stream = StreamDecoder::new(dialect, options);
                let _ = stream.feed(&body).and_then(|()| stream.finish());
                decoded += 1;
            }
        }
    }
    assert!(decoded > 90, "{decoded} recordings");
}
