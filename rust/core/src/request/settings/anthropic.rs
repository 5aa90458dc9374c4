//! Anthropic Messages: the settings' fields.
//!
//! `max_tokens`, `stop_sequences`; `tool_choice` `{"type": "auto" | "any" | "none" | "tool",
//! "name"?, "disable_parallel_tool_use"?}` (parallel tool calls turned off ride on it, with
//! `auto` when no choice was given); `thinking` `{"type": "enabled", "budget_tokens"}`,
//! `{"type": "disabled"}`, or `{"type": "adaptive"}` with `output_config.effort` for an effort;
//! structured output as `output_config.format` `{"type": "json_schema", "schema"}` (no plain
//! JSON mode: reported); the user as `metadata.user_id` (other metadata reported). A cache
//! breakpoint on the system prompt is written by the conversation writer.

use serde_json::{Value, json};

use super::{ChoiceMode, FormatKind, In, Out, Places, Reasoning, ResponseFormat, Settings, ToolChoice, object, text};
use crate::request::Action;

pub(crate) const PLACES: Places = Places {
    dialect: "anthropic",
    model: Some(&["model"]),
    stream: Some(&["stream"]),
    max_tokens: Some(&["max_tokens"]),
    temperature: Some(&["temperature"]),
    top_p: Some(&["top_p"]),
    stop: Some(&["stop_sequences"]),
    parallel_tool_calls: None,
    metadata: None,
    user: Some(&["metadata", "user_id"]),
    conversation: &["messages", "system", "tools"],
    handled: &["parallel_tool_calls", "metadata"],
};

pub(crate) fn write(settings: &Settings, out: &mut Out<'_>) {
    if let Some(metadata) = &settings.metadata {
        for key in metadata.keys() {
            out.lost("metadata", Action::Drop, format!("Anthropic's metadata holds only user_id: `{key}` dropped"));
        }
    }
    let parallel_off = settings.parallel_tool_calls == Some(false);
    if settings.tool_choice.is_some() || parallel_off {
        let mut choice = match settings.tool_choice.as_ref().unwrap_or(&ToolChoice::Mode(ChoiceMode::Auto)) {
            ToolChoice::Mode(ChoiceMode::Auto) => json!({"type": "auto"}),
            ToolChoice::Mode(ChoiceMode::None) => json!({"type": "none"}),
            ToolChoice::Mode(ChoiceMode::Required) => json!({"type": "any"}),
            ToolChoice::Named { name } => json!({"type": "tool", "name": name}),
        };
        if let (true, Some(map)) = (parallel_off, choice.as_object_mut()) {
            map.insert("disable_parallel_tool_use".into(), true.into());
        }
        out.fields.insert("tool_choice".into(), choice);
    }
    let mut config = out.fields.get("output_config").cloned().and_then(object).unwrap_or_default();
    if let Some(reasoning) = &settings.reasoning {
        let thinking = match (reasoning.enabled, reasoning.budget_tokens, &reasoning.effort) {
            (Some(false), _, _) => json!({"type": "disabled"}),
            (_, Some(budget), _) => json!({"type": "enabled", "budget_tokens": budget}),
            (_, None, Some(effort)) => {
                config.insert("effort".into(), effort.clone().into());
                json!({"type": "adaptive"})
            }
            (_, None, None) => json!({"type": "adaptive"}),
        };
        if reasoning.summary.is_some() {
            out.lost("reasoning", Action::Strip, "Anthropic's thinking has no summary setting");
        }
        out.fields.insert("thinking".into(), thinking);
    }
    if let Some(format) = &settings.response_format {
        match (format.kind, &format.schema) {
            (FormatKind::JsonSchema, Some(schema)) => {
                config.insert("format".into(), json!({"type": "json_schema", "schema": schema}));
            }
            (FormatKind::Text, _) => {}
            _ => out.lost("response_format", Action::Drop, "Anthropic's structured output needs a JSON schema"),
        }
    }
    if !config.is_empty() {
        out.fields.insert("output_config".into(), Value::Object(config));
    }
}

pub(crate) fn read(fields: &mut In) -> Settings {
    let mut settings = fields.simple();
    if let Some(choice) = fields.fields.get("tool_choice").cloned().and_then(object) {
        let parsed = match choice.get("type").and_then(Value::as_str) {
            Some("auto") => Some(ToolChoice::Mode(ChoiceMode::Auto)),
            Some("none") => Some(ToolChoice::Mode(ChoiceMode::None)),
            Some("any") => Some(ToolChoice::Mode(ChoiceMode::Required)),
            Some("tool") => text(&choice, "name").map(|name| ToolChoice::Named { name }),
            _ => None,
        };
        if parsed.is_some() {
            fields.fields.remove("tool_choice");
            if choice.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
                settings.parallel_tool_calls = Some(false);
                // an `auto` choice only there to carry the flag is what writing makes of it
            }
            settings.tool_choice = parsed;
        }
    }
    let mut effort = None;
    if let Some(config) = fields.fields.get_mut("output_config").and_then(Value::as_object_mut) {
        effort = config.remove("effort").and_then(|v| v.as_str().map(str::to_owned));
        let format = config.get("format").cloned().and_then(object);
        if let Some(schema) = format.filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema")) {
            config.remove("format");
            settings.response_format = Some(ResponseFormat {
                kind: FormatKind::JsonSchema,
                name: None,
                description: None,
                schema: schema.get("schema").cloned(),
                strict: None,
            });
        }
    }
    if let Some(thinking) = fields.fields.get("thinking").cloned().and_then(object) {
        let reasoning = match thinking.get("type").and_then(Value::as_str) {
            Some("disabled") => Some(Reasoning { enabled: Some(false), ..Reasoning::default() }),
            Some("enabled") => thinking
                .get("budget_tokens")
                .and_then(Value::as_u64)
                .map(|budget| Reasoning { budget_tokens: Some(budget), ..Reasoning::default() }),
            Some("adaptive") if thinking.len() == 1 => {
                Some(Reasoning { effort: effort.take(), ..Reasoning::default() })
            }
            _ => None,
        };
        if reasoning.is_some() {
            fields.fields.remove("thinking");
            settings.reasoning = reasoning;
        }
    }
    if let Some(effort) = effort {
        // an effort without adaptive thinking stays as it was
        if let Some(config) = fields.fields.get_mut("output_config").and_then(Value::as_object_mut) {
            config.insert("effort".into(), effort.into());
        }
    }
    settings
}

pub(crate) const DIALECT: super::Dialect = super::Dialect { places: PLACES, write, read, read_tools };

/// `[{name, description, input_schema, cache_control}]` (a custom tool, `type` absent or
/// `custom`); server tools (`web_search_20250305`...) kept whole.
fn read_tools(tools: Value) -> (Vec<super::ToolOut>, Vec<Value>) {
    super::each_tool(tools, |tool| {
        if tool.get("type").is_some() {
            return None; // `custom` is written without its type: kept whole to come back as it was
        }
        super::function(tool, "input_schema")
    })
}
