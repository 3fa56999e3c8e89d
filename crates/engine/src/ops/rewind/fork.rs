//! Taking a task's session back to the end of a rewound round, the way its adapter says
//! ([`ganger_agents::SessionFork`]). An agent that forks at a point itself while it runs the
//! next prompt gets the point, read from the rewound round's stream by its adapter; the next
//! round passes it on. For an agent whose session ganger copies through its CLI, ganger runs
//! the export in the task's worktree with the environment of its rounds, lets the adapter cut
//! and renumber the copy, writes it beside the task's files and runs the import; the old
//! session is left as it was. A copy is made only for local tasks: a sandboxed agent keeps its
//! sessions where only its sandbox sees them.

use crate::env::agent_env;
use crate::env::workspace::Workspace;
use ganger_agents::{Adapter, CommandPlan, SessionCopy};
use ganger_sandbox::{AgentCommand, run_captured};
use ganger_store::{ForkPoint, Round, Task};
use std::time::Duration;

/// How long an export or an import may take.
const LIMIT: Duration = Duration::from_secs(60);

/// Where the agent forks the session to go back to the end of `round`: its session and the
/// adapter's `point` in the round's stream.
pub(crate) fn fork_point(
    ws: &Workspace,
    task: &Task,
    round: &Round,
    point: fn(&str, &str) -> Option<String>,
) -> Result<ForkPoint, String> {
    let session = round
        .session
        .clone()
        .ok_or_else(|| format!("round {} named no session", round.number))?;
    let stream = ws.state.round_file(&task.slug, round.number, "jsonl");
    let text = std::fs::read_to_string(&stream)
        .map_err(|e| format!("cannot read {}: {e}", stream.display()))?;
    let at = point(&text, &session)
        .ok_or_else(|| format!("round {} has no answer to go back to", round.number))?;
    Ok(ForkPoint { session, at })
}

/// Copies the task's session, keeping what was made up to `cut_ms`; the new session's id,
/// or why it could not be made.
pub(crate) fn copy_session(
    ws: &Workspace,
    task: &Task,
    adapter: &dyn Adapter,
    copy: &SessionCopy,
    cut_ms: i64,
) -> Result<String, String> {
    let session = task.session.as_deref().ok_or("the task has no session")?;
    // Read from the store, which other hosts write: part of a file name below.
    if !ganger_agents::is_session_name(session) {
        return Err("the task's session id is not a session's name".into());
    }
    let exported = run(ws, task, adapter, copy, (copy.export_args)(session))?;
    let copied = (copy.cut)(
        &exported,
        session,
        cut_ms,
        &mut crate::base::tokens::new_uuid,
    )?;
    let dir = ws.state.root().join("tasks").join(&task.slug);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("fork-{}.json", copied.session));
    std::fs::write(&file, &copied.data).map_err(|e| e.to_string())?;
    let imported = run(
        ws,
        task,
        adapter,
        copy,
        (copy.import_args)(&file.to_string_lossy()),
    );
    // The copy holds the transcript: it goes once imported, and also on a failure.
    let _ = std::fs::remove_file(&file);
    let imported = imported?;
    (copy.imported)(&String::from_utf8_lossy(&imported), &copied.session)?;
    Ok(copied.session)
}

/// Runs the task's agent with `args` in its worktree; its stdout.
fn run(
    ws: &Workspace,
    task: &Task,
    adapter: &dyn Adapter,
    copy: &SessionCopy,
    args: Vec<String>,
) -> Result<Vec<u8>, String> {
    let program = agent_env::resolve_program(adapter, &ws.config).map_err(|e| e.message)?;
    let worktree = task.worktree.to_string_lossy().into_owned();
    // Agents that take their directory (and so a session's project) from $PWD get it.
    let mut env = vec![("PWD".to_owned(), worktree)];
    env.extend(
        copy.env
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned())),
    );
    let plan = CommandPlan::new(Vec::new(), env, None);
    let env = agent_env::agent_environment(adapter, &ws.config, &plan, &[]);
    let captured = run_captured(
        &AgentCommand {
            program,
            args: args.iter().map(Into::into).collect(),
            env,
            cwd: task.worktree.clone(),
            stdin: None,
            token: format!("fork-{}", crate::base::tokens::new_token()),
            use_cgroup: false,
        },
        LIMIT,
    )
    .map_err(|e| e.to_string())?;
    match captured.exit {
        Some(exit) if exit.code == Some(0) => Ok(captured.stdout),
        _ => Err(format!(
            "`{} {}` failed: {}",
            adapter.program(),
            args.first().map(String::as_str).unwrap_or_default(),
            String::from_utf8_lossy(&captured.stderr).trim()
        )),
    }
}
