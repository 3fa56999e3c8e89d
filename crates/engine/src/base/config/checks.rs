//! `[[checks]]` in `ganger.toml`: the commands whose exit codes decide whether a round's work
//! is done (tests, lint, build). Each runs with `sh -c` in the task's worktree, in its sandbox,
//! after every round.

use super::DurationSetting;
use serde::Deserialize;
use std::time::Duration;

/// How long a check may run when its entry names no timeout.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// One `[[checks]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// A short name (`tests`, `lint`): letters, digits, `-`, `_` and `.`.
    pub name: String,
    /// The shell command, run with `sh -c` in the worktree.
    pub command: String,
    /// How long it may run before it is stopped and counted as failed.
    #[serde(default)]
    pub timeout: Option<DurationSetting>,
}

impl CheckConfig {
    /// The time limit of the check.
    pub fn timeout(&self) -> Duration {
        self.timeout.map_or(DEFAULT_CHECK_TIMEOUT, |t| t.0)
    }
}

/// Whether `name` may name a check (it names the check's log file too).
pub fn valid_check_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.starts_with('.')
}

/// Refuses checks with a bad or repeated name, or an empty command.
pub fn validate_checks(checks: &[CheckConfig]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for check in checks {
        if !valid_check_name(&check.name) {
            return Err(format!(
                "checks: the name {:?} is not a valid check name (letters, digits, -, _ and .)",
                check.name
            ));
        }
        if check.command.trim().is_empty() {
            return Err(format!("checks: {} has an empty command", check.name));
        }
        if !seen.insert(check.name.as_str()) {
            return Err(format!("checks: the name {} is used twice", check.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::Config;

    #[test]
    fn checks_read_with_their_timeouts_and_bad_ones_are_refused_by_name() {
        let config = Config::from_text(
            "[[checks]]\nname = \"tests\"\ncommand = \"cargo test\"\ntimeout = \"5m\"\n\
             [[checks]]\nname = \"lint\"\ncommand = \"cargo clippy\"\n",
        )
        .unwrap();
        assert_eq!(config.checks.len(), 2);
        assert_eq!(config.checks[0].timeout(), Duration::from_secs(300));
        assert_eq!(config.checks[1].timeout(), DEFAULT_CHECK_TIMEOUT);
        assert!(validate_checks(&config.checks).is_ok());
        let twice = vec![config.checks[0].clone(), config.checks[0].clone()];
        assert!(validate_checks(&twice).unwrap_err().contains("used twice"));
        let mut bad = config.checks[0].clone();
        bad.name = "a/b".into();
        assert!(validate_checks(&[bad]).unwrap_err().contains("\"a/b\""));
        let err = Config::from_text("[[checks]]\nname = \"x\"\ncmd = \"true\"\n").unwrap_err();
        assert!(err.contains("cmd"), "{err}");
    }
}
