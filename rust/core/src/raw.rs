//! Provider JSON handled as text, so that its numbers stay as the provider wrote them.
//!
//! `serde_json::Value` holds a number as an `f64` or a 64-bit integer: it refuses `1e400`
//! ("number out of range") and writes `123456789012345678901234567890`, `1.50` or `-0` back as
//! other text. Where msgwire keeps or rebuilds JSON it does not interpret (an Anthropic block
//! whose input streamed in, a Responses built-in tool item's arguments), it goes through these
//! instead (`docs/wire.md`, "Numbers"): the members of an object in order, each value raw; an
//! object with one member set; a value in `Value`'s normal form (compact, keys sorted) but its
//! numbers as written.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// How deep [`normalized`] goes: `serde_json::Value`'s own limit, beyond which it refuses a value.
const MAX_DEPTH: usize = 128;

/// The members of a JSON object in order (duplicates included), their values unparsed.
pub(crate) struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Fields<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    fields.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(fields))
            }
        }
        deserializer.deserialize_map(Fields(std::marker::PhantomData))
    }
}

impl<'a> Members<'a> {
    /// The members of `object` (`None` when it is not a JSON object).
    pub fn of(object: &'a str) -> Option<Self> {
        serde_json::from_str(object).ok()
    }

    /// The value of `key` (the last one, as `serde_json::Map` keeps it).
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The string value of `key` (`None` when missing or not a string).
    pub fn text(&self, key: &str) -> Option<String> {
        self.get(key).and_then(|v| serde_json::from_str(v.get()).ok())
    }
}

/// `object` with member `key` set to `value` (JSON text): in the place of the first `key` (any
/// other dropped), else last. The members are written compact, every value as it was.
pub(crate) fn with_member(object: &str, key: &str, value: &str) -> Option<Box<RawValue>> {
    let members = Members::of(object)?;
    let mut out = String::with_capacity(object.len() + value.len());
    out.push('{');
    let mut set = false;
    for (k, v) in &members.0 {
        let v = if k == key {
            if set {
                continue;
            }
            set = true;
            value
        } else {
            v.get()
        };
        member(&mut out, k, v);
    }
    if !set {
        member(&mut out, key, value);
    }
    out.push('}');
    RawValue::from_string(out).ok()
}

fn member(out: &mut String, key: &str, value: &str) {
    if out.len() > 1 {
        out.push(',');
    }
    string(out, key);
    out.push(':');
    out.push_str(value);
}

/// A string as `serde_json` writes it.
fn string(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).unwrap_or_default());
}

/// `json` as `serde_json::Value` writes it (compact, object keys sorted, the last of duplicate
/// keys kept, strings escaped the one way), but each number as it was written; `None` where
/// `Value` would refuse `json` for a reason other than a number (not JSON, a lone surrogate,
/// deeper than 128).
pub(crate) fn normalized(json: &str) -> Option<String> {
    let mut out = String::with_capacity(json.len());
    write_normalized(&mut out, json, 0)?;
    Some(out)
}

/// An object of `members` (the last of duplicate keys kept), written as [`normalized`] does.
pub(crate) fn normalized_object<'a>(members: impl IntoIterator<Item = (Cow<'a, str>, &'a RawValue)>) -> Option<String> {
    let mut out = String::new();
    write_object(&mut out, members, 0)?;
    Some(out)
}

fn write_object<'a>(
    out: &mut String,
    members: impl IntoIterator<Item = (Cow<'a, str>, &'a RawValue)>,
    depth: usize,
) -> Option<()> {
    let sorted: BTreeMap<Cow<'a, str>, &'a RawValue> = members.into_iter().collect();
    out.push('{');
    for (i, (key, value)) in sorted.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, key);
        out.push(':');
        write_normalized(out, value.get(), depth + 1)?;
    }
    out.push('}');
    Some(())
}

fn write_normalized(out: &mut String, json: &str, depth: usize) -> Option<()> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let json = json.trim_matches([' ', '\t', '\n', '\r']);
    match json.as_bytes().first()? {
        b'{' => write_object(out, Members::of(json)?.0, depth)?,
        b'[' => {
            let items: Vec<&RawValue> = serde_json::from_str(json).ok()?;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_normalized(out, item.get(), depth + 1)?;
            }
            out.push(']');
        }
        b'"' => string(out, &serde_json::from_str::<Cow<'_, str>>(json).ok()?),
        // a number, `true`, `false` or `null`, checked to be one
        _ => {
            serde_json::from_str::<&RawValue>(json).ok()?;
            out.push_str(json);
        }
    }
    Some(())
}

/// The first number of `json` (valid JSON) that `serde_json::Value` cannot hold as the number
/// it is: one no double holds (`1e400`), an integer beyond 64 bits. Its offset in `json`, and
/// why. (A fraction that underflows, `1e-400`, is the double 0 and passes.)
pub(crate) fn unheld_number(json: &str) -> Option<(usize, String)> {
    let bytes = json.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                at += 1;
            }
            b'-' | b'0'..=b'9' => {
                let len = bytes[at..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let number = &json[at..at + len];
                if number.contains(['.', 'e', 'E']) {
                    if !number.parse::<f64>().is_ok_and(f64::is_finite) {
                        return Some((at, format!("number out of range: {number} (no double holds it)")));
                    }
                } else if number.parse::<i64>().is_err() && number.parse::<u64>().is_err() {
                    return Some((at, format!("integer out of range: {number} (more than 64 bits)")));
                }
                at += len;
            }
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_is_values_form_with_the_numbers_as_written() {
        for json in [
            r#"{"b":[1,{"d":null,"c":true}],"a":"\u00e9\/\"","a":"last"}"#,
            r#" [ "x" , { } , [ ] , false ] "#,
            r#"{"type":"search","query":"q","sources":[{"url":"u","type":"url"}]}"#,
            r#""\ud83d\ude00 \n""#,
        ] {
            let value: serde_json::Value = serde_json::from_str(json).expect("JSON");
            assert_eq!(normalized(json).as_deref(), Some(value.to_string().as_str()), "{json}");
        }
        let numbers = r#"{"z":[1e400,-1e400,1e-400,123456789012345678901234567890,-0,0e0,1.50,1E+309]}"#;
        assert_eq!(normalized(numbers).as_deref(), Some(numbers));
        for refused in [r#"{"a":"\ud800"}"#, "{", "[1,]", "nul"] {
            assert_eq!(normalized(refused), None, "{refused}");
        }
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(normalized(&deep(128)).is_some());
        assert_eq!(normalized(&deep(129)), None, "deeper than `Value` reads");
        assert!(serde_json::from_str::<serde_json::Value>(&deep(129)).is_err());
    }

    #[test]
    fn numbers_a_value_cannot_hold_are_found() {
        for (json, found) in [
            (r#"{"a":[1e400]}"#, Some(6)),
            (r#"{"a":"1e400 \" 1e400","b":-1E+309}"#, Some(26)),
            ("[123456789012345678901234567890]", Some(1)),
            ("[-9223372036854775809]", Some(1)),
            ("[-9223372036854775808, 18446744073709551615, 1e-400, -0, 0e0, 1.50, 1e308, true, null]", None),
        ] {
            assert_eq!(unheld_number(json).map(|(at, _)| at), found, "{json}");
        }
    }

    #[test]
    fn a_member_is_set_in_place_the_rest_kept_as_written() {
        let block = r#"{"type":"server_tool_use", "id":"s","input":{},"input":{"x":1},"caller":{"n": 1.50}}"#;
        let set = with_member(block, "input", r#"{"x": 1e400}"#).expect("an object");
        assert_eq!(set.get(), r#"{"type":"server_tool_use","id":"s","input":{"x": 1e400},"caller":{"n": 1.50}}"#);
        let added = with_member(r#"{"type":"x"}"#, "input", "123456789012345678901234567890").expect("an object");
        assert_eq!(added.get(), r#"{"type":"x","input":123456789012345678901234567890}"#);
        assert!(with_member("[1]", "input", "1").is_none());
    }
}
