//! OpenAI Chat Completions responses: the `chat.completion` object.
//!
//! Writing: `{"id", "object": "chat.completion", "created", "model", "choices": [{"index": 0,
//! "message": {...}, "logprobs": null, "finish_reason"}], "usage"?}`. The message has one string
//! of each kind, as the API returns it: `content` (the text blocks joined by a blank line, `null`
//! without text), `reasoning_content` (the thinking, as DeepSeek and vLLM send it; signatures and
//! redacted thinking have no place, reported), `refusal` (the text instead of `content` when the
//! stop reason is `refusal`, else `null`) and `tool_calls` (`arguments` the text exactly as
//! received). So blocks are regrouped: thinking, then text, then calls. `finish_reason` is
//! `stop`, `length`, `tool_calls` (or the message's own `function_call`), `content_filter`, and
//! `stop` for every other reason. Usage is `prompt_tokens` (every input token),
//! `completion_tokens`, `total_tokens`, `prompt_tokens_details.cached_tokens` and
//! `completion_tokens_details.reasoning_tokens`; cache writes have no field (reported).
//! Not kept, so not written back: `system_fingerprint`, `service_tier`, `logprobs`, a message's
//! `annotations` and `audio`, the audio and prediction token counts, choices after the first.
//!
//! Reading: the first choice (`index` 0) is one chunk of a stream whose delta is the whole
//! message, then its finish reason and usage. Its calls have no `index`, so the decoder keys them
//! by id, as in a stream without indexes: two calls with one id (which the API never sends) read
//! as one.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{BodyReplay, Payload, created, native_blocks, parts, response_id, size_hint, stop_value, to_vec, usage};
use crate::assemble::BuilderOptions;
use crate::canonical::{AssistantMessage, StopReason};
use crate::dialect::DialectName;
use crate::dialect::openai_chat::STOP;
use crate::dialect::openai_chat::{ResponseWalk, walk_response};
use crate::error::Error;
use crate::request::ServerTools;
use crate::request::{Action, CallIds, IdFormat, Loss, Part, Policy, Target};

const TARGET: Target = Target {
    dialect: "openai",
    provider: "openai",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: false,
    images: [false, false, false],
    image_media_types: &[],
    call_ids: CallIds::Required(IdFormat::OpenAi),
    cites: None,
    server_tools: ServerTools::Nowhere,
};

#[derive(Serialize)]
struct Body<'a> {
    id: Cow<'a, str>,
    object: &'static str,
    created: i64,
    model: &'a str,
    choices: [Choice<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<ChatUsage>,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    message: Msg<'a>,
    logprobs: Option<()>,
    finish_reason: &'a str,
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: Option<Cow<'a, str>>,
    refusal: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<Call<'a>>,
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
#[allow(clippy::struct_field_names)] // OpenAI's own names
struct ChatUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    prompt_tokens_details: PromptDetails,
    completion_tokens_details: CompletionDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
}

#[derive(Serialize)]
struct CompletionDetails {
    reasoning_tokens: u64,
}

fn lost(report: &mut Vec<Loss>, block: Option<usize>, kind: &'static str, reason: &'static str) {
    report.push(Loss::new(0, block, kind, Action::Strip, reason));
}

pub(super) fn write(message: &AssistantMessage, policy: Policy, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let blocks = native_blocks(message, &TARGET, false);
    let mut text = Vec::new();
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    for part in parts(message, &blocks, &TARGET, policy, report) {
        match part {
            Part::Text(t) => text.push(t),
            // never lowered for this target (it takes no citations)
            Part::Cited { text: t, .. } => text.push(Cow::Borrowed(&t.text)),
            Part::Thinking { block, thinking: t, signature } => {
                if !signature.is_empty() {
                    lost(report, Some(block), "signature", "a chat completion has no place for thinking signatures");
                }
                if !t.is_empty() {
                    thinking.push(Cow::Borrowed(t));
                }
            }
            Part::ToolCall { call, .. } => tool_calls.push(Call {
                id: &call.id,
                kind: "function",
                function: Function { name: &call.name, arguments: crate::request::arguments_text(call) },
            }),
            Part::Raw(_) => lost(report, None, "unknown_block", "a chat completion message has no place for parts"),
            // never lowered for this target (no images or redacted thinking in its messages)
            Part::Image(_) | Part::Redacted(_) | Part::CacheBreak(_) | Part::Detail(_) => {}
        }
    }
    let refused = message.stop_reason == Some(StopReason::Refusal);
    let text = crate::request::join_reply(text);
    let (content, refusal) = if refused { (None, text) } else { (text, None) };
    let usage = message.usage.is_some().then(|| {
        let u = usage(message);
        if u.cache_write_tokens > 0 {
            lost(report, None, "cache_write_tokens", "chat completion usage has no cache writes");
        }
        ChatUsage {
            prompt_tokens: u.input_tokens,
            completion_tokens: u.output_tokens,
            total_tokens: u.input_tokens.saturating_add(u.output_tokens),
            prompt_tokens_details: PromptDetails { cached_tokens: u.cache_read_tokens },
            completion_tokens_details: CompletionDetails { reasoning_tokens: u.reasoning_tokens },
        }
    });
    let msg = Msg {
        role: "assistant",
        content,
        refusal,
        reasoning_content: crate::request::join_reply(thinking),
        tool_calls,
    };
    to_vec(
        &Body {
            id: response_id(message, "chatcmpl-"),
            object: "chat.completion",
            created: created(message),
            model: message.model.as_deref().unwrap_or(""),
            choices: [Choice {
                index: 0,
                message: msg,
                logprobs: None,
                finish_reason: stop_value(message, STOP, "stop", report),
            }],
            usage,
        },
        size_hint(message),
    )
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    object: Option<Cow<'a, str>>,
    #[serde(default)]
    created: Option<f64>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Option<Vec<InChoice<'a>>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct InChoice<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    finish_reason: Option<&'a RawValue>,
}

pub(super) fn read(body: &[u8], options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let walked = std::str::from_utf8(body).ok().and_then(walk_response);
    if let Some(read) = walked.and_then(|walked| read_walked(walked, options.clone())) {
        #[cfg(debug_assertions)]
        {
            let written = |message: &AssistantMessage| super::message_json(message).ok();
            let replay = replayed(body, options).ok();
            assert_eq!(written(&read), replay.as_ref().and_then(written), "the walked body reads as its replay");
        }
        return Ok(read);
    }
    replayed(body, options)
}

/// The body walked in one pass (see [`ResponseWalk`]); `None` on any error, which the replay
/// then reports as it does (placed in the body).
fn read_walked(walked: ResponseWalk<'_>, mut options: BuilderOptions) -> Option<AssistantMessage> {
    if walked.object.as_deref() == Some("chat.completion.chunk") {
        return None;
    }
    if let Some(timestamp) = walked.created.and_then(super::unix_timestamp) {
        options.timestamp = timestamp;
    }
    let mut replay = BodyReplay::new(DialectName::OpenAi, options);
    replay.builder.start(walked.id.as_deref(), walked.model.as_deref());
    replay.builder.set_offset(0);
    walked.replay(&mut replay.builder).ok()?;
    Some(replay.finish())
}

/// The body replayed through the stream decoder as the one chunk a stream of it would carry.
fn replayed(body: &[u8], mut options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let parsed: InBody<'_> = super::parse(body)?;
    if let Some(timestamp) = parsed.created.and_then(super::unix_timestamp) {
        options.timestamp = timestamp;
    }
    let mut replay = BodyReplay::new(DialectName::OpenAi, options);
    if let Some(error) = parsed.error.as_ref().filter(|e| !e.is_null()) {
        return Err(replay.provider_error(error));
    }
    if parsed.object.as_deref() == Some("chat.completion.chunk") {
        let detail = "a stream chunk (chat.completion.chunk), not a response: msgwire.assemble reads streams";
        return Err(Error::body("response body", detail, Some(0)));
    }
    let Some(choices) = parsed.choices else { return Err(super::missing(body, "choices")) };
    replay.builder.start(parsed.id.as_deref(), parsed.model.as_deref());
    let mut event = Payload::default();
    event.lit("{\"choices\":[");
    if let Some(choice) = choices.iter().find(|c| c.index.unwrap_or(0) == 0) {
        event.lit("{\"index\":0,\"delta\":").raw_or_null(body, choice.message);
        event.lit(",\"finish_reason\":").raw_or_null(body, choice.finish_reason).lit("}");
    }
    event.lit("],\"usage\":").raw_or_null(body, parsed.usage).lit("}");
    replay.event("message", &event)?;
    Ok(replay.finish())
}

#[cfg(test)]
mod tests {
    use crate::dialect::DialectName;
    use crate::response::from_response_json;

    /// Bodies the one-pass walk reads or hands to the replay; in debug builds (the tests) `read`
    /// checks every walked body against its replay, and the chunk walk every message.
    const BODIES: &[&str] = &[
        r#"{"id":"c","object":"chat.completion","created":1700000000,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a\"b\\c\n\td\/e\u00e9\ud83d\ude00","tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{\"q\": \"x\\\\y\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2},"system_fingerprint":"fp"}"#,
        r#"{"id":"c","created":1.5,"choices":[{"index":1,"message":{"content":"other"}},{"message":{"content":"x"},"finish_reason":null}],"usage":null,"error":null}"#,
        r#" {"choices":[{"message":null,"finish_reason":"stop"}],"extra":{"deep":[[[{"a":"\u0000"}]]]}} "#,
        r#"{"choices":[],"id":"a\u0041"}"#,
        r#"{"choices":[{"message":{"content":"x"}}],"choices":[]}"#,
        r#"{"choices":[{"message":{"content":"bad \x"}}]}"#,
        "{\"choices\":[{\"message\":{\"content\":\"raw control \u{1}\"}}]}",
        r#"{"created":-5,"choices":[{"index":0.0,"message":{}}]}"#,
        r#"{"error":{"message":"no","type":"server_error"}}"#,
        r#"{"choices":[{"message":{"content":"x"}}]} trailing"#,
        "null",
    ];

    #[test]
    fn the_walk_reads_as_the_replay_or_hands_over() {
        for body in BODIES {
            // the whole read: no panic, and the walk's debug checks hold
            let _ = from_response_json(body.as_bytes(), DialectName::OpenAi, "id", "2026-01-01T00:00:00Z");
        }
        assert!(super::walk_response(BODIES[0]).is_some(), "the usual shape is walked in one pass");
        let read =
            from_response_json(BODIES[0].as_bytes(), DialectName::OpenAi, "id", "2026-01-01T00:00:00Z").expect("reads");
        let text = String::from_utf8(read).expect("UTF-8");
        assert!(text.contains(r#""text":"a\"b\\c\n\td/eé😀""#), "{text}");
        assert!(text.contains(r#""arguments":"{\"q\": \"x\\\\y\"}""#), "{text}");
    }

    /// The recorded bodies, whole and cut or with a byte changed at many places: the one-pass
    /// walk and the replay read each the same (the debug check in `read`), or both refuse it.
    #[test]
    fn recorded_bodies_and_their_mutations_read_as_their_replay() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/responses/openai");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("the fixtures") {
            let body = std::fs::read(entry.expect("an entry").path()).expect("a body");
            let read = |b: &[u8]| from_response_json(b, DialectName::OpenAi, "id", "2026-01-01T00:00:00Z");
            assert!(read(&body).is_ok());
            let text = std::str::from_utf8(&body).expect("UTF-8");
            assert!(super::walk_response(text).is_some(), "a recorded body is walked in one pass");
            for at in (0..body.len()).step_by(7) {
                let _ = read(&body[..at]);
                for byte in [b'"', b'\\', b'}', b'0', b'\n'] {
                    let mut changed = body.clone();
                    changed[at] = byte;
                    let _ = read(&changed);
                }
            }
            seen += 1;
        }
        assert!(seen >= 3);
    }
}
