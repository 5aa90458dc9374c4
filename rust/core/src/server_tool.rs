//! Server tools (tools a provider runs itself): each provider's blocks read into
//! [`ServerToolCallBlock`] and [`ServerToolResultBlock`], the provider's object kept whole (`raw`)
//! to be written back unchanged to its dialect.
//!
//! - Anthropic: a call is `server_tool_use` or `mcp_tool_use` (`id`, `name`, `input`); a result
//!   is a block of its own whose type ends in `_tool_result` (`web_search_tool_result`,
//!   `web_fetch_tool_result`, `code_execution_tool_result`, `mcp_tool_result`, ...) with the
//!   call's id as `tool_use_id`. It failed when `is_error` says so, or its `content` is an
//!   object whose type ends in `_error`.
//! - Responses: a built-in tool item (`web_search_call`, `file_search_call`,
//!   `code_interpreter_call`, `image_generation_call`, `mcp_call`, ...: an item whose type ends
//!   in `_call`, function calls aside) is one call block, its outcome inside the item. Its
//!   `name` is the item's `name`, else the type without `_call`; its arguments the item's
//!   `action`, else its `arguments`, else its other fields (outputs, results and status aside).
//! - Gemini: the candidate's `groundingMetadata` is a call of `google_search` (its
//!   `webSearchQueries` the arguments; `grounding` when it has none), kind `grounding_metadata`.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::canonical::{Block, Raw, ServerToolCallBlock, ServerToolResultBlock};
use crate::raw::{Members, normalized, normalized_object};

/// The kind of Gemini's grounding block.
pub(crate) const GROUNDING_METADATA: &str = "grounding_metadata";

fn raw_of(json: &str) -> Option<Raw> {
    RawValue::from_string(json.to_owned()).ok().map(Raw)
}

/// Whether an Anthropic block type is a server tool call or result.
pub(crate) fn is_anthropic(kind: &str) -> bool {
    matches!(kind, "server_tool_use" | "mcp_tool_use") || (kind.ends_with("_tool_result") && kind != "tool_result")
}

/// An Anthropic server tool block (see [`is_anthropic`]); `input`: its input as streamed, when
/// it streamed (else the block's own).
pub(crate) fn from_anthropic(json: &str, input: Option<&str>) -> Option<Block> {
    #[derive(Deserialize)]
    struct In<'a> {
        #[serde(rename = "type")]
        kind: String,
        id: Option<String>,
        name: Option<String>,
        #[serde(borrow)]
        input: Option<&'a RawValue>,
        tool_use_id: Option<String>,
        is_error: Option<bool>,
        #[serde(borrow)]
        content: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct ContentType {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    let b: In<'_> = serde_json::from_str(json).ok()?;
    let raw = raw_of(json)?;
    if matches!(b.kind.as_str(), "server_tool_use" | "mcp_tool_use") {
        let arguments = input.filter(|i| !i.trim().is_empty()).or(b.input.map(RawValue::get)).unwrap_or("{}");
        return Some(Block::ServerToolCall(ServerToolCallBlock {
            id: b.id?,
            name: b.name.unwrap_or_default(),
            arguments: arguments.to_owned(),
            kind: b.kind,
            dialect: "anthropic".to_owned(),
            raw,
        }));
    }
    if !is_anthropic(&b.kind) {
        return None;
    }
    let error_content = b
        .content
        .and_then(|c| serde_json::from_str::<ContentType>(c.get()).ok())
        .and_then(|c| c.kind)
        .is_some_and(|k| k.ends_with("_error"));
    Some(Block::ServerToolResult(ServerToolResultBlock {
        tool_call_id: b.tool_use_id?,
        is_error: b.is_error.unwrap_or(false) || error_content,
        kind: b.kind,
        dialect: "anthropic".to_owned(),
        raw,
    }))
}

/// Whether a Responses item type is a built-in tool call.
pub(crate) fn is_responses(kind: &str) -> bool {
    kind.ends_with("_call") && !matches!(kind, "function_call" | "custom_tool_call")
}

/// A Responses built-in tool item (see [`is_responses`]). Its arguments are in the normal form
/// `serde_json::Value` writes (compact, keys sorted), their numbers as the item has them
/// (`crate::raw`): `1e400` or a 30-digit integer in an item changes neither its kind nor its text.
pub(crate) fn from_responses(json: &str) -> Option<Block> {
    let item = Members::of(json)?;
    let kind = item.text("type")?;
    if !is_responses(&kind) {
        return None;
    }
    let id = item.text("id").unwrap_or_default();
    let name = match item.text("name") {
        Some(name) => name,
        None => kind.trim_end_matches("_call").to_owned(),
    };
    let arguments = if let Some(action) = item.get("action") {
        normalized(action.get())?
    } else if let Some(arguments) = item.get("arguments") {
        match serde_json::from_str::<String>(arguments.get()) {
            Ok(text) => text,
            Err(_) => normalized(arguments.get())?,
        }
    } else {
        let skipped = ["id", "type", "status", "results", "outputs", "output", "result", "error"];
        normalized_object(item.0.into_iter().filter(|(key, _)| !skipped.contains(&key.as_ref())))?
    };
    Some(Block::ServerToolCall(ServerToolCallBlock {
        id,
        name,
        arguments,
        kind,
        dialect: "openai-responses".to_owned(),
        raw: raw_of(json)?,
    }))
}

/// Gemini's grounding metadata as a call block, with this id.
pub(crate) fn from_gemini(metadata: &str, id: String) -> Option<Block> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct In {
        web_search_queries: Option<Vec<String>>,
    }
    let grounding: In = serde_json::from_str(metadata).ok()?;
    let (name, arguments) = match grounding.web_search_queries {
        Some(queries) => ("google_search", serde_json::json!({ "queries": queries }).to_string()),
        None => ("grounding", "{}".to_owned()),
    };
    Some(Block::ServerToolCall(ServerToolCallBlock {
        id,
        name: name.to_owned(),
        arguments,
        kind: GROUNDING_METADATA.to_owned(),
        dialect: "gemini".to_owned(),
        raw: raw_of(metadata)?,
    }))
}

/// The raw grounding metadata of a message's Gemini grounding block (the last), if it has one.
pub(crate) fn grounding(message: &crate::canonical::AssistantMessage) -> Option<&RawValue> {
    message.content.iter().rev().find_map(|block| match block {
        Block::ServerToolCall(c) if c.dialect == "gemini" && c.kind == GROUNDING_METADATA => Some(&*c.raw.0),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_blocks_are_calls_and_results() {
        let call =
            r#"{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{},"caller":{"type":"direct"}}"#;
        let Some(Block::ServerToolCall(c)) = from_anthropic(call, Some(r#"{"query": "q"}"#)) else { panic!("a call") };
        assert_eq!(
            (c.id.as_str(), c.name.as_str(), c.arguments.as_str()),
            ("srv_1", "web_search", r#"{"query": "q"}"#)
        );
        assert_eq!(c.raw.get(), call);
        let failed = r#"{"type":"web_search_tool_result","tool_use_id":"srv_1","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}"#;
        let Some(Block::ServerToolResult(r)) = from_anthropic(failed, None) else { panic!("a result") };
        assert!(r.is_error);
        assert_eq!(r.tool_call_id, "srv_1");
        assert!(from_anthropic(r#"{"type":"tool_result","tool_use_id":"t"}"#, None).is_none());
    }

    #[test]
    fn responses_items_are_calls_with_their_outcome() {
        let search =
            r#"{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}"#;
        let Some(Block::ServerToolCall(c)) = from_responses(search) else { panic!("a call") };
        assert_eq!((c.id.as_str(), c.name.as_str()), ("ws_1", "web_search"));
        assert_eq!(c.arguments, r#"{"query":"q","type":"search"}"#);
        let code = r#"{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"1+1","container_id":"c","outputs":[]}"#;
        let Some(Block::ServerToolCall(c)) = from_responses(code) else { panic!("a call") };
        assert_eq!(
            (c.name.as_str(), c.arguments.as_str()),
            ("code_interpreter", r#"{"code":"1+1","container_id":"c"}"#)
        );
        assert!(from_responses(r#"{"id":"x","type":"mcp_list_tools"}"#).is_none());
    }
}
