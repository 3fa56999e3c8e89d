//! Roles and the pipeline in `ganger.toml`: `[roles.NAME]` (agent, model, effort, permission,
//! prompt file) and `[pipeline]` (the reviewers, the bounds of its loops). A role left out, or
//! a setting left out of a role, takes the built-in default; a role without a model uses the
//! task's.

use super::{DurationSetting, Setting};
use ganger_events::Permission;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The roles every pipeline knows; any other `[roles.NAME]` is a reviewer a user added.
pub const BUILT_IN_ROLES: &[&str] = &[
    "planner", "critic", "executor", "tests", "code", "docs", "security",
];

/// One role's settings, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoleConfig {
    /// The agent that plays the role (default: the task's).
    pub agent: Option<String>,
    /// The model, `PROVIDER/MODEL` (default: the task's).
    pub model: Option<String>,
    /// Reasoning effort, for agents that take one (their adapter's `effort` says how).
    pub effort: Option<String>,
    /// `read-only` or `write` (default: `write` for the executor, `read-only` for the others).
    pub permission: Option<Setting<Permission>>,
    /// The role's instructions: a file in the repository, relative to the main checkout
    /// (default: the instructions built into ganger).
    pub prompt: Option<PathBuf>,
}

/// `[pipeline]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// The reviewers that read the finished work, in order.
    pub reviewers: Vec<String>,
    /// The most review rounds (each: every reviewer, then a fix round if any fails).
    pub review_rounds: u32,
    /// The most fix rounds a step gets when its round fails its checks.
    pub fix_rounds: u32,
    /// The most retries of a round that failed transiently (HTTP 429 or 5xx), and the first
    /// wait before one (doubled each time).
    pub retries: u32,
    pub backoff: DurationSetting,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            reviewers: vec!["code".into(), "tests".into()],
            review_rounds: 3,
            fix_rounds: 2,
            retries: 3,
            backoff: DurationSetting(Duration::from_secs(5)),
        }
    }
}

/// Checks what the files cannot say by their types: permissions, names, reviewers that are
/// roles, bounds that allow at least one round.
pub fn check(
    roles: &std::collections::BTreeMap<String, RoleConfig>,
    pipeline: &PipelineConfig,
) -> Result<(), String> {
    for (name, role) in roles {
        if !valid_role_name(name) {
            return Err(format!(
                "roles.{name}: a role's name is lower-case letters, digits and dashes, at most 24"
            ));
        }
        if let Some(permission) = &role.permission {
            permission
                .value()
                .map_err(|reason| format!("roles.{name}.permission: {reason}"))?;
        }
    }
    for reviewer in &pipeline.reviewers {
        let known = BUILT_IN_ROLES.contains(&reviewer.as_str()) || roles.contains_key(reviewer);
        if !known || ["planner", "critic", "executor"].contains(&reviewer.as_str()) {
            return Err(format!(
                "pipeline.reviewers: {reviewer:?} is not a reviewer (tests, code, docs, security, or a [roles.NAME] you add)"
            ));
        }
    }
    if pipeline.review_rounds == 0 {
        return Err("pipeline.review_rounds: at least 1".into());
    }
    Ok(())
}

/// A role's name: it becomes part of a task's name (`SLUG.ROLE`).
pub fn valid_role_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 24
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;

    fn checked(text: &str) -> Result<Config, String> {
        let config = Config::from_text(text)?;
        check(&config.roles, &config.pipeline)?;
        Ok(config)
    }

    #[test]
    fn roles_and_the_pipeline_are_read_with_defaults() {
        let config = checked(
            "[pipeline]\nreviewers = [\"security\", \"i18n\"]\nbackoff = \"2s\"\n\
             [roles.planner]\nmodel = \"p/strong\"\nprompt = \"roles/planner.md\"\n\
             [roles.i18n]\npermission = \"read-only\"\neffort = \"high\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.pipeline.reviewers, ["security", "i18n"]);
        assert_eq!(config.pipeline.backoff.0, Duration::from_secs(2));
        assert_eq!(config.pipeline.review_rounds, 3);
        assert_eq!(config.roles["planner"].model.as_deref(), Some("p/strong"));
        assert_eq!(config.roles["i18n"].effort.as_deref(), Some("high"));
        let defaults = checked("").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(defaults.pipeline.reviewers, ["code", "tests"]);
        assert!(defaults.roles.is_empty());
    }

    #[test]
    fn bad_roles_are_errors_that_name_them() {
        for (text, needle) in [
            (
                "[roles.planner]\npermission = \"all\"\n",
                "roles.planner.permission",
            ),
            ("[roles.planner]\nmodle = \"x\"\n", "modle"),
            ("[roles.Big]\n", "roles.Big"),
            ("[pipeline]\nreviewers = [\"nobody\"]\n", "nobody"),
            ("[pipeline]\nreviewers = [\"executor\"]\n", "executor"),
            ("[pipeline]\nreview_rounds = 0\n", "review_rounds"),
        ] {
            let error = checked(text).map(|_| ()).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }
}
