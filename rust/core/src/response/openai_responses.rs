//! OpenAI Responses API responses: the `response` object.
//!
//! Writing: `{"id", "object": "response", "created_at", "status", "error": null,
//! "incomplete_details", "model", "output": [...], "parallel_tool_calls": true, "tool_choice":
//! "auto", "tools": [], "usage"?}` (the last three echo the request, which a message does not
//! hold: the API's defaults are written). Output items follow the message's blocks in order:
//! consecutive text is one `message` item of `output_text` parts (`refusal` parts when the stop
//! reason is `refusal`), thinking is a `reasoning` item (its text one `summary_text` part, its
//! signature the `encrypted_content`), a call is a `function_call` item (`arguments` as received),
//! and the built-in tool items (server tool calls) of a Responses message are written back as
//! they were. Items keep their item ids (`item_id` of the blocks; the text parts of one item
//! together); a block without one gets an id made from the message id and its position. Text
//! citations are the parts' `annotations` (`crate::citation`). The stop
//! reason is the `status`: `completed` (end of turn, tool use, refusal), `incomplete` with
//! `incomplete_details.reason` `max_output_tokens` or `content_filter`, `cancelled` (aborted), and
//! `incomplete` without details for every other reason.
//! Not kept, so not written back: a message item's `phase` and `status`, `logprobs` of text,
//! several summary parts of one reasoning item
//! (joined by a blank line, as the stream decoder joins them: written as one), a reasoning
//! item's `content` (its `reasoning_text` parts are read as thinking, before the summary parts
//! and joined to them alike, and written as the summary), and the request's echo
//! (`instructions`, `temperature`, `tools`, `text`, `reasoning`, ...).
//!
//! Reading: the response is replayed as its stream: `output_item.added` and `.done` holding each
//! whole item, the text (and refusal, and reasoning text) of message and reasoning items as one
//! delta per part, then `response.completed` with the status, details and usage. A response with
//! status `failed`, or an error body, is the provider's error.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{
    BodyReplay, Payload, created, native_blocks, parts, response_id, size_hint, stop_value, to_vec, unix_timestamp,
    usage,
};
use crate::assemble::BuilderOptions;
use crate::canonical::{AssistantMessage, StopReason};
use crate::citation::Annotation;
use crate::dialect::DialectName;
use crate::dialect::openai_responses::STOP;
use crate::error::Error;
use crate::request::ServerTools;
use crate::request::{CallIds, IdFormat, Loss, Part, Policy, Target, parse_in};

const TARGET: Target = Target {
    dialect: "openai-responses",
    provider: "openai",
    thinking: true,
    signed: false,
    redacted: false,
    url_images: false,
    images: [false, false, false],
    image_media_types: &[],
    call_ids: CallIds::Required(IdFormat::OpenAiResponses),
    cites: Some(crate::citation::responses_writes),
    server_tools: ServerTools::Parts,
};

#[derive(Serialize)]
struct Body<'a> {
    id: Cow<'a, str>,
    object: &'static str,
    created_at: i64,
    status: &'a str,
    error: Option<()>,
    incomplete_details: Option<Incomplete<'a>>,
    model: &'a str,
    output: Vec<OutItem<'a>>,
    parallel_tool_calls: bool,
    tool_choice: &'static str,
    tools: [(); 0],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<ResponsesUsage>,
}

#[derive(Serialize)]
struct Incomplete<'a> {
    reason: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutItem<'a> {
    Message {
        id: Cow<'a, str>,
        status: &'static str,
        role: &'static str,
        content: Vec<OutPart<'a>>,
    },
    Reasoning {
        id: Cow<'a, str>,
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    FunctionCall {
        id: Cow<'a, str>,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
        status: &'static str,
    },
    #[serde(untagged)]
    Raw(&'a RawValue),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutPart<'a> {
    OutputText { text: Cow<'a, str>, annotations: Vec<Annotation<'a>> },
    Refusal { refusal: Cow<'a, str> },
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct ResponsesUsage {
    input_tokens: u64,
    input_tokens_details: InputDetails,
    output_tokens: u64,
    output_tokens_details: OutputDetails,
    total_tokens: u64,
}

#[derive(Serialize)]
struct InputDetails {
    cached_tokens: u64,
    cache_write_tokens: u64,
}

#[derive(Serialize)]
struct OutputDetails {
    reasoning_tokens: u64,
}

pub(super) fn write(message: &AssistantMessage, policy: Policy, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
    let blocks = native_blocks(message, &TARGET, true);
    body(message, &blocks, policy, report)
}

/// The body, the message's blocks made native (see [`native_blocks`]).
fn body<'a>(
    message: &'a AssistantMessage,
    blocks: &'a [crate::canonical::Block],
    policy: Policy,
    report: &mut Vec<Loss>,
) -> Result<Vec<u8>, Error> {
    let refused = message.stop_reason == Some(StopReason::Refusal);
    let made_up =
        |prefix: &str, n: usize| Cow::Owned(format!("{prefix}{}{}_{n}", crate::assemble::MADE_UP_ITEM, message.id));
    let mut output = Vec::new();
    // the text parts of the message item being written, and its item id
    let mut text: Vec<OutPart<'_>> = Vec::new();
    let mut text_id: Option<&str> = None;
    let flush = |text: &mut Vec<OutPart<'a>>, text_id: Option<&'a str>, output: &mut Vec<OutItem<'a>>| {
        if !text.is_empty() {
            let content = std::mem::take(text);
            let id = text_id.map_or_else(|| made_up("msg", output.len()), Cow::Borrowed);
            output.push(OutItem::Message { id, status: "completed", role: "assistant", content });
        }
    };
    for part in parts(message, blocks, &TARGET, policy, report) {
        let (t, item_id, annotations) = match part {
            Part::Text(t) => (t, None, Vec::new()),
            Part::Cited { text: block, .. } => (
                Cow::Borrowed(block.text.as_str()),
                block.item_id.as_deref(),
                crate::citation::responses_annotations(&block.citations, &block.text),
            ),
            part => {
                flush(&mut text, text_id.take(), &mut output);
                other_item(blocks, part, &mut output, &made_up);
                continue;
            }
        };
        // the parts of one item together; another item id starts another message item
        if !text.is_empty() && item_id != text_id {
            flush(&mut text, text_id.take(), &mut output);
        }
        text_id = item_id;
        text.push(if refused { OutPart::Refusal { refusal: t } } else { OutPart::OutputText { text: t, annotations } });
    }
    flush(&mut text, text_id, &mut output);
    let said = stop_value(message, STOP, "incomplete", report);
    let (status, incomplete_details) = match said {
        "max_output_tokens" | "content_filter" => ("incomplete", Some(Incomplete { reason: said })),
        status => (status, None),
    };
    let usage = message.usage.is_some().then(|| {
        let u = usage(message);
        ResponsesUsage {
            input_tokens: u.input_tokens,
            input_tokens_details: InputDetails {
                cached_tokens: u.cache_read_tokens,
                cache_write_tokens: u.cache_write_tokens,
            },
            output_tokens: u.output_tokens,
            output_tokens_details: OutputDetails { reasoning_tokens: u.reasoning_tokens },
            total_tokens: u.input_tokens.saturating_add(u.output_tokens),
        }
    });
    to_vec(
        &Body {
            id: response_id(message, "resp_"),
            object: "response",
            created_at: created(message),
            status,
            error: None,
            incomplete_details,
            model: message.model.as_deref().unwrap_or(""),
            output,
            parallel_tool_calls: true,
            tool_choice: "auto",
            tools: [],
            usage,
        },
        size_hint(message),
    )
}

/// The output item of a block other than text (reasoning, a call, a provider's item), with its
/// item id when known, else one made up from the message id and its position.
#[allow(clippy::needless_pass_by_value)] // a part is written once: taken, as the caller's loop gives it
fn other_item<'a>(
    blocks: &'a [crate::canonical::Block],
    part: Part<'a>,
    output: &mut Vec<OutItem<'a>>,
    made_up: &dyn Fn(&str, usize) -> Cow<'a, str>,
) {
    let n = output.len();
    match part {
        Part::Thinking { block, thinking, signature } => {
            let item_id = match blocks.get(block) {
                Some(crate::canonical::Block::Thinking(t)) => t.item_id.as_deref(),
                _ => None,
            };
            let summary =
                if thinking.is_empty() { Vec::new() } else { vec![Summary { kind: "summary_text", text: thinking }] };
            let encrypted_content = Some(signature).filter(|s| !s.is_empty());
            let id = item_id.map_or_else(|| made_up("rs", n), Cow::Borrowed);
            output.push(OutItem::Reasoning { id, summary, encrypted_content });
        }
        Part::ToolCall { call, .. } => output.push(OutItem::FunctionCall {
            id: call.item_id.as_deref().map_or_else(|| made_up("fc", n), Cow::Borrowed),
            call_id: &call.id,
            name: &call.name,
            arguments: crate::request::arguments_text(call),
            status: "completed",
        }),
        Part::Raw(raw) => output.push(OutItem::Raw(raw)),
        // written apart (text), or never lowered for this target (no images or redacted thinking)
        Part::Text(_)
        | Part::Cited { .. }
        | Part::Image(_)
        | Part::Redacted(_)
        | Part::CacheBreak(_)
        | Part::Detail(_) => {}
    }
}

// --- reading ------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct InBody<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    object: Option<Cow<'a, str>>,
    #[serde(default)]
    created_at: Option<f64>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<&'a RawValue>,
    #[serde(borrow, default)]
    incomplete_details: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

/// What the replay needs of an item: its type and its parts.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct InPart<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    refusal: Option<&'a RawValue>,
}

pub(super) fn read(body: &[u8], mut options: BuilderOptions) -> Result<AssistantMessage, Error> {
    let parsed: InBody<'_> = super::parse(body)?;
    if let Some(timestamp) = parsed.created_at.and_then(unix_timestamp) {
        options.timestamp = timestamp;
    }
    let mut replay = BodyReplay::new(DialectName::OpenAiResponses, options);
    let failed = parsed.status.is_some_and(|s| s.get() == "\"failed\"");
    let error = parsed.error.as_ref().filter(|e| !e.is_null());
    if error.is_some() || failed {
        return Err(replay.provider_error(error.unwrap_or(&serde_json::Value::Null)));
    }
    if let Some(object) = parsed.object.as_deref().filter(|o| *o != "response") {
        let detail = format!("a {object:?} object, not a response (msgwire.assemble reads streams)");
        return Err(Error::body("response body", detail, Some(0)));
    }
    let Some(output) = parsed.output else { return Err(super::missing(body, "output")) };
    replay.builder.start(parsed.id.as_deref(), parsed.model.as_deref());
    for (index, item) in output.into_iter().enumerate() {
        let head: Head<'_> = parse_in(body, item)?;
        let added = format!(r#"{{"type":"response.output_item.added","output_index":{index},"item":{}}}"#, item.get());
        replay.nested(body, "response.output_item.added", &added, item)?;
        for (part_index, raw) in head.content.unwrap_or_default().into_iter().enumerate() {
            let part: InPart<'_> = parse_in(body, raw)?;
            let (kind, delta) = match (head.kind.as_deref(), part.kind.as_deref()) {
                (Some("message"), Some("output_text")) => ("response.output_text.delta", part.text),
                (Some("message"), Some("refusal")) => ("response.refusal.delta", part.refusal),
                (Some("reasoning"), Some("reasoning_text")) => ("response.reasoning_text.delta", part.text),
                _ => continue,
            };
            let Some(delta) = delta else { continue };
            let mut event = Payload::default();
            event.lit(r#"{"type":""#).lit(kind).lit(r#"","output_index":"#).number(index);
            event.lit(r#","content_index":"#).number(part_index).lit(r#","delta":"#).raw(body, delta).lit("}");
            replay.event(kind, &event)?;
        }
        let done = format!(r#"{{"type":"response.output_item.done","output_index":{index},"item":{}}}"#, item.get());
        replay.nested(body, "response.output_item.done", &done, item)?;
    }
    let mut event = Payload::default();
    event.lit(r#"{"type":"response.completed","response":{"status":"#).raw_or_null(body, parsed.status);
    event.lit(r#","incomplete_details":"#).raw_or_null(body, parsed.incomplete_details);
    event.lit(r#","usage":"#).raw_or_null(body, parsed.usage).lit("}}");
    replay.event("response.completed", &event)?;
    Ok(replay.finish())
}
