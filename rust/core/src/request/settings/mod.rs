//! The rest of a request: everything but the conversation (model, sampling, limits, tools,
//! tool choice, structured output, reasoning, metadata), in canonical form and in each
//! dialect's.
//!
//! [`Settings`] is what `msgwire.Request` holds besides its messages. Each dialect declares where
//! its body keeps the simple settings (`Places`: a path per setting, `None` where the dialect
//! has no such field) and converts the structured ones (tool choice, response format, reasoning)
//! in its own file. Writing puts every setting the dialect can carry in its place and reports
//! each one it cannot as a request-level [`Loss`] (`message: null` in the report). Reading takes
//! every known field out of the body; what is left (a field msgwire has no canonical place for:
//! `seed`, `top_k`, `safetyConfig`..., or a known one its setting cannot hold: a `max_tokens` of
//! `1e30`) is kept in [`Extra`] with the dialect's name, written back to that dialect and
//! reported as dropped for any other. Settings are JSON values (the Python side holds them as
//! such): a number no double holds, or an integer beyond 64 bits, is refused at its offset
//! (`docs/wire.md`, "Numbers").

use std::borrow::Cow;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Action, Loss, Options};
use crate::error::Error;

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod ollama;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;

/// How one dialect writes and reads its settings and tools.
pub(crate) struct Dialect {
    pub places: Places,
    pub write: fn(&Settings, &mut Out<'_>),
    pub read: fn(&mut In) -> Settings,
    /// The tool declarations of a body's `tools`: functions, and the provider's own tools.
    pub read_tools: fn(Value) -> (Vec<ToolOut>, Vec<Value>),
}

impl Dialect {
    /// `body` (the conversation and tools, as the dialect wrote them) with the settings of
    /// `options` in front, every setting the dialect cannot carry reported.
    pub fn finish(&self, body: Vec<u8>, options: &Options<'_>, report: &mut Vec<Loss>) -> Result<Vec<u8>, Error> {
        let mut out = Out::new(&options.settings, self.places, report);
        (self.write)(&options.settings, &mut out);
        out.splice(body)
    }

    /// The settings and tools of `body`.
    pub fn read(&self, body: &[u8]) -> Result<(Vec<ToolOut>, Settings), Error> {
        let mut fields = In::new(body, self.places)?;
        let tools = fields.tools.take();
        let mut settings = (self.read)(&mut fields);
        fields.finish(&mut settings);
        let (tools, provider_tools) = tools.map(self.read_tools).unwrap_or_default();
        let dialect = self.places.dialect;
        settings.provider_tools =
            provider_tools.into_iter().map(|tool| ProviderTool { dialect: dialect.into(), tool }).collect();
        Ok((tools, settings))
    }
}

/// The canonical settings of a request (`msgwire.Request` without its conversation).
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Anthropic's `cache_control` on the system prompt (sent as one text block then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_cache_control: Option<crate::canonical::CacheControl>,
    /// Tools that are not functions (Anthropic's `web_search_20250305`, Responses' `web_search`,
    /// Gemini's `googleSearch`), kept whole with their dialect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_tools: Vec<ProviderTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Extra>,
}

/// Which tool the model must use: a mode, or one tool by name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ToolChoice {
    Mode(ChoiceMode),
    Named { name: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceMode {
    /// The model decides.
    Auto,
    /// No tool.
    None,
    /// At least one tool (OpenAI `required`, Anthropic `any`, Gemini `ANY`).
    Required,
}

/// Structured output: plain text, any JSON object, or JSON that follows `schema`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ResponseFormat {
    #[serde(rename = "type")]
    pub kind: FormatKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatKind {
    Text,
    JsonObject,
    JsonSchema,
}

/// How much the model reasons: an effort (OpenAI, Ollama, Gemini 3's level) or a token budget
/// (Anthropic, Gemini 2.5), or off.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
pub struct Reasoning {
    /// `false`: no reasoning (Anthropic `disabled`, a Gemini budget of 0, Ollama `think: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `minimal`, `low`, `medium`, `high` (`none` where OpenAI has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Whether reasoning text comes back (Responses `summary`, Gemini `includeThoughts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A provider's tool that is not a function declaration, kept whole.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ProviderTool {
    pub dialect: String,
    pub tool: Value,
}

/// Body fields of one dialect that msgwire has no canonical place for.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Extra {
    pub dialect: String,
    pub fields: Map<String, Value>,
}

// --- where each dialect keeps the simple settings ----------------------------------------------

/// A path of keys from the body's top level (`["generationConfig", "temperature"]`).
pub(crate) type Path = &'static [&'static str];

/// Where a dialect's body keeps each simple setting (`None`: it has no such field).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Places {
    pub dialect: &'static str,
    pub model: Option<Path>,
    pub stream: Option<Path>,
    pub max_tokens: Option<Path>,
    pub temperature: Option<Path>,
    pub top_p: Option<Path>,
    pub stop: Option<Path>,
    pub parallel_tool_calls: Option<Path>,
    pub metadata: Option<Path>,
    pub user: Option<Path>,
    /// Top-level fields that carry the conversation and the tools (read by the dialect itself).
    pub conversation: &'static [&'static str],
    /// Settings without a place here that the dialect's own writer carries another way
    /// (Anthropic's parallel calls in its tool choice): not reported as dropped.
    pub handled: &'static [&'static str],
}

/// The fields of a body being written, with what could not be carried reported.
pub(crate) struct Out<'r> {
    pub fields: Map<String, Value>,
    places: Places,
    report: &'r mut Vec<Loss>,
}

impl<'r> Out<'r> {
    /// The simple settings of `settings` in `places`, and the extra fields of the same dialect.
    pub fn new(settings: &Settings, places: Places, report: &'r mut Vec<Loss>) -> Self {
        let mut fields = Map::new();
        if let Some(extra) = &settings.extra {
            if extra.dialect == places.dialect {
                fields.clone_from(&extra.fields);
            } else {
                for key in extra.fields.keys() {
                    let reason = format!("{}'s `{key}` has no equivalent in {}", extra.dialect, places.dialect);
                    report.push(Loss::setting("setting", Action::Drop, reason));
                }
            }
        }
        let mut out = Self { fields, places, report };
        let p = places;
        out.put("model", p.model, settings.model.clone().map(Value::from), false);
        out.put("stream", p.stream, settings.stream.map(Value::from), false);
        out.put("max_tokens", p.max_tokens, settings.max_tokens.map(Value::from), true);
        out.put("temperature", p.temperature, settings.temperature.and_then(number), true);
        out.put("top_p", p.top_p, settings.top_p.and_then(number), true);
        out.put("stop", p.stop, settings.stop.clone().map(Value::from), true);
        out.put("parallel_tool_calls", p.parallel_tool_calls, settings.parallel_tool_calls.map(Value::from), true);
        out.put("metadata", p.metadata, settings.metadata.clone().map(Value::Object), true);
        out.put("user", p.user, settings.user.clone().map(Value::from), true);
        for tool in &settings.provider_tools {
            if tool.dialect != places.dialect {
                let reason =
                    format!("a {} tool that is not a function has no equivalent in {}", tool.dialect, p.dialect);
                out.report.push(Loss::setting("tools", Action::Drop, reason));
            }
        }
        out
    }

    /// Put `value` at `path`; without a path, report it (`reported`: a setting whose absence
    /// changes the reply; the model and `stream` travel elsewhere where the body has no place).
    pub fn put(&mut self, name: &'static str, path: Option<Path>, value: Option<Value>, reported: bool) {
        let Some(value) = value else { return };
        match path {
            Some(path) => set(&mut self.fields, path, value),
            None if reported && !self.places.handled.contains(&name) => {
                let reason = format!("{} requests have no `{name}`", self.places.dialect);
                self.report.push(Loss::setting(name, Action::Drop, reason));
            }
            None => {}
        }
    }

    /// Report a setting this dialect cannot carry (as it is).
    pub fn lost(&mut self, name: &'static str, action: Action, reason: impl Into<Cow<'static, str>>) {
        self.report.push(Loss::setting(name, action, reason));
    }

    /// `body` (a JSON object written by the dialect) with these fields in front.
    pub fn splice(self, body: Vec<u8>) -> Result<Vec<u8>, Error> {
        if self.fields.is_empty() {
            return Ok(body);
        }
        let mut out = crate::json_out::to_vec(&self.fields).map_err(|e| Error::write(&e))?;
        let rest = body.get(1..).unwrap_or_default();
        if rest.first() == Some(&b'}') {
            return Ok(out);
        }
        out.pop(); // the closing brace
        out.push(b',');
        out.extend_from_slice(rest);
        Ok(out)
    }
}

/// A float as JSON (`None` for NaN and infinities, which JSON has no text for).
fn number(value: f64) -> Option<Value> {
    serde_json::Number::from_f64(value).map(Value::Number)
}

fn set(fields: &mut Map<String, Value>, path: Path, value: Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut node = fields;
    for key in parents {
        let child = node.entry(*key).or_insert_with(|| Value::Object(Map::new()));
        if !child.is_object() {
            *child = Value::Object(Map::new());
        }
        let Value::Object(map) = child else { return };
        node = map;
    }
    node.insert((*last).to_owned(), value);
}

// --- reading ------------------------------------------------------------------------------------

/// The fields of a body besides the conversation, being read into settings.
pub(crate) struct In {
    pub fields: Map<String, Value>,
    /// The body's `tools`, read by the dialect.
    pub tools: Option<Value>,
    places: Places,
}

impl In {
    /// The top-level fields of `body` besides its conversation fields, parsed: values, whose
    /// numbers must be ones a `Value` holds as they are written (`value_in`).
    pub fn new(body: &[u8], places: Places) -> Result<Self, Error> {
        let top: TopLevel<'_> =
            serde_json::from_slice(body).map_err(|e| Error::from_serde(&e, body).in_body("request body"))?;
        let mut fields = Map::new();
        let mut tools = None;
        for (key, raw) in top.0 {
            let parse = || value_in(body, raw);
            if key == "tools" {
                tools = Some(parse()?);
            } else if !places.conversation.contains(&key.as_ref()) {
                fields.insert(key.into_owned(), parse()?);
            }
        }
        Ok(Self { fields, tools, places })
    }

    /// Take the value at `path` out of the fields.
    pub fn take(&mut self, path: Option<Path>) -> Option<Value> {
        let (last, parents) = path?.split_last()?;
        let mut node = &mut self.fields;
        for key in parents {
            node = node.get_mut(*key)?.as_object_mut()?;
        }
        node.remove(*last)
    }

    /// The value at `path`, left in the fields.
    pub fn get(&self, path: Option<Path>) -> Option<&Value> {
        let (last, parents) = path?.split_last()?;
        let mut node = &self.fields;
        for key in parents {
            node = node.get(*key)?.as_object()?;
        }
        node.get(*last)
    }

    /// The value at `path` as `read` reads it, taken out; a value `read` cannot read (a
    /// `max_tokens` of `1e30` or `-1`, a `temperature` that is a string) stays, to be kept as
    /// extra: written back as it was to the same dialect, reported as dropped for another.
    pub fn take_as<T>(&mut self, path: Option<Path>, read: impl FnOnce(&Value) -> Option<T>) -> Option<T> {
        let value = read(self.get(path)?)?;
        self.take(path);
        Some(value)
    }

    /// The simple settings, taken out; the dialect reads the structured ones with `take`, then
    /// [`In::finish`] keeps what is left as extra.
    pub fn simple(&mut self) -> Settings {
        let p = self.places;
        let text = |v: &Value| v.as_str().map(str::to_owned);
        Settings {
            model: self.take_as(p.model, text),
            stream: self.take_as(p.stream, Value::as_bool),
            max_tokens: self.take_as(p.max_tokens, Value::as_u64),
            temperature: self.take_as(p.temperature, Value::as_f64),
            top_p: self.take_as(p.top_p, Value::as_f64),
            stop: self.take_as(p.stop, |v| match v {
                Value::String(one) => Some(vec![one.clone()]),
                Value::Array(many) => many.iter().map(text).collect(),
                _ => None,
            }),
            parallel_tool_calls: self.take_as(p.parallel_tool_calls, Value::as_bool),
            metadata: self.take_as(p.metadata, |v| v.as_object().cloned()),
            user: self.take_as(p.user, text),
            ..Settings::default()
        }
    }

    /// What is left: the extra fields (objects emptied by `take` are dropped).
    pub fn finish(mut self, settings: &mut Settings) {
        self.fields.retain(|_, v| !matches!(v, Value::Object(map) if map.is_empty()));
        if !self.fields.is_empty() {
            settings.extra = Some(Extra { dialect: self.places.dialect.to_owned(), fields: self.fields });
        }
    }
}

/// `raw` (a piece of `body`) as a `Value`, errors placed in `body`. A setting is a value (the
/// Python side holds it as one): a number no double holds (`1e400`) or an integer beyond 64 bits
/// (`123456789012345678901234567890`), which `Value` would refuse or round, is refused at its
/// offset (`docs/wire.md`, "Numbers").
fn value_in(body: &[u8], raw: &RawValue) -> Result<Value, Error> {
    if let Some((at, problem)) = crate::raw::unheld_number(raw.get()) {
        let offset = usize::try_from(super::offset_in(body, raw)).unwrap_or(usize::MAX).saturating_add(at);
        return Err(Error::body("request body", problem, Some(offset)));
    }
    super::parse_in(body, raw)
}

/// The top-level fields of an object, in order, values unparsed.
struct TopLevel<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for TopLevel<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Fields<'a> {
            type Value = TopLevel<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a request body (a JSON object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    fields.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(TopLevel(fields))
            }
        }
        deserializer.deserialize_map(Fields(std::marker::PhantomData))
    }
}

impl Loss {
    /// A lossy step of the request's settings (not of a message: `message` is null in the report).
    pub(crate) fn setting(kind: &'static str, action: Action, reason: impl Into<Cow<'static, str>>) -> Self {
        Self { message: usize::MAX, block: None, kind, action, reason: reason.into() }
    }
}

/// A tool declaration read from a body (a function; a provider tool goes to [`Settings`]).
#[derive(Debug, Default, Serialize)]
pub(crate) struct ToolOut {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub parameters: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<crate::canonical::CacheControl>,
}

// --- helpers the dialects share -------------------------------------------------------------------

/// A JSON object as a map (`None` for any other value).
pub(crate) fn object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A string field of an object.
pub(crate) fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The effort a token budget is closest to, for a dialect that takes an effort only.
pub(crate) fn effort_of_budget(budget: u64) -> &'static str {
    match budget {
        0..=2048 => "low",
        2049..=8192 => "medium",
        _ => "high",
    }
}

/// A function declaration `{name, description?, <schema key>, strict?, cache_control?}` as a
/// tool (`None` when it has fields msgwire does not keep: it is then kept whole).
pub(crate) fn function(decl: &Map<String, Value>, schema_key: &str) -> Option<ToolOut> {
    let known = ["name", "description", schema_key, "strict", "cache_control"];
    if !decl.keys().all(|k| known.contains(&k.as_str())) {
        return None;
    }
    Some(ToolOut {
        name: text(decl, "name")?,
        description: text(decl, "description"),
        parameters: decl
            .get(schema_key)
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
        strict: decl.get("strict").and_then(Value::as_bool),
        cache_control: decl.get("cache_control").cloned().and_then(|c| serde_json::from_value(c).ok()),
    })
}

/// The tools of a `tools` array, each read by `read` or kept whole.
pub(crate) fn each_tool(
    tools: Value,
    read: impl Fn(&Map<String, Value>) -> Option<ToolOut>,
) -> (Vec<ToolOut>, Vec<Value>) {
    let (mut functions, mut kept) = (Vec::new(), Vec::new());
    let Value::Array(tools) = tools else { return (functions, kept) };
    for tool in tools {
        match tool.as_object().and_then(&read) {
            Some(function) => functions.push(function),
            None => kept.push(tool),
        }
    }
    (functions, kept)
}
