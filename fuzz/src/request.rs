//! `request` and `request_read`: request bodies (`request::to_request_json`, `from_request_json`).
//!
//! `request` input: `[mode] [source] [body...]`. Mode bits 0-2 pick the dialect (modulo 5, in
//! the order of `DialectName::ALL`), bit 3 the `developer` system role, bits 4-5 the
//! `tool_call_ids` rule (none, mistral, anthropic, openai), bits 6-7 the options ([`options`]:
//! the default policy; every block kept; every block as text; every block dropped, malformed
//! arguments refused, with tools, a system prompt and a `missing_result` of their own). When bit
//! 7 of `source` is set, the body is a provider request of dialect `source & 7` (modulo 5), read
//! with `from_request_json` first (so the fixtures in `tests/fixtures/requests` are seeds);
//! otherwise it is canonical JSON (a session, or an array of messages).
//!
//! Invariants of `request`:
//! - the conversion either fails with an error placed inside the input, or gives a body that is
//!   JSON with the dialect's top-level keys, and a report that is JSON whose entries name messages
//!   of the input;
//! - converting twice gives the same bytes and the same report (the ids rewritten included);
//! - the body reads back (`from_request_json`), and the session read converts to the very same
//!   body with the same options: `to_request(from_request(body)) == body`, the normal form the
//!   request module promises for the bodies it writes (`python/msgwire/formats.py`). Outside
//!   that promise, and not checked: a body holding a raw block of another dialect or an unknown
//!   block (policy `unknown: keep`, reported as an `unknown_block` fallback);
//! - every tool call of the body is answered as its provider requires, with ids its provider
//!   (and the `tool_call_ids` server) accepts, each once ([`answered`]); the plan pairs the
//!   canonical calls, so this is not checked when the body holds raw JSON (a `provider_part` of
//!   the dialect, or blocks kept by policy). The round trip is not checked either for a
//!   `provider_part` of the target dialect that was not read from a body of it (one made up in
//!   canonical JSON may hold a part `from_request` reads as a block of its own).
//!
//! `request_read` input: `[mode] [body...]`, mode bits 0-2 the dialect. Invariants: reading never
//! panics; what reads is a session (`canonical::read_session` reads it once the ids and times
//! the Python types add are filled in) that converts back to the same dialect, into a body that
//! keeps the normal-form round trip above.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use msgwire_core::canonical::{self, Block, Message};
use msgwire_core::partial::validate;
use msgwire_core::request::{
    Action, Converted, IdFormat, Malformed, Options, Policy, Replay, SystemRole, Tool, from_request_json, report_json,
    to_request_json,
};
use msgwire_core::{DialectName, Error};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json::Json;

/// The dialect of the low 3 bits of `byte`.
pub fn dialect(byte: u8) -> DialectName {
    DialectName::ALL[usize::from(byte & 7) % 5]
}

/// The options bits 3-7 of `mode` select.
pub fn options(mode: u8) -> Options<'static> {
    let mut options = Options {
        system_role: if mode & 8 != 0 { SystemRole::Developer } else { SystemRole::System },
        tool_call_ids: [None, Some(IdFormat::Mistral), Some(IdFormat::Anthropic), Some(IdFormat::OpenAi)]
            [usize::from((mode >> 4) & 3)],
        ..Options::default()
    };
    let every = |replay, malformed_arguments| Policy {
        thinking: replay,
        redacted_thinking: replay,
        images: replay,
        file_reference: replay,
        mcp_resource: replay,
        unknown: replay,
        server_tools: replay,
        malformed_arguments,
    };
    match mode >> 6 {
        0 => {}
        1 => options.policy = every(Replay::Keep, Malformed::Wrap),
        2 => options.policy = every(Replay::ToText, Malformed::Wrap),
        _ => {
            options.policy = every(Replay::Drop, Malformed::Error);
            options.system_prompt = Some(Cow::Borrowed("Be brief."));
            options.missing_result = Some(Cow::Borrowed("cancelled"));
            let parameters: &'static RawValue =
                serde_json::from_str(r#"{"type":"object","properties":{"city":{"type":"string"}}}"#).expect("JSON");
            options.tools =
                vec![Tool { name: Cow::Borrowed("get_weather"), description: None, parameters, strict: None, cache_control: None }];
        }
    }
    options
}

pub fn check(data: &[u8]) {
    let (&mode, rest) = data.split_first().unwrap_or((&0, &[]));
    let (&source, body) = rest.split_first().unwrap_or((&0, &[]));
    let target = dialect(mode);
    if source & 0x80 == 0 {
        return convert_and_check(body, target, &options(mode), false);
    }
    let Ok(session) = from_request_json(body, dialect(source)) else { return };
    convert_and_check(&with_ids(&session), target, &options(mode), dialect(source) == target);
}

pub fn check_read(data: &[u8]) {
    let (&mode, body) = data.split_first().unwrap_or((&0, &[]));
    let dialect = dialect(mode);
    let session = match from_request_json(body, dialect) {
        Ok(session) => session,
        Err(error) => return assert_placed(&error, body),
    };
    let text = std::str::from_utf8(&session).expect("the session is UTF-8");
    assert_eq!(validate(text, 10_000), Ok(()), "{dialect}: the session is JSON: {text}");
    let filled = with_ids(&session);
    let read = canonical::read_session(&filled);
    let read = read.unwrap_or_else(|e| panic!("{dialect}: the session read does not read as canonical: {e}\n{text}"));
    let written = canonical::write(&read).expect("a session read writes");
    let converted = to_request_json(&written, dialect, &Options::default());
    converted.unwrap_or_else(|e| panic!("{dialect}: the session read does not convert back: {e}\n{text}"));
    convert_and_check(&written, dialect, &Options::default(), true);
}

/// Convert `input` to `dialect` with `options` and check every invariant of the module doc.
/// `read` says that the input's provider parts of `dialect` were read from a body of it (so
/// they hold what such a body holds: the round trip is promised for them).
fn convert_and_check(input: &[u8], dialect: DialectName, options: &Options<'_>, read: bool) {
    let converted = match to_request_json(input, dialect, options) {
        Ok(converted) => converted,
        Err(error) => return assert_placed(&error, input),
    };
    let again = to_request_json(input, dialect, options).expect("the same input converts again");
    assert!(again == converted, "{dialect}: converting twice differs");
    let Converted { body, report } = converted;
    let text = std::str::from_utf8(&body).expect("the body is UTF-8");
    assert_eq!(validate(text, 10_000), Ok(()), "{dialect}: the body is JSON: {text}");
    let report_text = String::from_utf8(report_json(&report)).expect("the report is UTF-8");
    assert_eq!(validate(&report_text, 1000), Ok(()), "the report is JSON: {report_text}");
    let messages = message_count(input);
    assert!(report.iter().all(|l| l.message < messages), "{dialect}: a report entry past the input: {report_text}");

    // as `Json`: a raw part or arguments object may hold a number no double holds (`1e400`)
    let value = Json::parse(text);
    shape(&value, dialect, text);
    // raw JSON the conversion sends as it is (another dialect's part or an unknown block by
    // policy, a part of this dialect): the plan pairs the canonical calls only
    let fallback = report.iter().any(|l| l.kind == "unknown_block" && l.action == Action::Fallback);
    let raw = has_part_of(input, dialect);
    if !fallback && !raw {
        answered(&value, dialect, options.tool_call_ids, text);
    }
    if fallback || (raw && !read) {
        return;
    }
    let session =
        from_request_json(&body, dialect).unwrap_or_else(|e| panic!("{dialect}: does not read back: {e}\n{text}"));
    let session = with_ids(&session);
    let back = to_request_json(&session, dialect, options);
    let back = back.unwrap_or_else(|e| panic!("{dialect}: the session read does not convert: {e}\n{text}"));
    let back_text = String::from_utf8_lossy(&back.body);
    assert_eq!(back_text, text, "{dialect}: to_request(from_request(body)) != body");
}

/// A failure is placed inside the input, if at all.
fn assert_placed(error: &Error, input: &[u8]) {
    if let Some(offset) = error.offset {
        assert!(offset <= input.len(), "error offset {offset} past the input ({} bytes): {error}", input.len());
    }
}

/// How many messages the canonical `input` (a session or an array) holds.
fn message_count(input: &[u8]) -> usize {
    if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        serde_json::from_slice::<Vec<Message>>(input).map_or(0, |m| m.len())
    } else {
        canonical::read_session(input).map_or(0, |s| s.messages.len())
    }
}

/// Whether the canonical `input` holds a `provider_part` block of `dialect` (written as it is).
fn has_part_of(input: &[u8], dialect: DialectName) -> bool {
    #[derive(Deserialize)]
    struct Part<'a> {
        #[serde(rename = "type")]
        kind: Cow<'a, str>,
        dialect: Cow<'a, str>,
    }
    let messages = if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        serde_json::from_slice::<Vec<Message>>(input).unwrap_or_default()
    } else {
        canonical::read_session(input).map(|s| s.messages).unwrap_or_default()
    };
    let blocks = messages.iter().flat_map(|m| match m {
        Message::User(m) => m.content.as_slice(),
        Message::Assistant(m) => m.content.as_slice(),
        Message::ToolResult(m) => m.content.as_slice(),
        _ => &[],
    });
    blocks
        .filter_map(
            |b| if let Block::Unknown(raw) = b { serde_json::from_str::<Part<'_>>(raw.get()).ok() } else { None },
        )
        .any(|p| p.kind == "provider_part" && p.dialect == dialect.as_str())
}

/// The session `from_request_json` writes, with the ids and times the Python types would add,
/// the raw text of every message kept (a provider part is written back byte for byte).
pub fn with_ids(session: &[u8]) -> Vec<u8> {
    #[derive(Deserialize)]
    struct Read<'a> {
        #[serde(borrow)]
        system_prompt: Option<&'a RawValue>,
        #[serde(borrow)]
        messages: Vec<&'a RawValue>,
    }
    let read: Read<'_> = serde_json::from_slice(session).expect("from_request_json writes a session");
    let mut out = String::from(r#"{"version":1,"id":"s","system_prompt":"#);
    out.push_str(read.system_prompt.map_or("null", RawValue::get));
    out.push_str(
        r#","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","metadata":{},"messages":["#,
    );
    for (i, message) in read.messages.iter().enumerate() {
        let fields = message.get().strip_prefix('{').expect("a message is an object");
        let comma = if i == 0 { "" } else { "," };
        let _ = write!(out, r#"{comma}{{"id":"m{i}","timestamp":"2026-01-01T00:00:00Z","#);
        out.push_str(fields);
    }
    out.push_str("]}");
    out.into_bytes()
}

/// The body's top-level keys are the dialect's: its conversation key, and optional ones.
fn shape(body: &Json, dialect: DialectName, text: &str) {
    let (required, optional): (&str, &[&str]) = match dialect {
        DialectName::OpenAi | DialectName::Ollama => ("messages", &["tools"]),
        DialectName::Anthropic => ("messages", &["system", "tools"]),
        DialectName::Gemini => ("contents", &["systemInstruction", "tools"]),
        DialectName::OpenAiResponses => ("input", &["instructions", "tools"]),
    };
    let object = body.as_object().unwrap_or_else(|| panic!("{dialect}: the body is an object: {text}"));
    assert!(object.get(required).is_some_and(Json::is_array), "{dialect}: no {required} array: {text}");
    for key in object.keys() {
        assert!(key == required || optional.contains(&key.as_str()), "{dialect}: unexpected key {key:?}: {text}");
    }
}

/// Every tool call of the body is answered where its provider wants the answer, with an id the
/// provider accepts, once: OpenAI Chat (each call's `tool` message in the run right after its
/// assistant message), Anthropic (each `tool_use` answered by a `tool_result` first in the next
/// turn, roles alternating), OpenAI Responses (each `function_call` by one later
/// `function_call_output`), Ollama and Gemini (as many answers, right after, as calls).
fn answered(body: &Json, dialect: DialectName, server: Option<IdFormat>, text: &str) {
    let list = |key: &str| body.get(key).and_then(Json::as_array).cloned().unwrap_or_default();
    let mut ids = Ids { dialect, server, text, seen: HashSet::new() };
    match dialect {
        DialectName::OpenAi | DialectName::Ollama => chat(&list("messages"), &mut ids),
        DialectName::Anthropic => anthropic(&list("messages"), &mut ids),
        DialectName::OpenAiResponses => responses(&list("input"), &mut ids),
        DialectName::Gemini => gemini(&list("contents"), text),
    }
}

/// The call ids of one body: each accepted by the dialect's rule and the server's, once.
struct Ids<'a> {
    dialect: DialectName,
    server: Option<IdFormat>,
    text: &'a str,
    seen: HashSet<String>,
}

impl Ids<'_> {
    fn accept(&mut self, id: &str, rule: IdFormat) {
        let (dialect, text) = (self.dialect, self.text);
        let accepted = rule.accepts(id) && self.server.is_none_or(|s| s.accepts(id));
        assert!(accepted, "{dialect}: call id {id:?} refused: {text}");
        assert!(self.seen.insert(id.to_owned()), "{dialect}: call id {id:?} repeats: {text}");
    }
}

fn str_of(v: &Json, key: &str) -> String {
    v.get(key).and_then(Json::as_str).unwrap_or_default().to_owned()
}

/// OpenAI Chat (calls by id) and Ollama (calls by name): the `tool` messages right after an
/// assistant message answer its calls, one each; no other `tool` message.
fn chat(messages: &[Json], ids: &mut Ids<'_>) {
    let (dialect, text) = (ids.dialect, ids.text);
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        i += 1;
        assert!(str_of(message, "role") != "tool", "{dialect}: a tool message answers no call: {text}");
        let Some(calls) = message.get("tool_calls").and_then(Json::as_array) else { continue };
        let mut open: Vec<String> = Vec::new();
        for call in calls {
            if dialect == DialectName::OpenAi {
                let id = str_of(call, "id");
                ids.accept(&id, IdFormat::OpenAi);
                open.push(id);
            } else {
                open.push(call.pointer("/function/name").and_then(Json::as_str).unwrap_or("").to_owned());
            }
        }
        let key = if dialect == DialectName::OpenAi { "tool_call_id" } else { "tool_name" };
        for _ in 0..calls.len() {
            let answer = messages.get(i).filter(|m| str_of(m, "role") == "tool");
            let answer = answer.unwrap_or_else(|| panic!("{dialect}: a call is not answered: {text}"));
            let at = open.iter().position(|id| *id == str_of(answer, key));
            let at = at.unwrap_or_else(|| panic!("{dialect}: a tool message answers no open call: {text}"));
            open.remove(at);
            i += 1;
        }
    }
}

/// Anthropic: roles alternate; a turn's `tool_result` blocks come first and answer exactly the
/// `tool_use` blocks of the turn before; the last turn calls nothing.
fn anthropic(messages: &[Json], ids: &mut Ids<'_>) {
    let (dialect, text) = (ids.dialect, ids.text);
    let blocks = |m: &Json| m.get("content").and_then(Json::as_array).cloned().unwrap_or_default();
    let of_type = |m: &Json, kind: &str, key: &str| -> Vec<String> {
        blocks(m).iter().filter(|b| str_of(b, "type") == kind).map(|b| str_of(b, key)).collect()
    };
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            let (role, previous) = (str_of(message, "role"), str_of(&messages[i - 1], "role"));
            assert_ne!(role, previous, "{dialect}: roles do not alternate: {text}");
        }
        let leading = blocks(message).iter().take_while(|b| str_of(b, "type") == "tool_result").count();
        let mut results = of_type(message, "tool_result", "tool_use_id");
        assert_eq!(leading, results.len(), "{dialect}: a tool result after other blocks: {text}");
        let mut called = if i == 0 { Vec::new() } else { of_type(&messages[i - 1], "tool_use", "id") };
        called.sort();
        results.sort();
        assert_eq!(called, results, "{dialect}: the calls of message {} and their results: {text}", i.max(1) - 1);
        for id in of_type(message, "tool_use", "id") {
            ids.accept(&id, IdFormat::Anthropic);
        }
    }
    let last = messages.last().map(|m| of_type(m, "tool_use", "id"));
    assert!(last.is_none_or(|calls| calls.is_empty()), "{dialect}: the last turn's calls are not answered: {text}");
}

/// OpenAI Responses: each `function_call` answered by one later `function_call_output`, and
/// every output answers one.
fn responses(items: &[Json], ids: &mut Ids<'_>) {
    let (dialect, text) = (ids.dialect, ids.text);
    let mut open: HashMap<String, usize> = HashMap::new();
    for item in items {
        let id = str_of(item, "call_id");
        match str_of(item, "type").as_str() {
            "function_call" => {
                ids.accept(&id, IdFormat::OpenAiResponses);
                open.insert(id, 1);
            }
            "function_call_output" => {
                let left = open.get_mut(&id).filter(|n| **n > 0);
                let left = left.unwrap_or_else(|| panic!("{dialect}: output {id:?} answers no open call: {text}"));
                *left -= 1;
            }
            _ => {}
        }
    }
    assert!(open.values().all(|n| *n == 0), "{dialect}: a call is not answered: {text}");
}

/// Gemini: the `functionResponse` parts of a content answer the `functionCall` parts of the
/// content before, by name, one each; the last content calls nothing.
fn gemini(contents: &[Json], text: &str) {
    let names = |c: &Json, key: &str| {
        let parts = c.get("parts").and_then(Json::as_array).cloned().unwrap_or_default();
        let mut names: Vec<String> = parts.iter().filter_map(|p| p.get(key)).map(|f| str_of(f, "name")).collect();
        names.sort();
        names
    };
    for (i, content) in contents.iter().enumerate() {
        let previous = if i == 0 { Vec::new() } else { names(&contents[i - 1], "functionCall") };
        let answers = names(content, "functionResponse");
        assert_eq!(previous, answers, "gemini: the calls of content {} and their answers: {text}", i.max(1) - 1);
    }
    let last = contents.last().map(|c| names(c, "functionCall"));
    assert!(last.is_none_or(|calls| calls.is_empty()), "gemini: the last content's calls are not answered: {text}");
}
