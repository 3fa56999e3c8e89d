//! Where an agent sends its model requests, read from the settings it will run with, and the
//! setting that sends them elsewhere: ganger's model gateway stands there, so that the agent
//! holds a placeholder key instead of the real one (`docs/gateway.md`).
//!
//! Measured per agent (docs/agents/gateway-measured.md): Claude Code, Gemini CLI and Qwen
//! Code take their base URL from one variable; OpenCode from its provider's `options` in its
//! configuration; Codex from its provider's `base_url` in its configuration, or
//! `OPENAI_BASE_URL` for its built-in provider.

use serde_json::Value;
use std::collections::BTreeMap;

/// A setting of the agent: a variable of its environment, or a path into the configuration
/// table `ganger.toml` gives it (`["provider", "mock", "options", "baseURL"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteSetting {
    Env(String),
    Config(Vec<String>),
}

/// An agent's route to its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRoute {
    /// The provider, as `--key PROVIDER=FILE` names it when it follows ganger's convention.
    pub provider: String,
    /// The base URL the agent would use: its setting, or its default.
    pub upstream: String,
    /// Where the base URL is set.
    pub base_url: RouteSetting,
    /// The variable the agent reads the model's key from, when it reads one.
    pub key_env: Option<String>,
    /// Where the key is set when it is not read from a variable (OpenCode's
    /// `options.apiKey`).
    pub key: Option<RouteSetting>,
}

/// The value at `path` in a configuration table, if it is a string.
pub(crate) fn config_string<'a>(config: Option<&'a Value>, path: &[&str]) -> Option<&'a str> {
    let mut at = config?;
    for key in path {
        at = at.get(key)?;
    }
    at.as_str()
}

/// A route whose base URL is one variable with a default, and whose key is another.
pub(crate) fn env_route(
    provider: &str,
    var: &str,
    default: &str,
    key_env: &str,
    env: &BTreeMap<String, String>,
) -> ModelRoute {
    ModelRoute {
        provider: provider.to_owned(),
        upstream: env
            .get(var)
            .filter(|url| !url.trim().is_empty())
            .cloned()
            .unwrap_or_else(|| default.to_owned()),
        base_url: RouteSetting::Env(var.to_owned()),
        key_env: Some(key_env.to_owned()),
        key: None,
    }
}

/// The usual base URL of a provider an agent knows by name, when its configuration names
/// none.
pub(crate) fn known_provider_url(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "anthropic" => "https://api.anthropic.com/v1",
        "openai" => "https://api.openai.com/v1",
        "openrouter" => "https://openrouter.ai/api/v1",
        "google" | "gemini" => "https://generativelanguage.googleapis.com/v1beta",
        "deepseek" => "https://api.deepseek.com/v1",
        "groq" => "https://api.groq.com/openai/v1",
        "mistral" => "https://api.mistral.ai/v1",
        "xai" => "https://api.x.ai/v1",
        _ => return None,
    })
}

/// Sets `path` in `config` to `value`, making the tables on the way.
pub fn set_config(config: &mut Value, path: &[String], value: &str) {
    let mut at = config;
    for key in path {
        if !at.is_object() {
            *at = Value::Object(serde_json::Map::new());
        }
        let Value::Object(map) = at else { return };
        at = map.entry(key.clone()).or_insert(Value::Null);
    }
    *at = Value::String(value.to_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_config_path_is_set_making_the_tables_on_the_way() {
        let mut config = json!({"provider": {"mock": {"npm": "x"}}});
        let path: Vec<String> = ["provider", "mock", "options", "baseURL"]
            .map(String::from)
            .to_vec();
        set_config(&mut config, &path, "http://127.0.0.1:1/v1");
        assert_eq!(config["provider"]["mock"]["npm"], "x");
        assert_eq!(
            config["provider"]["mock"]["options"]["baseURL"],
            "http://127.0.0.1:1/v1"
        );
        let mut empty = Value::Null;
        set_config(&mut empty, &path[..1], "v");
        assert_eq!(empty, json!({"provider": "v"}));
    }
}
