//! `[agents.codex.config]` as Codex's `-c key=value` overrides: one per leaf, nested tables
//! flattened to dotted keys, each value written as a TOML literal (Codex parses the value as
//! TOML). `-c` works the same for `exec` and `exec resume`, unlike some of Codex's flags.

use serde_json::{Map, Value};

/// The `key=value` texts of `config`, in key order. Fails on a value TOML cannot hold (null)
/// or on a configuration that is not a table.
pub fn flatten(config: &Value) -> Result<Vec<String>, String> {
    let Value::Object(table) = config else {
        return Err("it must be a table".to_owned());
    };
    let mut out = Vec::new();
    flatten_into(&mut Vec::new(), table, &mut out)?;
    Ok(out)
}

fn flatten_into(
    path: &mut Vec<String>,
    table: &Map<String, Value>,
    out: &mut Vec<String>,
) -> Result<(), String> {
    for (key, value) in table {
        path.push(toml_key(key));
        match value {
            // An empty table still says something (it may clear a default): keep it whole.
            Value::Object(inner) if !inner.is_empty() => flatten_into(path, inner, out)?,
            _ => {
                let literal =
                    toml_literal(value).map_err(|e| format!("{}: {e}", path.join(".")))?;
                out.push(format!("{}={literal}", path.join(".")));
            }
        }
        path.pop();
    }
    Ok(())
}

/// A key segment: bare when TOML allows it, quoted otherwise.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

/// A JSON value as a TOML literal: strings as basic strings, arrays and tables inline.
pub fn toml_literal(value: &Value) -> Result<String, String> {
    Ok(match value {
        Value::Null => return Err("TOML has no null".to_owned()),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => toml_string(text),
        Value::Array(items) => {
            let items: Result<Vec<String>, String> = items.iter().map(toml_literal).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(table) => {
            let pairs: Result<Vec<String>, String> = table
                .iter()
                .map(|(key, value)| Ok(format!("{} = {}", toml_key(key), toml_literal(value)?)))
                .collect();
            let pairs = pairs?;
            if pairs.is_empty() {
                "{}".to_owned()
            } else {
                format!("{{ {} }}", pairs.join(", "))
            }
        }
    })
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_tables_become_dotted_keys_and_values_toml_literals() {
        let config = json!({
            "model_provider": "scripted",
            "model_providers": {"scripted": {"base_url": "http://127.0.0.1:1/v1", "request_max_retries": 1}},
            "tools": {"web_search": false},
            "notify": ["say", "done \"now\""],
            "ratio": 0.5,
            "empty": {},
            "odd key": {"a.b": "x\ny"}
        });
        assert_eq!(
            flatten(&config).unwrap(),
            [
                r#"empty={}"#,
                r#"model_provider="scripted""#,
                r#"model_providers.scripted.base_url="http://127.0.0.1:1/v1""#,
                r#"model_providers.scripted.request_max_retries=1"#,
                r#"notify=["say", "done \"now\""]"#,
                r#""odd key"."a.b"="x\ny""#,
                r#"ratio=0.5"#,
                r#"tools.web_search=false"#,
            ]
        );
    }

    #[test]
    fn every_literal_reads_back_as_the_same_toml_value() {
        let values = [
            json!("tab\there \u{1} \\ \"q\" é"),
            json!([1, -2, 3.25, true, "x"]),
            json!({"a": [{"b": "c"}], "d e": 1}),
        ];
        for value in values {
            let literal = toml_literal(&value).unwrap();
            let parsed: toml::Table = toml::from_str(&format!("v = {literal}")).unwrap();
            let back = serde_json::to_value(&parsed["v"]).unwrap();
            assert_eq!(back, value, "{literal}");
        }
    }

    #[test]
    fn null_and_non_tables_are_refused() {
        assert!(
            flatten(&json!({"a": {"b": null}}))
                .unwrap_err()
                .contains("a.b")
        );
        assert!(flatten(&json!([1])).is_err());
    }
}
