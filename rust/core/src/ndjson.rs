//! Incremental framing of NDJSON bodies: one JSON document per line (Ollama's native
//! `/api/chat` stream, Ollama's `docs/api.md`; summarized in `docs/wire.md` §3).
//!
//! Lines end at LF; a CR before the LF is dropped, and a lone CR is an ordinary byte (unlike SSE,
//! where it ends a line). Lines holding only JSON whitespace are skipped. One UTF-8 BOM is dropped
//! at the very start of the stream, even when split across chunks. The last line needs no LF:
//! [`NdjsonParser::finish`] hands it out. Each line is decoded as UTF-8, invalid sequences
//! becoming U+FFFD (as in SSE), and borrowed without a copy when it lies inside one chunk.
//!
//! Offsets count the bytes of the whole stream from 0, a leading BOM included; a line's offset
//! is that of its first byte. A line longer than `max_line_size` (not counting its LF or CRLF)
//! is an error at the offset of the first byte past the limit. After an error, call
//! [`NdjsonParser::finish`] before reusing the parser.

use memchr::memchr;

use crate::error::Error;
use crate::sse::{Bom, DEFAULT_LIMIT, decode};

/// One line of the stream. It borrows the parser or the chunk being fed: copy what you keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdjsonLine<'a> {
    /// The line without its LF or CRLF.
    pub text: &'a str,
    /// Stream offset of the line's first byte.
    pub offset: u64,
}

/// An incremental NDJSON line splitter for one stream at a time.
#[derive(Debug)]
pub struct NdjsonParser {
    bom: Bom,
    /// The start of a line whose LF has not arrived yet.
    pending: Vec<u8>,
    /// Stream offset of `pending`'s first byte.
    pending_start: u64,
    /// Stream bytes fed before the current chunk.
    consumed: u64,
    max_line_size: usize,
}

impl Default for NdjsonParser {
    fn default() -> Self {
        Self::new(DEFAULT_LIMIT)
    }
}

impl NdjsonParser {
    pub fn new(max_line_size: usize) -> Self {
        Self { bom: Bom::default(), pending: Vec::new(), pending_start: 0, consumed: 0, max_line_size }
    }

    /// Parse the next bytes of the stream, calling `on_line` for each non-blank line they complete.
    ///
    /// Stops at the first error: a line over the limit ([`ErrorKind::Limit`](crate::ErrorKind::Limit)
    /// named `max_line_size`) or an error returned by `on_line`.
    pub fn feed<E: From<Error>>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(NdjsonLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let base = self.consumed;
        self.consumed += chunk.len() as u64;
        let at = |rest: &[u8]| base + (chunk.len() - rest.len()) as u64;

        let (bom_len, replay) = self.bom.skip(chunk);
        if !replay.is_empty() {
            self.pending_start = 0;
            self.carry(replay)?;
        }
        let mut rest = chunk.get(bom_len..).unwrap_or_default();
        while let Some(end) = memchr(b'\n', rest) {
            let (line, after) = rest.split_at(end);
            if self.pending.is_empty() {
                let start = at(rest);
                if content_len(line) > self.max_line_size {
                    return Err(self.too_long(start).into());
                }
                emit(line, start, &mut on_line)?;
            } else {
                self.carry(line)?;
                let result = emit(&self.pending, self.pending_start, &mut on_line);
                self.pending.clear();
                result?;
            }
            rest = after.get(1..).unwrap_or_default();
        }
        if !rest.is_empty() {
            if self.pending.is_empty() {
                self.pending_start = at(rest);
            }
            self.carry(rest)?;
        }
        Ok(())
    }

    /// End the stream, handing out a last line that had no LF. Returns whether such a line was
    /// handed out (not blank): a stream cut in the middle of a line ends that way too, so a
    /// caller may want to check that this last document is complete. The parser is then ready
    /// for a new stream: offsets restart at 0 and a BOM is dropped again.
    pub fn finish<E>(&mut self, mut on_line: impl FnMut(NdjsonLine<'_>) -> Result<(), E>) -> Result<bool, E> {
        let held = self.bom.finish();
        if !held.is_empty() {
            self.pending_start = 0;
            self.pending.extend_from_slice(held);
        }
        let emitted = emit(&self.pending, self.pending_start, &mut on_line);
        self.pending.clear();
        self.pending_start = 0;
        self.consumed = 0;
        emitted
    }

    /// Bytes of the current stream fed so far.
    pub fn offset(&self) -> u64 {
        self.consumed
    }

    /// Add to the unfinished line, within the line limit.
    fn carry(&mut self, bytes: &[u8]) -> Result<(), Error> {
        // A CR at the end may be the first half of a CRLF, so it does not count yet.
        let ends_in_cr = bytes.last().or(self.pending.last()) == Some(&b'\r');
        if self.pending.len() + bytes.len() - usize::from(ends_in_cr) > self.max_line_size {
            return Err(self.too_long(self.pending_start));
        }
        self.pending.extend_from_slice(bytes);
        Ok(())
    }

    /// The error of a line starting at `start` that goes past the limit.
    fn too_long(&self, start: u64) -> Error {
        Error::limit("max_line_size", self.max_line_size, start + self.max_line_size as u64)
    }
}

/// The length of a line without the CR of a CRLF.
fn content_len(line: &[u8]) -> usize {
    line.len() - usize::from(line.last() == Some(&b'\r'))
}

/// Hand out a line unless it is blank. Returns whether it was handed out.
fn emit<E>(line: &[u8], offset: u64, on_line: &mut impl FnMut(NdjsonLine<'_>) -> Result<(), E>) -> Result<bool, E> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')) {
        return Ok(false);
    }
    on_line(NdjsonLine { text: &decode(line), offset })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `chunks`, fed in that order, with the `finish` result.
    fn lines(parser: &mut NdjsonParser, chunks: &[&[u8]]) -> Result<(Vec<(String, u64)>, bool), Error> {
        let mut out = Vec::new();
        let mut push = |line: NdjsonLine<'_>| {
            out.push((line.text.to_owned(), line.offset));
            Ok::<_, Error>(())
        };
        for chunk in chunks {
            parser.feed(chunk, &mut push)?;
        }
        let unterminated = parser.finish(&mut push)?;
        Ok((out, unterminated))
    }

    /// `body` fed whole, byte by byte, and split at every point all give `expected`.
    fn check(body: &[u8], expected: &[(&str, u64)], unterminated: bool) {
        let expected: Vec<(String, u64)> = expected.iter().map(|(t, o)| ((*t).to_owned(), *o)).collect();
        let mut parser = NdjsonParser::default();
        let mut splits: Vec<Vec<&[u8]>> = vec![vec![body], body.chunks(1).collect()];
        splits.extend(
            (0..=body.len()).map(|i| vec![body.get(..i).unwrap_or_default(), body.get(i..).unwrap_or_default()]),
        );
        for chunks in splits {
            let got = lines(&mut parser, &chunks).expect("no error");
            assert_eq!(got, (expected.clone(), unterminated), "{chunks:?}");
        }
    }

    #[test]
    fn splits_on_lf_and_drops_the_cr_of_crlf() {
        check(b"{\"a\":1}\n{\"b\":2}\r\n", &[("{\"a\":1}", 0), ("{\"b\":2}", 8)], false);
    }

    #[test]
    fn a_lone_cr_is_not_a_line_end() {
        check(b"{\"a\":\r1}\n", &[("{\"a\":\r1}", 0)], false);
    }

    #[test]
    fn skips_blank_and_whitespace_lines() {
        check(b"\n \t\n\r\n{}\n\n  \r\n", &[("{}", 6)], false);
    }

    #[test]
    fn hands_out_a_last_line_without_lf_at_finish() {
        check(b"{}\n{\"done\":true}", &[("{}", 0), ("{\"done\":true}", 3)], true);
        check(b"{}\n{\"done\":true}\r", &[("{}", 0), ("{\"done\":true}", 3)], true);
        check(b"{}\n  ", &[("{}", 0)], false);
    }

    #[test]
    fn drops_one_leading_bom_only() {
        check(b"\xEF\xBB\xBF{}\n", &[("{}", 3)], false);
        check(b"\xEF\xBB\xBF\xEF\xBB\xBF{}\n", &[("\u{FEFF}{}", 3)], false);
        check(b"{}\n\xEF\xBB\xBF{}\n", &[("{}", 0), ("\u{FEFF}{}", 3)], false);
        check(b"\xEF\xBB{}\n", &[("\u{FFFD}{}", 0)], false);
        check(b"\xEF\xBB", &[("\u{FFFD}", 0)], true);
        check(b"\xEF\xBB\xBF", &[], false);
    }

    #[test]
    fn decodes_utf8_split_across_chunks_and_replaces_invalid_bytes() {
        check("{\"t\":\"😄\"}\n".as_bytes(), &[("{\"t\":\"😄\"}", 0)], false);
        check(b"{\"t\":\"\xFF\"}\n", &[("{\"t\":\"\u{FFFD}\"}", 0)], false);
    }

    #[test]
    fn refuses_a_line_over_the_limit_at_the_same_offset_whatever_the_split() {
        let body = b"{}\r\n12345\r\n1234567\n";
        for size in 1..=body.len() {
            let mut parser = NdjsonParser::new(5);
            let chunks: Vec<&[u8]> = body.chunks(size).collect();
            let err = lines(&mut parser, &chunks).expect_err("too long");
            assert_eq!(err.kind, crate::ErrorKind::Limit { name: "max_line_size", limit: 5 });
            assert_eq!(err.offset, Some(11 + 5), "chunks of {size}");
        }
        // Exactly at the limit, with or without CRLF, is fine.
        check(b"12345\r\n12345", &[("12345", 0), ("12345", 7)], true);
    }

    /// The lines a body holds, by the plainest reading of the rules.
    fn reference(body: &[u8]) -> Vec<(String, u64)> {
        let start = if body.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let mut offset = start;
        let mut out = Vec::new();
        for line in body.get(start..).unwrap_or_default().split(|&b| b == b'\n') {
            let text = line.strip_suffix(b"\r").unwrap_or(line);
            if !text.iter().all(|b| b" \t\r".contains(b)) {
                out.push((String::from_utf8_lossy(text).into_owned(), offset as u64));
            }
            offset += line.len() + 1;
        }
        out
    }

    #[test]
    fn random_streams_match_the_reference_and_every_split() {
        let pieces: [&[u8]; 14] = [
            b"{}",
            b"{\"a\":1}",
            b"\n",
            b"\r\n",
            b"\r",
            b" ",
            b"\t",
            b"\xEF\xBB\xBF",
            b"\xEF",
            b"\xFF",
            b"\xF0\x9F\x98\x84",
            b"\xF0\x9F",
            b"x",
            b"\n\n",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n as u64).expect("below n")
        };
        for _ in 0..2000 {
            let body: Vec<u8> = (0..next(30)).flat_map(|_| pieces[next(pieces.len())].iter().copied()).collect();
            let (whole, _) = lines(&mut NdjsonParser::default(), &[&body]).expect("ok");
            assert_eq!(whole, reference(&body), "{:?}", String::from_utf8_lossy(&body));
            let mut chunks = Vec::new();
            let mut rest = &body[..];
            while !rest.is_empty() {
                let (chunk, tail) = rest.split_at((1 + next(5)).min(rest.len()));
                chunks.push(chunk);
                rest = tail;
            }
            assert_eq!(lines(&mut NdjsonParser::default(), &chunks).expect("ok").0, whole, "{chunks:?}");
        }
    }

    #[test]
    fn passes_on_callback_errors() {
        let mut parser = NdjsonParser::default();
        let result = parser.feed(b"{}\n", |_| Err(Error::json("stop", None)));
        assert!(result.is_err());
    }

    #[test]
    fn restarts_offsets_after_finish() {
        let mut parser = NdjsonParser::default();
        let (first, _) = lines(&mut parser, &[b"{}\n{}\n"]).expect("ok");
        let (second, _) = lines(&mut parser, &[b"\xEF\xBB\xBF{}\n"]).expect("ok");
        assert_eq!(first, vec![("{}".to_owned(), 0), ("{}".to_owned(), 3)]);
        assert_eq!(second, vec![("{}".to_owned(), 3)]);
        assert_eq!(parser.offset(), 0);
    }
}
