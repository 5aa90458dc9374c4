//! OpenAI Chat Completions: the settings' fields.
//!
//! `max_completion_tokens` (a body that used the older `max_tokens` keeps it, see [`Out::new`]);
//! `tool_choice` a mode or `{"type": "function", "function": {"name"}}`; `response_format`
//! `{"type": "text" | "json_object" | "json_schema", "json_schema": {name, description, schema,
//! strict}}`; `reasoning_effort` (a budget is sent as the effort closest to it, reported);
//! `stop`, `metadata`, `user`, `parallel_tool_calls` as they are. No reasoning summary.

use serde_json::{Map, Value, json};

use super::{
    ChoiceMode, FormatKind, In, Out, Places, Reasoning, ResponseFormat, Settings, ToolChoice, effort_of_budget, object,
    text,
};
use crate::request::Action;

pub(crate) const PLACES: Places = Places {
    dialect: "openai",
    model: Some(&["model"]),
    stream: Some(&["stream"]),
    max_tokens: Some(&["max_completion_tokens"]),
    temperature: Some(&["temperature"]),
    top_p: Some(&["top_p"]),
    stop: Some(&["stop"]),
    parallel_tool_calls: Some(&["parallel_tool_calls"]),
    metadata: Some(&["metadata"]),
    user: Some(&["user"]),
    conversation: &["messages", "tools"],
    handled: &[],
};

/// The older spelling of `max_completion_tokens`, kept when a body used it (compatible servers).
const LEGACY_MAX_TOKENS: &str = "max_tokens";

pub(crate) fn write(settings: &Settings, out: &mut Out<'_>) {
    if let (Some(n), true) = (settings.max_tokens, out.fields.contains_key(LEGACY_MAX_TOKENS)) {
        out.fields.remove("max_completion_tokens");
        out.fields.insert(LEGACY_MAX_TOKENS.to_owned(), n.into());
    }
    if let Some(choice) = &settings.tool_choice {
        let value = match choice {
            ToolChoice::Mode(ChoiceMode::Auto) => json!("auto"),
            ToolChoice::Mode(ChoiceMode::None) => json!("none"),
            ToolChoice::Mode(ChoiceMode::Required) => json!("required"),
            ToolChoice::Named { name } => json!({"type": "function", "function": {"name": name}}),
        };
        out.fields.insert("tool_choice".into(), value);
    }
    if let Some(format) = &settings.response_format {
        out.fields.insert("response_format".into(), response_format(format));
    }
    if let Some(reasoning) = &settings.reasoning {
        reasoning_effort(reasoning, out);
    }
}

fn response_format(format: &ResponseFormat) -> Value {
    match format.kind {
        FormatKind::Text => json!({"type": "text"}),
        FormatKind::JsonObject => json!({"type": "json_object"}),
        FormatKind::JsonSchema => {
            let mut schema = Map::new();
            schema.insert("name".into(), format.name.clone().unwrap_or_else(|| "response".into()).into());
            if let Some(description) = &format.description {
                schema.insert("description".into(), description.clone().into());
            }
            if let Some(value) = &format.schema {
                schema.insert("schema".into(), value.clone());
            }
            if let Some(strict) = format.strict {
                schema.insert("strict".into(), strict.into());
            }
            json!({"type": "json_schema", "json_schema": schema})
        }
    }
}

/// OpenAI's `reasoning_effort` (and the Responses API's `reasoning.effort`): an effort; a budget
/// becomes the closest effort, `enabled: false` the effort `none`.
pub(crate) fn effort(reasoning: &Reasoning, dialect: &str, out: &mut Out<'_>) -> Option<String> {
    if let Some(effort) = &reasoning.effort {
        return Some(effort.clone());
    }
    if reasoning.enabled == Some(false) {
        return Some("none".into());
    }
    let budget = reasoning.budget_tokens?;
    let effort = effort_of_budget(budget);
    out.lost(
        "reasoning",
        Action::Fallback,
        format!("{dialect} takes an effort, not a budget: {budget} tokens sent as `{effort}`"),
    );
    Some(effort.into())
}

fn reasoning_effort(reasoning: &Reasoning, out: &mut Out<'_>) {
    if let Some(effort) = effort(reasoning, "OpenAI Chat", out) {
        out.fields.insert("reasoning_effort".into(), effort.into());
    }
    if reasoning.summary.is_some() {
        out.lost("reasoning", Action::Strip, "OpenAI Chat has no reasoning summary");
    }
}

pub(crate) fn read(fields: &mut In) -> Settings {
    let mut settings = fields.simple();
    if settings.max_tokens.is_none() {
        settings.max_tokens = fields.fields.get(LEGACY_MAX_TOKENS).and_then(Value::as_u64);
    }
    settings.tool_choice = match fields.fields.get("tool_choice") {
        Some(Value::String(mode)) => mode_choice(mode),
        Some(Value::Object(choice)) => choice
            .get("function")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .map(|name| ToolChoice::Named { name: name.to_owned() }),
        _ => None,
    };
    if settings.tool_choice.is_some() {
        fields.fields.remove("tool_choice");
    }
    settings.response_format = fields.fields.get("response_format").cloned().and_then(object).and_then(|format| {
        let kind = match format.get("type")?.as_str()? {
            "text" => FormatKind::Text,
            "json_object" => FormatKind::JsonObject,
            "json_schema" => FormatKind::JsonSchema,
            _ => return None,
        };
        let schema = format.get("json_schema").cloned().and_then(object).unwrap_or_default();
        Some(ResponseFormat {
            kind,
            name: text(&schema, "name"),
            description: text(&schema, "description"),
            schema: schema.get("schema").cloned(),
            strict: schema.get("strict").and_then(Value::as_bool),
        })
    });
    if settings.response_format.is_some() {
        fields.fields.remove("response_format");
    }
    if let Some(effort) = fields.take(Some(&["reasoning_effort"])).and_then(|v| v.as_str().map(str::to_owned)) {
        settings.reasoning = Some(Reasoning { effort: Some(effort), ..Reasoning::default() });
    }
    settings
}

/// `auto`, `none`, `required` (`None` for any other word).
pub(crate) fn mode_choice(mode: &str) -> Option<ToolChoice> {
    Some(ToolChoice::Mode(match mode {
        "auto" => ChoiceMode::Auto,
        "none" => ChoiceMode::None,
        "required" => ChoiceMode::Required,
        _ => return None,
    }))
}

pub(crate) const DIALECT: super::Dialect = super::Dialect { places: PLACES, write, read, read_tools };

/// `[{"type": "function", "function": {name, description, parameters, strict}}]`.
pub(crate) fn read_tools(tools: Value) -> (Vec<super::ToolOut>, Vec<Value>) {
    super::each_tool(tools, |tool| {
        if tool.get("type").and_then(Value::as_str) != Some("function") || tool.len() != 2 {
            return None;
        }
        super::function(tool.get("function")?.as_object()?, "parameters")
    })
}
