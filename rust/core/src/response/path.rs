//! The JSON path (`$.choices[0].message.tool_calls[1].function.arguments`) of a byte offset.
//!
//! Errors carry byte offsets (cheap, exact); a path says the same to a person reading a response
//! body. It is computed only when an error is reported, by scanning the body up to the offset.

use std::fmt::Write as _;

/// Where the scan is inside one container.
#[derive(Debug)]
enum Frame {
    /// An object: the key read last, and whether its value has begun.
    Object { key: Option<String>, in_value: bool },
    /// An array: the index of the current element, and whether it has begun.
    Array { index: usize, in_value: bool },
}

impl Frame {
    fn enter_value(&mut self) {
        match self {
            Frame::Object { in_value, .. } | Frame::Array { in_value, .. } => *in_value = true,
        }
    }
}

/// The path of the innermost value the byte at `offset` belongs to (`$` for the top level, or
/// for an offset outside any value). The JSON needs to be valid only up to `offset`: an error
/// found there is what the path describes.
pub fn json_path(json: &[u8], offset: usize) -> String {
    // serde places a value of the wrong type at the byte before it (a colon, a space): the
    // value is what is meant
    let skipped = json.get(offset..).map_or(0, |rest| rest.iter().take_while(|b| b" \t\n\r:".contains(b)).count());
    let end = offset.saturating_add(skipped).saturating_add(1).min(json.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match json[i] {
            b'{' | b'[' => {
                if let Some(parent) = stack.last_mut() {
                    parent.enter_value();
                }
                stack.push(if json[i] == b'{' {
                    Frame::Object { key: None, in_value: false }
                } else {
                    Frame::Array { index: 0, in_value: false }
                });
            }
            // the container is done: its path is its parent's current key or index
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { key, in_value }) => (*key, *in_value) = (None, false),
                Some(Frame::Array { index, in_value }) => (*index, *in_value) = (*index + 1, false),
                None => {}
            },
            b'"' => {
                let close = string_end(json, i);
                match stack.last_mut() {
                    Some(Frame::Object { key: key @ None, in_value: false }) => {
                        *key = Some(unescape(&json[i..close.min(json.len())]));
                    }
                    Some(frame) => frame.enter_value(),
                    None => {}
                }
                i = close;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
            _ => {
                if let Some(frame) = stack.last_mut() {
                    frame.enter_value();
                }
            }
        }
        i += 1;
    }
    let mut path = String::from("$");
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(key), in_value: true } => push_key(&mut path, key),
            Frame::Array { index, in_value: true } => {
                let _ = write!(path, "[{index}]");
            }
            _ => break,
        }
    }
    path
}

/// The byte after the string that starts at `start` (its opening quote).
fn string_end(json: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < json.len() {
        match json[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    json.len()
}

/// A key's text from its quoted JSON (as written when it cannot be unescaped).
fn unescape(quoted: &[u8]) -> String {
    serde_json::from_slice::<String>(quoted)
        .unwrap_or_else(|_| String::from_utf8_lossy(quoted.get(1..).unwrap_or_default()).into_owned())
}

/// `.key` for a plain name, `["key"]` for any other.
fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !key.as_bytes()[0].is_ascii_digit();
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        let _ = write!(path, "[{}]", serde_json::to_string(key).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(json: &str, needle: &str) -> String {
        json_path(json.as_bytes(), json.find(needle).expect("needle"))
    }

    #[test]
    fn paths_of_values_keys_and_containers() {
        let json = r#"{"choices": [{"message": {"tool_calls": [{"id": "a"}, {"function": {"arguments": 5}}]}}], "x y": [1, [2, 3]]}"#;
        assert_eq!(at(json, "5"), "$.choices[0].message.tool_calls[1].function.arguments");
        assert_eq!(at(json, r#""a""#), "$.choices[0].message.tool_calls[0].id");
        assert_eq!(at(json, r#""id""#), "$.choices[0].message.tool_calls[0]");
        assert_eq!(at(json, "3"), "$[\"x y\"][1][1]");
        // the closing brace of an object is the object's (where "missing field" points)
        assert_eq!(at(json, "}}]}}]"), "$.choices[0].message.tool_calls[1].function");
        assert_eq!(at(json, "}]}}]"), "$.choices[0].message.tool_calls[1]");
        assert_eq!(json_path(json.as_bytes(), 0), "$");
        assert_eq!(json_path(json.as_bytes(), json.len() + 10), "$");
        assert_eq!(json_path(b"", 3), "$");
        // the colon or space before a value stands for the value
        assert_eq!(at(json, ": 5"), "$.choices[0].message.tool_calls[1].function.arguments");
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_it() {
        let json = r#"{"a\"b": {"c": "[{,\"}", "d": true}}"#;
        assert_eq!(at(json, "true"), r#"$["a\"b"].d"#);
        assert_eq!(at(json, "[{,"), r#"$["a\"b"].c"#);
    }
}
