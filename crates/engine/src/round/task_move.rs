//! A task whose rounds ran on other hosts, brought to this one: a fleet that names a git
//! remote carries each task's branch and snapshot refs there (`round/push.rs` pushes them
//! before a round's end is recorded), and the store carries the rest (the queued prompts, the
//! agent's session where its adapter names the file). A host taking a task over (a worker's
//! scheduler, `fleet/remote.rs`), or a checkout that merges or diffs it, fetches the task,
//! makes its worktree from the branch with the last snapshot's files on top, writes the
//! agent's session where its agent looks for it here (the old worktree's path replaced by the
//! new one), and records the move; where the session cannot come, the next round begins with
//! a summary of the earlier ones.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_git::remote as git_remote;
use ganger_store::{Backend, Move, QueueItem, Task};
use std::path::Path;

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

/// Whether task `slug`'s worktree is on another host: it is not here (a worktree of this
/// repository), and its fleet names a remote from which the workers on other hosts run its
/// rounds. A round asked for here then goes to them through the store.
pub(crate) fn runs_elsewhere(ws: &Workspace, slug: &str) -> Result<bool> {
    // A fleet on a remote needs a shared store: on this machine's own, nothing is elsewhere
    // (and a fix pays no look at the store for it).
    if ws.store.url().is_none() {
        return Ok(false);
    }
    let Some(store) = ws.existing_store()? else {
        return Ok(false);
    };
    let Some(task) = store.task(slug)? else {
        return Ok(false);
    };
    if crate::evidence::task_worktree::check_task_worktree(ws, &task).is_ok() {
        return Ok(false);
    }
    Ok(fleet_remote(&*store, &task)?.is_some())
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
/// last round's files on top, and records the move (as a worker taking a task over does).
pub(crate) fn make_here(
    ws: &Workspace,
    store: &mut dyn Backend,
    remote: &str,
    task: &Task,
    commander: &str,
    branch_at: Option<String>,
) -> Result<()> {
    let (here, _) = crate::evidence::task_worktree::default_worktree(ws, &task.slug);
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
                "host": crate::env::machine::host_name(),
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
    // The session id is read from the store, which every host writes: it becomes part of a
    // path below only when it is a session's name.
    let Some(session) = task
        .session
        .as_deref()
        .filter(|session| ganger_agents::is_session_name(session))
    else {
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
    if let Some((carrier, _)) = crate::round::session_carrier(ws, &moved) {
        let (was, now) = (task.worktree.to_string_lossy(), here.to_string_lossy());
        let data = replace_all(&kept.data, was.as_bytes(), now.as_bytes());
        import_session(ws, &moved, carrier, &data)?;
        return Ok(true);
    }
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

/// Has the task's agent take in `data`, a session [`ganger_agents::SessionCarrier::export`]
/// read out on another host (its paths already this host's), with the CLI's own import, in
/// the task's worktree here.
fn import_session(
    ws: &Workspace,
    task: &Task,
    carrier: ganger_agents::SessionCarrier,
    data: &[u8],
) -> Result<()> {
    let failed = |e: std::io::Error| {
        EngineError::environment(format!("failed to write task {}'s session", task.slug), e)
    };
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)
        .ok_or_else(|| EngineError::invalid(format!("unknown agent {:?}", task.agent)))?;
    let program = crate::env::agent_env::resolve_program(adapter, &ws.config)?;
    // Readable by this user alone (the session holds the work's text), removed once taken in.
    let dir = ws.state.agent_dir(adapter.name());
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let path = dir.join(format!(
        "session-{}-{}.json",
        task.slug,
        crate::base::tokens::new_token()
    ));
    let written = {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut file| file.write_all(data))
    };
    let file = RemovedOnDrop(path);
    written.map_err(failed)?;
    let args = (carrier.import_args)(&file.0);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::env::agent_query::ask(ws, adapter, &program, &args, &task.worktree, IMPORT_LIMIT)
        .map_err(|e| e.context(format!("failed to take in task {}'s session", task.slug)))?;
    Ok(())
}

/// A file removed when dropped.
struct RemovedOnDrop(std::path::PathBuf);

impl Drop for RemovedOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How long an agent's CLI may take to take in a session (measured: about 5 s on a loaded
/// machine).
const IMPORT_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether `byte` can continue a file name: a match of a path or a directory's name that it
/// comes right before (or right after) is part of another, longer name.
fn continues_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// `data` with every whole `from` made `to`: not where `from` is only the beginning (or the
/// end) of a longer name, so that a sibling (`/h/a/app-2`, `/h/a/apple` beside `/h/a/app`) or a
/// path that merely ends like it (`/x/h/a/app`) keeps its name.
fn replace_all(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() || from == to {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len());
    let mut last = 0;
    for at in memchr::memmem::find_iter(data, from) {
        let end = at + from.len();
        let before = at.checked_sub(1).and_then(|i| data.get(i)).copied();
        let after = data.get(end).copied();
        if at < last || before.is_some_and(continues_name) || after.is_some_and(continues_name) {
            continue;
        }
        out.extend_from_slice(&data[last..at]);
        out.extend_from_slice(to);
        last = end;
    }
    out.extend_from_slice(&data[last..]);
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
        let round = rounds.iter().find(|r| r.number == number)?;
        queued_prompt(
            &items,
            &task.slug,
            number,
            (&round.commander, round.started_at),
        )
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
    Ok(crate::evidence::resume_note::summary_with(
        ws, task, &kept, &header, &prompt_of,
    ))
}

/// The prompt a round of `slug` was queued with: the item it became, or, where that item was
/// never marked with its round (its host died after starting the round, and no scheduler has
/// recovered the item yet), the one its commander claimed last before the round began, as
/// the scheduler's recovery matches them. The round is `number`, begun by its commander at
/// a time (Unix ms).
fn queued_prompt(
    items: &[QueueItem],
    slug: &str,
    number: u32,
    (commander, started_at): (&str, i64),
) -> Option<String> {
    let mine = || items.iter().filter(|i| i.slug == slug);
    mine()
        .find(|i| i.round == Some(number))
        .or_else(|| {
            mine().rev().find(|i| {
                i.round.is_none()
                    && i.commander == commander
                    && i.claimed_at.is_some_and(|at| at <= started_at)
            })
        })
        .and_then(|i| i.prompt.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, slug: &str, round: Option<u32>, claimed_at: Option<i64>) -> QueueItem {
        serde_json::from_value(serde_json::json!({
            "id": id, "slug": slug, "kind": "fix", "options": {}, "prompt_file": "",
            "prompt": format!("prompt {id}"), "commander": "cli", "generation": null,
            "fleet": "f", "after": [], "not_before": 0,
            "state": if round.is_some() { "delivered" } else { "delivering" },
            "reason": null, "round": round, "claimed_at": claimed_at, "claimed_by": null,
            "created_at": 0, "updated_at": 0,
        }))
        .unwrap()
    }

    #[test]
    fn a_rounds_prompt_is_its_items_or_the_one_claimed_for_it_before_it_was_marked() {
        let began = ("cli", 1_000);
        let marked = [
            item(1, "t", Some(1), Some(10)),
            item(2, "t", Some(2), Some(900)),
        ];
        assert_eq!(
            queued_prompt(&marked, "t", 2, began).as_deref(),
            Some("prompt 2")
        );
        // The host died between recording round 2 and marking item 3 delivered.
        let unmarked = [
            item(1, "t", Some(1), Some(10)),
            item(3, "t", None, Some(990)),
            item(4, "other", None, Some(995)),
        ];
        assert_eq!(
            queued_prompt(&unmarked, "t", 2, began).as_deref(),
            Some("prompt 3")
        );
        // An item claimed after the round began, or by another commander, did not start it.
        let later = [item(5, "t", None, Some(1_001))];
        assert_eq!(queued_prompt(&later, "t", 2, began), None);
        assert_eq!(
            queued_prompt(&unmarked, "t", 2, ("someone-else", 1_000)),
            None
        );
    }

    #[test]
    fn a_path_is_replaced_where_it_is_whole_and_a_longer_name_keeps_its_own() {
        let data = br#"{"cwd":"/h/a/app","t":"/h/a/app/x.rs /h/a/apple /h/a/app-2 /x/h/a/app /h/b /h/a/app"#;
        assert_eq!(
            replace_all(data, b"/h/a/app", b"/other/b/app"),
            br#"{"cwd":"/other/b/app","t":"/other/b/app/x.rs /h/a/apple /h/a/app-2 /x/h/a/app /h/b /other/b/app"#
        );
        // A directory's name (an agent's dashed project directory), after a slash.
        assert_eq!(
            replace_all(
                b"/p/-h-a-app/s.jsonl /p/-h-a-app-2/s",
                b"-h-a-app",
                b"-o-b-app"
            ),
            b"/p/-o-b-app/s.jsonl /p/-h-a-app-2/s"
        );
        assert_eq!(replace_all(b"none here", b"/h/a", b"/b"), b"none here");
        assert_eq!(replace_all(b"abc", b"", b"x"), b"abc");
    }
}
