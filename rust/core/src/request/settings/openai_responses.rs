//! OpenAI Responses: the settings' fields.
//!
//! `max_output_tokens`; `tool_choice` a mode or `{"type": "function", "name"}`; structured output
//! in `text.format` (`{"type": "text" | "json_object" | "json_schema", name, description, schema,
//! strict}`); `reasoning: {effort, summary}`; no stop sequences (reported).

use serde_json::{Map, Value, json};

use super::openai_chat::{effort, mode_choice};
use super::{ChoiceMode, FormatKind, In, Out, Places, Reasoning, ResponseFormat, Settings, ToolChoice, object, text};

pub(crate) const PLACES: Places = Places {
    dialect: "openai-responses",
    model: Some(&["model"]),
    stream: Some(&["stream"]),
    max_tokens: Some(&["max_output_tokens"]),
    temperature: Some(&["temperature"]),
    top_p: Some(&["top_p"]),
    stop: None,
    parallel_tool_calls: Some(&["parallel_tool_calls"]),
    metadata: Some(&["metadata"]),
    user: Some(&["user"]),
    conversation: &["input", "instructions", "tools"],
    handled: &[],
};

pub(crate) fn write(settings: &Settings, out: &mut Out<'_>) {
    if let Some(choice) = &settings.tool_choice {
        let value = match choice {
            ToolChoice::Mode(ChoiceMode::Auto) => json!("auto"),
            ToolChoice::Mode(ChoiceMode::None) => json!("none"),
            ToolChoice::Mode(ChoiceMode::Required) => json!("required"),
            ToolChoice::Named { name } => json!({"type": "function", "name": name}),
        };
        out.fields.insert("tool_choice".into(), value);
    }
    if let Some(format) = &settings.response_format {
        let mut value = Map::new();
        let kind = match format.kind {
            FormatKind::Text => "text",
            FormatKind::JsonObject => "json_object",
            FormatKind::JsonSchema => "json_schema",
        };
        value.insert("type".into(), kind.into());
        if format.kind == FormatKind::JsonSchema {
            value.insert("name".into(), format.name.clone().unwrap_or_else(|| "response".into()).into());
            if let Some(description) = &format.description {
                value.insert("description".into(), description.clone().into());
            }
            if let Some(schema) = &format.schema {
                value.insert("schema".into(), schema.clone());
            }
            if let Some(strict) = format.strict {
                value.insert("strict".into(), strict.into());
            }
        }
        let text = out.fields.entry("text").or_insert_with(|| json!({}));
        if let Some(text) = text.as_object_mut() {
            text.insert("format".into(), Value::Object(value));
        }
    }
    if let Some(reasoning) = &settings.reasoning {
        let mut value = Map::new();
        if let Some(effort) = effort(reasoning, "the Responses API", out) {
            value.insert("effort".into(), effort.into());
        }
        if let Some(summary) = &reasoning.summary {
            value.insert("summary".into(), summary.clone().into());
        }
        out.fields.insert("reasoning".into(), Value::Object(value));
    }
}

pub(crate) fn read(fields: &mut In) -> Settings {
    let mut settings = fields.simple();
    settings.tool_choice = match fields.fields.get("tool_choice") {
        Some(Value::String(mode)) => mode_choice(mode),
        Some(Value::Object(choice)) if choice.get("type").and_then(Value::as_str) == Some("function") => {
            text(choice, "name").map(|name| ToolChoice::Named { name })
        }
        _ => None,
    };
    if settings.tool_choice.is_some() {
        fields.fields.remove("tool_choice");
    }
    let format = fields.fields.get("text").and_then(|t| t.get("format")).cloned().and_then(object);
    settings.response_format = format.and_then(|format| {
        let kind = match format.get("type")?.as_str()? {
            "text" => FormatKind::Text,
            "json_object" => FormatKind::JsonObject,
            "json_schema" => FormatKind::JsonSchema,
            _ => return None,
        };
        Some(ResponseFormat {
            kind,
            name: text(&format, "name"),
            description: text(&format, "description"),
            schema: format.get("schema").cloned(),
            strict: format.get("strict").and_then(Value::as_bool),
        })
    });
    if settings.response_format.is_some() {
        fields.take(Some(&["text", "format"]));
    }
    if let Some(reasoning) = fields.fields.get("reasoning").cloned().and_then(object) {
        let known = reasoning.keys().all(|k| matches!(k.as_str(), "effort" | "summary"));
        let (effort, summary) = (text(&reasoning, "effort"), text(&reasoning, "summary"));
        if known && (effort.is_some() || summary.is_some()) {
            fields.fields.remove("reasoning");
            settings.reasoning = Some(Reasoning { effort, summary, ..Reasoning::default() });
        }
    }
    settings
}

pub(crate) const DIALECT: super::Dialect = super::Dialect { places: PLACES, write, read, read_tools };

/// `[{"type": "function", name, description, parameters, strict}]`; built-in tools kept whole.
fn read_tools(tools: Value) -> (Vec<super::ToolOut>, Vec<Value>) {
    super::each_tool(tools, |tool| {
        if tool.get("type").and_then(Value::as_str) != Some("function") {
            return None;
        }
        let mut decl = tool.clone();
        decl.remove("type");
        super::function(&decl, "parameters")
    })
}
