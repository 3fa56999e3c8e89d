//! The round of a task whose fleet names a git remote pushes the task's branch and snapshot
//! refs to it before its end is recorded: once the store says a round ended, its work is on
//! the remote, whichever host takes the task's next round, and even when the worker that
//! delivered it died before it looked at the round (a push left to the scheduler would go with
//! it). The round's host holds its lease all the while, so a host that dies mid-push leaves an
//! interrupted round to continue, never an ended one whose work is nowhere.
//!
//! The agent's conversation goes along by the store: the session file the agent saved (for an
//! agent whose files tell where, [`ganger_agents::Adapter::session_file`], run unsandboxed),
//! its keys redacted, is kept with the task, and the host that takes the next round writes it
//! where its agent looks for it (`task_move.rs`).

use crate::env::workspace::Workspace;
use ganger_git::{Repo, remote as git_remote};
use ganger_store::{Backend, KeptSession, Task};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a round host tries to push before it records the round's end without: the
/// scheduler that delivered the round then tries again.
const PUSH_PATIENCE: Duration = Duration::from_secs(30);

/// Pushes `task`'s branch and refs from `worktree`'s repository when the task's fleet names a
/// remote and that repository is a clone of it, after keeping the agent's session. `Some` says
/// what did not go: the push (failed for [`PUSH_PATIENCE`], or refused), the session, or the
/// store could not say which remote.
pub(super) fn push_round(
    ws: &Workspace,
    store: &dyn Backend,
    task: &Task,
    round: u32,
    session: Option<&str>,
    worktree: &Repo,
) -> Option<String> {
    // A fleet names a remote only on a store other hosts share.
    if ws.store == crate::env::store_location::StoreLocation::Local {
        return None;
    }
    let remote = match crate::round::task_move::fleet_remote(store, task) {
        Ok(Some(remote)) => remote,
        Ok(None) => return None,
        Err(e) => return Some(format!("its fleet's remote could not be read: {e}")),
    };
    // A worktree of a checkout that is not the remote's clone (a round run by hand on the
    // task's first host): its work travels by the scheduler's push, as before.
    if git_remote::origin_url(&worktree.main).as_deref() != Some(remote.as_str()) {
        return None;
    }
    let kept = session.and_then(|session| keep_session(ws, store, task, round, session).err());
    let since = Instant::now();
    let mut wait = Duration::from_millis(200);
    loop {
        match git_remote::push_task(&worktree.main, &task.branch, &task.slug) {
            Ok(()) => return kept,
            Err(e) if git_remote::push_refused(&e) || since.elapsed() + wait >= PUSH_PATIENCE => {
                let unpushed = format!("its work is not on the remote {remote} yet: {e}");
                return Some(match kept {
                    Some(kept) => format!("{unpushed}; {kept}"),
                    None => unpushed,
                });
            }
            Err(_) => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Keeps the file the agent saved `session` in, keys redacted, with the task: `Err` says why
/// it could not be (the next round elsewhere then begins with a summary instead).
fn keep_session(
    ws: &Workspace,
    store: &dyn Backend,
    task: &Task,
    round: u32,
    session: &str,
) -> Result<(), String> {
    let data = match session_carrier(ws, task) {
        // An agent that keeps its sessions in its own database: read out as a file.
        Some((carrier, env)) => (carrier.export)(&env, session)
            .map_err(|e| format!("its agent's session could not be read: {e}"))?,
        None => {
            let Some(file) = session_file(ws, task, session) else {
                return Ok(());
            };
            std::fs::read(&file).map_err(|e| {
                format!(
                    "its agent's session {} could not be read: {e}",
                    file.display()
                )
            })?
        }
    };
    let keys = crate::env::keys::load_keys(&ws.config, &task.keys).map_err(|e| e.message)?;
    let redactor = crate::env::keys::LoadedKey::redactor(&ws.store, &keys);
    let kept = KeptSession {
        round,
        session: session.to_owned(),
        data: redactor.redact(&data).into_owned(),
    };
    store
        .keep_session(task.id, &kept)
        .map_err(|e| format!("its agent's session could not be kept: {e}"))
}

/// How the task's agent carries its sessions when they live in its own database, and the
/// environment of its rounds on this host; `None` for a file-keeping agent, or a sandboxed
/// task (its agent has a home of its own).
pub(crate) fn session_carrier(
    ws: &Workspace,
    task: &Task,
) -> Option<(ganger_agents::SessionCarrier, BTreeMap<String, String>)> {
    if crate::env::sandboxing::isolated(ws, task) {
        return None;
    }
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)?;
    let carrier = adapter.session_carrier()?;
    let agent_dir = ws.state.agent_dir(adapter.name());
    let env = crate::env::agent_env::round_env(adapter, &ws.config, &agent_dir, &task.worktree);
    Some((carrier, env))
}

/// Where the task's agent keeps `session` for a round in the task's worktree on this host;
/// `None` for an agent whose files do not tell, or a sandboxed task (its agent has a home of
/// its own).
pub(crate) fn session_file(
    ws: &Workspace,
    task: &Task,
    session: &str,
) -> Option<std::path::PathBuf> {
    if crate::env::sandboxing::isolated(ws, task) {
        return None;
    }
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)?;
    let agent_dir = ws.state.agent_dir(adapter.name());
    let env = crate::env::agent_env::round_env(adapter, &ws.config, &agent_dir, &task.worktree);
    adapter.session_file(&env, &task.worktree, session)
}
