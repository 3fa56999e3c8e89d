//! `ganger rewind SLUG --to N`: the task goes back to its state after round N. The worktree's
//! files become round N's snapshot exactly (files made later are removed; the branch and the
//! index stay, so the worker's work is still uncommitted against the base), what they were is
//! kept under `refs/ganger/SLUG/rewind-K` (K: the last round), the later rounds are marked
//! rewound, and the agent's conversation goes back too, as its adapter says
//! ([`ganger_agents::SessionFork`], `rewind_fork.rs`): a session ganger copies up to the end of
//! round N is resumed by the next round, or the next round forks the session itself at round
//! N's last answer; for an agent that can do neither, or when a fork cannot be made, the next
//! round starts a new session whose prompt begins with a summary of the rounds kept (their
//! prompts and answers, trimmed).

pub(crate) mod fork;

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::task::lookup::{idle_rounds, settled_task};
use ganger_agents::SessionFork;
use ganger_store::{Rewind, Round, Task};
use serde::Serialize;

/// The schema of a rewind's report.
pub const REWIND_SCHEMA: &str = "ganger.rewind/1";

/// What `ganger rewind` was asked.
#[derive(Debug, Clone, Default)]
pub struct RewindOptions {
    pub slug: String,
    pub to: u32,
    pub commander: Option<String>,
}

/// What a rewind did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RewindReport {
    pub schema: &'static str,
    pub task: String,
    /// The round the task went back to, and its snapshot.
    pub to: u32,
    pub snapshot: String,
    /// The rounds marked rewound now.
    pub rewound: Vec<u32>,
    /// The ref keeping the files as they were before the rewind.
    pub saved: String,
    /// Paths written back and paths removed.
    pub written: Vec<String>,
    pub removed: Vec<String>,
    /// What happens to the agent's session: `kept` (nothing after round N was in it),
    /// `forked` (the next round resumes a copy of the session as it was after round N), or
    /// `new` (the next round starts a new session with a summary of the rounds kept).
    pub session: &'static str,
    /// The session the next round resumes, when kept or copied ahead.
    pub session_id: Option<String>,
    /// Where the next round forks the session from, when the agent forks while it runs the
    /// next prompt: the session and the point in it.
    pub fork_from: Option<ganger_store::ForkPoint>,
    /// Why the session was not forked, when it could have been.
    pub fork_error: Option<String>,
    pub worktree: std::path::PathBuf,
    /// The host the task's worktree was on before the rewind brought it here (a task of a
    /// fleet on a remote, asked on a host without its worktree); `None` when it was here.
    pub moved_from: Option<std::path::PathBuf>,
}

/// Takes a task back to its state after a round.
pub fn rewind(
    ws: &Workspace,
    options: &RewindOptions,
    notices: &mut dyn Notices,
) -> Result<RewindReport> {
    let (mut store, task) = settled_task(ws, &options.slug, notices)?;
    let commander = commander(options.commander.as_deref());
    crate::task::rules::require_owner(&task, &commander, "rewind")?;
    // A task whose worktree is on another host comes here first (its work and session from
    // its fleet's remote and the store), as `merge` brings it: a rewind writes the worktree.
    let (task, moved_from) =
        match crate::round::task_move::bring_here(ws, &mut *store, &task, &commander)? {
            Some(moved) => (moved, Some(task.worktree.clone())),
            None => (task, None),
        };
    let rounds = idle_rounds(&*store, &task)?;
    let target = target_round(&task, &rounds, options.to)?;
    let snapshot = target.snapshot_after.clone().ok_or_else(|| {
        EngineError::invalid(format!(
            "round {} of {} has no snapshot to go back to",
            target.number, task.slug
        ))
    })?;
    if !task.worktree.is_dir() {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {} is gone",
            task.worktree.display(),
            task.slug
        )));
    }
    let last = rounds.last().map_or(0, |r| r.number);
    let saved = format!("refs/ganger/{}/rewind-{last}", task.slug);
    crate::evidence::tree_overlay::ensure_mounted(ws, &task.worktree)?;
    let worktree = ws.repo.open_worktree(&task.worktree)?;
    let restored = worktree.restore_files(&snapshot, &saved)?;
    let kept: Vec<&Round> = rounds
        .iter()
        .filter(|r| r.number <= target.number && !r.rewound)
        .collect();
    let later = rounds
        .iter()
        .any(|r| r.number > target.number && !r.rewound);
    let mut fork_error = None;
    let mut fork_from = None;
    let (session, resume_note, mode) = if !later {
        fork_from = task.fork_from.clone();
        (task.session.clone(), task.resume_note.clone(), "kept")
    } else {
        let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config);
        match adapter.and_then(|adapter| Some((adapter, adapter.session_fork()?))) {
            Some((_, SessionFork::AtNextRound { point })) => {
                match crate::ops::rewind::fork::fork_point(ws, &task, target, point) {
                    Ok(point) => {
                        fork_from = Some(point);
                        (None, None, "forked")
                    }
                    Err(why) => {
                        fork_error = Some(why);
                        (None, Some(summary_note(ws, &task, &kept)), "new")
                    }
                }
            }
            // A sandboxed agent keeps its sessions where only its sandbox sees them.
            Some((adapter, SessionFork::Copy(copy)))
                if !crate::env::sandboxing::isolated(ws, &task) && task.session.is_some() =>
            {
                let cut = target.ended_at.unwrap_or(target.started_at);
                match crate::ops::rewind::fork::copy_session(ws, &task, adapter, &copy, cut) {
                    Ok(id) => (Some(id), None, "forked"),
                    Err(why) => {
                        fork_error = Some(why);
                        (None, Some(summary_note(ws, &task, &kept)), "new")
                    }
                }
            }
            _ => (None, Some(summary_note(ws, &task, &kept)), "new"),
        }
    };
    let detail = serde_json::json!({
        "snapshot": snapshot,
        "saved": saved,
        "written": restored.written,
        "removed": restored.removed,
        "session": mode,
        "session_id": session,
        "fork_from": fork_from,
        "fork_error": fork_error,
    });
    let marked = store.rewind(
        task.id,
        target.number,
        &Rewind {
            session: session.clone(),
            resume_note,
            fork_from: fork_from.clone(),
            commander: commander.clone(),
            detail,
        },
    )?;
    Ok(RewindReport {
        schema: REWIND_SCHEMA,
        task: task.slug.clone(),
        to: target.number,
        snapshot,
        rewound: marked,
        saved,
        written: restored.written,
        removed: restored.removed,
        session: mode,
        session_id: session,
        fork_from,
        fork_error,
        worktree: task.worktree.clone(),
        moved_from,
    })
}

/// The round to go back to, or why it cannot be.
fn target_round<'a>(task: &Task, rounds: &'a [Round], to: u32) -> Result<&'a Round> {
    let last = rounds.last().map_or(0, |r| r.number);
    let Some(round) = rounds.iter().find(|r| r.number == to) else {
        return Err(EngineError::invalid(format!(
            "round {to} is out of range: task {} has rounds 1 to {last}",
            task.slug
        )));
    };
    if round.rewound {
        return Err(EngineError::invalid(format!(
            "round {to} of {} was rewound itself",
            task.slug
        ))
        .hint("rewind to a round that is still part of the task"));
    }
    Ok(round)
}

/// The summary a new session starts with after a rewind: the rounds kept.
fn summary_note(ws: &Workspace, task: &Task, kept: &[&Round]) -> String {
    crate::evidence::resume_note::summary(
        ws,
        task,
        kept,
        "This task continues earlier work in this same directory. Later work was undone: the \
         files are exactly as the rounds below left them. The earlier rounds, in order:\n\n",
    )
}
