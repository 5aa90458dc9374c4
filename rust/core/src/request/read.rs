//! Reading requests: the canonical session a request body is written back as, and the helpers
//! that read pieces of a body with errors placed in it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Settings, settings};
use crate::canonical::{self, Block};
use crate::error::Error;

/// A canonical session without ids and times (the Python types fill them), with the rest of the
/// request (`msgwire.Request` reads all of it, `msgwire.Session` the conversation).
#[derive(Debug, Serialize)]
pub(crate) struct SessionOut<'a> {
    pub system_prompt: Option<Cow<'a, str>>,
    pub messages: Vec<MessageOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<settings::ToolOut>,
    #[serde(flatten)]
    pub settings: Settings,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum MessageOut<'a> {
    User {
        content: Vec<BlockOut<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    Assistant {
        content: Vec<BlockOut<'a>>,
        provider: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    ToolResult {
        tool_call_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_name: Option<Cow<'a, str>>,
        content: Vec<BlockOut<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<canonical::CacheControl>,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // a short-lived list per message read; boxing would only add allocations
pub(crate) enum BlockOut<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Thinking {
        #[serde(skip_serializing_if = "str::is_empty")]
        thinking: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        redacted: Option<Cow<'a, str>>,
    },
    Image {
        source: SourceOut<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<Cow<'a, str>>,
    },
    ToolCall {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        arguments: Cow<'a, str>,
    },
    ProviderPart {
        dialect: &'static str,
        part: &'a RawValue,
    },
    /// A block with a cache breakpoint (Anthropic's `cache_control`): the block with the field.
    #[serde(untagged)]
    Cached(serde_json::Value),
    /// A canonical block as it is (cited text, server tool blocks, blocks with item ids).
    #[serde(untagged)]
    Canonical(Block),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum SourceOut<'a> {
    Url { url: Cow<'a, str> },
    Base64 { media_type: Cow<'a, str>, data: Cow<'a, str> },
}

/// Parse `raw` (a piece of `body`) as `T`, with errors placed in `body`.
pub(crate) fn parse_in<'a, T: Deserialize<'a>>(body: &[u8], raw: &'a RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let base = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
        let error = Error::from_serde(&e, raw.get().as_bytes()).in_body("request body");
        if base <= body.len() { error.shifted(base as u64) } else { error }
    })
}

/// Text that is either a JSON string or an array of `{"type": "text", "text"}` parts, joined by a
/// blank line (a system prompt).
pub(crate) fn joined_text<'a>(body: &[u8], raw: &'a RawValue) -> Result<Cow<'a, str>, Error> {
    #[derive(Deserialize)]
    struct TextPart<'a> {
        #[serde(borrow)]
        text: Cow<'a, str>,
    }
    if raw.get().starts_with('"') {
        return parse_in(body, raw);
    }
    let parts: Vec<TextPart<'a>> = parse_in(body, raw)?;
    if let [one] = parts.as_slice() {
        return Ok(one.text.clone());
    }
    Ok(Cow::Owned(parts.iter().map(|p| p.text.as_ref()).collect::<Vec<_>>().join("\n\n")))
}

/// Where `raw` (a piece of `body`) starts in `body`.
pub(crate) fn offset_in(body: &[u8], raw: &RawValue) -> u64 {
    (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize).min(body.len()) as u64
}

/// Serialize a request body (as every canonical value is written).
pub(crate) use crate::canonical::write as to_vec;
