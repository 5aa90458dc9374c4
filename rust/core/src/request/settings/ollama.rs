//! Ollama's native API: the settings' fields.
//!
//! Sampling and limits in `options` (`num_predict`, `temperature`, `top_p`, `stop`); structured
//! output in `format` (`"json"`, or the schema itself); reasoning in `think` (`true`, `false`, or
//! an effort); no tool choice, metadata or user (reported).

use serde_json::Value;

use super::{FormatKind, In, Out, Places, Reasoning, ResponseFormat, Settings};
use crate::request::Action;

pub(crate) const PLACES: Places = Places {
    dialect: "ollama",
    model: Some(&["model"]),
    stream: Some(&["stream"]),
    max_tokens: Some(&["options", "num_predict"]),
    temperature: Some(&["options", "temperature"]),
    top_p: Some(&["options", "top_p"]),
    stop: Some(&["options", "stop"]),
    parallel_tool_calls: None,
    metadata: None,
    user: None,
    conversation: &["messages", "tools"],
    handled: &[],
};

pub(crate) fn write(settings: &Settings, out: &mut Out<'_>) {
    if settings.tool_choice.is_some() {
        out.lost("tool_choice", Action::Drop, "Ollama has no tool choice");
    }
    if let Some(format) = &settings.response_format {
        match (format.kind, &format.schema) {
            (FormatKind::Text, _) => {}
            (FormatKind::JsonSchema, Some(schema)) => {
                out.fields.insert("format".into(), schema.clone());
            }
            _ => {
                out.fields.insert("format".into(), "json".into());
            }
        }
    }
    if let Some(reasoning) = &settings.reasoning {
        let think = match (&reasoning.effort, reasoning.enabled, reasoning.budget_tokens) {
            (Some(effort), _, _) => Value::from(effort.clone()),
            (None, Some(enabled), _) => enabled.into(),
            (None, None, Some(budget)) => {
                out.lost(
                    "reasoning",
                    Action::Fallback,
                    format!("Ollama takes no thinking budget: {budget} tokens sent as think: true"),
                );
                true.into()
            }
            (None, None, None) => return,
        };
        out.fields.insert("think".into(), think);
    }
}

pub(crate) fn read(fields: &mut In) -> Settings {
    let mut settings = fields.simple();
    settings.response_format = match fields.take(Some(&["format"])) {
        Some(Value::String(s)) if s == "json" => Some(ResponseFormat {
            kind: FormatKind::JsonObject,
            name: None,
            description: None,
            schema: None,
            strict: None,
        }),
        Some(schema @ Value::Object(_)) => Some(ResponseFormat {
            kind: FormatKind::JsonSchema,
            name: None,
            description: None,
            schema: Some(schema),
            strict: None,
        }),
        Some(other) => {
            fields.fields.insert("format".into(), other);
            None
        }
        None => None,
    };
    settings.reasoning = match fields.take(Some(&["think"])) {
        Some(Value::Bool(enabled)) => Some(Reasoning { enabled: Some(enabled), ..Reasoning::default() }),
        Some(Value::String(effort)) => Some(Reasoning { effort: Some(effort), ..Reasoning::default() }),
        Some(other) => {
            fields.fields.insert("think".into(), other);
            None
        }
        None => None,
    };
    settings
}

pub(crate) const DIALECT: super::Dialect =
    super::Dialect { places: PLACES, write, read, read_tools: super::openai_chat::read_tools };
