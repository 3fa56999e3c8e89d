//! One round of a role: the first one makes the role's task (`SLUG.ROLE`, a child of the
//! pipeline's task in the same worktree and sandbox, with the role's agent, model and
//! permission) and starts its session with the role's instructions; the later ones are
//! ordinary fix rounds of that task, so sessions, reports, cancel and the reaper work as for
//! any task. A round that failed transiently (HTTP 429 or 5xx) is sent again after a wait
//! that doubles each time, a bounded number of times.

use crate::base::brief::{Brief, MAX_PROMPT};
use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::agent_env;
use crate::env::keys::{LoadedKey, load_keys};
use crate::env::sandboxing::{self, TaskSandbox};
use crate::env::workspace::Workspace;
use crate::round::launch::{Begin, Launched, begin};
use crate::task::admission::{known_adapter, require_model, warn_untested};
use crate::task::fix::{FixOptions, fix};
use crate::task::pipeline::roles::{Role, role_slug};
use ganger_events::RoundStatus;
use ganger_store::{Backend, NewRound, NewTask, Round, RoundKind, Task};

/// A role's round, ended.
#[derive(Debug, Clone)]
pub struct RoleRound {
    pub task: Task,
    pub round: Round,
    /// The agent's full last answer (empty when it gave none).
    pub answer: String,
}

impl RoleRound {
    /// The round ended `done` and its checks passed.
    pub fn passed(&self) -> bool {
        self.round.checks_passed()
    }

    /// `done`, or the status and why.
    pub fn describe(&self) -> String {
        match &self.round.reason {
            Some(reason) => format!("{}: {reason}", self.round.status.as_str()),
            None => self.round.status.as_str().to_owned(),
        }
    }
}

/// Whether a round's failure looks transient: the model's server said 429 or 5xx, or was
/// overloaded or unavailable.
pub fn transient(round: &Round) -> bool {
    // A round failed by its checks failed on evidence, not on the model's server.
    if round.status != RoundStatus::Failed || round.failed_checks().next().is_some() {
        return false;
    }
    let mut text = round.reason.clone().unwrap_or_default();
    for error in &round.summary.errors {
        text.push('\n');
        text.push_str(error);
    }
    let lower = text.to_ascii_lowercase();
    let status_code = lower
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|digits| digits.parse::<u16>().ok())
        .any(|code| code == 429 || (500..=599).contains(&code));
    status_code
        || [
            "rate limit",
            "too many requests",
            "overloaded",
            "service unavailable",
            "bad gateway",
            "internal server error",
            "server error",
        ]
        .iter()
        .any(|needle| lower.contains(needle))
}

/// Runs a round of `role` under `parent` with `body` (the role's instructions go first when
/// the role has no session yet), retrying transient failures.
pub fn run(
    ws: &Workspace,
    parent: &Task,
    role: &Role,
    body: &str,
    notices: &mut dyn Notices,
) -> Result<RoleRound> {
    let retries = ws.config.pipeline.retries;
    let mut wait = ws.config.pipeline.backoff.0;
    let mut attempt = 0;
    loop {
        let ended = run_once(ws, parent, role, body, notices)?;
        if !transient(&ended.round) || attempt >= retries {
            return Ok(ended);
        }
        attempt += 1;
        notices.notice(Notice::Pipeline {
            slug: parent.slug.clone(),
            message: format!(
                "{}'s round {} failed transiently ({}); retry {attempt} of {retries} in {}",
                role.name,
                ended.round.number,
                ended.describe(),
                crate::base::config::format_duration(wait)
            ),
        });
        std::thread::sleep(wait);
        wait = wait.saturating_mul(2);
    }
}

fn run_once(
    ws: &Workspace,
    parent: &Task,
    role: &Role,
    body: &str,
    notices: &mut dyn Notices,
) -> Result<RoleRound> {
    let slug = role_slug(&parent.slug, &role.name);
    let store = ws.open_store()?;
    let existing = store.task(&slug)?;
    let first = existing.as_ref().is_none_or(|t| t.session.is_none());
    let prompt = if first {
        format!(
            "# Your role: {}\n\n{}\n\n---\n\n{body}",
            role.name,
            role.instructions.trim_end()
        )
    } else {
        body.to_owned()
    };
    if prompt.len() > MAX_PROMPT {
        return Err(EngineError::invalid(format!(
            "the prompt of the {} is {} bytes, more than {MAX_PROMPT}",
            role.name,
            prompt.len()
        )));
    }
    notices.notice(Notice::Pipeline {
        slug: parent.slug.clone(),
        message: format!(
            "{} ({}, {}, {}) takes its turn in {slug}",
            role.name,
            role.agent,
            role.model.as_deref().unwrap_or("the agent's default model"),
            role.permission.as_str()
        ),
    });
    drop(store);
    let with_effort = crate::task::pipeline::effort::workspace_for(ws, role.effort())?;
    let ws = with_effort.as_ref().unwrap_or(ws);
    let launched = match existing {
        None => start_role(ws, parent, role, &slug, prompt, notices)?,
        Some(task) => fix(
            ws,
            FixOptions {
                slug: slug.clone(),
                brief: Some(Brief::Message(prompt)),
                model: role
                    .model
                    .clone()
                    .filter(|m| Some(m) != task.model.as_ref()),
                keys: Vec::new(),
                // Only the pipeline's owner drives it (plan, approve, reject check it): its
                // role rounds are sent as that commander, whatever the environment says.
                commander: Some(parent.owner.clone()),
                detach: false,
                checks: Vec::new(),
                until_green: None,
                interrupt: false,
            },
            notices,
        )?,
    };
    let Launched::Finished(outcome) = launched else {
        return Err(EngineError::invalid(format!(
            "the round of {slug} was detached; a pipeline runs its rounds in the foreground"
        )));
    };
    let answer_file = ws
        .state
        .round_file(&slug, outcome.round.number, "answer.md");
    let answer = std::fs::read_to_string(&answer_file)
        .ok()
        .or_else(|| outcome.round.summary.answer.clone())
        .unwrap_or_default();
    Ok(RoleRound {
        task: outcome.task,
        round: outcome.round,
        answer,
    })
}

/// The first round of a role: its task, then the round, as `ganger start` does for a task,
/// in the parent's worktree and sandbox.
fn start_role(
    ws: &Workspace,
    parent: &Task,
    role: &Role,
    slug: &str,
    prompt: String,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    let adapter = known_adapter(ws, &role.agent)?;
    let program = agent_env::resolve_program(adapter, &ws.config)?;
    let sandbox = TaskSandbox::of(ws, parent)?;
    sandboxing::check_ready(ws, &sandbox, &role.agent)?;
    sandboxing::check_round(ws, &sandbox, &parent.worktree)?;
    require_model(ws, adapter, &program, role.model.as_deref(), notices)?;
    warn_untested(ws, adapter, &program, notices);
    let loaded = load_keys(&ws.config, &parent.keys)?;
    let mut store = ws.open_store()?;
    let new_task = NewTask {
        slug: slug.to_owned(),
        agent: role.agent.clone(),
        model: role.model.clone(),
        base: parent.base.clone(),
        base_commit: parent.base_commit.clone(),
        branch: parent.branch.clone(),
        worktree: parent.worktree.clone(),
        worktree_made: false,
        owner: parent.owner.clone(),
        keys: parent.keys.clone(),
        timeout_ms: parent.timeout_ms,
        stall_ms: parent.stall_ms,
        permission: role.permission,
        sandbox: parent.sandbox,
        network: parent.network,
        rw: parent.rw.clone(),
        allow: parent.allow.clone(),
        warm: parent.warm,
        labels: Vec::new(),
        budget: ganger_store::Budget::default(),
        fleet: None,
    };
    let round = Begin {
        kind: RoundKind::Start,
        model: role.model.clone(),
        session_before: None,
        commander: parent.owner.clone(),
        // The task's checks, as `ganger start` plans them: none for a read-only role.
        checks: crate::evidence::checks::planned(&ws.config, &[], role.permission)?,
        generation: None,
        prompt,
        redactor: LoadedKey::redactor(&ws.store, &loaded),
        detach: false,
        until_green: None,
    };
    let record = |store: &mut dyn Backend, new_round: &NewRound, _: &mut dyn Notices| {
        match store.create_role_task(parent.id, &role.name, &new_task, new_round) {
            Ok(created) => Ok(created),
            Err(error) => {
                let error = EngineError::from(error);
                // A commit whose answer was lost (launch::recorded_anyway).
                match crate::round::launch::recorded_anyway(
                    &*store,
                    &error,
                    &new_task.slug,
                    &new_round.token,
                ) {
                    Some(created) => Ok(created),
                    None => Err(error),
                }
            }
        }
    };
    begin(ws, &mut *store, round, record, notices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(reason: &str) -> Round {
        super::super::prompts::test_round("failed", Some(reason), serde_json::json!([]))
    }

    #[test]
    fn http_429_and_5xx_are_transient_and_others_are_not() {
        for reason in [
            "APIError: 429 Too Many Requests",
            "the model answered HTTP 503",
            "Overloaded",
            "status 500: internal",
        ] {
            assert!(transient(&failed(reason)), "{reason}");
        }
        for reason in ["HTTP 401: invalid key", "exit 1", "the model said no"] {
            assert!(!transient(&failed(reason)), "{reason}");
        }
    }
}
