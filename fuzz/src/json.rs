//! JSON values whose numbers are kept as their text: what the oracles compare msgwire's output by.
//!
//! msgwire keeps the provider's JSON it does not interpret (unknown blocks and items, raw server
//! tool blocks, citations, tool-call arguments) byte for byte, numbers included: `1e400`,
//! `-1e400`, `123456789012345678901234567890`, `1.50` and `-0` come back as they were sent
//! (`docs/wire.md`, "Numbers"). `serde_json::Value` cannot compare such JSON: it refuses a number
//! no double holds ("number out of range"), reads an integer beyond 64 bits or `1.50` as a double
//! (so `1.5` and `1.50` compare equal), and refuses nesting deeper than 128. Its
//! `arbitrary_precision` feature would keep the text, but cargo unifies features: turned on here,
//! it would be on in the msgwire-core under test too (its `Value`s, its serde buffering), which
//! would then not be the core that ships. So this small reader, for text the oracle has already
//! checked to be JSON (`partial::validate`): objects compare as maps (the last of duplicate keys
//! wins, as in `Value`), strings by their decoded characters, numbers by their exact text.

use std::collections::BTreeMap;
use std::fmt;

/// A JSON value; a number is its text as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    /// The value of `text`, which must be JSON (the caller validated it: anything else panics).
    pub fn parse(text: &str) -> Self {
        let mut reader = Reader { text, at: 0 };
        let value = reader.value();
        reader.blank();
        assert_eq!(reader.at, text.len(), "trailing characters after the JSON value: {text}");
        value
    }

    /// The value of `bytes` (UTF-8 JSON).
    pub fn parse_bytes(bytes: &[u8]) -> Self {
        Self::parse(std::str::from_utf8(bytes).expect("JSON is UTF-8"))
    }

    pub fn get(&self, key: &str) -> Option<&Self> {
        self.as_object().and_then(|o| o.get(key))
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Self> {
        self.as_object_mut().and_then(|o| o.get_mut(key))
    }

    /// The value at a JSON pointer of object keys (`/function/name`).
    pub fn pointer(&self, pointer: &str) -> Option<&Self> {
        pointer.split('/').skip(1).try_fold(self, |value, key| value.get(key))
    }

    pub fn as_str(&self) -> Option<&str> {
        if let Self::String(s) = self { Some(s) } else { None }
    }

    pub fn as_array(&self) -> Option<&Vec<Self>> {
        if let Self::Array(a) = self { Some(a) } else { None }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Self>> {
        if let Self::Array(a) = self { Some(a) } else { None }
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Self::Array(_))
    }

    pub fn as_object(&self) -> Option<&BTreeMap<String, Self>> {
        if let Self::Object(o) = self { Some(o) } else { None }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut BTreeMap<String, Self>> {
        if let Self::Object(o) = self { Some(o) } else { None }
    }
}

/// Compact JSON (object keys sorted), for the messages of failed checks.
impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let string = |f: &mut fmt::Formatter<'_>, s: &str| match serde_json::to_string(s) {
            Ok(quoted) => f.write_str(&quoted),
            Err(_) => Err(fmt::Error),
        };
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Number(n) => f.write_str(n),
            Self::String(s) => string(f, s),
            Self::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Self::Object(members) => {
                f.write_str("{")?;
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    string(f, key)?;
                    write!(f, ":{value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A reader of valid JSON text (recursive: the oracles validate their text with a depth limit
/// first).
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> u8 {
        *self.text.as_bytes().get(self.at).unwrap_or_else(|| panic!("JSON ends early: {}", self.text))
    }

    fn blank(&mut self) {
        let rest = &self.text.as_bytes()[self.at..];
        self.at += rest.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).count();
    }

    fn eat(&mut self, byte: u8) {
        self.blank();
        assert_eq!(self.peek(), byte, "expected {:?} at byte {}: {}", char::from(byte), self.at, self.text);
        self.at += 1;
    }

    /// Whether the next token is `byte` (eaten if so).
    fn next_is(&mut self, byte: u8) -> bool {
        self.blank();
        let found = self.peek() == byte;
        self.at += usize::from(found);
        found
    }

    fn value(&mut self) -> Json {
        self.blank();
        match self.peek() {
            b'{' => {
                self.at += 1;
                let mut members = BTreeMap::new();
                if !self.next_is(b'}') {
                    loop {
                        self.blank();
                        let key = self.string();
                        self.eat(b':');
                        let value = self.value();
                        members.insert(key, value);
                        if self.next_is(b'}') {
                            break;
                        }
                        self.eat(b',');
                    }
                }
                Json::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.next_is(b']') {
                    loop {
                        items.push(self.value());
                        if self.next_is(b']') {
                            break;
                        }
                        self.eat(b',');
                    }
                }
                Json::Array(items)
            }
            b'"' => Json::String(self.string()),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let rest = &self.text.as_bytes()[self.at..];
                let len =
                    rest.iter().take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')).count();
                assert!(len > 0, "not a JSON value at byte {}: {}", self.at, self.text);
                self.at += len;
                Json::Number(self.text[self.at - len..self.at].to_owned())
            }
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Json {
        assert!(self.text[self.at..].starts_with(word), "not a JSON value at byte {}: {}", self.at, self.text);
        self.at += word.len();
        value
    }

    /// A string token, decoded (by `serde_json`, which is exact for strings).
    fn string(&mut self) -> String {
        let bytes = self.text.as_bytes();
        assert_eq!(self.peek(), b'"', "expected a string at byte {}: {}", self.at, self.text);
        let start = self.at;
        let mut at = start + 1;
        while bytes[at] != b'"' {
            at += if bytes[at] == b'\\' { 2 } else { 1 };
        }
        self.at = at + 1;
        serde_json::from_str(&self.text[start..self.at]).unwrap_or_else(|e| panic!("a JSON string: {e}: {}", self.text))
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn numbers_are_their_text() {
        let big = Json::parse(r#" {"a": [1e400, -1e400, 1e-400, 123456789012345678901234567890, -0, 0e0, 1.50]} "#);
        assert_eq!(big.to_string(), r#"{"a":[1e400,-1e400,1e-400,123456789012345678901234567890,-0,0e0,1.50]}"#);
        assert_ne!(Json::parse("1.5"), Json::parse("1.50"));
        assert_ne!(Json::parse("0"), Json::parse("-0"));
    }

    #[test]
    fn objects_are_maps_and_strings_their_characters() {
        assert_eq!(Json::parse(r#"{"b":1,"a":"\u00e9\/"}"#), Json::parse(r#"{ "a" : "é/", "b" : 1 }"#));
        assert_eq!(Json::parse(r#"{"a":1,"a":2}"#), Json::parse(r#"{"a":2}"#));
        assert_eq!(
            Json::parse(r#"{"a":{"b":["\"",true,null]}}"#).pointer("/a/b").map(ToString::to_string).as_deref(),
            Some(r#"["\"",true,null]"#)
        );
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(Json::parse(&deep).to_string(), deep);
    }
}
