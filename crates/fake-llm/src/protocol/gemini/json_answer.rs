//! JSON answers for requests that ask for JSON, as Gemini CLI's side requests do (the
//! next-speaker check, session summaries): `generationConfig.responseMimeType` is
//! `application/json`, usually with a `responseJsonSchema` or `responseSchema`.
//!
//! A text answer then goes out as JSON: the text itself when it already is a JSON document
//! (so a script's `default` can be written as JSON), otherwise the smallest document that
//! fits the schema (every property filled, strings set to the text, enums to their first
//! value except that a `…speaker` field takes `"user"` when allowed, so Gemini CLI's
//! next-speaker check hands the turn back to the user), or the text as a JSON string when
//! there is no schema. Tool calls are left as they are.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::conversation::Answer;

/// How deep a schema is followed; deeper levels become `null`.
const MAX_DEPTH: usize = 8;

/// `answer`, turned into JSON text when `body` asks for a JSON answer.
pub(super) fn as_requested<'a>(answer: &'a Answer, body: &Value) -> Cow<'a, Answer> {
    let Answer::Text { text } = answer else {
        return Cow::Borrowed(answer);
    };
    let config = body.get("generationConfig");
    let wants_json = config
        .and_then(|config| config.get("responseMimeType"))
        .and_then(Value::as_str)
        .is_some_and(|mime| mime.eq_ignore_ascii_case("application/json"));
    if !wants_json || serde_json::from_str::<Value>(text).is_ok() {
        return Cow::Borrowed(answer);
    }
    let schema = config.and_then(|config| {
        config
            .get("responseJsonSchema")
            .or_else(|| config.get("responseSchema"))
    });
    let document = match schema {
        Some(schema) => fitting(schema, None, text, 0),
        None => json!(text),
    };
    Cow::Owned(Answer::Text {
        text: document.to_string(),
    })
}

/// The smallest value fitting `schema` (JSON Schema, or the OpenAPI subset of Gemini's
/// `responseSchema` with upper-case type names); `field` is the property it is for.
fn fitting(schema: &Value, field: Option<&str>, text: &str, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    let choices = schema.get("enum").and_then(Value::as_array);
    if let Some(choice) = choices.and_then(|choices| enum_choice(choices, field)) {
        return choice.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return fitting(first, field, text, depth + 1);
        }
    }
    match type_name(schema).as_deref() {
        Some("object") => object(schema, text, depth),
        Some("array") => {
            let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let items = schema.get("items").unwrap_or(&Value::Null);
            (0..count)
                .map(|_| fitting(items, field, text, depth + 1))
                .collect()
        }
        Some("integer" | "number") => schema.get("minimum").cloned().unwrap_or(json!(0)),
        Some("boolean") => json!(false),
        Some("null") => Value::Null,
        Some(_) => json!(text),
        None if schema.get("properties").is_some() => object(schema, text, depth),
        None => json!(text),
    }
}

/// An object with every property of `schema` filled.
fn object(schema: &Value, text: &str, depth: usize) -> Value {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| {
                    (name.clone(), fitting(property, Some(name), text, depth + 1))
                })
                .collect::<Map<_, _>>()
        })
        .unwrap_or_default();
    Value::Object(properties)
}

/// `"user"` for a field named like `next_speaker` when the enum allows it, else the first.
fn enum_choice<'a>(choices: &'a [Value], field: Option<&str>) -> Option<&'a Value> {
    let is_speaker = field.is_some_and(|field| field.to_ascii_lowercase().contains("speaker"));
    let user = choices
        .iter()
        .find(|choice| choice.as_str() == Some("user"));
    match user {
        Some(user) if is_speaker => Some(user),
        _ => choices.first(),
    }
}

/// The schema's type in lower case; for a list of types, the first that is not `null`.
fn type_name(schema: &Value) -> Option<String> {
    let name = match schema.get("type")? {
        Value::String(name) => name.as_str(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .find(|name| !name.eq_ignore_ascii_case("null"))
            .unwrap_or("null"),
        _ => return None,
    };
    Some(name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_to(body: &Value, text: &str) -> String {
        let answer = Answer::Text {
            text: text.to_owned(),
        };
        match as_requested(&answer, body).into_owned() {
            Answer::Text { text } => text,
            Answer::ToolCall { .. } => unreachable!("a text stays a text"),
        }
    }

    #[test]
    fn the_next_speaker_check_gets_the_user_back() {
        let body = json!({"generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string"},
                    "next_speaker": {"type": "string", "enum": ["model", "user"]}
                },
                "required": ["reasoning", "next_speaker"]
            }
        }});
        let document: Value = serde_json::from_str(&answer_to(&body, "Title")).unwrap();
        assert_eq!(
            document,
            json!({"reasoning": "Title", "next_speaker": "user"})
        );
    }

    #[test]
    fn openapi_schemas_lists_json_texts_and_plain_requests() {
        let body = json!({"generationConfig": {
            "responseMimeType": "application/json",
            "responseSchema": {"type": "OBJECT", "properties": {
                "tags": {"type": "ARRAY", "minItems": 1, "items": {"type": "STRING"}},
                "count": {"type": "INTEGER"},
                "kind": {"type": "STRING", "enum": ["a", "b"]},
                "ok": {"type": ["boolean", "null"]}
            }}
        }});
        let document: Value = serde_json::from_str(&answer_to(&body, "t")).unwrap();
        assert_eq!(
            document,
            json!({"tags": ["t"], "count": 0, "kind": "a", "ok": false})
        );
        assert_eq!(answer_to(&body, "{\"given\":1}"), "{\"given\":1}");
        let no_schema = json!({"generationConfig": {"responseMimeType": "application/json"}});
        assert_eq!(answer_to(&no_schema, "plain"), "\"plain\"");
        assert_eq!(answer_to(&json!({}), "plain"), "plain");
    }
}
