//! `ganger attach`: a person takes over a task's session in the agent's own interactive
//! interface, in the task's worktree, with the configuration its rounds use; when they quit,
//! the next round continues the same session from there. Refused while a round runs; while a
//! person is attached, no round starts (an attach claim in the store, like a round's host's).

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use ganger_agents::{Adapter, CommandPlan, RoundRequest};
use ganger_store::{JournalEvent, StoreError, Task};
use std::ffi::OsString;
use std::path::PathBuf;

/// Opens the agent's interactive interface on the task's session and returns its exit code
/// once the person quits.
pub fn attach(
    ws: &Workspace,
    slug: &str,
    as_name: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<i32> {
    let me = commander(as_name);
    let (mut store, task) = crate::task::lookup::settled_task(ws, slug, notices)?;
    crate::task::rules::require_owner(&task, &me, "attach to")?;
    crate::task::lookup::idle_rounds(&*store, &task)?;
    // A task whose worktree is on another host comes here first, with its work and its
    // agent's session, as `merge` and `rewind` bring it: the agent opens here.
    let task = match crate::round::task_move::bring_here(ws, &mut *store, &task, &me)? {
        Some(moved) => {
            notices.notice(crate::base::notice::Notice::Moved {
                slug: slug.to_owned(),
                from: task.worktree.clone(),
                to: moved.worktree.clone(),
            });
            moved
        }
        None => task,
    };
    let session = task.session.clone().ok_or_else(|| {
        EngineError::invalid(format!(
            "task {slug} has no session yet: its first round did not name one"
        ))
    })?;
    if crate::env::sandboxing::isolated(ws, &task) {
        return Err(EngineError::invalid(format!(
            "task {slug} runs in {}: attach opens the agent locally, where that session is not",
            task.sandbox
        )));
    }
    if !task.worktree.is_dir() {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {slug} is gone",
            task.worktree.display()
        )));
    }
    let adapter = crate::task::admission::known_adapter(ws, &task.agent)?;
    let keys = crate::env::keys::load_keys(&ws.config, &task.keys)?;
    // The model's key stays at a gateway for as long as the person is attached, as in a round:
    // the interactive agent holds a placeholder (named after the task's last round).
    let last = store
        .round(task.id, None)?
        .ok_or_else(|| EngineError::invalid(format!("task {slug} has no rounds")))?;
    let input = crate::round::RoundInput::new(ws, task.clone(), last, String::new());
    let gateway = crate::round::gateway::open(ws, &*store, adapter, &input, &keys, false)?;
    let (agent_keys, settings) = match &gateway {
        Some((_, redirect)) => (redirect.vars.clone(), redirect.config.clone()),
        None => (keys.clone(), Vec::new()),
    };
    let (program, plan) =
        interactive_command(ws, adapter, &task, &session, &agent_keys, &settings)?;
    let lock = store
        .claim(&crate::task::rules::attach_claim_name(slug))
        .map_err(|e| match e {
            StoreError::ClaimHeld { .. } => {
                EngineError::conflict(format!("someone is attached to task {slug} already"))
            }
            other => other.into(),
        })?;
    // A round that began between the check above and the lock would be running now.
    if let Err(error) = crate::task::lookup::idle_rounds(&*store, &task) {
        lock.release();
        return Err(error);
    }
    // A warm agent keeps the session it last served in memory and would not see the person's
    // turns: it is stopped, and the next round's agent loads the session again (or runs cold).
    if crate::round::warm::registry::stop_warm(ws, &*store, slug)? {
        notices.notice(crate::base::notice::Notice::WarmStopped {
            slug: slug.to_owned(),
        });
    }
    let mut env = crate::env::agent_env::agent_environment(adapter, &ws.config, &plan, &agent_keys);
    // Its temporary files go with the session's end, as a round's do.
    let tmp = crate::env::agent_tmp::AgentTmp::unless_configured(
        adapter,
        &ws.config,
        &crate::base::tokens::new_token(),
    )?;
    if let Some(tmp) = &tmp {
        tmp.set_in(&mut env, &plan);
    }
    let args: Vec<OsString> = plan.args.iter().map(Into::into).collect();
    let attached = JournalEvent::Attached {
        session: session.clone(),
        program: program.clone(),
    };
    store.add_journal(task.id, None, Some(&me), &attached)?;
    let code = ganger_sandbox::run_interactive(&program, &args, &env, &task.worktree);
    drop(gateway);
    lock.release();
    let code = code?;
    let detached = JournalEvent::Detached { exit_code: code };
    store.add_journal(task.id, None, Some(&me), &detached)?;
    Ok(code)
}

/// The program and plan of the agent's interactive interface on `session`.
fn interactive_command(
    ws: &Workspace,
    adapter: &dyn Adapter,
    task: &Task,
    session: &str,
    keys: &[crate::env::keys::LoadedKey],
    settings: &[(Vec<String>, String)],
) -> Result<(PathBuf, CommandPlan)> {
    let mut overlay = crate::env::agent_env::config_overlay(adapter, &ws.config);
    if !settings.is_empty() {
        let table = overlay.get_or_insert_with(|| serde_json::Value::Object(Default::default()));
        for (path, value) in settings {
            ganger_agents::set_config(table, path, value);
        }
    }
    let inherited = crate::env::agent_env::inherited_config(adapter, &ws.config);
    let request_env = crate::env::agent_env::request_env(adapter, &ws.config, keys);
    let agent_dir = ws.state.agent_dir(adapter.name());
    let permission = task.permission;
    let new_session_id = crate::base::tokens::new_uuid();
    let request = RoundRequest {
        resume_at: None,
        prompt: "",
        session: Some(session),
        new_session_id: &new_session_id,
        title: &task.slug,
        model: task.model.as_deref(),
        worktree: &task.worktree,
        config: overlay.as_ref(),
        inherited_config: inherited.as_deref(),
        permission,
        sandboxed: false,
        env: &request_env,
        agent_dir: &agent_dir,
    };
    let settings = ws.config.agent(adapter.name());
    let interactive = adapter.interactive(&request, &settings)?.ok_or_else(|| {
        EngineError::invalid(format!(
            "{} has no interactive interface ganger can open",
            adapter.display_name()
        ))
    })?;
    let program = match &interactive.program {
        Some(named) => crate::env::agent_env::find_named(named)?,
        None => crate::env::agent_env::resolve_program(adapter, &ws.config)?,
    };
    crate::round::write_plan_files(&interactive.plan)?;
    Ok((program, interactive.plan))
}
