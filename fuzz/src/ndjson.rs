//! `ndjson`: the NDJSON framer ([`NdjsonParser`]).
//!
//! Mode byte: 0 keeps the default `max_line_size`, otherwise it is the limit (1 to 255).
//!
//! Invariants:
//! - the body fed whole and in the header's chunks gives the same lines, offsets, error and
//!   `finish` result;
//! - without an error, those are the lines a plain reading of the rules finds in the body;
//! - a line's text is the body's bytes at its offset;
//! - after `finish` (even after an error) the parser reads a new stream like a fresh one.

use msgwire_core::Error;
use msgwire_core::ndjson::{NdjsonLine, NdjsonParser};
use msgwire_core::sse::DEFAULT_LIMIT;

use crate::Case;

/// The lines of a stream, its error and what `finish` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub lines: Vec<(String, u64)>,
    pub error: Option<Error>,
    /// `finish`'s result: whether a last line without LF was handed out.
    pub unterminated: Option<bool>,
}

pub fn run(parser: &mut NdjsonParser, chunks: &[&[u8]]) -> Outcome {
    let mut lines = Vec::new();
    let mut push = |line: NdjsonLine<'_>| {
        lines.push((line.text.to_owned(), line.offset));
        Ok::<_, Error>(())
    };
    let mut error = None;
    for chunk in chunks {
        if let Err(err) = parser.feed(chunk, &mut push) {
            error = Some(err);
            break;
        }
    }
    let unterminated = if error.is_none() {
        match parser.finish(&mut push) {
            Ok(last) => Some(last),
            Err(err) => {
                error = Some(err);
                None
            }
        }
    } else {
        None
    };
    Outcome { lines, error, unterminated }
}

pub fn check(data: &[u8]) {
    let case = Case::new(data);
    let limit = if case.mode == 0 { DEFAULT_LIMIT } else { usize::from(case.mode) };
    let whole = run(&mut NdjsonParser::new(limit), &[case.body]);
    let mut parser = NdjsonParser::new(limit);
    let split = run(&mut parser, &case.chunks);
    assert_eq!(split, whole, "split as {:?}", case.chunks);

    if whole.error.is_none() {
        assert_eq!(whole.lines, reference(case.body), "the reference disagrees");
    }
    for (text, offset) in &whole.lines {
        if crate::exact_text(text) {
            let at = usize::try_from(*offset).expect("offset fits usize");
            let raw = case.body.get(at..).expect("offset inside the body");
            assert!(raw.starts_with(text.as_bytes()), "offset {at} of {text:?}");
        }
    }

    // A new stream on the same parser: after an error, `finish` first.
    if split.error.is_some() {
        let _ = parser.finish(|_| Ok::<_, Error>(()));
    }
    assert_eq!(run(&mut parser, &[case.body]), whole, "the second stream");
}

/// The lines a body holds, by the plainest reading of the rules: one BOM dropped, lines end at
/// LF, a CR before it dropped, blank lines (JSON whitespace only) skipped.
pub fn reference(body: &[u8]) -> Vec<(String, u64)> {
    let start = if body.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let mut offset = start;
    let mut out = Vec::new();
    for line in body[start..].split(|&b| b == b'\n') {
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        if !text.iter().all(|b| b" \t\r".contains(b)) {
            out.push((String::from_utf8_lossy(text).into_owned(), offset as u64));
        }
        offset += line.len() + 1;
    }
    out
}
