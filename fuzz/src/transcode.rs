//! The `transcode` target: a stream of one dialect rewritten into another.
//!
//! Mode byte: bits 0-2 pick the source dialect and bits 3-5 the target (each modulo 5), bit 6
//! the small limits of the dialect targets.
//!
//! Invariants:
//! - fed whole or in the header's chunks, the output bytes and the failure are the same;
//! - the output is UTF-8, and the target's own decoder reads it: when the source stream ended
//!   well, without a failure, with the same text and the same tool calls (ids, when the source
//!   had them, and names); when it failed, as a provider error (the target's error frame);
//! - the source message is what decoding without transcoding gives.

use msgwire_core::canonical::{AssistantMessage, Block};
use msgwire_core::{DialectName, Error, ErrorKind, StreamDecoder};

use crate::Case;
use crate::dialect::options;

fn transcode(
    source: DialectName,
    target: DialectName,
    mode: u8,
    chunks: &[&[u8]],
) -> (Vec<u8>, Option<Error>, StreamDecoder) {
    let mut transcoder = msgwire_core::transcode::transcoder(source, target, options(source, mode, true));
    let mut out = Vec::new();
    for chunk in chunks {
        let failure = transcoder.feed(chunk).err();
        out.extend(transcoder.take_events());
        if failure.is_some() {
            return (out, failure, transcoder);
        }
    }
    let failure = transcoder.finish().err();
    out.extend(transcoder.take_events());
    (out, failure, transcoder)
}

fn text(message: &AssistantMessage) -> String {
    message.content.iter().filter_map(|b| if let Block::Text(t) = b { Some(t.text.as_str()) } else { None }).collect()
}

fn calls(message: &AssistantMessage) -> Vec<(&str, &str)> {
    let calls = message.content.iter().filter_map(|b| if let Block::ToolCall(c) = b { Some(c) } else { None });
    calls.map(|c| (c.id.as_str(), c.name.as_str())).collect()
}

pub fn check(data: &[u8]) {
    let case = Case::new(data);
    let source = DialectName::ALL[usize::from(case.mode & 7) % 5];
    let target = DialectName::ALL[usize::from((case.mode >> 3) & 7) % 5];
    let mode = (case.mode >> 5) & 2; // bit 6: the small tool-argument limits
    let (whole, failure, transcoder) = transcode(source, target, mode, &[case.body]);
    let (split, split_failure, _) = transcode(source, target, mode, &case.chunks);
    assert_eq!(failure, split_failure, "split as {:?}", case.chunks);
    assert!(whole == split, "the output depends on the split {:?}", case.chunks);
    let (plain, _) = crate::dialect::run(source, options(source, mode, true), &[case.body]);
    assert_eq!(plain.error, failure, "transcoding changed the failure");
    let output = std::str::from_utf8(&whole).expect("the output is UTF-8");

    let mut decoder = StreamDecoder::new(target, options(target, 0, false));
    let back_failure = decoder.feed(&whole).and_then(|()| decoder.finish()).err();
    let message = transcoder.builder().message();
    let back = decoder.builder().message();
    if failure.is_some() {
        let provider = matches!(back_failure, Some(Error { kind: ErrorKind::Provider { .. }, .. }));
        assert!(provider, "{source} -> {target}: a failure ends with an error frame, read {back_failure:?}\n{output}");
        return;
    }
    assert_eq!(back_failure, None, "{source} -> {target}: the output does not read back\n{output}");
    let late = transcoder.builder().diagnostics().iter().any(|d| d.code.starts_with("transcode_late"));
    if !late {
        assert_eq!(text(back), text(message), "{source} -> {target}: text\n{output}");
        let (ours, theirs) = (calls(message), calls(back));
        assert_eq!(ours.len(), theirs.len(), "{source} -> {target}: tool calls\n{output}");
        for ((id, name), (back_id, back_name)) in ours.iter().zip(&theirs) {
            assert_eq!(name, back_name, "{source} -> {target}: tool name\n{output}");
            if !id.is_empty() {
                assert_eq!(id, back_id, "{source} -> {target}: tool id\n{output}");
            }
        }
    }
}
