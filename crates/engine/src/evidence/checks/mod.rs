//! Checks: the evidence ganger gathers itself after every round. `ganger.toml`'s
//! `[[checks]]` and the command line's `--check` are planned into the round's record when it
//! starts; the round host runs them once the agent says it is done, in the task's worktree and
//! sandbox; a failing check makes the round `failed`, whatever the agent said, and
//! `--until-green` sends the failures back to the agent as the next round.

mod capture;
mod prompt;
mod tail;

pub(crate) use capture::Capture;
pub(crate) use prompt::fix_prompt;
pub(crate) use tail::tail;

use crate::base::config::{Config, DEFAULT_CHECK_TIMEOUT};
use crate::base::error::{EngineError, Result};
use ganger_store::CheckRun;

/// The checks of a new round: the configured ones, then one per `--check` command (named
/// `check`, `check-2`, ... unless a configured check has that name). A read-only round gets
/// none: it cannot change the worktree, so its checks would judge the work before it (a
/// planner's round would fail on the tests its plan is meant to make pass).
pub(crate) fn planned(
    config: &Config,
    extra: &[String],
    permission: ganger_agents::Permission,
) -> Result<Vec<CheckRun>> {
    if permission == ganger_agents::Permission::ReadOnly {
        if !extra.is_empty() {
            return Err(EngineError::invalid(
                "--check needs a task that may write: a read-only round cannot change what it checks",
            ));
        }
        return Ok(Vec::new());
    }
    let mut checks: Vec<CheckRun> = config
        .checks
        .iter()
        .map(|c| CheckRun {
            name: c.name.clone(),
            command: c.command.clone(),
            timeout_ms: c.timeout().as_millis() as u64,
            result: None,
        })
        .collect();
    let mut n = 1;
    for command in extra {
        if command.trim().is_empty() {
            return Err(EngineError::invalid("--check needs a command"));
        }
        let name = loop {
            let name = if n == 1 {
                "check".to_owned()
            } else {
                format!("check-{n}")
            };
            n += 1;
            if !checks.iter().any(|c| c.name == name) {
                break name;
            }
        };
        checks.push(CheckRun {
            name,
            command: command.clone(),
            timeout_ms: DEFAULT_CHECK_TIMEOUT.as_millis() as u64,
            result: None,
        });
    }
    Ok(checks)
}

/// The one-off commands of a round's checks (those not from `ganger.toml`), so that the
/// rounds `--until-green` adds run them too.
pub(crate) fn one_off(config: &Config, checks: &[CheckRun]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| {
            !config
                .checks
                .iter()
                .any(|k| k.name == c.name && k.command == c.command)
        })
        .map(|c| c.command.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_off_checks_are_named_after_the_configured_ones_and_found_again() {
        let config = Config::from_text(
            "[[checks]]\nname = \"check\"\ncommand = \"make test\"\ntimeout = 30\n",
        )
        .unwrap();
        let write = ganger_agents::Permission::Write;
        let checks = planned(&config, &["true".into(), "false".into()], write).unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["check", "check-2", "check-3"]);
        assert_eq!(checks[0].timeout_ms, 30_000);
        assert_eq!(one_off(&config, &checks), ["true", "false"]);
        assert!(planned(&config, &[" ".into()], write).is_err());
        let read_only = ganger_agents::Permission::ReadOnly;
        assert!(planned(&config, &[], read_only).unwrap().is_empty());
        assert!(planned(&config, &["true".into()], read_only).is_err());
    }
}
