//! Incremental JSON for tool-call arguments streamed in fragments, and a strict validator.
//!
//! The official SDKs re-parse the whole accumulated buffer in partial mode on every fragment,
//! O(n²) over a call. [`PartialJson`] keeps its tokenizer state between fragments instead, so a
//! fragment costs O(its own bytes). While it reads, it keeps the *committed text* (the input
//! minus the whitespace between tokens, verbatim otherwise) and the stack of open containers, so
//! a snapshot is `committed[..snap_len]` + maybe a `"` + the closers: a copy, no re-tokenizing.
//!
//! Snapshot rules, after jiter's `PartialMode::TrailingStrings` except for numbers:
//! - an unfinished string value is kept up to its last complete character (never inside an
//!   escape, between the halves of a surrogate pair, or inside a UTF-8 sequence) and closed;
//! - an unfinished number is cut to its longest valid prefix: `12` stays, `12.` gives `12`,
//!   `1.5e+` gives `1.5`, a lone `-` gives nothing. (jiter drops `12.` and its key; cutting it
//!   keeps the key, so snapshots only grow.) A number is final only once a delimiter follows it:
//!   until then its text in a snapshot is a prefix of its final text (`1` → `12` → `12.5`);
//! - an unfinished literal (`tr`) is dropped, and so is an object key without a value yet, with
//!   its comma and colon; unfinished containers are closed.
//!
//! `snap_len` never decreases, so the text of each snapshot minus its closing tail (`"`,
//! closers) is a prefix of the next one's: strings only get longer, containers only gain items.
//!
//! For a stream's events, [`PartialJson::mark_json`] writes each snapshot as a *mark*: only the
//! committed text added since the previous mark. Python rebuilds a snapshot from the marks when
//! (and only if) someone reads it, so a delta nobody reads costs O(its own bytes).
//!
//! Everything is iterative with an explicit stack: depth is a typed error, never a stack overflow.

use crate::error::{Error, ErrorKind, JsonSyntax};
use crate::limits::{DEFAULT_MAX_DEPTH, DEFAULT_SIZE_LIMIT};

/// Bounds on one JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// Deepest nesting of arrays and objects (`[[1]]` is 2 deep; a scalar is 0 deep).
    pub max_depth: usize,
    /// Most bytes of JSON text accepted.
    pub max_size: usize,
}

impl Default for JsonLimits {
    /// 200 deep, 16 MiB: the stream defaults of [`crate::limits`].
    fn default() -> Self {
        Self { max_depth: DEFAULT_MAX_DEPTH, max_size: DEFAULT_SIZE_LIMIT }
    }
}

/// An incremental parser of one JSON value fed in fragments (see the module docs).
///
/// After an error it stays failed: `feed` returns the same error again, the snapshot stays
/// what it was before the offending byte, and the caller keeps the raw text.
#[derive(Debug, Clone)]
pub struct PartialJson(Parser<true>, Marked);

/// How much of the committed text the marks written so far carried (`None`: no mark yet).
type Marked = Option<usize>;

impl Default for PartialJson {
    fn default() -> Self {
        Self::new(JsonLimits::default())
    }
}

impl PartialJson {
    pub fn new(limits: JsonLimits) -> Self {
        Self(Parser::new(limits), None)
    }

    /// Reads the next fragment (only its bytes: nothing read before is scanned again).
    /// Errors carry the byte offset in the whole text fed so far.
    pub fn feed(&mut self, fragment: &str) -> Result<(), Error> {
        self.0.feed(fragment.as_bytes(), true)
    }

    /// Like [`feed`](Self::feed) for raw bytes, which may split UTF-8 characters anywhere;
    /// invalid UTF-8 inside a string is an error.
    pub fn feed_bytes(&mut self, fragment: &[u8]) -> Result<(), Error> {
        self.0.feed(fragment, false)
    }

    /// Exactly one complete value has been read, and the input may end here (trailing
    /// whitespace allowed). A top-level number like `12` counts, though more digits could come.
    pub fn is_complete(&self) -> bool {
        self.0.is_complete()
    }

    /// Nothing but whitespace was fed, and no error: the call has no arguments.
    pub fn is_empty(&self) -> bool {
        self.0.failed.is_none() && self.0.state == State::Value && self.0.stack.is_empty()
    }

    /// Ends the input: `Ok` if it holds one complete value, else the error (the stored one, or
    /// an unexpected end of input at the end).
    pub fn finish(&self) -> Result<(), Error> {
        self.0.finish()
    }

    /// The error that failed the parser, if any.
    pub fn error(&self) -> Option<&Error> {
        self.0.failed.as_ref()
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> usize {
        self.0.pos
    }

    /// Appends to `out` the value read so far as valid JSON text (see the module docs), in
    /// O(its length). Returns `false`, appending nothing, when there is no value yet: empty or
    /// whitespace-only input, or only the start of a number or literal at the top level (`-`, `tr`).
    pub fn snapshot_json(&self, out: &mut Vec<u8>) -> bool {
        let p = &self.0;
        let Some(prefix) = p.text.get(..p.snap_len).filter(|t| !t.is_empty()) else {
            return false;
        };
        out.reserve(prefix.len() + 1 + p.stack.len());
        out.extend_from_slice(prefix);
        if p.snap_quote {
            out.push(b'"');
        }
        out.extend(p.stack.iter().rev());
        true
    }

    /// Appends to `out` the snapshot as a *mark*: the committed text from the end of the
    /// previous mark to the end of this snapshot, as a JSON string; the parser's first mark is
    /// that string in an array (`["{\"a"]`, then `"bc"`), so a reader knows when a call's text
    /// starts over (arguments replaced). The texts of marks `1..=k` joined are the snapshot of
    /// mark `k` ([`snapshot_json`](Self::snapshot_json) at that time) without its closing tail,
    /// which a reader infers: an open string (it starts with `"`), the open containers. O(new
    /// text) per mark instead of O(snapshot). Returns `false`, appending nothing, when there is no
    /// value yet.
    pub fn mark_json(&mut self, out: &mut Vec<u8>) -> bool {
        let p = &self.0;
        if p.snap_len == 0 {
            return false;
        }
        let first = self.1.is_none();
        out.extend_from_slice(if first { b"[\"" } else { b"\"" });
        // committed text holds no control character (JSON has none raw): quotes and backslashes
        // are all the writer escapes here, found a block at a time
        crate::json_out::write_str_contents(out, &p.text[self.1.unwrap_or(0)..p.snap_len]);
        out.extend_from_slice(if first { b"\"]" } else { b"\"" });
        self.1 = Some(p.snap_len);
        true
    }
}

/// Strict RFC 8259 validation of a complete document: one value, whitespace around it.
/// Lone surrogates (`"\ud800"`) are refused, as `serde_json` does. The error has the byte
/// offset of the first problem.
pub fn validate(json: &str, max_depth: usize) -> Result<(), Error> {
    validate_input(json.as_bytes(), max_depth, true)
}

/// Whether `json` may hold a lone surrogate escape: it has a `\uD...` escape (the only form one
/// takes). A cheap scan to run before [`validate_bytes`] where `serde_json` keeps text unchecked.
pub(crate) fn may_hold_surrogate(json: &[u8]) -> bool {
    memchr::memmem::find_iter(json, b"\\u").any(|at| matches!(json.get(at + 2), Some(b'd' | b'D')))
}

/// [`validate`] for bytes, which must also be UTF-8.
pub fn validate_bytes(json: &[u8], max_depth: usize) -> Result<(), Error> {
    validate_input(json, max_depth, false)
}

fn validate_input(json: &[u8], max_depth: usize, trusted_utf8: bool) -> Result<(), Error> {
    // Same state machine, without keeping the committed text.
    let mut parser = Parser::<false>::new(JsonLimits { max_depth, max_size: usize::MAX });
    parser.feed(json, trusted_utf8)?;
    parser.finish()
}

/// Where the parser is in the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must come: at the start, after `:`, after `,` in an array.
    Value,
    /// After `[`: a value or `]`.
    ArrayFirst,
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value: `,` or a closer, or only whitespace at the top level.
    AfterValue,
    /// Inside a string, between characters; `key` for an object key (never shown unfinished).
    Str {
        key: bool,
    },
    /// Inside a string, inside an escape or a raw UTF-8 character.
    StrEsc {
        key: bool,
        esc: Esc,
    },
    Num(Num),
    /// Inside `true`, `false` or `null`: `seen` bytes of `word` read.
    Lit {
        word: &'static [u8],
        seen: usize,
    },
}

/// Where a string is inside one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Esc {
    /// After `\`.
    Backslash,
    /// In `\uXXXX`, `digits` hex digits read into `code`; `low` when it must be the low half
    /// of a surrogate pair.
    Hex {
        digits: u8,
        code: u32,
        low: bool,
    },
    /// After a high surrogate escape, whose low half must follow: `\`, then `u`.
    LowBackslash,
    LowU,
    /// Inside a raw multi-byte UTF-8 character (`feed_bytes` only): `need` continuation
    /// bytes to come, the next one in `lo..=hi`.
    Utf8 {
        need: u8,
        lo: u8,
        hi: u8,
    },
}

/// Where a number is, after RFC 8259: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

impl Num {
    /// The text read so far is a whole number by itself.
    fn is_valid(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpDigits)
    }

    /// The state after `b`, or `None` if `b` is not part of this number.
    fn step(self, b: u8) -> Option<Num> {
        Some(match (self, b) {
            (Num::Minus, b'0') => Num::Zero,
            (Num::Minus | Num::Int, b'0'..=b'9') => Num::Int,
            (Num::Zero | Num::Int, b'.') => Num::Dot,
            (Num::Dot | Num::Frac, b'0'..=b'9') => Num::Frac,
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::Exp,
            (Num::Exp, b'+' | b'-') => Num::ExpSign,
            (Num::Exp | Num::ExpSign | Num::ExpDigits, b'0'..=b'9') => Num::ExpDigits,
            _ => return None,
        })
    }
}

/// The bytes that end a run of unchecked string text: control characters, `"` (0x22), `\`
/// (0x5C), and non-ASCII (checked as UTF-8 one character at a time). Trusted text stops at the
/// same bytes less non-ASCII: `json_out::next_escape`.
const STOP_CHECKED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b < 0x20 || b == 0x22 || b == 0x5C || b >= 0x80;
        b += 1;
    }
    table
};

/// The state machine shared by [`PartialJson`] (`RECORD`: keeps the committed text for
/// snapshots) and [`validate`] (keeps nothing).
#[derive(Debug, Clone)]
struct Parser<const RECORD: bool> {
    limits: JsonLimits,
    /// Bytes consumed so far: the offset of the next byte.
    pos: usize,
    state: State,
    /// The closer of each open container, innermost last: `]` or `}`.
    stack: Vec<u8>,
    /// The committed text: everything read except whitespace between tokens.
    text: Vec<u8>,
    /// `text[..snap_len]` (plus `"` if `snap_quote`) plus the closers is valid JSON.
    snap_len: usize,
    snap_quote: bool,
    failed: Option<Error>,
}

impl<const RECORD: bool> Parser<RECORD> {
    fn new(limits: JsonLimits) -> Self {
        Self {
            limits,
            pos: 0,
            state: State::Value,
            stack: Vec::new(),
            text: Vec::new(),
            snap_len: 0,
            snap_quote: false,
            failed: None,
        }
    }

    fn feed(&mut self, bytes: &[u8], trusted_utf8: bool) -> Result<(), Error> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        // Read up to the size limit, so an earlier syntax error is still reported first.
        let room = self.limits.max_size.saturating_sub(self.pos);
        let mut end = room.min(bytes.len());
        if trusted_utf8 {
            // Trusted bytes are not checked character by character: cut between two, or the
            // snapshot would end inside one (the limit error is then at the start of the cut one).
            while end > 0 && bytes.get(end).is_some_and(|&b| b & 0xC0 == 0x80) {
                end -= 1;
            }
        }
        let (head, over) = bytes.split_at(end);
        let mut result = self.run(head, trusted_utf8);
        if result.is_ok() && !over.is_empty() {
            let kind = ErrorKind::Limit { name: "max_size", limit: self.limits.max_size };
            result = Err(Error { kind, offset: Some(self.pos) });
        }
        if let Err(err) = &result {
            self.failed = Some(err.clone());
        }
        result
    }

    fn is_complete(&self) -> bool {
        self.failed.is_none()
            && self.stack.is_empty()
            && match self.state {
                State::AfterValue => true,
                State::Num(num) => num.is_valid(),
                _ => false,
            }
    }

    fn finish(&self) -> Result<(), Error> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        if self.is_complete() { Ok(()) } else { Err(syntax(JsonSyntax::UnexpectedEof, self.pos)) }
    }

    /// Advances the state machine over `bytes`, which come right after `self.pos`.
    fn run(&mut self, bytes: &[u8], trusted_utf8: bool) -> Result<(), Error> {
        let base = self.pos;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let at = base + i;
            match self.state {
                State::Str { key } => {
                    i = self.string_run(bytes, i, key, trusted_utf8, base)?;
                    continue;
                }
                State::StrEsc { key, esc } => self.string_escape(b, key, esc, at)?,
                State::Num(num) => match num.step(b) {
                    Some(next) => {
                        self.record(b);
                        self.state = State::Num(next);
                        if next.is_valid() {
                            self.snap(false);
                        }
                    }
                    None if num.is_valid() => {
                        // The number ended: read `b` again as what follows it.
                        self.end_value();
                        continue;
                    }
                    None => return Err(syntax(JsonSyntax::InvalidNumber, at)),
                },
                State::Lit { word, seen } => {
                    if word.get(seen) != Some(&b) {
                        return Err(syntax(JsonSyntax::UnexpectedChar, at));
                    }
                    self.record(b);
                    if seen + 1 == word.len() {
                        self.end_value();
                    } else {
                        self.state = State::Lit { word, seen: seen + 1 };
                    }
                }
                _ if matches!(b, b' ' | b'\t' | b'\n' | b'\r') => {}
                State::ArrayFirst | State::ObjectFirst if b == b']' || b == b'}' => {
                    self.close(b, at)?;
                }
                State::Value | State::ArrayFirst => self.start_value(b, at)?,
                State::ObjectFirst | State::Key if b == b'"' => {
                    self.record(b);
                    self.state = State::Str { key: true };
                }
                State::Colon if b == b':' => {
                    self.record(b);
                    self.state = State::Value;
                }
                State::AfterValue => match (b, self.stack.last()) {
                    (b',', Some(&closer)) => {
                        self.record(b);
                        self.state = if closer == b']' { State::Value } else { State::Key };
                    }
                    (b']' | b'}', Some(_)) => self.close(b, at)?,
                    (_, None) => return Err(syntax(JsonSyntax::TrailingChars, at)),
                    _ => return Err(syntax(JsonSyntax::UnexpectedChar, at)),
                },
                State::ObjectFirst | State::Key | State::Colon => {
                    return Err(syntax(JsonSyntax::UnexpectedChar, at));
                }
            }
            i += 1;
        }
        self.pos = base + bytes.len();
        Ok(())
    }

    /// The first byte of a value.
    fn start_value(&mut self, b: u8, at: usize) -> Result<(), Error> {
        self.state = match b {
            b'{' | b'[' => {
                if self.stack.len() >= self.limits.max_depth {
                    let kind = ErrorKind::JsonTooDeep { max_depth: self.limits.max_depth };
                    return Err(Error { kind, offset: Some(at) });
                }
                self.stack.push(if b == b'{' { b'}' } else { b']' });
                self.record(b);
                self.snap(false);
                if b == b'{' { State::ObjectFirst } else { State::ArrayFirst }
            }
            b'"' => {
                self.record(b);
                self.snap(true);
                State::Str { key: false }
            }
            b'-' | b'0'..=b'9' => {
                self.record(b);
                let num = match b {
                    b'-' => Num::Minus,
                    b'0' => Num::Zero,
                    _ => Num::Int,
                };
                if num.is_valid() {
                    self.snap(false);
                }
                State::Num(num)
            }
            b't' | b'f' | b'n' => {
                self.record(b);
                let word: &'static [u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                State::Lit { word, seen: 1 }
            }
            _ => return Err(syntax(JsonSyntax::UnexpectedChar, at)),
        };
        Ok(())
    }

    /// `]` or `}`: must close the innermost container.
    fn close(&mut self, b: u8, at: usize) -> Result<(), Error> {
        if self.stack.last() != Some(&b) {
            return Err(syntax(JsonSyntax::UnexpectedChar, at));
        }
        self.stack.pop();
        self.record(b);
        self.end_value();
        Ok(())
    }

    /// Reads plain string characters from `bytes[start..]` in one go, then the byte that
    /// stopped the run, if any. Returns the index after what was read.
    fn string_run(
        &mut self,
        bytes: &[u8],
        start: usize,
        key: bool,
        trusted_utf8: bool,
        base: usize,
    ) -> Result<usize, Error> {
        let rest = bytes.get(start..).unwrap_or_default();
        let len = if trusted_utf8 {
            // the bytes that end a run of trusted text are the ones a writer escapes: found a
            // block at a time
            crate::json_out::next_escape(rest, 0)
        } else {
            rest.iter().position(|&b| STOP_CHECKED[usize::from(b)]).unwrap_or(rest.len())
        };
        let (run, tail) = rest.split_at(len);
        if RECORD {
            self.text.extend_from_slice(run);
        }
        if !key {
            self.snap(true);
        }
        let Some(&b) = tail.first() else {
            return Ok(start + len);
        };
        let at = base + start + len;
        let esc = match b {
            b'"' => {
                self.record(b);
                if key {
                    self.state = State::Colon;
                } else {
                    self.end_value();
                }
                return Ok(start + len + 1);
            }
            b'\\' => Esc::Backslash,
            0x80.. => match utf8_lead(b) {
                Some((need, lo, hi)) => Esc::Utf8 { need, lo, hi },
                None => return Err(syntax(JsonSyntax::InvalidUtf8, at)),
            },
            _ => return Err(syntax(JsonSyntax::ControlChar, at)),
        };
        self.record(b);
        self.state = State::StrEsc { key, esc };
        Ok(start + len + 1)
    }

    /// One byte inside an escape or a raw UTF-8 character: the character goes on, or ends.
    fn string_escape(&mut self, b: u8, key: bool, esc: Esc, at: usize) -> Result<(), Error> {
        let next = match esc {
            Esc::Backslash => match b {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => None,
                b'u' => Some(Esc::Hex { digits: 0, code: 0, low: false }),
                _ => return Err(syntax(JsonSyntax::InvalidEscape, at)),
            },
            Esc::Hex { digits, code, low } => {
                let Some(digit) = char::from(b).to_digit(16) else {
                    return Err(syntax(JsonSyntax::InvalidEscape, at));
                };
                let code = code << 4 | digit;
                // Offsets of lone surrogates point at the backslash of the escape at fault.
                match (digits, low, code) {
                    (0..=2, ..) => Some(Esc::Hex { digits: digits + 1, code, low }),
                    (_, false, 0xD800..=0xDBFF) => Some(Esc::LowBackslash),
                    (_, false, 0xDC00..=0xDFFF) => return Err(lone_surrogate(at, 5)),
                    (_, true, 0xDC00..=0xDFFF) | (_, false, _) => None,
                    (_, true, _) => return Err(lone_surrogate(at, 11)),
                }
            }
            Esc::LowBackslash if b == b'\\' => Some(Esc::LowU),
            Esc::LowU if b == b'u' => Some(Esc::Hex { digits: 0, code: 0, low: true }),
            Esc::LowBackslash => return Err(lone_surrogate(at, 6)),
            Esc::LowU => return Err(lone_surrogate(at, 7)),
            Esc::Utf8 { need, lo, hi } => {
                if !(lo..=hi).contains(&b) {
                    return Err(syntax(JsonSyntax::InvalidUtf8, at));
                }
                (need > 1).then_some(Esc::Utf8 { need: need - 1, lo: 0x80, hi: 0xBF })
            }
        };
        self.record(b);
        if let Some(esc) = next {
            self.state = State::StrEsc { key, esc };
        } else {
            // A character is complete: the snapshot may include it.
            self.state = State::Str { key };
            if !key {
                self.snap(true);
            }
        }
        Ok(())
    }

    /// A value just ended: the snapshot may include everything so far.
    fn end_value(&mut self) {
        self.state = State::AfterValue;
        self.snap(false);
    }

    /// Everything committed so far is shown in snapshots (closing a string if `quote`).
    fn snap(&mut self, quote: bool) {
        if RECORD {
            self.snap_len = self.text.len();
            self.snap_quote = quote;
        }
    }

    fn record(&mut self, b: u8) {
        if RECORD {
            self.text.push(b);
        }
    }
}

fn syntax(kind: JsonSyntax, at: usize) -> Error {
    Error { kind: ErrorKind::JsonSyntax(kind), offset: Some(at) }
}

/// A lone surrogate found at `at`, whose escape began `back` bytes earlier.
fn lone_surrogate(at: usize, back: usize) -> Error {
    syntax(JsonSyntax::LoneSurrogate, at.saturating_sub(back))
}

/// For the first byte of a multi-byte UTF-8 character: how many continuation bytes follow and
/// the range of the first one (which rules out overlong forms, surrogates and > U+10FFFF).
fn utf8_lead(b: u8) -> Option<(u8, u8, u8)> {
    match b {
        0xC2..=0xDF => Some((1, 0x80, 0xBF)),
        0xE0 => Some((2, 0xA0, 0xBF)),
        0xE1..=0xEC | 0xEE..=0xEF => Some((2, 0x80, 0xBF)),
        0xED => Some((2, 0x80, 0x9F)),
        0xF0 => Some((3, 0x90, 0xBF)),
        0xF1..=0xF3 => Some((3, 0x80, 0xBF)),
        0xF4 => Some((3, 0x80, 0x8F)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Realistic argument documents: nesting, escapes (`\u00e9`, a surrogate pair), raw
    /// multi-byte UTF-8, exponents, literals, empty containers, whitespace everywhere.
    const DOCS: &[&str] = &[
        r#"{"path": "src/main.rs", "lines": [1, 2, 30], "dry_run": false}"#,
        " { \"query\" : \"caf\\u00e9 \\ud83d\\ude00 😀 naïve — ok\", \"limit\":10 ,\n\t\"offset\" : -0.5e-3 , \
         \"opts\": { \"exact\": true, \"lang\": null, \"tags\": [ ], \"meta\": {\r\n} } } ",
        r#"{"edits":[{"old":"fn main() {\n\tprintln!(\"hi\");\n}","new":"fn main() {}\r\n","at":{"line":12,"col":0}},{"old":"\\","new":"\/","at":{"line":1E+2,"col":3.25E2}}]}"#,
        r#"[1.5e10, -12, 0, 0.001, 1e-7, 2E3, -0, true, false, null, "", [], {}, [[]], {"a":{"b":[{}]}}]"#,
        r#""a string with \"quotes\", a \\ and \u0041, then 🎉""#,
        "\n\t 42 \r\n",
        r#"{"a":"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t","b":"日本語テキスト","c":[-1.0e+2,  3 ]}"#,
    ];

    fn snapshot(p: &PartialJson) -> Option<String> {
        let mut out = Vec::new();
        p.snapshot_json(&mut out).then(|| String::from_utf8(out).unwrap_or_default())
    }

    fn parse(json: &str) -> Value {
        serde_json::from_str(json).unwrap_or_else(|err| panic!("{json:?} is not JSON: {err}"))
    }

    /// `next` extends `prev`: strings only get longer, arrays and objects keep their items
    /// (each extended) and may gain more, literals stay; a number stays a number (its text
    /// only grows, checked on the committed text).
    fn assert_grows(prev: &Value, next: &Value) {
        let ok = match (prev, next) {
            (Value::String(a), Value::String(b)) => b.starts_with(a.as_str()),
            (Value::Number(_), Value::Number(_)) => true,
            (Value::Array(a), Value::Array(b)) => {
                a.iter().zip(b).for_each(|(x, y)| assert_grows(x, y));
                a.len() <= b.len()
            }
            (Value::Object(a), Value::Object(b)) => a.iter().all(|(k, x)| {
                b.get(k).is_some_and(|y| {
                    assert_grows(x, y);
                    true
                })
            }),
            _ => prev == next,
        };
        assert!(ok, "{next} does not extend {prev}");
    }

    /// Feeds `doc` one char at a time; returns the snapshot after each byte offset that is a
    /// char boundary, checking validity and growth as it goes.
    fn char_by_char(doc: &str) -> Vec<Option<String>> {
        let mut p = PartialJson::default();
        let mut snaps = vec![None; doc.len() + 1];
        let mut prev: Option<(Value, Vec<u8>)> = None;
        for (i, c) in doc.char_indices() {
            p.feed(&doc[i..i + c.len_utf8()]).unwrap_or_else(|err| panic!("{doc:?}: {err}"));
            let snap = snapshot(&p);
            if let Some(json) = &snap {
                let value = parse(json);
                let committed = p.0.text[..p.0.snap_len].to_vec();
                if let Some((prev_value, prev_committed)) = &prev {
                    assert_grows(prev_value, &value);
                    assert!(committed.starts_with(prev_committed), "{doc:?}: committed text shrank");
                }
                prev = Some((value, committed));
            } else {
                assert!(prev.is_none(), "{doc:?}: the snapshot vanished at {i}");
            }
            snaps[i + c.len_utf8()] = snap;
        }
        assert!(p.is_complete(), "{doc:?}");
        snaps
    }

    #[test]
    fn every_split_gives_valid_growing_snapshots() {
        for doc in DOCS {
            let expected: Value = parse(doc);
            let snaps = char_by_char(doc);
            assert_eq!(snaps[doc.len()].as_deref().map(parse), Some(expected.clone()), "{doc:?}");
            let whole = snaps[doc.len()].clone();
            let boundaries: Vec<usize> = (0..=doc.len()).filter(|&i| doc.is_char_boundary(i)).collect();
            // Two fragments: the snapshot depends only on the prefix read, not on how it was cut.
            for &a in &boundaries {
                let mut p = PartialJson::default();
                p.feed(&doc[..a]).unwrap_or_else(|err| panic!("{err}"));
                assert_eq!(snapshot(&p), snaps[a], "{doc:?} cut at {a}");
                p.feed(&doc[a..]).unwrap_or_else(|err| panic!("{err}"));
                assert!(p.is_complete());
                assert_eq!(snapshot(&p), whole, "{doc:?} cut at {a}");
            }
            // Three fragments.
            for &a in &boundaries {
                for &b in boundaries.iter().filter(|&&b| b >= a) {
                    let mut p = PartialJson::default();
                    for fragment in [&doc[..a], &doc[a..b], &doc[b..]] {
                        p.feed(fragment).unwrap_or_else(|err| panic!("{err}"));
                    }
                    assert_eq!(snapshot(&p), whole, "{doc:?} cut at {a} and {b}");
                }
            }
            // Raw bytes cut anywhere, even inside a UTF-8 character: the snapshot stops before it.
            for cut in 0..=doc.len() {
                let mut p = PartialJson::default();
                p.feed_bytes(&doc.as_bytes()[..cut]).unwrap_or_else(|err| panic!("{err}"));
                let floor = (0..=cut).rev().find(|&i| doc.is_char_boundary(i)).unwrap_or(0);
                assert_eq!(snapshot(&p), snaps[floor], "{doc:?} cut at byte {cut}");
                p.feed_bytes(&doc.as_bytes()[cut..]).unwrap_or_else(|err| panic!("{err}"));
                assert_eq!(snapshot(&p), whole);
            }
        }
    }

    #[test]
    fn marks_joined_are_the_snapshot_without_its_tail() {
        for doc in DOCS {
            let mut p = PartialJson::default();
            let mut joined = String::new();
            let mut marks = 0;
            for (i, c) in doc.char_indices() {
                p.feed(&doc[i..i + c.len_utf8()]).unwrap_or_else(|err| panic!("{doc:?}: {err}"));
                let mut mark = Vec::new();
                if !p.mark_json(&mut mark) {
                    assert!(snapshot(&p).is_none(), "{doc:?}: a snapshot without a mark");
                    continue;
                }
                let Value::String(added) = (match parse(std::str::from_utf8(&mark).unwrap_or_default()) {
                    Value::Array(mut first) if marks == 0 && first.len() == 1 => first.remove(0),
                    other => other,
                }) else {
                    panic!("{doc:?}: not a mark: {}", String::from_utf8_lossy(&mark));
                };
                marks += 1;
                joined.push_str(&added);
                let snap = snapshot(&p).unwrap_or_default();
                let tail = snap.strip_prefix(joined.as_str()).unwrap_or_else(|| panic!("{doc:?}: {joined:?} {snap:?}"));
                assert!(tail.bytes().all(|b| matches!(b, b'"' | b']' | b'}')), "{doc:?}: tail {tail:?}");
            }
        }
    }

    #[test]
    fn partial_snapshots() {
        let cases = [
            ("", None),
            (" \n\t", None),
            ("-", None),
            ("tr", None),
            ("12", Some("12")),
            ("-0.", Some("-0")),
            ("\"ab\\", Some("\"ab\"")),
            ("\"ab\\u00", Some("\"ab\"")),
            (r#"{"a": 12."#, Some(r#"{"a":12}"#)),
            (r#"{"a": 1.5e+"#, Some(r#"{"a":1.5}"#)),
            (r#"{"a": -"#, Some("{}")),
            (r#"{"a": tr"#, Some("{}")),
            (r#"{"a": 1, "b"#, Some(r#"{"a":1}"#)),
            (r#"{"a": 1, "b" :"#, Some(r#"{"a":1}"#)),
            (r#"{"a": "x\ud83d"#, Some(r#"{"a":"x"}"#)),
            (r#"{"a": "x\ud83d\ude0"#, Some(r#"{"a":"x"}"#)),
            (r#"{"a": "x\ud83d\ude00"#, Some(r#"{"a":"x\ud83d\ude00"}"#)),
            ("[1, ", Some("[1]")),
            ("[[", Some("[[]]")),
            (r#"{"a": [1, {"b": nul"#, Some(r#"{"a":[1,{}]}"#)),
            (r#"{"a": [1, {"b": null"#, Some(r#"{"a":[1,{"b":null}]}"#)),
        ];
        for (input, expected) in cases {
            let mut p = PartialJson::default();
            p.feed(input).unwrap_or_else(|err| panic!("{input:?}: {err}"));
            assert_eq!(snapshot(&p).as_deref(), expected, "{input:?}");
            assert_eq!(p.is_empty(), input.trim().is_empty(), "{input:?}");
            assert_eq!(p.is_complete(), input == "12", "{input:?}");
        }
        // Raw bytes: a character cut in two is left out until its end arrives.
        let mut p = PartialJson::default();
        p.feed_bytes(b"\"caf\xc3").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(snapshot(&p).as_deref(), Some("\"caf\""));
        p.feed_bytes(b"\xa9").unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(snapshot(&p).as_deref(), Some("\"café\""));
    }

    #[test]
    fn errors_have_offsets_and_stick() {
        let cases = [
            ("[1,]", JsonSyntax::UnexpectedChar, 3),
            (r#"{"a" 1}"#, JsonSyntax::UnexpectedChar, 5),
            (r#"{"a": tru }"#, JsonSyntax::UnexpectedChar, 9),
            ("[01]", JsonSyntax::UnexpectedChar, 2),
            ("[1.e5]", JsonSyntax::InvalidNumber, 3),
            ("[-]", JsonSyntax::InvalidNumber, 2),
            (r#"["\x"]"#, JsonSyntax::InvalidEscape, 3),
            (r#"["\u00g0"]"#, JsonSyntax::InvalidEscape, 6),
            (r#"["ab\udc00"]"#, JsonSyntax::LoneSurrogate, 4),
            (r#"["ab\ud800x"]"#, JsonSyntax::LoneSurrogate, 4),
            (r#"["ab\ud800\n"]"#, JsonSyntax::LoneSurrogate, 4),
            (r#"["ab\ud800\u0041"]"#, JsonSyntax::LoneSurrogate, 4),
            ("[\"a\tb\"]", JsonSyntax::ControlChar, 3),
            ("{} {}", JsonSyntax::TrailingChars, 3),
            ("[}", JsonSyntax::UnexpectedChar, 1),
        ];
        for (input, kind, offset) in cases {
            let expected = Err(syntax(kind, offset));
            assert_eq!(validate(input, 10), expected, "{input:?}");
            // The same error fed whole or in small pieces; then it stays.
            for size in [input.len(), 1, 2, 3] {
                let mut p = PartialJson::default();
                let result = input.as_bytes().chunks(size).map(|c| p.feed_bytes(c)).find(Result::is_err);
                assert_eq!(result, Some(expected.clone()), "{input:?} in pieces of {size}");
                assert_eq!(p.feed("[]"), expected, "{input:?}: the error must stick");
                assert_eq!(p.finish(), expected);
                assert!(!p.is_complete() && !p.is_empty());
                let snap = snapshot(&p);
                assert!(snap.as_deref().is_none_or(|s| serde_json::from_str::<Value>(s).is_ok()), "{snap:?}");
            }
        }
        assert_eq!(validate("", 10), Err(syntax(JsonSyntax::UnexpectedEof, 0)));
        assert_eq!(validate("[1, 2", 10), Err(syntax(JsonSyntax::UnexpectedEof, 5)));
        assert_eq!(validate_bytes(b"[\"\xff\"]", 10), Err(syntax(JsonSyntax::InvalidUtf8, 2)));
        assert_eq!(validate(" [1, {\"a\": null}] ", 2), Ok(()));
    }

    #[test]
    fn limits() {
        let limits = JsonLimits { max_depth: 2, max_size: 10 };
        let mut p = PartialJson::new(limits);
        assert!(p.feed("[[1], ").is_ok());
        let too_large = Err(Error { kind: ErrorKind::Limit { name: "max_size", limit: 10 }, offset: Some(10) });
        assert_eq!(p.feed("[2, 3]]"), too_large);
        assert_eq!(snapshot(&p).as_deref(), Some("[[1],[2]]"), "read up to the limit");
        // A syntax error before the limit is the one reported.
        let mut p = PartialJson::new(limits);
        assert_eq!(p.feed("[1 2 3 4 5 6 7]"), Err(syntax(JsonSyntax::UnexpectedChar, 3)));
        let too_deep = Err(Error { kind: ErrorKind::JsonTooDeep { max_depth: 2 }, offset: Some(5) });
        assert_eq!(PartialJson::new(limits).feed(r#"[{"":[1]}]"#), too_deep);
        assert_eq!(
            validate("[[[]]]", 2),
            Err(Error { kind: ErrorKind::JsonTooDeep { max_depth: 2 }, offset: Some(2) })
        );
        assert_eq!(validate("[[]]", 2), Ok(()));
    }

    #[test]
    fn a_million_brackets_is_a_depth_error() {
        let brackets = "[".repeat(1_000_000);
        let too_deep = Err(Error { kind: ErrorKind::JsonTooDeep { max_depth: 200 }, offset: Some(200) });
        assert_eq!(validate(&brackets, 200), too_deep);
        let mut p = PartialJson::default();
        assert_eq!(p.feed(&brackets), too_deep);
        let mut p = PartialJson::default();
        let result = brackets.as_bytes().chunks(7).map(|c| p.feed_bytes(c)).find(Result::is_err);
        assert_eq!(result, Some(too_deep));
        let snap = snapshot(&p).unwrap_or_default();
        assert_eq!(snap.len(), 400, "200 open arrays, closed");
        let objects = "{\"a\":".repeat(100_000);
        assert!(matches!(validate(&objects, 200), Err(Error { kind: ErrorKind::JsonTooDeep { .. }, .. })));
    }

    /// Found by `fuzz/fuzz_targets/partial_json.rs`: `max_size` fell inside `é` of a `&str`, and
    /// its first byte went into the snapshot, which was then not UTF-8.
    #[test]
    fn max_size_cuts_a_str_between_characters() {
        let mut p = PartialJson::new(JsonLimits { max_depth: 16, max_size: 4 });
        let over = Err(Error { kind: ErrorKind::Limit { name: "max_size", limit: 4 }, offset: Some(3) });
        assert_eq!(p.feed("\"abé\""), over);
        let mut out = Vec::new();
        assert!(p.snapshot_json(&mut out));
        assert_eq!(out, b"\"ab\"");
        // Raw bytes are checked as they come: the cut may fall anywhere, the snapshot is whole.
        let mut p = PartialJson::new(JsonLimits { max_depth: 16, max_size: 4 });
        assert!(p.feed_bytes("\"abé\"".as_bytes()).is_err());
        assert_eq!(snapshot(&p).as_deref(), Some("\"ab\""));
    }

    /// A tiny deterministic generator (xorshift64), so the test needs no crate.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap_or(0)
        }
    }

    /// Random input never panics; whatever was accepted snapshots to valid JSON.
    #[test]
    fn random_input_never_panics() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let alphabet = b"{}[]\":,0123456789-+.eE \n\\u\xc3\xa9tfrueasln\xf0\x9f\x98\x80dD8";
        for round in 0..3000 {
            let input: Vec<u8> = if round % 3 == 0 {
                // Pure noise.
                (0..rng.below(64)).map(|_| rng.next().to_le_bytes()[0]).collect()
            } else if round % 3 == 1 {
                (0..rng.below(96)).map(|_| alphabet[rng.below(alphabet.len())]).collect()
            } else {
                // A real document with a few bytes changed, dropped or added.
                let mut doc = DOCS[rng.below(DOCS.len())].as_bytes().to_vec();
                for _ in 0..=rng.below(3) {
                    let at = rng.below(doc.len() + 1);
                    match rng.below(3) {
                        0 if at < doc.len() => doc[at] = alphabet[rng.below(alphabet.len())],
                        1 if at < doc.len() => drop(doc.remove(at)),
                        _ => doc.insert(at, alphabet[rng.below(alphabet.len())]),
                    }
                }
                doc
            };
            let mut p = PartialJson::new(JsonLimits { max_depth: 64, max_size: 80 });
            let mut rest = input.as_slice();
            while !rest.is_empty() {
                let (fragment, tail) = rest.split_at((1 + rng.below(8)).min(rest.len()));
                rest = tail;
                let fed = p.feed_bytes(fragment);
                if let Some(json) = snapshot(&p) {
                    assert_eq!(validate(&json, 64), Ok(()), "{input:?} gave {json:?}");
                    if let Err(err) = serde_json::from_str::<Value>(&json) {
                        assert!(err.to_string().contains("out of range"), "{input:?} gave {json:?}: {err}");
                    }
                }
                if fed.is_err() {
                    break;
                }
            }
            let whole = validate_bytes(&input, 64);
            if input.len() <= 80 {
                assert_eq!(p.finish(), whole, "{input:?}");
            }
        }
    }

    /// A tool call's arguments of about 64 KiB: a file's content, then a list of edits.
    fn big_document() -> String {
        let line = r#"    let caf\u00e9 = format!(\"{} \\ {}\", \"naïve — 😀\", x);\n\t// ok\n"#;
        let mut doc = String::from("{\"path\": \"src/lib.rs\", \"content\": \"");
        while doc.len() < 32 * 1024 {
            doc.push_str(line);
        }
        doc.push_str("\",\n  \"edits\": [");
        for i in 0..10_000 {
            if doc.len() >= 64 * 1024 - 200 {
                break;
            }
            let sep = if i == 0 { "" } else { ", " };
            let col = i % 80;
            let edit = format!(
                r#"{{"line": {i}, "col": {col}, "score": 0.{i}e-2, "old": "x{i}", "new": "y\n{i}", "ok": true, "note": null, "tags": []}}"#
            );
            doc.push_str(sep);
            doc.push_str(&edit);
        }
        doc.push_str("]}");
        doc
    }

    /// Fragments of about `size` bytes, cut at char boundaries as a `&str` stream would be.
    fn fragments(doc: &str, size: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut start = 0;
        while start < doc.len() {
            let mut end = (start + size).min(doc.len());
            while !doc.is_char_boundary(end) {
                end += 1;
            }
            out.push(&doc[start..end]);
            start = end;
        }
        out
    }

    /// The best of `runs` timings of `f`.
    fn best(runs: usize, mut f: impl FnMut()) -> std::time::Duration {
        (0..runs)
            .map(|_| {
                let start = std::time::Instant::now();
                f();
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    }

    /// `cargo test --release -p msgwire-core -- --ignored --nocapture`
    #[test]
    #[ignore = "timing report, run in release"]
    #[allow(clippy::print_stdout, reason = "the report is the point of this test")]
    fn performance() {
        let doc = big_document();
        let frags = fragments(&doc, 20);
        assert_eq!(
            parse(&doc),
            parse(&{
                let mut p = PartialJson::default();
                for f in &frags {
                    assert!(p.feed(f).is_ok());
                }
                snapshot(&p).unwrap_or_default()
            })
        );
        let runs = 50;
        let mut out = Vec::with_capacity(2 * doc.len());
        let whole = best(runs, || {
            let mut p = PartialJson::default();
            assert!(p.feed(&doc).is_ok());
            std::hint::black_box(&p);
        });
        let whole_snap = best(runs, || {
            let mut p = PartialJson::default();
            assert!(p.feed(&doc).is_ok());
            out.clear();
            p.snapshot_json(&mut out);
            std::hint::black_box(&out);
        });
        let pieces = best(runs, || {
            let mut p = PartialJson::default();
            for f in &frags {
                assert!(p.feed(f).is_ok());
            }
            std::hint::black_box(&p);
        });
        let pieces_snap = best(runs, || {
            let mut p = PartialJson::default();
            for f in &frags {
                assert!(p.feed(f).is_ok());
                out.clear();
                p.snapshot_json(&mut out);
                std::hint::black_box(&out);
            }
        });
        let validate_time = best(runs, || assert!(validate(&doc, 200).is_ok()));
        let serde = best(runs, || {
            std::hint::black_box(serde_json::from_str::<Value>(&doc).ok());
        });
        // What the SDKs do: parse the whole accumulated prefix again after every fragment.
        let mut ends = Vec::new();
        frags.iter().fold(0, |end, f| {
            ends.push(end + f.len());
            end + f.len()
        });
        let reparse = best(3, || {
            for &end in &ends {
                let mut p = PartialJson::default();
                assert!(p.feed(&doc[..end]).is_ok());
                out.clear();
                p.snapshot_json(&mut out);
                std::hint::black_box(&out);
            }
        });
        println!("document: {} bytes, {} fragments of ~20 bytes (best of {runs} runs)", doc.len(), frags.len());
        println!("PartialJson fed whole:                {whole:>10.1?}");
        println!("PartialJson fed whole + 1 snapshot:   {whole_snap:>10.1?}");
        println!(
            "PartialJson fed in fragments:         {pieces:>10.1?}  ({:.2}x fed whole)",
            pieces.as_secs_f64() / whole.as_secs_f64()
        );
        println!(
            "  + a snapshot after every fragment:  {pieces_snap:>10.1?}  (snapshots: {:.1?} in all, {:.0?} each)",
            pieces_snap.saturating_sub(pieces),
            pieces_snap.saturating_sub(pieces) / u32::try_from(frags.len()).unwrap_or(u32::MAX)
        );
        println!("validate (no committed text):         {validate_time:>10.1?}");
        println!("serde_json::from_str::<Value>:        {serde:>10.1?}");
        println!("re-parse each prefix + snapshot (O(n^2), the SDKs' way): {reparse:.1?}");
    }
}
