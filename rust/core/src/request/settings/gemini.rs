//! Gemini `generateContent`: the settings' fields.
//!
//! The model and streaming are in the URL, not the body. Sampling, limits, stop sequences,
//! structured output (`responseMimeType`, `responseJsonSchema`, or the older `responseSchema`
//! when a body used it) and reasoning (`thinkingConfig`: `thinkingBudget`, `thinkingLevel`,
//! `includeThoughts`) are in `generationConfig`; the tool choice is
//! `toolConfig.functionCallingConfig` (`mode` `AUTO` / `ANY` / `NONE`, one tool by
//! `allowedFunctionNames`); no parallel-calls switch, metadata or user (reported).

use serde_json::{Value, json};

use super::{ChoiceMode, FormatKind, In, Out, Places, Reasoning, ResponseFormat, Settings, ToolChoice, object};

pub(crate) const PLACES: Places = Places {
    dialect: "gemini",
    model: None,
    stream: None,
    max_tokens: Some(&["generationConfig", "maxOutputTokens"]),
    temperature: Some(&["generationConfig", "temperature"]),
    top_p: Some(&["generationConfig", "topP"]),
    stop: Some(&["generationConfig", "stopSequences"]),
    parallel_tool_calls: None,
    metadata: None,
    user: None,
    conversation: &["contents", "systemInstruction", "tools"],
    handled: &[],
};

const OLD_SCHEMA: &str = "responseSchema";

pub(crate) fn write(settings: &Settings, out: &mut Out<'_>) {
    if let Some(choice) = &settings.tool_choice {
        let config = match choice {
            ToolChoice::Mode(ChoiceMode::Auto) => json!({"mode": "AUTO"}),
            ToolChoice::Mode(ChoiceMode::None) => json!({"mode": "NONE"}),
            ToolChoice::Mode(ChoiceMode::Required) => json!({"mode": "ANY"}),
            ToolChoice::Named { name } => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        };
        out.fields.insert("toolConfig".into(), json!({"functionCallingConfig": config}));
    }
    let mut generation = out.fields.remove("generationConfig").and_then(object).unwrap_or_default();
    if let Some(format) = &settings.response_format {
        match format.kind {
            FormatKind::Text => {
                generation.insert("responseMimeType".into(), "text/plain".into());
            }
            FormatKind::JsonObject | FormatKind::JsonSchema => {
                generation.insert("responseMimeType".into(), "application/json".into());
                if let Some(schema) = &format.schema {
                    let key = if generation.contains_key(OLD_SCHEMA) { OLD_SCHEMA } else { "responseJsonSchema" };
                    generation.insert(key.into(), schema.clone());
                }
            }
        }
    }
    if let Some(reasoning) = &settings.reasoning {
        let mut config = serde_json::Map::new();
        if reasoning.enabled == Some(false) {
            config.insert("thinkingBudget".into(), 0.into());
        }
        if let Some(budget) = reasoning.budget_tokens {
            config.insert("thinkingBudget".into(), budget.into());
        }
        if let Some(effort) = &reasoning.effort {
            config.insert("thinkingLevel".into(), effort.clone().into());
        }
        if let Some(summary) = &reasoning.summary {
            config.insert("includeThoughts".into(), (summary != "none").into());
        }
        generation.insert("thinkingConfig".into(), Value::Object(config));
    }
    if !generation.is_empty() {
        out.fields.insert("generationConfig".into(), Value::Object(generation));
    }
}

pub(crate) fn read(fields: &mut In) -> Settings {
    let mut settings = fields.simple();
    if let Some(config) =
        fields.fields.get("toolConfig").and_then(|t| t.get("functionCallingConfig")).cloned().and_then(object)
    {
        let names: Vec<&str> = config
            .get("allowedFunctionNames")
            .and_then(Value::as_array)
            .map(|n| n.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let choice = match (config.get("mode").and_then(Value::as_str), names.as_slice()) {
            (Some("AUTO"), []) => Some(ToolChoice::Mode(ChoiceMode::Auto)),
            (Some("NONE"), []) => Some(ToolChoice::Mode(ChoiceMode::None)),
            (Some("ANY"), []) => Some(ToolChoice::Mode(ChoiceMode::Required)),
            (Some("ANY"), [one]) => Some(ToolChoice::Named { name: (*one).to_owned() }),
            _ => None,
        };
        if choice.is_some() && config.len() <= 2 {
            fields.take(Some(&["toolConfig", "functionCallingConfig"]));
            settings.tool_choice = choice;
        }
    }
    let mime = fields.take(Some(&["generationConfig", "responseMimeType"]));
    let schema = fields.take(Some(&["generationConfig", "responseJsonSchema"]));
    let old_schema = fields.fields.get("generationConfig").and_then(|g| g.get(OLD_SCHEMA)).cloned();
    settings.response_format = match mime.as_ref().and_then(Value::as_str) {
        Some("application/json") => {
            let schema = schema.or(old_schema);
            let kind = if schema.is_some() { FormatKind::JsonSchema } else { FormatKind::JsonObject };
            Some(ResponseFormat { kind, name: None, description: None, schema, strict: None })
        }
        Some("text/plain") => {
            Some(ResponseFormat { kind: FormatKind::Text, name: None, description: None, schema: None, strict: None })
        }
        _ => {
            // another mime type (`text/x.enum`) stays as it was
            if let (Some(mime), Some(generation)) =
                (mime, fields.fields.get_mut("generationConfig").and_then(Value::as_object_mut))
            {
                generation.insert("responseMimeType".into(), mime);
            }
            None
        }
    };
    // a budget that is no token count (`-1`, `1e30`) leaves the config as it was, kept as extra
    let readable = |config: &Value| config.get("thinkingBudget").is_none_or(|b| b.as_u64().is_some());
    if let Some(config) = fields
        .take_as(Some(&["generationConfig", "thinkingConfig"]), |c| c.as_object().filter(|_| readable(c)).cloned())
    {
        let budget = config.get("thinkingBudget").and_then(Value::as_u64);
        settings.reasoning = Some(Reasoning {
            enabled: (budget == Some(0)).then_some(false),
            budget_tokens: budget.filter(|b| *b > 0),
            effort: config.get("thinkingLevel").and_then(Value::as_str).map(str::to_owned),
            summary: config
                .get("includeThoughts")
                .and_then(Value::as_bool)
                .map(|on| if on { "auto" } else { "none" }.to_owned()),
        });
    }
    settings
}

pub(crate) const DIALECT: super::Dialect = super::Dialect { places: PLACES, write, read, read_tools };

/// `[{"functionDeclarations": [{name, description, parameters}]}]`; other tools (`googleSearch`,
/// `codeExecution`) and declarations msgwire does not keep as they are (`parametersJsonSchema`)
/// stay whole.
fn read_tools(tools: Value) -> (Vec<super::ToolOut>, Vec<Value>) {
    let (mut functions, mut kept) = (Vec::new(), Vec::new());
    let Value::Array(groups) = tools else { return (functions, kept) };
    for group in groups {
        let declared = group.as_object().filter(|g| g.len() == 1).and_then(|g| g.get("functionDeclarations"));
        let read: Option<Vec<super::ToolOut>> = declared.and_then(Value::as_array).and_then(|decls| {
            decls.iter().map(|d| d.as_object().and_then(|d| super::function(d, "parameters"))).collect()
        });
        match read {
            Some(read) if !read.iter().any(|t| t.strict.is_some() || t.cache_control.is_some()) => {
                functions.extend(read);
            }
            _ => kept.push(group),
        }
    }
    (functions, kept)
}
