//! `ganger adopt`: puts an agent session a person started by hand under ganger's supervision.
//! The task gets the session and the worktree as they are (ganger made neither and will not
//! remove them), no round yet; its first `ganger fix` resumes the session. Adopted tasks run
//! locally: the session lives in the person's own agent home, which no sandbox sees.

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::base::slug::check_slug;
use crate::env::workspace::Workspace;
use ganger_store::{NewTask, StoreError, Task};
use std::path::PathBuf;

/// What `ganger adopt` was asked.
#[derive(Debug, Clone, Default)]
pub struct AdoptOptions {
    pub slug: String,
    pub agent: String,
    pub session: String,
    pub worktree: PathBuf,
    pub model: Option<String>,
    pub commander: Option<String>,
}

/// Records the adopted task and returns it.
pub fn adopt(ws: &Workspace, options: &AdoptOptions, notices: &mut dyn Notices) -> Result<Task> {
    check_slug(&options.slug)?;
    check_session(&options.session)?;
    let adapter = crate::task::admission::known_adapter(ws, &options.agent)?;
    crate::task::admission::check_model_name(adapter, options.model.as_deref())?;
    let program = crate::env::agent_env::resolve_program(adapter, &ws.config)?;
    let (worktree, branch) = crate::task::admission::check_given_worktree(ws, &options.worktree)?;
    let permission = ws.config.defaults.permission;
    let mut store = ws.open_store()?;
    if store.task(&options.slug)?.is_some() {
        return Err(EngineError::invalid(format!(
            "task {} exists already",
            options.slug
        )));
    }
    crate::task::admission::refuse_busy_worktree(ws, &mut *store, &worktree)?;
    let model = options
        .model
        .clone()
        .or_else(|| ws.config.defaults.model.clone());
    if options.model.is_some() {
        crate::task::admission::require_model(ws, adapter, &program, model.as_deref(), notices)?;
    }
    let base_commit = ws
        .repo
        .open_worktree(&worktree)
        .ok()
        .and_then(|w| w.head().ok().flatten());
    let task = NewTask {
        slug: options.slug.clone(),
        agent: adapter.name().to_owned(),
        model,
        base: ws.config.defaults.base.clone(),
        base_commit,
        branch,
        worktree,
        worktree_made: false,
        owner: commander(options.commander.as_deref()),
        keys: Default::default(),
        timeout_ms: None,
        stall_ms: None,
        permission,
        sandbox: ganger_sandbox::SandboxKind::Local,
        network: ganger_sandbox::Network::Shared,
        rw: Vec::new(),
        allow: Vec::new(),
        warm: None,
        labels: Vec::new(),
        budget: ganger_store::Budget::default(),
        fleet: None,
    };
    store
        .adopt_task(&task, &options.session)
        .map_err(|e| match e {
            StoreError::SlugTaken(slug) => {
                EngineError::conflict(format!("task {slug} exists already"))
            }
            StoreError::SessionTaken { session, slug } => EngineError::conflict(format!(
                "session {session} is task {slug}'s already; one session is one task's"
            )),
            other => other.into(),
        })
}

/// A session id as the agents print them: one word of letters, digits, `-`, `_` and `.`.
fn check_session(session: &str) -> Result<()> {
    // Never an option to the agent (`--session=--help` reached it as one).
    let fine = session.starts_with(|c: char| c.is_ascii_alphanumeric())
        && session.len() <= 200
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(EngineError::invalid(format!(
            "--session {session:?} is not a session id (letters, digits, '-', '_' and '.')"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_of_every_agent_pass_and_others_do_not() {
        for id in [
            "ses_2a1b3c4d5e6fFfGgHh",
            "0199a1b2-c3d4-7e8f-9a0b-1c2d3e4f5a6b",
        ] {
            assert!(check_session(id).is_ok(), "{id}");
        }
        for id in ["", "two words", "a/../b", "x;rm", "--help", "-x", ".hidden"] {
            assert!(check_session(id).is_err(), "{id}");
        }
    }
}
