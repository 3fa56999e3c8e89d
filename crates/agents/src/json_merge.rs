//! Merging `ganger.toml`'s agent configuration over settings ganger or the user already has:
//! one deep merge for every adapter that hands a CLI a JSON settings document (OpenCode's
//! inline configuration, Gemini CLI's and Qwen Code's settings files).

use crate::adapter::PlanError;
use serde_json::{Map, Value};

/// Deep merge: objects merge key by key, anything else in `overlay` replaces.
pub(crate) fn deep_merge(base: &mut Map<String, Value>, overlay: &Map<String, Value>) {
    for (key, value) in overlay {
        match (base.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(over)) => deep_merge(inner, over),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Merges `[agents.AGENT.config]` (as JSON) over `settings`; anything but a table is an error
/// naming the agent.
pub(crate) fn merge_config(
    settings: &mut Map<String, Value>,
    config: Option<&Value>,
    agent: &'static str,
) -> Result<(), PlanError> {
    match config {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(overlay)) => {
            deep_merge(settings, overlay);
            Ok(())
        }
        Some(_) => Err(PlanError::Config {
            agent,
            reason: "it must be a table of the CLI's settings".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_merge_key_by_key_and_other_values_replace() {
        let Value::Object(mut base) = json!({"a": {"x": 1, "y": 2}, "b": [1]}) else {
            unreachable!()
        };
        let overlay = json!({"a": {"y": 3}, "b": [2], "c": true});
        merge_config(&mut base, Some(&overlay), "t").unwrap();
        assert_eq!(
            Value::Object(base.clone()),
            json!({"a": {"x": 1, "y": 3}, "b": [2], "c": true})
        );
        assert!(merge_config(&mut base, Some(&json!([1])), "t").is_err());
    }
}
