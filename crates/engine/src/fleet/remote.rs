//! A fleet that names a git remote is run from it, on whichever host takes each round: the
//! scheduler (a worker, `serve`, `fleet run`) keeps a clone of the remote under its state
//! directory, fetches it before it delivers a round, makes a task's worktree there from the
//! task's branch and its last round's snapshot when the task's rounds ran elsewhere before
//! (the worker never commits: its work is the snapshot's uncommitted changes). The round's
//! host pushes the task's branch and snapshot refs back before it records the round's end
//! (`round/push.rs`); the scheduler pushes again before the queue item ends, for a host whose
//! push failed. The task's worktree record moves with it, and the agent's session where the
//! store kept it (written where the agent looks for it here). The clones' rounds record into
//! the scheduler's store, which every host must share.

use crate::error::{EngineError, Result};
use crate::store_location::StoreLocation;
use crate::workspace::Workspace;
use ganger_git::remote as git_remote;
use ganger_store::{Backend, Move, QueueItem, QueueKind, Task};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Refuses a fleet's remote that its workers could not share: the store must be a server's
/// (a SQLite file is one machine's), and the remote must answer.
pub(super) fn check_fleet_remote(ws: &Workspace, fleet: &str, remote: &str) -> Result<()> {
    if ws.store == StoreLocation::Local {
        return Err(EngineError::invalid(format!(
            "fleet {fleet} names a remote for workers on other hosts, but its store is this \
             machine's SQLite file"
        ))
        .hint("give the store every worker shares: --store postgres://... or GANGER_STORE"));
    }
    git_remote::check_remote(&ws.repo.main, remote).map_err(|e| {
        EngineError::environment(
            format!("fleet {fleet}: cannot reach the remote {remote}"),
            e,
        )
    })
}

/// The clones one scheduler keeps, one per remote.
pub(super) struct Clones {
    root: PathBuf,
    store: StoreLocation,
    made: BTreeMap<String, Workspace>,
}

impl Clones {
    /// Clones kept under `ws`'s state directory, recording into `ws`'s store.
    pub(super) fn new(ws: &Workspace) -> Clones {
        Clones {
            root: ws.state.root().join("remotes"),
            store: ws.store.clone(),
            made: BTreeMap::new(),
        }
    }

    /// The workspace of `remote`'s clone, once [`Clones::prepare`] made it.
    pub(super) fn workspace(&self, remote: &str) -> Option<&Workspace> {
        self.made.get(remote)
    }

    /// Makes `item`'s round ready to run here: the clone made or fetched, the start's base
    /// branch as the remote has it, or the task's worktree brought here when its rounds ran
    /// on another host.
    pub(super) fn prepare(
        &mut self,
        store: &mut dyn Backend,
        remote: &str,
        item: &QueueItem,
    ) -> Result<()> {
        let dir = self.root.join(clone_name(remote));
        git_remote::clone_once(remote, &dir).map_err(|e| {
            EngineError::environment(format!("failed to clone the remote {remote}"), e)
        })?;
        git_remote::fetch(&dir).map_err(|e| {
            EngineError::environment(format!("failed to fetch the remote {remote}"), e)
        })?;
        if !self.made.contains_key(remote) {
            let mut ws = Workspace::discover(&dir)?;
            ws.store = self.store.clone();
            self.made.insert(remote.to_owned(), ws);
        }
        let ws = &self.made[remote];
        match item.kind {
            QueueKind::Start => {
                let base = super::spec::StartSpec::from_json(&item.options)?
                    .base
                    .unwrap_or_else(|| ws.config.defaults.base.clone());
                if git_remote::fetched_branch(&dir, &base).is_some() {
                    git_remote::take_branch(&dir, &base)?;
                }
                Ok(())
            }
            QueueKind::Fix | QueueKind::Broadcast => match store.task(&item.slug)? {
                Some(task) => bring_task(ws, store, remote, &task, &item.commander),
                None => Ok(()),
            },
        }
    }

    /// Pushes `task`'s branch and snapshot refs from the clone of `remote`, after a round;
    /// nothing when the task's worktree is not in this host's clone (its round ran on
    /// another host, whose scheduler pushes it).
    pub(super) fn push(&self, remote: &str, task: &Task) -> Result<()> {
        let dir = self.root.join(clone_name(remote));
        if !task.worktree.starts_with(dir.parent().unwrap_or(&dir)) {
            return Ok(());
        }
        git_remote::push_task(&dir, &task.branch, &task.slug).map_err(|e| {
            EngineError::environment(
                format!("failed to push task {}'s branch to {remote}", task.slug),
                e,
            )
        })
    }
}

/// Makes `task`'s worktree in the clone unless its last round ran here: on the task's branch
/// as the remote has it, with its last round's files (the snapshot) on top, and the next
/// round's note (recorded with a `moved` journal entry, asked for by `commander`).
fn bring_task(
    ws: &Workspace,
    store: &mut dyn Backend,
    remote: &str,
    task: &Task,
    commander: &str,
) -> Result<()> {
    let (here, _) = crate::task_worktree::default_worktree(ws, &task.slug);
    if task.worktree == here && here.is_dir() {
        return Ok(());
    }
    let branch_at = git_remote::fetched_branch(&ws.repo.main, &task.branch);
    make_here(ws, store, remote, task, commander, branch_at)
}

/// The remote of `task`'s fleet, if it belongs to one that names a remote.
pub(crate) fn fleet_remote(
    store: &dyn Backend,
    task: &Task,
) -> std::result::Result<Option<String>, ganger_store::StoreError> {
    let Some(fleet) = store.task_fleet(task.id)? else {
        return Ok(None);
    };
    Ok(store
        .fleets()?
        .into_iter()
        .find(|f| f.name == fleet)
        .and_then(|f| f.remote))
}

/// Fetches task `slug`'s snapshots and branch from its fleet's remote into this workspace's
/// repository, when its fleet names one (for `diff` of a task whose rounds ran elsewhere).
pub(crate) fn fetch_task_here(ws: &Workspace, store: &dyn Backend, task: &Task) -> Result<()> {
    let Some(remote) = fleet_remote(store, task)? else {
        return Ok(());
    };
    fetch_here(ws, &remote, task).map(drop)
}

/// [`git_remote::fetch_task`] into this workspace's repository: the commit the remote's
/// branch of the task is at, if it has one.
fn fetch_here(ws: &Workspace, remote: &str, task: &Task) -> Result<Option<String>> {
    git_remote::fetch_task(&ws.repo.main, remote, &task.branch, &task.slug).map_err(|e| {
        EngineError::environment(
            format!(
                "failed to fetch task {} from the remote {remote}",
                task.slug
            ),
            e,
        )
    })
}

/// Brings a task whose rounds ran on other hosts into this workspace's repository (the
/// checkout its fleet was submitted from, say), for a command that needs its worktree
/// (`merge`): its branch and snapshots fetched from its fleet's remote, its worktree made as
/// a worker taking it over makes it. `None` when the task's worktree is here already or its
/// fleet names no remote; else the task as it is now.
pub(crate) fn bring_here(
    ws: &Workspace,
    store: &mut dyn Backend,
    task: &Task,
    commander: &str,
) -> Result<Option<Task>> {
    // (A directory that is not a worktree of this repository is another host's.)
    if task.worktree.is_dir() && ws.repo.open_worktree(&task.worktree).is_ok() {
        return Ok(None);
    }
    let Some(remote) = fleet_remote(&*store, task)? else {
        return Ok(None);
    };
    let branch_at = fetch_here(ws, &remote, task)?;
    make_here(ws, store, &remote, task, commander, branch_at)?;
    Ok(store.task(&task.slug)?)
}

/// Makes `task`'s worktree here from its branch as the remote has it (`branch_at`), with its
/// last round's files on top, and records the move (see [`bring_task`]).
fn make_here(
    ws: &Workspace,
    store: &mut dyn Backend,
    remote: &str,
    task: &Task,
    commander: &str,
    branch_at: Option<String>,
) -> Result<()> {
    let (here, _) = crate::task_worktree::default_worktree(ws, &task.slug);
    // A host that died before it pushed the task's first round left no branch: the task
    // starts again from its base.
    let Some(commit) = branch_at.or_else(|| task.base_commit.clone()) else {
        return Err(EngineError::invalid(format!(
            "task {} has no branch {} on the remote {remote}, nor a base commit",
            task.slug, task.branch
        )));
    };
    // What an earlier stint of the task here left goes first.
    if here.exists() {
        let _ = ws.repo.remove_worktree(&here);
    }
    let _ = ws.repo.git().run(["worktree", "prune"]);
    let _ = ws.repo.delete_branch(&task.branch);
    ws.repo.add_worktree(&here, &task.branch, &commit)?;
    // The work of the last round whose snapshot reached the remote (a host that died before
    // it pushed took its round's work with it).
    let rounds = store.rounds(task.id)?;
    let kept = rounds.iter().rev().find_map(|round| {
        let snapshot = round.snapshot_after.as_deref()?;
        ws.repo
            .git()
            .run(["cat-file", "-e", &format!("{snapshot}^{{commit}}")])
            .is_ok()
            .then_some((round.number, snapshot))
    });
    if let Some((number, snapshot)) = kept {
        let worktree = ws.repo.open_worktree(&here)?;
        worktree.restore_files(
            snapshot,
            &format!("refs/ganger/{}/moved-{number}", task.slug),
        )?;
    }
    // Rounds whose work did not reach the remote, said in the note and the journal.
    let lost: Vec<u32> = rounds
        .iter()
        .filter(|r| !r.rewound && kept.is_none_or(|(number, _)| r.number > number))
        .map(|r| r.number)
        .collect();
    // The agent's conversation comes along when its session was kept and no round's work
    // stayed behind (the conversation would tell of work that is not here).
    let carried = lost.is_empty() && carry_session(ws, store, task, &here)?;
    let (resume_note, session) = if carried {
        (None, "carried: the next round continues it")
    } else {
        (
            Some(moved_note(ws, store, task, &lost)?),
            "not carried: the next round starts a new one with a summary",
        )
    };
    store.move_worktree(
        task.id,
        &Move {
            worktree: here.clone(),
            resume_note,
            commander: commander.to_owned(),
            detail: serde_json::json!({
                "host": super::offer::host_name(),
                "from": task.worktree,
                "worktree": here,
                "session": session,
                "work_lost_of_rounds": lost,
            }),
        },
    )?;
    Ok(())
}

/// Writes the task's session, as its last round kept it in the store, where the task's agent
/// looks for it on this host with the worktree at `here`; whether it did (the session is the
/// task's, and its agent's files tell where it goes).
fn carry_session(ws: &Workspace, store: &dyn Backend, task: &Task, here: &Path) -> Result<bool> {
    let Some(session) = task.session.as_deref() else {
        return Ok(false);
    };
    let Some(kept) = store
        .kept_session(task.id)?
        .filter(|k| k.session == session)
    else {
        return Ok(false);
    };
    let moved = Task {
        worktree: here.to_path_buf(),
        ..task.clone()
    };
    let Some(file) = crate::round::session_file(ws, &moved, session) else {
        return Ok(false);
    };
    // The conversation names the worktree where it ran (the agent's working directory, its
    // tools' paths; an agent may resume only a session that names the directory it runs
    // in): here it is the worktree this host has, and the agent's directory for it.
    let mut data = kept.data;
    let place = |task: &Task| crate::round::session_file(ws, task, session);
    if let (Some(was), Some(now)) = (place(task), place(&moved)) {
        let dir_name = |file: &Path| {
            file.parent()
                .and_then(Path::file_name)
                .map(|name| name.to_string_lossy().into_owned())
        };
        if let (Some(was), Some(now)) = (dir_name(&was), dir_name(&now)) {
            data = replace_all(&data, was.as_bytes(), now.as_bytes());
        }
    }
    let (was, now) = (task.worktree.to_string_lossy(), here.to_string_lossy());
    data = replace_all(&data, was.as_bytes(), now.as_bytes());
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&file, &data));
    written.map_err(|e| {
        EngineError::environment(
            format!(
                "failed to write task {}'s session {}",
                task.slug,
                file.display()
            ),
            e,
        )
    })?;
    Ok(true)
}

/// `data` with every `from` made `to`.
fn replace_all(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() || from == to {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// What the task's next round begins with on this host when the agent's session could not
/// come along (see `carry_session`): a summary of the rounds so far, their
/// prompts from the queue (a round's prompt file is on the host that ran it) and their
/// answers from the store.
fn moved_note(ws: &Workspace, store: &dyn Backend, task: &Task, lost: &[u32]) -> Result<String> {
    let rounds: Vec<_> = store
        .rounds(task.id)?
        .into_iter()
        .filter(|r| !r.rewound)
        .collect();
    let items = match store.task_fleet(task.id)? {
        Some(fleet) => store.queue_items(Some(&fleet))?,
        None => Vec::new(),
    };
    let prompt_of = |number: u32| {
        items
            .iter()
            .find(|i| i.slug == task.slug && i.round == Some(number))
            .and_then(|i| i.prompt.clone())
    };
    let kept: Vec<&_> = rounds.iter().collect();
    let mut header = String::from(
        "This task continues earlier rounds that ran on another host, where the agent's \
         conversation stayed; this is a new one (their work is in this directory as they left \
         it",
    );
    if !lost.is_empty() {
        let numbers: Vec<String> = lost.iter().map(u32::to_string).collect();
        header.push_str(&format!(
            ", except what round {} did: it stayed on a host that went away",
            numbers.join(", ")
        ));
    }
    header.push_str("). The earlier rounds, in order:\n\n");
    Ok(crate::resume_note::summary_with(
        ws, task, &kept, &header, &prompt_of,
    ))
}

/// The clone's directory name: the remote's last path component and a hash of its whole URL,
/// so that two remotes never share a clone.
fn clone_name(remote: &str) -> PathBuf {
    let last = remote
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repo")
        .trim_end_matches(".git");
    let readable: String = last
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let readable = readable.trim_start_matches('.');
    // FNV-1a: stable across builds, unlike the standard hasher.
    let hash = remote.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    Path::new(&format!("{hash:016x}")).join(if readable.is_empty() {
        "repo"
    } else {
        readable
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_replaced_wherever_it_is() {
        // As bytes: a longer name it begins (a sibling `/h/a/apple`) changes too.
        let data = br#"{"cwd":"/h/a/app","t":"/h/a/app/x.rs /h/a/apple /h/b"}"#;
        assert_eq!(
            replace_all(data, b"/h/a/app", b"/other/b/app"),
            br#"{"cwd":"/other/b/app","t":"/other/b/app/x.rs /other/b/apple /h/b"}"#
        );
        assert_eq!(replace_all(b"none here", b"/h/a", b"/b"), b"none here");
        assert_eq!(replace_all(b"abc", b"", b"x"), b"abc");
    }

    #[test]
    fn each_remote_has_a_clone_of_its_own_named_after_it() {
        let a = clone_name("git://127.0.0.1:9418/team/app.git");
        let b = clone_name("/srv/git/app.git");
        assert!(a.ends_with("app") && b.ends_with("app"), "{a:?} {b:?}");
        assert_ne!(a, b);
        assert_eq!(a, clone_name("git://127.0.0.1:9418/team/app.git"));
        assert!(clone_name("host:..").ends_with("repo"));
        assert_eq!(a.components().count(), 2);
    }
}
