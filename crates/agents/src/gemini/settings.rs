//! The settings file ganger gives Gemini CLI, without touching the user's
//! `~/.gemini/settings.json`. Gemini 0.61.0 reads its *system* settings from the path in
//! `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, but only from a file owned by root in directories no one
//! else may write (measured: a file under `/tmp`, or any file of a non-root user, is skipped with
//! a "Security Warning"), so that variable cannot carry ganger's settings. Instead, when ganger
//! needs settings of its own (a custom endpoint, or `[agents.gemini.config]`), it runs Gemini
//! with a home of its own, `GEMINI_CLI_HOME` = `.ganger/agents/gemini/home`, whose
//! `.gemini/settings.json` is this file; Gemini keeps that task's sessions there too, so
//! `--resume` works from round to round. Without either, Gemini runs in the user's home with
//! their own settings and login, untouched; it still never updates itself there, because 0.61.0
//! checks for updates only in its interactive UI (`checkForUpdates` is called from the
//! interactive bundle alone; headless `-p` runs never reach it). The file holds:
//!
//! - `general.enableAutoUpdate = false` and `general.enableAutoUpdateNotification = false`
//!   (0.61.0's names; `disableAutoUpdate`/`disableUpdateNag` are the deprecated ones it
//!   migrates), so that the tested version stays the one that runs;
//! - `general.maxAttempts = 3`: a dead model costs seconds, not the four minutes of the default
//!   ten attempts (measured: 246.8 s on a persistent 500; 10.3 s with 2 attempts); a user's
//!   own value in `[agents.gemini.config]` wins;
//! - `security.auth.selectedType = "gemini-api-key"` only when `GOOGLE_GEMINI_BASE_URL` is set:
//!   a custom endpoint otherwise selects the "gateway" auth type, which headless runs refuse
//!   (`Invalid auth method selected.`, exit 41). Without one the user's own login stays.
//!
//! `[agents.gemini.config]` is merged over these, table by table.

use crate::adapter::{PlanError, RoundRequest};
use serde_json::{Value, json};

/// The variable Gemini CLI takes its home from (where `.gemini/` is), instead of `$HOME`.
pub const HOME_ENV: &str = "GEMINI_CLI_HOME";

/// The variable that points Gemini CLI at another endpoint.
pub const BASE_URL_ENV: &str = "GOOGLE_GEMINI_BASE_URL";

/// Attempts per model request (Gemini's default is 10, with backoff).
pub const MAX_ATTEMPTS: u32 = 3;

/// The settings for one round, as JSON text.
pub fn settings(request: &RoundRequest<'_>) -> Result<String, PlanError> {
    let mut settings = json!({
        "general": {
            "enableAutoUpdate": false,
            "enableAutoUpdateNotification": false,
            "maxAttempts": MAX_ATTEMPTS
        }
    });
    if request.var(BASE_URL_ENV).is_some() {
        settings["security"] = json!({"auth": {"selectedType": "gemini-api-key"}});
    }
    let Value::Object(mut settings) = settings else {
        unreachable!("a JSON object literal");
    };
    crate::json_merge::merge_config(&mut settings, request.config, "gemini")?;
    Ok(Value::Object(settings).to_string())
}
