//! The fast path of a stream chunk: a scanner walks the chunk's usual shape and fills the same
//! borrowed structs the serde derive would.
//!
//! Why: a profile of the OpenAI stream put most of the decode in serde's typed
//! deserialization (a visitor per field, large `Option` structs moved into vectors). jiter's key
//! walk was tried first and gained 5-10% here (its keys are unescaped and its strings decoded
//! through SIMD set-up that short chunk strings never repay); a scanner that compares raw key
//! bytes and borrows every string without escapes does the same work in one pass.
//!
//! The walk only knows the common shapes. Anything else — a key or skipped string with an
//! escape, an unexpected type, a duplicate field, an object under a key the walk does not know,
//! any invalid JSON — gives `None`, and the caller parses the chunk with serde, which reads it
//! or fails with the typed error and its byte offset. So the fast path never changes what a
//! chunk means or how a bad one fails; in debug builds (the unit tests, every fuzz target) each
//! fast result is checked against serde's.

// `Option<Option<T>>` throughout: the outer `None` hands the chunk to serde, `Some(None)` is a
// `null` (serde's `Option` field), as the walk fills the serde structs' `Option` fields.
#![allow(clippy::option_option)]

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;

use crate::assemble::Builder;
use crate::error::Error;

/// A walk over one chunk; `None` from any method means "take the serde path".
pub(crate) struct Walk<'a> {
    data: &'a str,
    at: usize,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(data: &'a str) -> Self {
        Self { data, at: 0 }
    }

    /// The whole chunk was one value (whitespace after it only).
    pub(crate) fn finish(mut self) -> Option<()> {
        (self.peek().is_none()).then_some(())
    }

    /// Walk an object (or `null`: `Some(false)`), calling `field` with the index of each key in
    /// `keys`; a key not in `keys` must hold a scalar, which is skipped. A key seen twice gives
    /// `None` (serde reports duplicate fields).
    pub(crate) fn object(
        &mut self,
        keys: &[&str],
        mut field: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<bool> {
        debug_assert!(keys.len() <= 64);
        match self.peek()? {
            b'n' => return self.literal("null").map(|()| false),
            b'{' => self.at += 1,
            _ => return None,
        }
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(true);
        }
        let mut seen = 0u64;
        loop {
            let key = self.key()?;
            match keys.iter().position(|k| *k == key) {
                Some(index) => {
                    if seen & (1 << index) != 0 {
                        return None;
                    }
                    seen |= 1 << index;
                    field(self, index)?;
                }
                None => self.skip_scalar()?,
            }
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(true);
                }
                _ => return None,
            }
        }
    }

    /// Walk an array (or `null`: `Some(None)`), one `item` per element.
    pub(crate) fn array<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Option<Vec<T>>> {
        match self.peek()? {
            b'n' => return self.literal("null").map(|()| None),
            b'[' => self.at += 1,
            _ => return None,
        }
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(Some(items));
        }
        loop {
            items.push(item(self)?);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(Some(items));
                }
                _ => return None,
            }
        }
    }

    /// A string or `null`, borrowed from the chunk unless it has escapes (as serde's `Cow`).
    pub(crate) fn str(&mut self) -> Option<Option<Cow<'a, str>>> {
        match self.peek()? {
            b'n' => self.literal("null").map(|()| None),
            b'"' => {
                let (start, text, escaped) = self.string()?;
                if !escaped {
                    return Some(Some(Cow::Borrowed(text)));
                }
                // serde's own unescaping, on the string alone: the same rules and results
                let quoted = &self.data[start - 1..self.at];
                serde_json::from_str::<String>(quoted).ok().map(|s| Some(Cow::Owned(s)))
            }
            _ => None,
        }
    }

    /// A non-negative integer that fits a `u64`, or `null` (serde's `Option<u64>`).
    pub(crate) fn u64(&mut self) -> Option<Option<u64>> {
        match self.peek()? {
            b'n' => self.literal("null").map(|()| None),
            b'0' => {
                self.at += 1;
                (!self.number_continues()).then_some(Some(0))
            }
            b'1'..=b'9' => {
                let mut value: u64 = 0;
                while let Some(digit) = self.byte().filter(u8::is_ascii_digit) {
                    value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
                    self.at += 1;
                }
                (!self.number_continues()).then_some(Some(value))
            }
            _ => None,
        }
    }

    /// `null` (`Some`), anything else `None`: for fields the walk leaves to serde unless null.
    pub(crate) fn null(&mut self) -> Option<()> {
        self.literal("null")
    }

    /// Skip a string, number, boolean or `null`; an array or object gives `None`.
    pub(crate) fn skip_scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                let (start, _, escaped) = self.string()?;
                // escapes are rare in the fields a walk skips: serde checks them
                !escaped || self.str_is_valid(start)
            }
            .then_some(()),
            b'n' => self.literal("null"),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => None,
        }
    }

    // --- bytes ---

    fn byte(&self) -> Option<u8> {
        self.data.as_bytes().get(self.at).copied()
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b) = self.byte() {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let rest = self.data.as_bytes().get(self.at..)?;
        rest.starts_with(word.as_bytes()).then(|| self.at += word.len())
    }

    /// A key without escapes and its colon.
    fn key(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return None;
        }
        let (_, key, escaped) = self.string()?;
        if escaped || self.peek()? != b':' {
            return None;
        }
        self.at += 1;
        Some(key)
    }

    /// The string at the cursor (on its quote): its raw text between the quotes and whether it
    /// has escapes. A control character, which JSON forbids in strings, gives `None`.
    fn string(&mut self) -> Option<(usize, &'a str, bool)> {
        let bytes = self.data.as_bytes();
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            match *bytes.get(at)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += 2; // the escaped byte is never the closing quote
                }
                b if b < 0x20 => return None,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        // the quotes and backslashes are ASCII, so the slice is on character boundaries
        Some((start, self.data.get(start..at)?, escaped))
    }

    /// The string whose text starts at `start` and was just read (escapes and all), checked by
    /// serde: the same rules for escapes and surrogates as the serde path.
    fn str_is_valid(&self, start: usize) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(&self.data[start - 1..self.at]).is_ok()
    }

    /// After a number's integer digits: a fraction or exponent follows (not a `u64`).
    fn number_continues(&self) -> bool {
        matches!(self.byte(), Some(b'.' | b'e' | b'E' | b'0'..=b'9'))
    }

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn skip_number(&mut self) -> Option<()> {
        if self.byte() == Some(b'-') {
            self.at += 1;
        }
        match self.byte()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.at += 1;
            self.byte().filter(u8::is_ascii_digit)?;
            self.digits();
        }
        if matches!(self.byte(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.byte(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.byte().filter(u8::is_ascii_digit)?;
            self.digits();
        }
        // `01` and `1.5.2` are not numbers: the next byte ends the value
        (!matches!(self.byte(), Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))).then_some(())
    }

    fn digits(&mut self) {
        while self.byte().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }
}

/// Parse with the fast `walk`, else with serde; in debug builds both, and they must agree.
pub(crate) fn walk_or_parse<'a, T: Deserialize<'a> + fmt::Debug>(
    payload: &'a str,
    walk: fn(&'a str) -> Option<T>,
    builder: &Builder,
) -> Result<T, Error> {
    let Some(fast) = walk(payload) else { return super::parse(payload, builder) };
    #[cfg(debug_assertions)]
    {
        let slow: T = super::parse(payload, builder).expect("serde reads what the walk read");
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "the walk and serde differ on {payload}");
    }
    Ok(fast)
}
