//! Provider dialects: each turns one provider's stream payloads into [`Builder`] calls.
//!
//! A dialect sees already-framed payloads (one SSE event, or one NDJSON line) and owns that
//! provider's rules: how blocks and tool calls are keyed, what ends the stream, how stop
//! reasons and usage map to the canonical schema. Everything generic (blocks, events, limits,
//! diagnostics) lives in the builder.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod ollama;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod walk;

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::assemble::Builder;
use crate::canonical::StopReason;
use crate::error::Error;

/// How a dialect's stream is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Sse,
    Ndjson,
}

/// The dialects msgwire speaks, by the names users pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DialectName {
    /// OpenAI Chat Completions and the servers compatible with it.
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
    /// Ollama's native `/api/chat` NDJSON stream.
    Ollama,
}

impl DialectName {
    pub const ALL: [DialectName; 5] =
        [Self::OpenAi, Self::OpenAiResponses, Self::Anthropic, Self::Gemini, Self::Ollama];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    /// The `provider` recorded on assembled messages.
    pub fn provider(self) -> &'static str {
        match self {
            Self::OpenAi | Self::OpenAiResponses => "openai",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    pub fn framing(self) -> Framing {
        if self == Self::Ollama { Framing::Ndjson } else { Framing::Sse }
    }

    /// A fresh decoder state for one stream.
    pub fn decoder(self) -> Box<dyn Dialect + Send + Sync> {
        match self {
            Self::OpenAi => Box::<openai_chat::OpenAiChat>::default(),
            Self::OpenAiResponses => Box::<openai_responses::OpenAiResponses>::default(),
            Self::Anthropic => Box::<anthropic::Anthropic>::default(),
            Self::Gemini => Box::<gemini::Gemini>::default(),
            Self::Ollama => Box::<ollama::Ollama>::default(),
        }
    }
}

impl fmt::Display for DialectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = DialectName::ALL.iter().map(|d| d.as_str()).collect();
        write!(f, "unknown dialect {:?} (known: {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownDialect {}

impl FromStr for DialectName {
    type Err = UnknownDialect;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "openai" | "openai-chat" | "chat" => Ok(Self::OpenAi),
            "openai-responses" | "responses" => Ok(Self::OpenAiResponses),
            "anthropic" => Ok(Self::Anthropic),
            "gemini" | "google" => Ok(Self::Gemini),
            "ollama" => Ok(Self::Ollama),
            other => Err(UnknownDialect(other.to_owned())),
        }
    }
}

/// One provider's stream rules.
pub trait Dialect {
    /// One payload: an SSE event (`event` is its type, `"message"` when none was given) or an
    /// NDJSON line (`event` is `""`).
    fn on_payload(&mut self, event: &str, data: &str, builder: &mut Builder) -> Result<(), Error>;

    /// The stream ended: finish what the provider finished, or report the stream as truncated.
    fn on_end(&mut self, builder: &mut Builder) -> Result<(), Error>;
}

/// A JSON value that is a string or an array of typed parts (OpenAI-compatible `content`,
/// Magistral's `thinking`), read in one pass, the string borrowed unless it has escapes.
#[derive(Debug)]
pub(crate) enum TextOrParts<'a, P> {
    Text(Cow<'a, str>),
    Parts(Vec<P>),
}

impl<'de: 'a, 'a, P: Deserialize<'de>> Deserialize<'de> for TextOrParts<'a, P> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either<'a, P>(PhantomData<(&'a (), P)>);

        impl<'de: 'a, 'a, P: Deserialize<'de>> Visitor<'de> for Either<'a, P> {
            type Value = TextOrParts<'a, P>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of parts")
            }

            fn visit_borrowed_str<E: serde::de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(TextOrParts::Text(Cow::Borrowed(text)))
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(TextOrParts::Text(Cow::Owned(text.to_owned())))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(TextOrParts::Parts)
            }
        }

        deserializer.deserialize_any(Either(PhantomData))
    }
}

/// A provider's stop reasons: for each canonical reason, the provider's words for it (the first
/// is the one written). One table per dialect, in its file, read and written from it.
pub(crate) type StopTable = &'static [(StopReason, &'static [&'static str])];

/// The canonical reason of a provider's word: the first in `table` that holds it, else `Unknown`.
pub(crate) fn read_stop(table: StopTable, word: &str) -> StopReason {
    table.iter().find(|(_, words)| words.contains(&word)).map_or(StopReason::Unknown, |(reason, _)| *reason)
}

/// Parse one payload, errors placed at the payload's offset in the stream.
pub(crate) fn parse<'a, T: Deserialize<'a>>(data: &'a str, builder: &Builder) -> Result<T, Error> {
    serde_json::from_str(data)
        .map_err(|e| Error::from_serde(&e, data.as_bytes()).in_body("stream payload").shifted(builder.offset()))
}

/// The error a provider put inside its stream, from the common `{"error": {...}}` shapes
/// (`error` an object with `type`/`code` and `message`, or a plain string).
pub(crate) fn provider_error(error: &serde_json::Value, builder: &Builder) -> Error {
    // A field as text: a string as it is, a number as written; JSON null (and LiteLLM's "None")
    // is no value at all.
    let field = |name: &str| {
        error
            .get(name)
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .filter(|text| text != "None")
    };
    let (error_type, message, code) = match error {
        serde_json::Value::String(text) => ("error".to_owned(), text.clone(), None),
        _ => (
            // Gemini's `status` (`RESOURCE_EXHAUSTED`) says more than its numeric `code`.
            field("type").or_else(|| field("status")).or_else(|| field("code")).unwrap_or_else(|| "error".to_owned()),
            field("message").unwrap_or_else(|| error.to_string()),
            field("code"),
        ),
    };
    Error::provider(error_type, message, builder.offset()).with_code(code)
}

/// A provider block msgwire has no type for, kept whole: wrapped as
/// `{"type": "provider_part", "dialect", "part"}`, as request conversion keeps provider parts,
/// so that it reads back as what it is (never as a canonical block of the same tag, and without
/// the unknown-block warning) and is written back unchanged to its dialect.
pub(crate) fn kept_whole(raw: &RawValue, dialect: DialectName) -> Box<RawValue> {
    let wrapped = format!(r#"{{"type":"provider_part","dialect":"{}","part":{}}}"#, dialect.as_str(), raw.get());
    RawValue::from_string(wrapped).unwrap_or_else(|_| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_blocks_are_wrapped() {
        let kept = |json: &str| {
            kept_whole(&serde_json::from_str::<Box<RawValue>>(json).expect("JSON"), DialectName::Anthropic)
        };
        for json in [
            r#"{"type":"container_upload","file_id":"f"}"#,
            r#"{"type":"thinking","x":1}"#,
            r#"{"type":"provider_part"}"#,
            r#"{"id":"no type"}"#,
            r#"{"type":7}"#,
        ] {
            let want = format!(r#"{{"type":"provider_part","dialect":"anthropic","part":{json}}}"#);
            assert_eq!(kept(json).get(), want);
        }
    }
}
