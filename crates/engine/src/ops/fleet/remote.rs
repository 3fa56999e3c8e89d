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

use crate::base::error::{EngineError, Result};
use crate::env::store_location::StoreLocation;
use crate::env::workspace::Workspace;
use ganger_git::remote as git_remote;
use ganger_store::{Backend, QueueItem, QueueKind, Task};
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
            let ws = Workspace::discover(&dir, Some(self.store.clone()))?;
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
    let (here, _) = crate::evidence::task_worktree::default_worktree(ws, &task.slug);
    if task.worktree == here && here.is_dir() {
        return Ok(());
    }
    let branch_at = git_remote::fetched_branch(&ws.repo.main, &task.branch);
    crate::round::task_move::make_here(ws, store, remote, task, commander, branch_at)
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
