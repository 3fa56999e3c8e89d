//! What a warm agent was started with, so that a round that would start it otherwise (another
//! model, with `fix -m`; a pipeline role's reasoning effort, added to its agent's configuration
//! by the process that runs the round) gets an agent of its own instead of one that answers
//! with the old settings. The warm host reads `ganger.toml` itself, which does not hold what
//! the round's process added: the round hands it its agent's configuration on its stdin.

use crate::base::error::{EngineError, Result};
use crate::env::sandboxing::TaskSandbox;
use crate::env::workspace::Workspace;
use crate::round::RoundInput;
use ganger_store::Task;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

/// A digest of what starts the round's warm agent: the agent, the round's model, and the
/// agent's settings (program, environment, configuration). Equal digests, same agent.
pub(crate) fn fingerprint(ws: &Workspace, input: &RoundInput) -> String {
    let settings = ws
        .config
        .agents
        .get(&input.task.agent)
        .map(|agent| format!("{:?} {:?} {:?}", agent.command, agent.env, agent.config));
    let mut hasher = DefaultHasher::new();
    (&input.task.agent, &input.round.model, settings).hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The agent configuration the round's process holds for `agent`, for its warm host's stdin.
pub(crate) fn handed_config(ws: &Workspace, agent: &str) -> Vec<u8> {
    ws.config
        .agents
        .get(agent)
        .and_then(|settings| settings.config.as_ref())
        .and_then(|config| serde_json::to_vec(config).ok())
        .unwrap_or_default()
}

/// `ws` with `agent`'s configuration replaced by the one a round handed (`handed`, empty
/// when it handed none).
pub(crate) fn with_handed_config(ws: &Workspace, agent: &str, handed: &[u8]) -> Result<Workspace> {
    let mut config = ws.config.clone();
    if !handed.is_empty() {
        let table: toml::Table = serde_json::from_slice(handed).map_err(|e| {
            EngineError::environment_message(format!(
                "the warm host was handed an agent configuration it cannot read: {e}"
            ))
        })?;
        config.agents.entry(agent.to_owned()).or_default().config = Some(table);
    }
    Ok(ws.with_config(config))
}

/// Where a task's last failed start of a warm agent is remembered.
fn failure_path(ws: &Workspace, slug: &str) -> std::path::PathBuf {
    ws.state.task_dir(slug).join("warm-failed.json")
}

/// Remembers that the round's warm agent would not start, and why: the task's next rounds
/// with the same settings run cold at once instead of waiting for it again (an agent command
/// that does not speak the protocol can take minutes to be seen not to).
pub(crate) fn remember_failed_start(ws: &Workspace, input: &RoundInput, why: &str) {
    let record = serde_json::json!({
        "fingerprint": fingerprint(ws, input),
        "reason": why,
        "round": input.round.number,
    });
    let _ = std::fs::write(
        failure_path(ws, &input.task.slug),
        serde_json::to_vec(&record).unwrap_or_default(),
    );
}

/// Why the round's warm agent is not tried: one with the same settings failed to start for
/// an earlier round of the task.
pub(crate) fn failed_before(ws: &Workspace, input: &RoundInput) -> Option<String> {
    let text = std::fs::read(failure_path(ws, &input.task.slug)).ok()?;
    let record: serde_json::Value = serde_json::from_slice(&text).ok()?;
    (record["fingerprint"] == fingerprint(ws, input).as_str()).then(|| {
        format!(
            "its warm agent did not start for round {} with the same settings ({}); \
             `ganger warm stop {}` tries again",
            record["round"],
            record["reason"].as_str().unwrap_or("no reason given"),
            input.task.slug
        )
    })
}

/// Forgets a failed start (a warm agent started, or `ganger warm stop`).
pub(crate) fn forget_failed_start(ws: &Workspace, slug: &str) {
    let _ = std::fs::remove_file(failure_path(ws, slug));
}

/// The prefix of the files that remember an agent that does not speak its warm protocol.
const UNABLE_PREFIX: &str = "warm-unable-";

/// Where the repository remembers that `task`'s agent, as installed and configured here and
/// in the task's sandbox, does not speak its warm protocol at all; `None` where that cannot
/// be known from the host (a sandbox whose agent is an image's, an agent not found).
fn unable_path(ws: &Workspace, task: &Task) -> Option<PathBuf> {
    let sandbox = TaskSandbox::of(ws, task).ok()?;
    if !sandbox.sandbox.runs_host_programs() {
        return None;
    }
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)?;
    let program = crate::env::agent_env::resolve_program(adapter, &ws.config).ok()?;
    let context = ["warm", task.sandbox.as_str(), task.network.as_str()];
    let digest = crate::env::models::agent_digest(ws, adapter, &program, &context);
    Some(
        ws.state
            .cache_dir()
            .join(format!("{UNABLE_PREFIX}{}-{digest:016x}.json", task.agent)),
    )
}

/// Remembers that `task`'s agent answered its warm greeting by exiting or refusing (a
/// command that does not speak the protocol, say a wrapper that drops `acp`): the
/// repository's next tasks that are warm only by default then run cold at once, until the
/// agent's program or settings change or `ganger warm stop` runs.
pub(crate) fn remember_unable(ws: &Workspace, task: &Task, round: u32, why: &str) {
    let Some(path) = unable_path(ws, task) else {
        return;
    };
    let record = serde_json::json!({ "task": task.slug, "round": round, "reason": why });
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&path, serde_json::to_vec(&record).unwrap_or_default());
}

/// Why the round's warm agent is not tried: the agent, as it is here, did not speak its
/// warm protocol for an earlier task. Only for a task warm by its agent's default: one that
/// asked for warm (`--warm`, `[warm] default = true`) tries it.
pub(crate) fn unable_before(ws: &Workspace, input: &RoundInput) -> Option<String> {
    if input.task.warm.is_some() || ws.config.warm.default.is_some() {
        return None;
    }
    let text = std::fs::read(unable_path(ws, &input.task)?).ok()?;
    let record: serde_json::Value = serde_json::from_slice(&text).ok()?;
    Some(format!(
        "{} as installed and configured here did not speak its warm protocol for task {} \
         round {} ({}); tried again when its program or settings change, or after \
         `ganger warm stop`",
        input.task.agent,
        record["task"].as_str().unwrap_or("?"),
        record["round"],
        record["reason"].as_str().unwrap_or("no reason given"),
    ))
}

/// Forgets that `task`'s agent did not speak its warm protocol (one of it started warm).
pub(crate) fn forget_unable(ws: &Workspace, task: &Task) {
    if let Some(path) = unable_path(ws, task) {
        let _ = std::fs::remove_file(path);
    }
}

/// Forgets every agent remembered not to speak its warm protocol (`ganger warm stop`).
pub(crate) fn forget_all_unable(ws: &Workspace) {
    let Ok(entries) = std::fs::read_dir(ws.state.cache_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(UNABLE_PREFIX)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handed_configuration_comes_back_as_it_was_and_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            assert!(
                std::process::Command::new("git")
                    .args(args)
                    .current_dir(&repo)
                    .output()
                    .unwrap()
                    .status
                    .success()
            );
        };
        git(&["init", "-q", "-b", "main"]);
        let agent = ganger_agents::DEFAULT_AGENT;
        std::fs::write(
            repo.join("ganger.toml"),
            format!("[agents.{agent}.config]\nshare = \"disabled\"\n"),
        )
        .unwrap();
        let ws = Workspace::discover(&repo, None).unwrap();
        let mut effort = ws.config.clone();
        let table: toml::Table =
            toml::from_str("share = \"disabled\"\n[agent.build]\nreasoningEffort = \"high\"\n")
                .unwrap();
        effort.agents.get_mut(agent).unwrap().config = Some(table.clone());
        let round_ws = ws.with_config(effort);
        let handed = handed_config(&round_ws, agent);
        let host_ws = with_handed_config(&ws, agent, &handed).unwrap();
        assert_eq!(host_ws.config.agents[agent].config, Some(table));
        let unchanged = with_handed_config(&ws, agent, b"").unwrap();
        assert_eq!(
            unchanged.config.agents[agent].config,
            ws.config.agents[agent].config
        );
        assert!(
            with_handed_config(&ws, agent, b"not json")
                .unwrap_err()
                .to_string()
                .contains("cannot read")
        );
    }
}
