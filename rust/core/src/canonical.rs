//! Canonical schema v1: the contract between the Rust core and the Python types.
//!
//! Field names, field order and which fields are left out at their default mirror
//! `python/msgwire/types.py` exactly, so that both sides write the same bytes for the same
//! document (a test in `tests/codec/test_contract.py` proves it on a corpus). Timestamps stay RFC 3339
//! strings and free-form objects (`metadata`, `params`) stay raw JSON: the core never needs to
//! interpret them, and keeping their text keeps the round trip exact.
//!
//! A message or block whose `type` this version does not know is kept as raw JSON
//! ([`Message::Unknown`], [`Block::Unknown`]) and written back unchanged.

use std::cell::Cell;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Error as _, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::Error;

/// The schema version this crate reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// A conversation: the versioned envelope.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    #[serde(deserialize_with = "schema_version")]
    pub version: u32,
    pub id: String,
    pub system_prompt: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub metadata: Box<RawValue>,
    pub messages: Vec<Message>,
}

/// A conversation message, tagged by `type`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    SystemControl(SystemControlMessage),
    #[serde(untagged)]
    Unknown(Box<RawValue>),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserMessage {
    pub id: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Block>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub source: UserSource,
    /// The participant's name (OpenAI Chat's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub id: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Block>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The participant's name (OpenAI Chat's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolResultMessage {
    pub id: String,
    pub timestamp: String,
    pub tool_call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Block>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "is_default")]
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<Float>,
    /// The tool's output as JSON when it returned a value (kept whole, never sent as such: the
    /// `content` says it to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SystemControlMessage {
    pub id: String,
    pub timestamp: String,
    pub control: String,
    // Python leaves out an empty `params` object, however it was spelled.
    #[serde(default, skip_serializing_if = "is_none_or_empty_object")]
    pub params: Option<Box<RawValue>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub cache_read_tokens: u64,
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub cache_write_tokens: u64,
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub reasoning_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub recoverable: bool,
}

/// A content block, tagged by `type`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text(TextBlock),
    Thinking(ThinkingBlock),
    Image(ImageBlock),
    FileReference(FileReferenceBlock),
    McpResource(McpResourceBlock),
    ToolCall(ToolCallBlock),
    ServerToolCall(ServerToolCallBlock),
    ServerToolResult(ServerToolResultBlock),
    #[serde(untagged)]
    Unknown(Box<RawValue>),
}

/// Text; `citations` are the sources it cites, `item_id` the provider item it came in (a
/// Responses `message` item, shared by its text parts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlock {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<Citation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl TextBlock {
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// A prompt-caching breakpoint (Anthropic's `cache_control`): the prefix up to this block is cached.
/// Canonical JSON leaves out the one type there is (`ephemeral`); a provider body has it (see
/// `request::anthropic::cache_wire`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    #[serde(rename = "type", default = "ephemeral", skip_serializing_if = "is_ephemeral")]
    pub kind: String,
    /// How long the cache lives (`5m`, `1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

/// A source a text block cites (an Anthropic citation, a Responses annotation, a Gemini
/// grounding support). `kind` is the provider's type; `start_index`/`end_index` the cited span of
/// the block's text in characters (Unicode scalar values; none: the whole block); `raw` the
/// provider's object when it says more than the typed fields, written back only to that provider.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_integer")]
    pub start_index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_integer")]
    pub end_index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Raw>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingBlock {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
    /// The Responses `reasoning` item it came in (a request needs it to send the item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
}

/// A tool the provider ran itself, as the model called it (Anthropic `server_tool_use`,
/// `mcp_tool_use`; a Responses built-in tool item, its outcome included; Gemini's grounding).
/// `raw` is the provider's whole object in `dialect`'s wire format, written back unchanged there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerToolCallBlock {
    pub id: String,
    pub name: String,
    /// The call's input as JSON text.
    pub arguments: String,
    /// The provider's block or item type.
    pub kind: String,
    pub dialect: String,
    pub raw: Raw,
}

/// The result of a server tool call as a block of its own (Anthropic `web_search_tool_result`,
/// `mcp_tool_result`, ...); `raw` is the provider's whole block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerToolResultBlock {
    pub tool_call_id: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "is_default")]
    pub is_error: bool,
    pub dialect: String,
    pub raw: Raw,
}

/// JSON kept as its text (a provider's object), compared by that text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Raw(pub Box<RawValue>);

impl Raw {
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for Raw {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for Raw {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageBlock {
    pub source: ImageSource,
    #[serde(default, skip_serializing_if = "is_default")]
    pub recognition_mode: RecognitionMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recognized_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision_analysis: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Float>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_used: Option<ModeUsed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub status: FileStatus,
    /// The script of the text (Tesseract's orientation and script detection), e.g. `Latin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The language of the recognized text (ISO 639-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// What the recognizer wants the user to know (vision unavailable, fell back to OCR, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "integer")]
    pub attempts: u32,
    /// How closely the model looks (OpenAI's `detail`: `auto`, `low`, `high`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    Url {
        url: String,
    },
    Base64 {
        media_type: String,
        data: String,
    },
    Path {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileReferenceBlock {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_integer")]
    pub start_line: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_integer")]
    pub end_line: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_content: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub status: FileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResourceBlock {
    pub server_name: String,
    pub resource_uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieved_at: Option<String>,
    /// Binary content, base64 (`content` holds text content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub status: FileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A tool call; `arguments` is the JSON text exactly as the model streamed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallBlock {
    pub id: String,
    pub name: String,
    #[serde(default = "empty_object", skip_serializing_if = "is_empty_object")]
    pub arguments: String,
    #[serde(default, skip_serializing_if = "is_default")]
    pub approval: Approval,
    #[serde(default, skip_serializing_if = "is_default")]
    pub malformed: bool,
    /// The Responses `function_call` item it came in (`id` is the call id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// A closed set of strings, written in `snake_case`; the `#[default]` one is left out when written.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }
    };
}

string_enum!(
    /// Why the model stopped, mapped from each provider's own value.
    StopReason { EndTurn, Length, ToolUse, ContentFilter, Refusal, Pause, Error, Aborted, #[default] Unknown }
);
string_enum!(
    /// Where a user message came from: the user, a broadcast, the loop's synthetic nudge, or
    /// context the system provides (resources, not typed by anyone).
    UserSource {
        #[default]
        Direct,
        Broadcast,
        Synthetic,
        Context
    }
);
string_enum!(ToolStatus {
    #[default]
    Success,
    Error,
    Denied,
    Interrupted
});
string_enum!(FileStatus {
    #[default]
    Pending,
    Resolved,
    Error
});
string_enum!(RecognitionMode {
    Vision,
    Ocr,
    #[default]
    Auto
});
string_enum!(ModeUsed {
    #[default]
    Vision,
    Ocr
});
string_enum!(Approval {
    #[default]
    Pending,
    Approved,
    Denied
});

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_true(value: &bool) -> bool {
    *value
}

fn yes() -> bool {
    true
}

fn ephemeral() -> String {
    "ephemeral".to_owned()
}

fn is_ephemeral(kind: &str) -> bool {
    kind == "ephemeral"
}

fn empty_object() -> String {
    "{}".to_owned()
}

fn is_empty_object(value: &str) -> bool {
    value == "{}"
}

#[allow(clippy::ref_option)] // serde's skip_serializing_if passes a reference
fn is_none_or_empty_object(value: &Option<Box<RawValue>>) -> bool {
    value.as_ref().is_none_or(|raw| raw.get().strip_prefix('{').is_some_and(|rest| rest.trim_start() == "}"))
}

/// A float of the schema (`duration_ms`, `confidence`), read and written exactly as msgspec does,
/// so that both sides write the same text for the same value.
///
/// `serde_json` alone would differ twice: its parser is not correctly rounded (without the
/// `float_roundtrip` feature), and it writes `1e+16` where msgspec writes `1e16`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Float(pub f64);

impl<'de> Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        let found = match text.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => None,
            Some(b'"') => Some("a string"),
            Some(b'{') => Some("an object"),
            Some(b'[') => Some("an array"),
            Some(b'n') => Some("null"),
            _ => Some("a boolean"),
        };
        if let Some(found) = found {
            return Err(D::Error::invalid_type(Unexpected::Other(found), &"a number"));
        }
        // Valid JSON number text is valid Rust float text, and `str::parse` rounds correctly.
        match text.parse::<f64>() {
            // msgspec reads an integer as an int first: `-0` becomes 0.0, not -0.0
            Ok(value) if value == 0.0 && !text.contains(['.', 'e', 'E']) => Ok(Float(0.0)),
            Ok(value) if value.is_finite() => Ok(Float(value)),
            _ => Err(D::Error::custom("number out of range")),
        }
    }
}

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.0.is_finite() {
            return serializer.serialize_unit(); // msgspec writes NaN and infinities as null
        }
        RawValue::from_string(python_repr(self.0)).map_err(serde::ser::Error::custom)?.serialize(serializer)
    }
}

/// An integer of the schema (a token count, an index, a line number) read as msgspec reads an
/// `int` (the Python side, with its range: `python/msgwire/types.py`): a JSON integer in the
/// type's range, `-0` included (`serde_json` alone reads `-0` as the double -0.0, no integer); a
/// number with a fraction or an exponent (`1.0`, `1e5`) is no integer; one beyond the range
/// (`123456789012345678901234567890`) is out of range (`docs/wire.md`, "Numbers").
fn integer<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i128>,
{
    let raw = <&RawValue>::deserialize(deserializer)?;
    read_integer(raw.get())
}

/// [`integer`], or `null`.
#[allow(clippy::unnecessary_wraps)] // serde's deserialize_with of an `Option` field
fn optional_integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i128>,
{
    let raw = <&RawValue>::deserialize(deserializer)?;
    if raw.get() == "null" {
        return Ok(None);
    }
    read_integer(raw.get()).map(Some)
}

fn read_integer<T: TryFrom<i128>, E: serde::de::Error>(text: &str) -> Result<T, E> {
    let expected = &"an integer";
    let found = match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') if text.contains(['.', 'e', 'E']) => {
            return Err(match text.parse::<f64>() {
                Ok(value) if value.is_finite() => E::invalid_type(Unexpected::Float(value), expected),
                _ => E::custom(format_args!("number out of range: {text}")),
            });
        }
        Some(b'-' | b'0'..=b'9') => None,
        Some(b'"') => Some("a string"),
        Some(b'{') => Some("an object"),
        Some(b'[') => Some("an array"),
        Some(b'n') => Some("null"),
        _ => Some("a boolean"),
    };
    if let Some(found) = found {
        return Err(E::invalid_type(Unexpected::Other(found), expected));
    }
    text.parse::<i128>()
        .ok()
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| E::custom(format_args!("integer out of range: {text}")))
}

/// A finite float as msgspec writes it: the digits of Python's `repr` (the shortest that read back
/// to the same value; the nearest of them, ties to even), in fixed notation for `1e-5 <= |x| < 1e16`
/// (`0.00015`, `12.0`) and as `1.5e300` / `1e-7` otherwise.
fn python_repr(x: f64) -> String {
    let abs = x.abs();
    // Rust's shortest digits are right in length, but between two equally near candidates it
    // rounds half up; the exact rounding to that many digits is the nearest, ties to even.
    let shortest = format!("{abs:e}");
    let (mantissa, _) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let precision = mantissa.len().saturating_sub(2); // digits after the point: "d.ddd"
    let nearest = format!("{abs:.precision$e}");
    let chosen = if nearest.parse::<f64>() == Ok(abs) { nearest } else { shortest };
    let (mantissa, exponent) = chosen.split_once('e').unwrap_or((&chosen, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits = mantissa.replace('.', "");
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let (head, tail) = digits.split_at(1);
    match usize::try_from(exponent) {
        Ok(int_len) if int_len <= 15 => {
            let int_len = int_len + 1;
            if digits.len() <= int_len {
                format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
            } else {
                format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
            }
        }
        Err(_) if exponent >= -5 => format!("{sign}0.{}{digits}", "0".repeat(exponent.unsigned_abs() as usize - 1)),
        _ if tail.is_empty() => format!("{sign}{head}e{exponent}"),
        _ => format!("{sign}{head}.{tail}e{exponent}"),
    }
}

/// The `type` tag of a raw JSON object, read without decoding the rest.
#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    tag: std::borrow::Cow<'a, str>,
}

/// Decode a tagged object: `known` maps a tag to its decoded value, `None` for unknown tags,
/// which are then kept raw.
fn tagged<'de, D, T>(
    deserializer: D,
    known: impl FnOnce(&str, &str) -> Option<serde_json::Result<T>>,
    unknown: impl FnOnce(Box<RawValue>) -> T,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    // Borrowed: only an unknown object is copied out.
    let raw = <&RawValue>::deserialize(deserializer)?;
    let json = raw.get();
    let decoded = if let Some(tag) = peek_tag(json) {
        known(tag, json)
    } else {
        let tag: Tag<'_> = serde_json::from_str(json).map_err(|e| unplaced(&e))?;
        known(&tag.tag, json)
    };
    match decoded {
        Some(decoded) => decoded.map_err(|e| unplaced(&e)),
        None => Ok(unknown(raw.to_owned())),
    }
}

/// The tag of an object whose first key is `"type"` with a plain string value, as every
/// canonical writer puts it, read without scanning the rest (`Tag` would skip over all of it).
fn peek_tag(json: &str) -> Option<&str> {
    let rest = json.strip_prefix('{')?.trim_start().strip_prefix("\"type\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let end = rest.find(['"', '\\'])?;
    (rest.as_bytes().get(end) == Some(&b'"')).then(|| &rest[..end])
}

/// An error of a nested parse without its line and column, which count from the start of the
/// object, not of the input: the outer parser then gives it its own position (the object's end).
fn unplaced<E: serde::de::Error>(err: &serde_json::Error) -> E {
    let text = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    E::custom(text.strip_suffix(&position).unwrap_or(&text))
}

// --- the one-pass read of tagged objects ----------------------------------------------------------

thread_local! {
    /// Set while [`read_tag_first`] reads: messages and blocks are then read in one pass.
    static TAG_FIRST: Cell<bool> = const { Cell::new(false) };
}

/// Why a one-pass read gave up (never shown: the general read runs instead).
const NOT_TAG_FIRST: &str = "not a tag-first object of a known type";

/// A message or block type that can be read from the fields after its `type` tag.
trait TagFirst: Sized {
    /// The value for `tag` from the rest of its object; `None` for a tag this version does not know.
    fn from_rest<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Option<Result<Self, A::Error>>;
}

/// Reads an object whose first key is `type` with a known tag, as every canonical writer writes
/// them, in one pass; anything else is an error that sends [`read_tag_first`] to the general read.
struct TagFirstVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: TagFirst> Visitor<'de> for TagFirstVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object whose first key is `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let key: Option<std::borrow::Cow<'de, str>> = map.next_key()?;
        if key.as_deref() != Some("type") {
            return Err(A::Error::custom(NOT_TAG_FIRST));
        }
        let tag: std::borrow::Cow<'de, str> = map.next_value()?;
        T::from_rest(&tag, map).unwrap_or_else(|| Err(A::Error::custom(NOT_TAG_FIRST)))
    }
}

/// Read `input` with `read`, first in one pass that takes every message and block to begin with
/// a `type` this version knows (what `python/msgwire` and this crate write); when one does not
/// (an unknown type kept raw, another key first) or the input is in error, `read` runs again the
/// general way, which scans each object once more to keep it raw and reports errors in place.
/// `read` is given the input as text too when it is valid UTF-8 (checked once here): reading
/// from text, `serde_json` does not check each string again ([`parse`] does that).
pub fn read_tag_first<T>(input: &[u8], read: impl Fn(&[u8], Option<&str>) -> Result<T, Error>) -> Result<T, Error> {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            TAG_FIRST.set(false);
        }
    }
    // The one pass skips unknown fields without checking their bytes; the general read refuses
    // invalid UTF-8 anywhere, so such input goes to it alone.
    let Ok(text) = std::str::from_utf8(input) else {
        return read(input, None);
    };
    let fast = {
        let _reset = Reset;
        TAG_FIRST.set(true);
        read(input, Some(text))
    };
    match fast {
        Ok(value) => Ok(value),
        Err(_) => read(input, Some(text)),
    }
}

/// A value read from `input` (from `text`, the same input known to be UTF-8, when given).
pub fn parse<T: serde::de::DeserializeOwned>(input: &[u8], text: Option<&str>) -> Result<T, serde_json::Error> {
    match text {
        Some(text) => serde_json::from_str(text),
        None => serde_json::from_slice(input),
    }
}

/// The canonical tags of `Message` and `Block` and their variants, each stated once: the
/// one-pass read (`TagFirst`) and the general read (`tagged`) both match on this table.
macro_rules! tags {
    ($kind:ident { $($tag:literal => $variant:ident),* $(,)? }) => {
        impl TagFirst for $kind {
            fn from_rest<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Option<Result<Self, A::Error>> {
                let rest = MapAccessDeserializer::new(rest);
                Some(match tag {
                    $($tag => Deserialize::deserialize(rest).map($kind::$variant),)*
                    _ => return None,
                })
            }
        }

        impl $kind {
            /// The value of a tagged object's JSON, `None` for a tag msgwire has no type for.
            fn from_tagged(tag: &str, json: &str) -> Option<serde_json::Result<Self>> {
                match tag {
                    $($tag => Some(serde_json::from_str(json).map($kind::$variant)),)*
                    _ => None,
                }
            }
        }

        impl<'de> Deserialize<'de> for $kind {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                if TAG_FIRST.get() {
                    return deserializer.deserialize_map(TagFirstVisitor(std::marker::PhantomData));
                }
                tagged(deserializer, Self::from_tagged, $kind::Unknown)
            }
        }
    };
}

tags!(Message {
    "user" => User,
    "assistant" => Assistant,
    "tool_result" => ToolResult,
    "system_control" => SystemControl,
});

tags!(Block {
    "text" => Text,
    "thinking" => Thinking,
    "image" => Image,
    "file_reference" => FileReference,
    "mcp_resource" => McpResource,
    "tool_call" => ToolCall,
    "server_tool_call" => ServerToolCall,
    "server_tool_result" => ServerToolResult,
});

/// Read a canonical session envelope.
pub fn read_session(input: &[u8]) -> Result<Session, Error> {
    read_tag_first(input, read_session_with)
}

fn read_session_with(input: &[u8], text: Option<&str>) -> Result<Session, Error> {
    let session = parse(input, text).map_err(|e| {
        let mut error = Error::from_serde(&e, input);
        if e.is_eof() {
            error.offset = Some(input.len()); // where more input was expected (serde_json: the last byte)
        }
        error
    })?;
    // serde_json does not check all it skips or keeps raw: invalid UTF-8 in an unknown field, a
    // lone surrogate escape (`"\ud800"`) there or in `metadata`, `params`, an unknown message or
    // block. The Python side refuses both, and `write` would copy the surrogate out: refuse them
    // too, at their offset (only when the input may hold one, so valid input pays a scan).
    if crate::partial::may_hold_surrogate(input) || std::str::from_utf8(input).is_err() {
        crate::partial::validate_bytes(input, usize::MAX)?;
    }
    Ok(session)
}

/// The envelope's `version`, refused while parsing when it is not ours (so the error has its offset).
fn schema_version<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if version != SCHEMA_VERSION {
        return Err(D::Error::custom(format_args!(
            "session version {version} (this core reads version {SCHEMA_VERSION})"
        )));
    }
    Ok(version)
}

/// Write a value of the canonical schema as compact JSON.
pub fn write<T: Serialize>(value: &T) -> Result<Vec<u8>, Error> {
    crate::json_out::to_vec(value).map_err(|e| Error::write(&e))
}

/// A block's string that [`take_long_strings`] takes out: a text block's `text`, a thinking
/// block's `thinking`, a tool call's `arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongField {
    Text,
    Thinking,
    Arguments,
}

impl LongField {
    /// The field's name in the canonical schema (and in the Python types).
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Thinking => "thinking",
            Self::Arguments => "arguments",
        }
    }
}

/// Take the message's texts, thinking and tool arguments of at least `min_len` bytes out of its
/// blocks, leaving them empty: `(block index, field, string)` in block order. The message's
/// JSON then holds the rest, and whoever reads it puts each string back in its block: the
/// Python binding makes each one a `str` from the text as it is, so that a reply's long
/// strings are decoded once (from the body), not written as JSON and decoded again.
pub fn take_long_strings(message: &mut AssistantMessage, min_len: usize) -> Vec<(usize, LongField, String)> {
    let mut taken = Vec::new();
    for (index, block) in message.content.iter_mut().enumerate() {
        let (field, text) = match block {
            Block::Text(b) => (LongField::Text, &mut b.text),
            Block::Thinking(b) => (LongField::Thinking, &mut b.thinking),
            Block::ToolCall(b) => (LongField::Arguments, &mut b.arguments),
            _ => continue,
        };
        if text.len() >= min_len {
            taken.push((index, field, std::mem::take(text)));
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_strings_are_taken_out_in_block_order_and_short_ones_stay() {
        let long = "x".repeat(10);
        let call = ToolCallBlock {
            id: "c".to_owned(),
            name: "f".to_owned(),
            arguments: format!("[\"{long}\"]"),
            approval: Approval::Pending,
            malformed: false,
            item_id: None,
            cache_control: None,
        };
        let thinking = ThinkingBlock { thinking: long.clone(), ..ThinkingBlock::default() };
        let mut message = AssistantMessage {
            content: vec![
                Block::Thinking(thinking),
                Block::Text(TextBlock::new("short")),
                Block::Text(TextBlock::new(long.clone())),
                Block::ToolCall(call),
            ],
            ..AssistantMessage::default()
        };
        let taken = take_long_strings(&mut message, 10);
        let fields: Vec<_> = taken.iter().map(|(i, f, t)| (*i, f.name(), t.len())).collect();
        assert_eq!(fields, [(0, "thinking", 10), (2, "text", 10), (3, "arguments", 14)]);
        let json = String::from_utf8(write(&message).expect("writes")).expect("UTF-8");
        assert!(json.contains(r#""text":"short""#) && !json.contains(&long), "{json}");
    }

    fn roundtrip(json: &str) -> String {
        let session = read_session(json.as_bytes()).expect("reads");
        String::from_utf8(write(&session).expect("writes")).expect("utf-8")
    }

    /// The general read alone (no one-pass attempt), written back.
    fn roundtrip_general(json: &str) -> String {
        let session = read_session_with(json.as_bytes(), None).expect("reads");
        String::from_utf8(write(&session).expect("writes")).expect("utf-8")
    }

    #[test]
    fn the_one_pass_read_and_the_general_read_agree() {
        let head = r#"{"version":1,"id":"s","system_prompt":null,"created_at":"t","updated_at":"t","metadata":{},"messages":["#;
        let bodies = [
            // tag first, known types: read in one pass
            r#"{"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"a \"b\" \u00e9"}]}"#,
            // an unknown block: the one-pass read gives up, the general read keeps it raw
            r#"{"type":"assistant","id":"a","timestamp":"t","content":[{"type":"server_tool_use","id":"x", "input" : {}}]}"#,
            // the tag not first: general read
            r#"{"id":"u","type":"user","timestamp":"t","content":[{"text":"hi","type":"text"}]}"#,
            // an unknown message type
            r#"{"type":"note","id":"n","body":[1, 2]}"#,
        ];
        for body in bodies {
            let doc = format!("{head}{body}]}}");
            assert_eq!(roundtrip(&doc), roundtrip_general(&doc), "{body}");
            assert!(!TAG_FIRST.get(), "the one-pass flag is reset");
        }
        // invalid UTF-8 in a field the one pass would skip: refused, as the general read does
        let invalid =
            [head.as_bytes(), b"{\"type\":\"user\",\"id\":\"u\",\"timestamp\":\"t\",\"x\":\"\xc7o\"}]}"].concat();
        assert!(
            read_tag_first(&invalid, |input, _| serde_json::from_slice::<Vec<Message>>(
                &input[head.len() - 1..input.len() - 1]
            )
            .map_err(|e| Error::from_serde(&e, input)))
            .is_err()
        );
        // errors are the general read's, with its offsets
        let broken = format!("{head}{{\"type\":\"user\",\"id\":1}}]}}");
        assert_eq!(read_session(broken.as_bytes()).err(), read_session_with(broken.as_bytes(), None).err());
        assert!(!TAG_FIRST.get());
    }

    #[test]
    fn round_trips_every_message_kind_and_default() {
        let doc = concat!(
            r#"{"version":1,"id":"s1","system_prompt":null,"created_at":"2026-01-01T00:00:00Z","#,
            r#""updated_at":"2026-01-01T00:00:00Z","metadata":{"b":1,"a":[true,null]},"messages":["#,
            r#"{"type":"user","id":"m1","timestamp":"2026-01-01T00:00:00Z","content":[{"type":"text","text":"hi"}]},"#,
            r#"{"type":"assistant","id":"m2","timestamp":"2026-01-01T00:00:01.5Z","content":["#,
            r#"{"type":"thinking","thinking":"hm","signature":"sig"},"#,
            r#"{"type":"tool_call","id":"c1","name":"f","arguments":"{\"x\": 1}","approval":"approved"}],"#,
            r#""stop_reason":"tool_use","raw_stop_reason":"tool_calls","usage":{"input_tokens":3,"output_tokens":4}},"#,
            r#"{"type":"tool_result","id":"m3","timestamp":"2026-01-01T00:00:02Z","tool_call_id":"c1","#,
            r#""content":[{"type":"text","text":"42"}],"is_error":true,"status":"error","#,
            r#""error":{"message":"boom","recoverable":false},"duration_ms":12.5},"#,
            r#"{"type":"system_control","id":"m4","timestamp":"2026-01-01T00:00:03Z","control":"mode_change","params":{"old":"a","new":"b"}}"#,
            r#"]}"#
        );
        assert_eq!(roundtrip(doc), doc);
    }

    #[test]
    fn keeps_unknown_messages_and_blocks_byte_for_byte() {
        let doc = concat!(
            r#"{"version":1,"id":"s","system_prompt":"be brief","created_at":"t","updated_at":"t","metadata":{},"messages":["#,
            r#"{"type":"hologram","z":  [1, 2]},"#,
            r#"{"type":"user","id":"m","timestamp":"t","content":[{"type":"smell","odor":"rose" }]}]}"#
        );
        let session = read_session(doc.as_bytes()).expect("reads");
        assert!(matches!(session.messages[0], Message::Unknown(_)));
        assert_eq!(roundtrip(doc), doc);
    }

    #[test]
    fn floats_are_read_and_written_as_msgspec_does() {
        for (value, text) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (12.0, "12.0"),
            (0.1, "0.1"),
            (1e-7, "1e-7"),
            (1e-5, "0.00001"),
            (1.521_260_348_679_302_5e-5, "0.000015212603486793025"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e16"),
            (1.5e300, "1.5e300"),
            (f64::MAX, "1.7976931348623157e308"),
            (5e-324, "5e-324"),
            (2_927_722_419_343_957.0 / 4.0, "731930604835989.2"), // exactly ...989.25: a tie, to even
        ] {
            assert_eq!(serde_json::to_string(&Float(value)).expect("writes"), text);
            assert_eq!(serde_json::from_str::<Float>(text).expect("reads").0.to_bits(), value.to_bits(), "{text}");
        }
        assert_eq!(serde_json::to_string(&Float(f64::NAN)).expect("writes"), "null");
        assert_eq!(serde_json::from_str::<Float>("-0").expect("reads").0.to_bits(), 0.0f64.to_bits());
        assert_eq!(serde_json::from_str::<Float>("1E5").expect("reads").0.to_bits(), 100_000.0f64.to_bits());
        for refused in ["1e400", "\"1\"", "null", "[]"] {
            assert!(serde_json::from_str::<Float>(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn integers_are_read_as_msgspec_reads_them() {
        let usage = |text: &str| serde_json::from_str::<Usage>(&format!(r#"{{"input_tokens":{text}}}"#));
        assert_eq!(usage("-0").expect("-0 is the integer 0").input_tokens, 0);
        assert_eq!(usage("18446744073709551615").expect("u64::MAX").input_tokens, u64::MAX);
        for (text, error) in [
            ("18446744073709551616", "integer out of range: 18446744073709551616"),
            ("123456789012345678901234567890", "integer out of range"),
            ("-1", "integer out of range: -1"),
            ("1.0", "invalid type: floating point `1.0`, expected an integer"),
            ("0e0", "invalid type: floating point"),
            ("1e400", "number out of range: 1e400"),
            ("\"1\"", "invalid type: a string"),
        ] {
            let err = usage(text).expect_err(text).to_string();
            assert!(err.starts_with(error), "{text}: {err}");
        }
        let lines =
            |text: &str| serde_json::from_str::<FileReferenceBlock>(&format!(r#"{{"path":"p","start_line":{text}}}"#));
        assert_eq!(lines("null").expect("null").start_line, None);
        assert_eq!(lines("-9223372036854775808").expect("i64::MIN").start_line, Some(i64::MIN));
        assert!(lines("9223372036854775808").is_err());
    }

    #[test]
    fn refuses_what_serde_json_skips_unchecked() {
        // Found by `fuzz/fuzz_targets/canonical.rs`: read, and for a surrogate written back, though
        // the Python side refuses the document.
        use crate::error::{ErrorKind, JsonSyntax};
        let head = r#"{"version":1,"id":"s","system_prompt":null,"created_at":"t","updated_at":"t","#;
        let cases: [(&[u8], usize, JsonSyntax); 5] = [
            (b"\"zz\":\"b\x8e\",\"metadata\":{},\"messages\":[]}", 84, JsonSyntax::InvalidUtf8),
            (br#""zz":"\ud800","metadata":{},"messages":[]}"#, 83, JsonSyntax::LoneSurrogate),
            (br#""metadata":{"a":"x\uDC00"},"messages":[]}"#, 95, JsonSyntax::LoneSurrogate),
            (br#""metadata":{},"messages":[{"type":"zz","a":"\ud800"}]}"#, 121, JsonSyntax::LoneSurrogate),
            (
                br#""metadata":{},"messages":[{"type":"system_control","id":"m","timestamp":"t","control":"c","params":{"a":"\ud800"}}]}"#,
                182,
                JsonSyntax::LoneSurrogate,
            ),
        ];
        for (tail, offset, syntax) in cases {
            let doc = [head.as_bytes(), tail].concat();
            let err = read_session(&doc).expect_err(&String::from_utf8_lossy(&doc));
            assert_eq!(err, Error { kind: ErrorKind::JsonSyntax(syntax), offset: Some(offset) });
        }
        // A surrogate pair is a character, and `\\ud800` no escape at all.
        let doc = [head, r#""metadata":{"a":"\ud83d\ude00 \\ud800"},"messages":[]}"#].concat();
        assert_eq!(roundtrip(&doc), doc);
    }

    #[test]
    fn errors_carry_a_byte_offset() {
        let err = read_session(b"{\"version\":1,\n\"id\": }").expect_err("malformed");
        assert_eq!(err.offset, Some(20));
        assert!(err.to_string().contains("(byte 20)"), "{err}");
        let newer = br#"{"version":2,"id":"s","system_prompt":null,"created_at":"t","updated_at":"t","metadata":{},"messages":[]}"#;
        let err = read_session(newer).expect_err("newer");
        assert!(err.to_string().contains("version 2"), "{err}");
    }
}
