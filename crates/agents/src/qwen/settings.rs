//! The settings file ganger gives Qwen Code, without touching the user's `~/.qwen/settings.json`.
//!
//! Qwen reads a system settings file from `QWEN_CODE_SYSTEM_SETTINGS_PATH` (default
//! `/etc/qwen-code/settings.json`), whose values win over the user's and the workspace's
//! (measured with 0.15.10, see docs/agents/qwen-prompt.md). ganger writes one per agent
//! directory with:
//!
//! - `general.enableAutoUpdate: false`, so the tested version stays the one that runs;
//! - `security.auth.selectedType: "openai"` when `OPENAI_BASE_URL` is set, so the user's
//!   endpoint is used even if their own settings chose another way to sign in;
//! - `"$version": 4`, the format 0.15.10 writes, so that Qwen does not rewrite the file;
//! - `[agents.qwen.config]` from `ganger.toml` merged over all of it.

use crate::adapter::{PlanError, RoundRequest};
use serde_json::{Map, Value, json};

/// The variable naming Qwen's system settings file.
pub const SYSTEM_SETTINGS_ENV: &str = "QWEN_CODE_SYSTEM_SETTINGS_PATH";

/// The file's name in the agent's directory.
pub const FILE_NAME: &str = "settings.json";

/// The settings file's content for a round.
pub fn settings(request: &RoundRequest<'_>) -> Result<String, PlanError> {
    let mut settings = Map::new();
    settings.insert("$version".into(), json!(4));
    settings.insert("general".into(), json!({"enableAutoUpdate": false}));
    if request.var("OPENAI_BASE_URL").is_some() {
        settings.insert(
            "security".into(),
            json!({"auth": {"selectedType": "openai"}}),
        );
    }
    crate::json_merge::merge_config(&mut settings, request.config, "qwen")?;
    Ok(Value::Object(settings).to_string())
}
