//! Incremental framing of `text/event-stream` bodies, exactly as WHATWG HTML "Parsing an event
//! stream" describes it (<https://html.spec.whatwg.org/multipage/server-sent-events.html>, §9.2.5-9.2.6;
//! summarized in `docs/wire.md` §1).
//!
//! Bytes arrive as chunks split anywhere; events leave through a callback that borrows the
//! parser's buffers, so a steady stream allocates nothing per event. The usual event, a single
//! `data:` line that lies inside one chunk, is not even copied: its `data` borrows the chunk.
//! A long `data:` line that arrives in many chunks is held once: the line buffer becomes the
//! data buffer rather than being copied into it.
//!
//! The rules, in the order the bytes meet them:
//! - One UTF-8 BOM is dropped at the very start of the stream, even when it is split across
//!   chunks. Anywhere else it is an ordinary character, which spoils the field name it precedes.
//! - Lines end at CRLF, LF or a lone CR. A CR that ends a chunk ends its line at once; a LF that
//!   then starts the next chunk is skipped, so a CRLF split across chunks is one terminator.
//! - Each complete line is decoded on its own, invalid UTF-8 becoming U+FFFD. A character split
//!   across chunks is whole again once its line is complete.
//! - A line starting with `:` is a comment (counted by [`SseParser::comments_seen`]). Otherwise
//!   the field name is the text before the first `:` and the value the text after it, less one
//!   leading space. `event`, `data`, `id` and `retry` are the only fields (case-sensitive).
//! - A blank line dispatches the block: an event if its data buffer is not empty.
//! - At the end of the stream an unfinished block is discarded, as the spec says;
//!   [`SseParser::finish`] reports what was lost so that a caller can call the stream truncated.
//!
//! Offsets count the bytes of the whole stream from 0, a leading BOM included.
//! [`SseEvent::offset`] is the offset of the first byte of the event's block: the first line
//! after the blank line that ended the previous block, whatever that line is (a comment or an
//! unknown field counts). [`SseEvent::data_offset`] is that of the first byte of the first
//! `data` value: for a one-line event whose data is valid UTF-8, byte `i` of `data` is byte
//! `data_offset + i` of the stream.
//!
//! Memory stays bounded: a line longer than [`SseLimits::max_line_size`] or event data longer
//! than [`SseLimits::max_event_size`] is an error, found before the buffer grows past the limit.
//! After an error, end the stream with [`SseParser::finish`] (which also readies the parser for
//! a new stream); events fed in between are unspecified, though nothing panics.

use std::borrow::Cow;
use std::str;

use memchr::{memchr, memchr2};

use crate::error::Error;

/// The default of every framing limit: 16 MiB.
pub const DEFAULT_LIMIT: usize = 16 * 1024 * 1024;

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Size limits of one stream, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseLimits {
    /// Longest line, not counting its terminator. The error's offset is that of the first byte
    /// past the limit.
    pub max_line_size: usize,
    /// Longest event data: the decoded UTF-8 of the `data` values joined by LF, as dispatched.
    /// The error's offset is that of the value of the `data` line that went past the limit.
    pub max_event_size: usize,
}

impl Default for SseLimits {
    fn default() -> Self {
        Self { max_line_size: DEFAULT_LIMIT, max_event_size: DEFAULT_LIMIT }
    }
}

/// A dispatched event. It borrows the parser or the chunk being fed: copy what you keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event type: the block's last `event` value, or `"message"` if that is empty.
    pub event: &'a str,
    /// The block's `data` values joined by LF.
    pub data: &'a str,
    /// The last event ID, which persists from event to event until an `id` field changes it.
    pub id: &'a str,
    /// The last valid `retry` of this block, in milliseconds.
    pub retry: Option<u64>,
    /// Stream offset of the first byte of the block.
    pub offset: u64,
    /// Stream offset of the first byte of the first `data` value.
    pub data_offset: u64,
}

/// What was left when the stream ended, as [`SseParser::finish`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pending {
    /// The stream did not end with a line terminator: its last line was cut.
    pub partial_line: bool,
    /// The offset of a block that had data but no blank line after it: an event that was
    /// never dispatched.
    pub undispatched: Option<u64>,
}

impl Pending {
    /// The stream ended cleanly: on a line terminator, with no event left undispatched.
    pub fn is_clean(&self) -> bool {
        !self.partial_line && self.undispatched.is_none()
    }
}

/// An incremental SSE parser for one stream at a time.
#[derive(Debug)]
pub struct SseParser {
    lines: Lines,
    block: Block,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new(SseLimits::default())
    }
}

impl SseParser {
    pub fn new(limits: SseLimits) -> Self {
        Self { lines: Lines::new(limits.max_line_size), block: Block::new(limits.max_event_size) }
    }

    /// Parse the next bytes of the stream, calling `on_event` for each event they complete.
    ///
    /// Stops at the first error: a limit exceeded ([`ErrorKind::Limit`](crate::ErrorKind::Limit),
    /// named `max_line_size` or `max_event_size`) or an error returned by `on_event`.
    pub fn feed<E: From<Error>>(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Self { lines, block } = self;
        // A data value still in `chunk`: the whole data buffer, not yet copied (see `Block::data`).
        let mut held = None;
        let result = lines.split(chunk, |line, offset| block.line(line, offset, &mut held, &mut on_event));
        if let Some(text) = held {
            block.push_data(text);
        }
        result
    }

    /// End the stream. As the spec says, an unfinished block is discarded: no event, and an `id`
    /// it held never becomes the last event ID. The returned [`Pending`] says what was lost.
    ///
    /// The parser is then ready for a new stream (a reconnection): offsets restart at 0 and a
    /// BOM is dropped again, while the last event ID, the reconnection time and the comment
    /// count carry over.
    pub fn finish(&mut self) -> Pending {
        let (partial, start) = self.lines.finish();
        let has_data = !self.block.data.is_empty() || (!partial.is_empty() && split_field(&partial).0 == b"data");
        let block_start = self.block.start.or(start);
        let undispatched = if has_data { block_start } else { None };
        self.block.end_stream();
        Pending { partial_line: !partial.is_empty(), undispatched }
    }

    /// The last event ID as of the last blank line (what a reconnection sends as `Last-Event-ID`).
    pub fn last_event_id(&self) -> &str {
        &self.block.last_event_id
    }

    /// The last valid `retry` value seen, in milliseconds.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.block.reconnection_time
    }

    /// Comment lines seen (keep-alives, such as `: OPENROUTER PROCESSING`).
    pub fn comments_seen(&self) -> u64 {
        self.block.comments
    }

    /// Bytes of the current stream fed so far.
    pub fn offset(&self) -> u64 {
        self.lines.consumed
    }
}

/// Drops one UTF-8 BOM at the very start of a stream, even when it is split across chunks.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bom {
    /// Bytes of the BOM matched so far, held back until the match is decided.
    matched: usize,
    /// The start of the stream is past: no BOM any more.
    done: bool,
}

impl Bom {
    /// Look for the BOM at the start of `chunk`. Returns the length of the BOM bytes found in
    /// `chunk` (to skip), and the bytes held back from earlier chunks that turned out not to be a
    /// BOM: they are content, which comes before the rest of `chunk`.
    pub(crate) fn skip(&mut self, chunk: &[u8]) -> (usize, &'static [u8]) {
        if self.done || chunk.is_empty() {
            return (0, &[]);
        }
        let wanted = BOM.get(self.matched..).unwrap_or_default();
        let same = wanted.iter().zip(chunk).take_while(|(a, b)| a == b).count();
        if same == wanted.len() {
            self.done = true;
            (same, &[])
        } else if same == chunk.len() {
            self.matched += same;
            (same, &[])
        } else {
            self.done = true;
            (0, BOM.get(..self.matched).unwrap_or_default())
        }
    }

    /// End the stream: the bytes still held back (a stream shorter than a BOM) are content.
    pub(crate) fn finish(&mut self) -> &'static [u8] {
        let held = if self.done { &[] } else { BOM.get(..self.matched).unwrap_or_default() };
        *self = Self::default();
        held
    }
}

/// A complete line: inside the chunk being fed, or carried over from earlier chunks (the
/// splitter's buffer, which the interpreter may take instead of copying it: `Block::take_data`).
#[derive(Debug)]
enum Line<'c, 'p> {
    InChunk(&'c [u8]),
    Carried(&'p mut Vec<u8>),
}

/// Splits a stream into lines (CRLF, LF, lone CR).
#[derive(Debug)]
struct Lines {
    bom: Bom,
    /// The start of a line whose end has not arrived yet.
    pending: Vec<u8>,
    /// Stream offset of `pending`'s first byte.
    pending_start: u64,
    /// Stream bytes fed before the current chunk.
    consumed: u64,
    /// The last chunk ended with a CR: a LF starting the next one completes that CRLF.
    skip_lf: bool,
    max_line_size: usize,
}

impl Lines {
    fn new(max_line_size: usize) -> Self {
        Self { bom: Bom::default(), pending: Vec::new(), pending_start: 0, consumed: 0, skip_lf: false, max_line_size }
    }

    /// Call `on_line` with each line that `chunk` completes and the stream offset of its start.
    fn split<'c, E: From<Error>>(
        &mut self,
        chunk: &'c [u8],
        mut on_line: impl FnMut(Line<'c, '_>, u64) -> Result<(), E>,
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
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        while let Some(end) = memchr2(b'\n', b'\r', rest) {
            let (line, terminator) = rest.split_at(end);
            if self.pending.is_empty() {
                let start = at(rest);
                if line.len() > self.max_line_size {
                    return Err(self.too_long(start).into());
                }
                on_line(Line::InChunk(line), start)?;
            } else {
                self.carry(line)?;
                let result = on_line(Line::Carried(&mut self.pending), self.pending_start);
                self.pending.clear();
                result?;
            }
            rest = match terminator {
                [b'\r'] => {
                    self.skip_lf = true;
                    &[]
                }
                [b'\r', b'\n', after @ ..] | [_, after @ ..] => after,
                [] => &[],
            };
        }
        if !rest.is_empty() {
            if self.pending.is_empty() {
                self.pending_start = at(rest);
            }
            self.carry(rest)?;
        }
        Ok(())
    }

    /// Add to the unfinished line, within the line limit.
    fn carry(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.pending.len() + bytes.len() > self.max_line_size {
            return Err(self.too_long(self.pending_start));
        }
        self.pending.extend_from_slice(bytes);
        Ok(())
    }

    /// The error of a line starting at `start` that goes past the limit.
    fn too_long(&self, start: u64) -> Error {
        Error::limit("max_line_size", self.max_line_size, start + self.max_line_size as u64)
    }

    /// End the stream: the unfinished line and its offset; the splitter is ready for a new stream.
    fn finish(&mut self) -> (Vec<u8>, Option<u64>) {
        let held = self.bom.finish();
        if !held.is_empty() {
            self.pending_start = 0;
            self.pending.extend_from_slice(held);
        }
        let start = (!self.pending.is_empty()).then_some(self.pending_start);
        let partial = std::mem::take(&mut self.pending);
        *self = Self::new(self.max_line_size);
        (partial, start)
    }
}

/// The field interpreter: the buffers of the block being read, and what outlives blocks.
#[derive(Debug)]
struct Block {
    /// The data buffer: each `data` value followed by LF. Empty while the only value is held
    /// in the chunk (`held` in [`SseParser::feed`]).
    data: String,
    /// The event type buffer.
    event: String,
    /// The last event ID buffer (set by `id` fields).
    id: String,
    /// The last event ID string (set from the buffer at each blank line).
    last_event_id: String,
    /// The last valid `retry` of this block.
    retry: Option<u64>,
    reconnection_time: Option<u64>,
    /// Stream offset of this block's first line.
    start: Option<u64>,
    /// Stream offset of this block's first `data` value.
    data_start: u64,
    comments: u64,
    max_event_size: usize,
}

impl Block {
    fn new(max_event_size: usize) -> Self {
        Self {
            data: String::new(),
            event: String::new(),
            id: String::new(),
            last_event_id: String::new(),
            retry: None,
            reconnection_time: None,
            start: None,
            data_start: 0,
            comments: 0,
            max_event_size,
        }
    }

    /// Interpret one line that starts at stream offset `offset`. `held` is a data value that lies
    /// in the current chunk and is the whole data buffer so far; it is copied only if the block
    /// needs more than that one value (or if the chunk ends first).
    fn line<'c, E: From<Error>>(
        &mut self,
        mut line: Line<'c, '_>,
        offset: u64,
        held: &mut Option<&'c str>,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if let (Line::Carried(buffer), None, true) = (&mut line, &held, self.data.is_empty()) {
            match self.take_data(buffer, offset) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(err) => return Err(err.into()),
            }
        }
        let line_len = match &line {
            Line::InChunk(bytes) => bytes.len(),
            Line::Carried(bytes) => bytes.len(),
        };
        if line_len == 0 {
            return self.dispatch(held, on_event);
        }
        // The value keeps the chunk's lifetime when the line is in the chunk: it can be held.
        let (name, value, value_in_chunk) = match line {
            Line::InChunk(bytes) => {
                let (name, value) = split_field(bytes);
                (name, value, Some(value))
            }
            Line::Carried(bytes) => {
                let (name, value) = split_field(bytes);
                (name, value, None)
            }
        };
        self.start.get_or_insert(offset);
        match name {
            b"" => self.comments += 1,
            b"data" => {
                let value_offset = offset + (line_len - value.len()) as u64;
                if let Some(text) = held.take() {
                    self.push_data(text);
                } else if self.data.is_empty() {
                    self.data_start = value_offset;
                    if let Some(text) = value_in_chunk.and_then(|v| str::from_utf8(v).ok()) {
                        if text.len() > self.max_event_size {
                            return Err(Error::limit("max_event_size", self.max_event_size, value_offset).into());
                        }
                        *held = Some(text);
                        return Ok(());
                    }
                }
                let text = decode(value);
                // The dispatched data is the buffer less its final LF: the buffer, plus this text.
                if self.data.len() + text.len() > self.max_event_size {
                    return Err(Error::limit("max_event_size", self.max_event_size, value_offset).into());
                }
                self.push_data(&text);
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&decode(value));
            }
            b"id" if memchr(0, value).is_none() => {
                self.id.clear();
                self.id.push_str(&decode(value));
            }
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                    self.reconnection_time = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A carried line that is the block's first `data` value (valid UTF-8) becomes the data
    /// buffer: its field name is cut off and the splitter's buffer taken, not copied, so that an
    /// event of megabytes fed in small chunks is held once. Returns whether the line was taken.
    fn take_data(&mut self, buffer: &mut Vec<u8>, offset: u64) -> Result<bool, Error> {
        let (name, value) = split_field(buffer);
        if name != b"data" || str::from_utf8(value).is_err() {
            return Ok(false);
        }
        let start = buffer.len() - value.len();
        let value_offset = offset + start as u64;
        if value.len() > self.max_event_size {
            return Err(Error::limit("max_event_size", self.max_event_size, value_offset));
        }
        self.start.get_or_insert(offset);
        self.data_start = value_offset;
        let mut bytes = std::mem::take(buffer);
        bytes.drain(..start);
        self.data = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(), // checked above
        };
        self.data.push('\n');
        Ok(true)
    }

    /// Append a data value and its LF to the data buffer.
    fn push_data(&mut self, text: &str) {
        self.data.push_str(text);
        self.data.push('\n');
    }

    /// A blank line: dispatch the block if its data buffer is not empty, then start a new block.
    fn dispatch<E>(
        &mut self,
        held: &mut Option<&str>,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.last_event_id.clone_from(&self.id);
        let start = self.start.take();
        let retry = self.retry.take();
        let Some(data) = held.take().or_else(|| self.data.strip_suffix('\n')) else {
            self.event.clear();
            return Ok(());
        };
        let event = if self.event.is_empty() { "message" } else { &self.event };
        let result = on_event(SseEvent {
            event,
            data,
            id: &self.last_event_id,
            retry,
            offset: start.unwrap_or(self.data_start),
            data_offset: self.data_start,
        });
        self.data.clear();
        self.event.clear();
        result
    }

    /// End the stream: drop the unfinished block, and the `id` it may have set.
    fn end_stream(&mut self) {
        self.data.clear();
        self.event.clear();
        self.id.clone_from(&self.last_event_id);
        self.retry = None;
        self.start = None;
    }
}

/// Split a non-empty line into its field name and value: the name is the text before the first
/// colon (empty for a comment) and the value the text after it, less one leading space; without
/// a colon the whole line is the name and the value is empty.
fn split_field(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr(b':', line) {
        Some(colon) => {
            let (name, value) = line.split_at(colon);
            let value = value.get(1..).unwrap_or_default();
            (name, value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

/// UTF-8 decoding, invalid sequences replaced by U+FFFD. `from_utf8` first: it is much faster
/// than `from_utf8_lossy` on valid input, which is nearly all input.
pub(crate) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A `retry` value: ASCII digits only, base ten (saturating: the integer is unbounded in the spec).
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |ms, digit| ms.saturating_mul(10).saturating_add(u64::from(digit - b'0'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `chunks` complete, with their offsets, and what `finish` leaves.
    fn split_lines(chunks: &[&[u8]]) -> (Vec<(Vec<u8>, u64)>, Vec<u8>) {
        let mut lines = Lines::new(DEFAULT_LIMIT);
        let mut out = Vec::new();
        for chunk in chunks {
            let result: Result<(), Error> = lines.split(chunk, |line, offset| {
                let bytes: &[u8] = match &line {
                    Line::InChunk(bytes) => bytes,
                    Line::Carried(bytes) => bytes,
                };
                out.push((bytes.to_vec(), offset));
                Ok(())
            });
            result.expect("within limits");
        }
        (out, lines.finish().0)
    }

    fn empty_lines(n: usize) -> Vec<(Vec<u8>, u64)> {
        (0..n as u64).map(|i| (Vec::new(), i)).collect()
    }

    #[test]
    fn lines_end_at_crlf_lf_or_cr_as_httpx_sse_splits_them() {
        // httpx-sse tests/test_decoders.py: "\n\r\n\r" is three empty lines.
        let (lines, rest) = split_lines(&[b"\n\r\n\r"]);
        assert_eq!(lines, vec![(vec![], 0), (vec![], 1), (vec![], 3)]);
        assert!(rest.is_empty());
        // ["line1\r", "\nline2", "\n"] is two lines, and ["\r", "\r"] two empty ones.
        let (lines, _) = split_lines(&[b"line1\r", b"\nline2", b"\n"]);
        assert_eq!(lines, vec![(b"line1".to_vec(), 0), (b"line2".to_vec(), 7)]);
        assert_eq!(split_lines(&[b"\r", b"\r"]).0, empty_lines(2));
        // A CR at the end of a chunk ends its line at once, and only one LF is skipped after it.
        let (lines, _) = split_lines(&[b"a\r", b"\n\nb\n"]);
        assert_eq!(lines, vec![(b"a".to_vec(), 0), (vec![], 3), (b"b".to_vec(), 4)]);
        // The flag survives empty chunks, and is cleared by a chunk that does not start with LF.
        let (lines, _) = split_lines(&[b"a\r", b"", b"\n", b"\n"]);
        assert_eq!(lines, vec![(b"a".to_vec(), 0), (vec![], 3)]);
        let (lines, _) = split_lines(&[b"a\r", b"b", b"\n"]);
        assert_eq!(lines, vec![(b"a".to_vec(), 0), (b"b".to_vec(), 2)]);
    }

    #[test]
    fn nothing_else_ends_a_line() {
        let text = "a\u{2028}b\u{2029}c\u{85}d\u{B}e\u{C}f\n";
        let (lines, _) = split_lines(&[text.as_bytes()]);
        assert_eq!(lines.len(), 1);
    }

    #[test]
    fn an_unfinished_line_is_left_for_finish() {
        let (lines, rest) = split_lines(&[b"a\nb", b"c"]);
        assert_eq!(lines, vec![(b"a".to_vec(), 0)]);
        assert_eq!(rest, b"bc");
    }

    #[test]
    fn the_bom_is_dropped_once_even_split() {
        for split in 0..=3 {
            let (head, tail) = b"\xEF\xBB\xBFx\n".split_at(split);
            assert_eq!(split_lines(&[head, tail]).0, vec![(b"x".to_vec(), 3)], "split at {split}");
        }
        assert_eq!(split_lines(&[b"\xEF", b"\xBB", b"\xBF", b"\xEF\xBB\xBF\n"]).0, vec![(BOM.to_vec(), 3)]);
        // A BOM prefix that goes wrong is content, at the start of the stream.
        assert_eq!(split_lines(&[b"\xEF\xBB", b"x\n"]).0, vec![(b"\xEF\xBBx".to_vec(), 0)]);
        assert_eq!(split_lines(&[b"\xEF", b"\n"]).0, vec![(b"\xEF".to_vec(), 0)]);
        assert_eq!(split_lines(&[b"\xEF", b"\xBB"]), (vec![], b"\xEF\xBB".to_vec()));
    }

    #[test]
    fn fields_split_at_the_first_colon_less_one_space() {
        assert_eq!(split_field(b"data:  x"), (&b"data"[..], &b" x"[..]));
        assert_eq!(split_field(b"data:\tx"), (&b"data"[..], &b"\tx"[..]));
        assert_eq!(split_field(b"data: a:b"), (&b"data"[..], &b"a:b"[..]));
        assert_eq!(split_field(b"data"), (&b"data"[..], &b""[..]));
        assert_eq!(split_field(b": comment"), (&b""[..], &b"comment"[..]));
        assert_eq!(split_field(b"data:"), (&b"data"[..], &b""[..]));
    }

    #[test]
    fn retry_takes_ascii_digits_only() {
        assert_eq!(parse_retry(b"02000"), Some(2000));
        assert_eq!(parse_retry(b"0"), Some(0));
        for bogus in [&b""[..], b"1000x", b" 10", b"-5", b"+5", b"1_000", b"\xD9\xA1"] {
            assert_eq!(parse_retry(bogus), None, "{bogus:?}");
        }
        assert_eq!(parse_retry(b"99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn a_one_line_event_borrows_the_chunk() {
        let chunk = b"data: {\"a\":1}\n\n";
        let mut parser = SseParser::default();
        let mut seen = 0;
        parser
            .feed(chunk, |event| {
                assert_eq!(event.data, "{\"a\":1}");
                assert!(chunk.as_ptr_range().contains(&event.data.as_ptr()), "data was copied");
                seen += 1;
                Ok::<_, Error>(())
            })
            .expect("ok");
        assert_eq!(seen, 1);
        assert!(parser.block.data.capacity() == 0, "no data buffer was needed");
    }

    #[test]
    fn a_long_data_line_becomes_the_data_buffer() {
        let text = "x".repeat(10_000);
        let body = format!("data: {text}\ndata: y\n\n");
        let (first, rest) = body.as_bytes().split_at(6 + text.len() + 1);
        let mut parser = SseParser::default();
        let mut got = Vec::new();
        let mut feed = |parser: &mut SseParser, bytes: &[u8]| {
            for chunk in bytes.chunks(1024) {
                parser
                    .feed(chunk, |event| {
                        got.push(event.data.to_owned());
                        Ok::<_, Error>(())
                    })
                    .expect("ok");
            }
        };
        feed(&mut parser, first);
        assert_eq!(parser.block.data.len(), text.len() + 1, "the value and its LF");
        assert_eq!(parser.lines.pending.capacity(), 0, "the line buffer was taken, not copied");
        feed(&mut parser, rest);
        assert_eq!(got, [format!("{text}\ny")]);
    }

    #[test]
    fn a_held_value_is_copied_when_the_chunk_ends_first() {
        let mut parser = SseParser::default();
        let mut got = Vec::new();
        for chunk in [&b"data: a\n"[..], b"data: b\n", b"\n"] {
            parser
                .feed(chunk, |event| {
                    got.push(event.data.to_owned());
                    Ok::<_, Error>(())
                })
                .expect("ok");
        }
        assert_eq!(got, vec!["a\nb"]);
    }
}
