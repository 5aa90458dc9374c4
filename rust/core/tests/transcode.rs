//! Transcoding the recorded provider streams (tests/fixtures/wire/) into every dialect: the same
//! output bytes for any split of the input, output the target's own decoder reads back without
//! a diagnostic it would not have had, and the source's failures ending the output with an
//! error frame. What each target keeps of the message is checked in `tests/transcode/test_transcode.py`,
//! beside the official SDKs reading the output.

mod common;

use std::path::Path;

use common::{XorShift, random_chunks};
use msgwire_core::assemble::BuilderOptions;
use msgwire_core::canonical::{AssistantMessage, Block};
use msgwire_core::{DialectName, Error, ErrorKind, Limits, StreamDecoder};

fn options() -> BuilderOptions {
    BuilderOptions {
        id: "0193e4a7-0000-7000-8000-00000000abcd".to_owned(),
        timestamp: "2026-11-21T10:00:00Z".to_owned(),
        provider: "test".to_owned(),
        record_events: true,
        partial_args: false,
        limits: Limits::default(),
    }
}

/// Every fixture with the dialect it is in.
fn fixtures() -> Vec<(String, DialectName, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/wire");
    let mut all = Vec::new();
    for folder in ["anthropic", "gemini", "ollama", "openai", "openai-compat"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(folder)).expect("fixture folder").flatten().collect();
        paths.sort_by_key(std::fs::DirEntry::path);
        for entry in paths {
            let name = entry.file_name().to_string_lossy().into_owned();
            let dialect = match folder {
                "anthropic" => DialectName::Anthropic,
                "gemini" => DialectName::Gemini,
                "ollama" => DialectName::Ollama,
                "openai" if name.starts_with("responses") => DialectName::OpenAiResponses,
                _ => DialectName::OpenAi,
            };
            all.push((format!("{folder}/{name}"), dialect, std::fs::read(entry.path()).expect("fixture")));
        }
    }
    assert!(all.len() >= 24, "fixtures missing: {}", all.len());
    all
}

/// The output and the failure of transcoding `chunks`.
fn transcode(source: DialectName, target: DialectName, chunks: &[&[u8]]) -> (Vec<u8>, Option<Error>) {
    let mut transcoder = msgwire_core::transcode::transcoder(source, target, options());
    let mut out = Vec::new();
    let mut failure = None;
    for chunk in chunks {
        if let Err(error) = transcoder.feed(chunk) {
            failure = Some(error);
        }
        out.extend(transcoder.take_events());
        if failure.is_some() {
            return (out, failure);
        }
    }
    failure = transcoder.finish().err();
    out.extend(transcoder.take_events());
    (out, failure)
}

/// Decode `body` as one stream of `dialect`: the message and the failure.
fn decode(dialect: DialectName, body: &[u8]) -> (AssistantMessage, Option<Error>, Vec<&'static str>) {
    let mut decoder = StreamDecoder::new(dialect, BuilderOptions { record_events: false, ..options() });
    let failure = decoder.feed(body).and_then(|()| decoder.finish()).err();
    let codes = decoder.builder().diagnostics().iter().map(|d| d.code).collect();
    (decoder.builder().message().clone(), failure, codes)
}

#[test]
fn any_split_of_the_source_gives_the_same_output() {
    for (name, source, body) in fixtures() {
        for target in DialectName::ALL {
            let whole = transcode(source, target, &[&body]);
            let mut rng = XorShift::new(body.len() as u64);
            let mut splits: Vec<Vec<&[u8]>> = (1..=3).map(|size| body.chunks(size).collect()).collect();
            splits.extend((0..4).map(|_| random_chunks(&body, &mut rng, 256)));
            for chunks in splits {
                assert!(transcode(source, target, &chunks) == whole, "{name} -> {target}: output depends on the split");
            }
        }
    }
}

#[test]
fn output_reads_back_in_the_target_dialect() {
    for (name, source, body) in fixtures() {
        let (message, failure, _) = decode(source, &body);
        for target in DialectName::ALL {
            let (out, transcode_failure) = transcode(source, target, &[&body]);
            assert_eq!(transcode_failure, failure, "{name} -> {target}");
            let (back, back_failure, codes) = decode(target, &out);
            let text = String::from_utf8_lossy(&out);
            match &failure {
                None => {
                    assert_eq!(back_failure, None, "{name} -> {target}:\n{text}");
                    // OpenAI's decoder notes a "stop" finish on a turn with tool calls; the
                    // others would be the transcoder's fault.
                    let unexpected: Vec<_> = codes.iter().filter(|c| **c != "stop_with_tool_calls").collect();
                    assert!(unexpected.is_empty(), "{name} -> {target}: {unexpected:?}\n{text}");
                    assert_eq!(back.model, message.model, "{name} -> {target}");
                    let calls = |m: &AssistantMessage| -> Vec<(String, String)> {
                        m.content
                            .iter()
                            .filter_map(|b| match b {
                                Block::ToolCall(c) => Some((c.id.clone(), c.name.clone())),
                                _ => None,
                            })
                            .collect()
                    };
                    assert_eq!(calls(&back), calls(&message), "{name} -> {target}");
                    let text_of = |m: &AssistantMessage| -> String {
                        m.content
                            .iter()
                            .filter_map(|b| match b {
                                Block::Text(t) => Some(t.text.as_str()),
                                _ => None,
                            })
                            .collect()
                    };
                    assert_eq!(text_of(&back), text_of(&message), "{name} -> {target}");
                }
                Some(error) => {
                    // The failure arrives as the target's error frame, read back as a provider error.
                    let Some(Error { kind: ErrorKind::Provider { message, .. }, .. }) = back_failure else {
                        panic!("{name} -> {target}: {back_failure:?}\n{text}")
                    };
                    if let ErrorKind::Provider { message: original, .. } = &error.kind {
                        assert!(message.contains(original.as_str()), "{name} -> {target}: {message}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_cut_source_ends_the_output_with_an_error_frame() {
    for (name, source, body) in fixtures() {
        let (_, failure, _) = decode(source, &body);
        if failure.is_some() {
            continue;
        }
        let cut = &body[..body.len() / 2];
        for target in DialectName::ALL {
            let (out, failure) = transcode(source, target, &[cut]);
            assert!(matches!(failure, Some(Error { kind: ErrorKind::Truncated { .. }, .. })), "{name}: {failure:?}");
            let (_, back_failure, _) = decode(target, &out);
            let Some(Error { kind: ErrorKind::Provider { error_type, .. }, .. }) = back_failure else {
                panic!("{name} -> {target}: {back_failure:?}")
            };
            // Ollama's error line carries a message only.
            if target != DialectName::Ollama {
                assert_eq!(error_type, "stream_truncated", "{name} -> {target}");
            }
        }
    }
}
