//! The fast path of a stream chunk: a scanner walks the chunk's usual shape and fills the same
//! borrowed structs the serde derive would.
//!
//! Why: a profile of the OpenAI stream put most of the decode in serde's typed
//! deserialization (a visitor per field, large `Option` structs moved into vectors). jiter's key
//! walk was tried first and gained 5-10% here (its keys are unescaped and its strings decoded
//! through SIMD set-up that short chunk strings never repay); a scanner that compares raw key
//! bytes and borrows every string without escapes does the same work in one pass. A string with
//! escapes is unescaped by the walk too (a block-at-a-time scan, clean runs copied whole), `\u`
//! escapes and surrogate pairs included.
//!
//! The walk only knows the common shapes. Anything else — a key with an escape, a lone surrogate,
//! an unexpected type, a duplicate field, an object under a key the walk does not know,
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

/// A chunk at least this long (a whole response body, not a stream's few hundred bytes)
/// skips its strings a block at a time (`json_out::next_escape`): slower on short strings, much
/// faster on long ones.
const LONG: usize = 4096;

/// The bytes that end a run of plain string text: a quote, a backslash, a control character
/// (one table load per byte instead of three comparisons).
const STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        stops[byte] = true;
        byte += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// How deep a value under an unknown key may nest and still be skipped by the walk.
const SKIP_DEPTH: u8 = 16;

/// The order an object's keys come in, learned: for the start and after each key (by its index
/// in the walk's list), the index of the key that came next last time. It starts as the list's
/// own order.
#[derive(Debug, Clone)]
pub(crate) struct KeyOrder {
    next: [u8; Self::MAX],
}

impl KeyOrder {
    /// More keys than an object walk lists.
    const MAX: usize = 32;

    pub(crate) fn new() -> Self {
        let mut next = [0; Self::MAX];
        for (slot, index) in next.iter_mut().zip(0..) {
            *slot = index; // after key i - 1 (slot i) comes key i
        }
        Self { next }
    }
}

impl Default for KeyOrder {
    fn default() -> Self {
        Self::new()
    }
}

/// A walk over one chunk; `None` from any method means "take the serde path".
pub(crate) struct Walk<'a> {
    data: &'a str,
    at: usize,
    /// Where strings with escapes are unescaped (kept for the next one).
    scratch: String,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(data: &'a str) -> Self {
        Self { data, at: 0, scratch: String::new() }
    }

    /// A walk of `data` from byte `at` (the start of a value).
    pub(crate) fn at(data: &'a str, at: usize) -> Self {
        Self { data, at, scratch: String::new() }
    }

    /// Where the walk is: the byte after the last value read.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// A string without escapes at the cursor (on its quote), the cursor after it; `None` for
    /// anything else.
    pub(crate) fn plain_str(&mut self) -> Option<&'a str> {
        if self.byte()? != b'"' {
            return None;
        }
        self.plain_string()?
    }

    /// The whole chunk was one value (whitespace after it only).
    pub(crate) fn finish(mut self) -> Option<()> {
        (self.peek().is_none()).then_some(())
    }

    /// Walk an object (or `null`: `Some(false)`), calling `field` with the index of each key in
    /// `keys`; a key not in `keys` is skipped, whatever it holds (nested at most `SKIP_DEPTH`).
    /// A key seen twice gives `None` (serde reports duplicate fields).
    ///
    /// `keys` lists the keys in the order providers usually send them: the key after the last
    /// one read is compared first as raw bytes (`"key":`), which skips the byte loop and the
    /// search for most keys. Another order reads the same, only slower; `object_in` learns it.
    pub(crate) fn object(&mut self, keys: &[&str], field: impl FnMut(&mut Self, usize) -> Option<()>) -> Option<bool> {
        self.object_in(keys, &mut KeyOrder::new(), field)
    }

    /// `object`, the order of the keys learned across chunks in `order` (kept by the dialect):
    /// providers send one order per stream, but not the same one (OpenAI's Responses events came
    /// in one order in 2025 and sorted by key in 2026, OpenRouter's in a third).
    pub(crate) fn object_in(
        &mut self,
        keys: &[&str],
        order: &mut KeyOrder,
        mut field: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<bool> {
        debug_assert!(keys.len() < KeyOrder::MAX);
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
        let mut after = 0; // the slot of the key before: 0 at the start, index + 1 after a key
        loop {
            let expect = usize::from(order.next[after]);
            let found = if keys.get(expect).is_some_and(|key| self.expected_key(key)) {
                Some(expect)
            } else {
                let key = self.key()?;
                keys.iter().position(|k| *k == key)
            };
            match found {
                Some(index) => {
                    if seen & (1 << index) != 0 {
                        return None;
                    }
                    seen |= 1 << index;
                    order.next[after] = u8::try_from(index).ok()?;
                    after = index + 1;
                    field(self, index)?;
                }
                None => self.skip_value(SKIP_DEPTH)?,
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
        let mut items = Vec::new();
        let present = self.elements(|w| {
            items.push(item(w)?);
            Some(())
        })?;
        Some(present.then_some(items))
    }

    /// Walk an array (or `null`: `Some(false)`), calling `each` on every element: for elements
    /// built in place where they are kept (a large struct moved out of a return value costs).
    pub(crate) fn elements(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<bool> {
        match self.peek()? {
            b'n' => return self.literal("null").map(|()| false),
            b'[' => self.at += 1,
            _ => return None,
        }
        if self.peek()? == b']' {
            self.at += 1;
            return Some(true);
        }
        loop {
            each(self)?;
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(true);
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
                let escape = match self.string_start()? {
                    Ok(text) => return Some(Some(Cow::Borrowed(text))),
                    Err(escape) => escape,
                };
                // unescaped into the walk's scratch, sized for the rest of the input once (its
                // pages touched only as written), then copied at the string's size: a long
                // string grown in place would be copied again at each doubling
                let mut text = std::mem::take(&mut self.scratch);
                text.clear();
                text.reserve(self.data.len() - self.at);
                let read = self.escaped_from(escape, Some(&mut text));
                let owned = read.map(|()| text.as_str().to_owned());
                self.scratch = text;
                Some(Some(Cow::Owned(owned?)))
            }
            _ => None,
        }
    }

    /// A number that serde reads as an `f64` when it is a non-negative integer (what a creation
    /// time is), or `null`; any other number is serde's (its float parsing).
    pub(crate) fn whole_f64(&mut self) -> Option<Option<f64>> {
        // a u64 beyond 2^53 rounds to the nearest f64 either way
        #[allow(clippy::cast_precision_loss)]
        self.u64().map(|n| n.map(|n| n as f64))
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

    /// `true`, `false` or `null` (serde's `Option<bool>`).
    pub(crate) fn bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b't' => self.literal("true").map(|()| Some(true)),
            b'f' => self.literal("false").map(|()| Some(false)),
            _ => self.literal("null").map(|()| None),
        }
    }

    /// `null` (`Some`), anything else `None`: for fields the walk leaves to serde unless null.
    pub(crate) fn null(&mut self) -> Option<()> {
        self.literal("null")
    }

    /// Skip any value under a key the walk does not read (`logprobs`, `safetyRatings`, ...),
    /// arrays and objects at most `depth` deep: deeper ones are serde's, whose own recursion
    /// limit then decides.
    fn skip_value(&mut self, depth: u8) -> Option<()> {
        let close = match self.peek()? {
            b'[' => b']',
            b'{' => b'}',
            b'"' => {
                return match self.plain_string()? {
                    Some(_) => Some(()),
                    None => self.escaped(None),
                };
            }
            b'n' => return self.literal("null"),
            b't' => return self.literal("true"),
            b'f' => return self.literal("false"),
            b'-' | b'0'..=b'9' => return self.skip_number(),
            _ => return None,
        };
        let depth = depth.checked_sub(1)?;
        self.at += 1;
        if self.peek()? == close {
            self.at += 1;
            return Some(());
        }
        loop {
            if close == b'}' {
                if self.peek()? != b'"' {
                    return None;
                }
                self.skip_value(0)?; // the key: a string
                if self.peek()? != b':' {
                    return None;
                }
                self.at += 1;
            }
            self.skip_value(depth)?;
            match self.peek()? {
                b',' => self.at += 1,
                b if b == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
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

    /// Skip the value at the cursor, whatever it is (a key a walk lists only for its place in
    /// the order, as `object` explains).
    pub(crate) fn skip(&mut self) -> Option<()> {
        self.skip_value(SKIP_DEPTH)
    }

    /// `key` and its colon at the cursor as plain bytes: taken, `true`. Anything else (another
    /// key, whitespace before the colon) leaves the cursor for `key`. `key` has no quote or
    /// backslash, so the bytes matching means the string is exactly that key.
    fn expected_key(&mut self, key: &str) -> bool {
        if self.peek() != Some(b'"') {
            return false;
        }
        let rest = &self.data.as_bytes()[self.at + 1..];
        let n = key.len();
        let hit = rest.len() > n + 1 && rest[n] == b'"' && rest[n + 1] == b':' && &rest[..n] == key.as_bytes();
        if hit {
            self.at += n + 3;
        }
        hit
    }

    /// A key without escapes and its colon.
    fn key(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return None;
        }
        let key = self.plain_string()??;
        if self.peek()? != b':' {
            return None;
        }
        self.at += 1;
        Some(key)
    }

    /// The string at the cursor (on its quote) when it has no escape: its text, the cursor after
    /// it. `Some(None)` at the first backslash, the cursor left on the quote for serde. A control
    /// character, which JSON forbids in strings, gives `None`.
    fn plain_string(&mut self) -> Option<Option<&'a str>> {
        Some(self.string_start()?.ok())
    }

    /// The string at the cursor (on its quote) up to its first escape: its text and the cursor
    /// after it when it has none, else `Err` with the position of the escape's backslash (the
    /// cursor left on the quote). A control character gives `None`.
    fn string_start(&mut self) -> Option<Result<&'a str, usize>> {
        let bytes = self.data.as_bytes();
        let start = self.at + 1;
        // a byte loop is the fastest on a stream chunk's few-byte strings; a large body's long
        // ones are skipped a block at a time first
        let mut end = if self.data.len() < LONG { start } else { crate::json_out::next_escape(bytes, start) };
        while !STOPS[usize::from(*bytes.get(end)?)] {
            end += 1;
        }
        match bytes[end] {
            b'"' => {}
            b'\\' => return Some(Err(end)),
            _ => return None, // a control character
        }
        self.at = end + 1;
        // the quotes are ASCII, so the slice is on character boundaries
        Some(Ok(self.data.get(start..end)?))
    }

    /// The string at the cursor (on its quote), which has an escape: unescaped into `out`, or
    /// only skipped (`None`), the cursor after it. Every escape is read here (found a block at a
    /// time, clean runs copied whole), `\\u` escapes and their surrogate pairs included; an
    /// invalid one (a lone surrogate, a bad hex digit) hands the string to serde, which refuses
    /// it with its own error.
    fn escaped(&mut self, out: Option<&mut String>) -> Option<()> {
        self.escaped_from(self.at + 1, out)
    }

    /// [`Walk::escaped`], the string known to have no escape before `from`.
    fn escaped_from(&mut self, from: usize, mut out: Option<&mut String>) -> Option<()> {
        let bytes = self.data.as_bytes();
        let mut at = self.at + 1;
        let mut stop = from;
        loop {
            if stop < at {
                stop = crate::json_out::next_escape(bytes, at);
            }
            if let Some(out) = out.as_deref_mut() {
                // the bytes around a run are ASCII: the slice is on character boundaries
                out.push_str(self.data.get(at..stop)?);
            }
            match *bytes.get(stop)? {
                b'"' => {
                    self.at = stop + 1;
                    return Some(());
                }
                b'\\' => {
                    let unescaped = match *bytes.get(stop + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => match unicode_escape(bytes, stop) {
                            Some((character, length)) => {
                                if let Some(out) = out.as_deref_mut() {
                                    out.push(character);
                                }
                                at = stop + length;
                                continue;
                            }
                            None => return self.serde_string(out),
                        },
                        _ => return self.serde_string(out),
                    };
                    if let Some(out) = out.as_deref_mut() {
                        out.push(unescaped);
                    }
                    at = stop + 2;
                }
                _ => return None, // a control character
            }
        }
    }

    /// The string at the cursor read (into `out`) or skipped by serde.
    fn serde_string(&mut self, out: Option<&mut String>) -> Option<()> {
        match out {
            Some(out) => {
                *out = self.with_serde::<String>()?;
                Some(())
            }
            None => self.with_serde::<serde::de::IgnoredAny>().map(|_| ()),
        }
    }

    /// The value at the cursor read by serde (escaped strings: serde's own unescaping and
    /// surrogate rules, in one pass), the cursor after it.
    fn with_serde<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        let mut values = serde_json::Deserializer::from_str(&self.data[self.at..]).into_iter::<T>();
        let value = values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(value)
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

/// The character of the `\\u` escape at `at` (its backslash) and the escape's length: 6, or 12
/// for a surrogate pair. `None` for a lone surrogate or a bad hex digit (serde's errors).
fn unicode_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let hex = |from: usize| -> Option<u32> {
        let digits = bytes.get(from..from + 4)?;
        digits.iter().try_fold(0, |code, &digit| Some(code << 4 | char::from(digit).to_digit(16)?))
    };
    let code = hex(at + 2)?;
    if !(0xD800..0xDC00).contains(&code) {
        return char::from_u32(code).map(|character| (character, 6));
    }
    if bytes.get(at + 6..at + 8)? != b"\\u" {
        return None;
    }
    let low = hex(at + 8).filter(|low| (0xDC00..0xE000).contains(low))?;
    char::from_u32(0x10000 + ((code - 0xD800) << 10 | (low - 0xDC00))).map(|character| (character, 12))
}

/// Parse with the fast `walk`, else with serde; in debug builds both, and they must agree.
pub(crate) fn walk_or_parse<'a, T: Deserialize<'a> + fmt::Debug>(
    payload: &'a str,
    walk: impl FnOnce(&'a str) -> Option<T>,
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

#[cfg(test)]
mod tests {
    use super::{KeyOrder, Walk};

    /// The values of `keys` in an object, walked with `order`.
    fn read(data: &str, order: &mut KeyOrder) -> Option<Vec<(usize, u64)>> {
        let mut found = Vec::new();
        let mut walk = Walk::new(data);
        walk.object_in(&["a", "b", "c"], order, |w, key| {
            found.push((key, w.u64()??));
            Some(())
        })?;
        walk.finish()?;
        Some(found)
    }

    #[test]
    fn any_key_order_reads_the_same_and_the_last_one_is_learned() {
        let mut order = KeyOrder::new();
        let sorted = read(r#"{"a":1,"b":2,"c":3}"#, &mut order).expect("walked");
        assert_eq!(sorted, [(0, 1), (1, 2), (2, 3)]);
        assert_eq!(order.next[..4], [0, 1, 2, 3], "the list's own order");

        let other = read(r#"{"c":3, "x":[{"y":null}], "a":1,"b" :2}"#, &mut order).expect("walked");
        assert_eq!(other, [(2, 3), (0, 1), (1, 2)], "unknown keys skipped, whitespace allowed");
        assert_eq!(order.next[0], 2, "c comes first now");
        assert_eq!(order.next[3], 0, "then a (the unknown x in between)");
        assert_eq!(order.next[1], 1, "then b");

        // the learned order read back, and the list's order still read with it
        assert_eq!(read(r#"{"c":3,"a":1,"b":2}"#, &mut order), Some(other.clone()));
        assert_eq!(read(r#"{"a":1,"b":2,"c":3}"#, &mut order), Some(sorted));
    }

    /// `str` gives the string serde reads, borrowed from the chunk when it has no escape (long
    /// and short chunks: two scans); what serde refuses, the walk hands over.
    #[test]
    fn strings_read_as_serde_reads_them() {
        let strings = [
            r#""plain""#,
            r#""a\"b\\c\n\t\r\b\f\u0000\u001f""#,
            r#""slash \/ and \u00e9 and \u0041 and \u000A and \u001F and \uFFFF""#,
            r#""\ud83d\ude00 surrogates \uD83D\uDE00""#,
            r#""é😀 raw""#,
            r#""""#,
        ];
        for string in strings {
            for padding in [0, 5000] {
                let data = format!("{string}{}", " ".repeat(padding));
                let text: String = serde_json::from_str(string).expect("JSON");
                let mut walk = Walk::new(&data);
                let read = walk.str().expect("walked").expect("a string");
                assert_eq!(read, text, "{string}");
                let borrowed = matches!(read, std::borrow::Cow::Borrowed(_));
                assert_eq!(borrowed, !string.contains('\\'), "{string}: borrowed without escapes");
                assert!(walk.finish().is_some());
            }
        }
        let refused = [
            "\"a\u{1}b\"",
            r#""a\"#,
            r#""a"#,
            "7",
            r#""\ud83d""#,
            r#""\ud83d\u0041""#,
            r#""\ude00\ud83d""#,
            r#""\ud83dx\ude00""#,
            r#""\u12g4""#,
            r#""\u12""#,
            r#""\q""#,
        ];
        for bad in refused {
            assert_eq!(Walk::new(bad).str().flatten(), None, "{bad}");
            assert!(serde_json::from_str::<String>(bad).is_err(), "serde refuses {bad} too");
        }
        assert_eq!(Walk::new("null").str(), Some(None));
    }

    #[test]
    fn a_key_that_only_starts_like_the_expected_one_is_not_taken() {
        let mut order = KeyOrder::new();
        assert_eq!(read(r#"{"ab":5,"a":1}"#, &mut order), Some(vec![(0, 1)]));
        assert_eq!(read(r#"{"a\u0062":5}"#, &mut order), None, "an escaped key is serde's");
        assert_eq!(read(r#"{"a":1,"a":2}"#, &mut order), None, "a duplicate is serde's");
    }
}
