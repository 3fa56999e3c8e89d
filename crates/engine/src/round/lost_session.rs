//! The next round of a task whose earlier rounds never named an agent session: a round whose
//! host died before the agent's first event, or an agent that failed before it made one. A new
//! session would never have seen the brief (and a fleet's "continue" would be all it got), so
//! the session is looked for first: a round may have named it up front (the plan's `session`),
//! or the agent saved it under the round's title where its adapter says how to find it
//! (`session_finder`). Only when it is not found does the round start a new session, whose
//! prompt begins with the earlier rounds' prompts and answers. A session named up front by a
//! round that was killed at once may never have been saved (an agent may write its transcript
//! a moment after it asks the model): where the adapter names the file an agent keeps a
//! session in (`session_file`), a name whose file is missing counts as lost too.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_store::{Round, Store, Task};
use std::time::Duration;

/// How long asking the agent for its saved sessions may take.
const ASK_LIMIT: Duration = Duration::from_secs(60);

/// How a round continues the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Continued {
    /// The session the round resumes; `None`: a new one.
    pub session: Option<String>,
    /// The prompt to send, with a summary of the earlier rounds first when the session is new.
    pub prompt: String,
}

/// How the next round of `task` sends `prompt`.
pub(crate) fn continue_task(
    ws: &Workspace,
    store: &dyn Store,
    task: &Task,
    prompt: String,
) -> Result<Continued> {
    let rounds: Vec<Round> = store
        .rounds(task.id)?
        .into_iter()
        .filter(|r| !r.rewound)
        .collect();
    let lost = task
        .session
        .as_deref()
        .is_some_and(|session| never_saved(ws, task, &rounds, session));
    if !lost && (task.session.is_some() || task.fork_from.is_some() || task.resume_note.is_some()) {
        return Ok(Continued {
            session: task.session.clone(),
            prompt: crate::evidence::resume_note::with_resume_note(task, prompt),
        });
    }
    let Some(first) = rounds.first() else {
        return Ok(Continued {
            session: None,
            prompt,
        });
    };
    let named = rounds
        .iter()
        .rev()
        .find_map(|r| r.session.clone().or_else(|| r.summary.session.clone()))
        .filter(|_| !lost);
    if let Some(session) = named.or_else(|| saved_session(ws, task, first.started_at)) {
        return Ok(Continued {
            session: Some(session),
            prompt,
        });
    }
    let earlier: Vec<&Round> = rounds.iter().collect();
    let note = crate::evidence::resume_note::summary(
        ws,
        task,
        &earlier,
        "This task continues earlier rounds whose conversation was lost before the agent named \
         it (their work is in this directory as they left it). The earlier rounds, in order:\n\n",
    );
    Ok(Continued {
        session: None,
        prompt: format!("{note}{prompt}"),
    })
}

/// Whether the task's session was named by a round that was then killed before the agent
/// saved it: the agent keeps its sessions in files, and this one's file is not there.
fn never_saved(ws: &Workspace, task: &Task, rounds: &[Round], session: &str) -> bool {
    let interrupted = rounds
        .last()
        .is_some_and(|r| r.status == ganger_events::RoundStatus::Interrupted);
    if !interrupted || crate::env::sandboxing::isolated(ws, task) {
        return false;
    }
    let Some(adapter) = crate::env::agent_env::adapter_for(&task.agent, &ws.config) else {
        return false;
    };
    let agent_dir = ws.state.agent_dir(adapter.name());
    let env = crate::env::agent_env::round_env(adapter, &ws.config, &agent_dir, &task.worktree);
    adapter
        .session_file(&env, &task.worktree, session)
        .is_some_and(|file| !file.exists())
}

/// The session the agent saved for this task's rounds, when it can be asked (rounds run
/// unisolated: a sandbox's sessions live in its own home).
fn saved_session(ws: &Workspace, task: &Task, since_ms: i64) -> Option<String> {
    if crate::env::sandboxing::isolated(ws, task) {
        return None;
    }
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)?;
    let finder = adapter.session_finder()?;
    let program = crate::env::agent_env::resolve_program(adapter, &ws.config).ok()?;
    let listing = crate::env::agent_query::ask(
        ws,
        adapter,
        &program,
        finder.args,
        &task.worktree,
        ASK_LIMIT,
    )
    .ok()?;
    // The session is made after the round began; a second of slack for the clocks' grain.
    (finder.pick)(&listing, &task.slug, &task.worktree, since_ms - 1000)
}
