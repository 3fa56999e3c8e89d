//! `ganger clean`: removes what finished tasks left behind (processes of their rounds still
//! running, their Docker containers and volumes, their worktrees, their merged branches) and
//! says per task what it removed and what it kept and why. Uncommitted changes and commits
//! the base does not have are never lost without `--force`; a task with a running round is
//! skipped. The task's record, round files and snapshots stay (`diff` still works), and the
//! task is marked cleaned.

pub(crate) mod git;

use crate::base::clean_report::{CLEAN_SCHEMA, CleanReport, LeftoverKind, TaskCleanup, count};
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::leftovers::{docker_if_present, task_filter};
use crate::env::workspace::Workspace;
use crate::ops::clean::git::{Mode, clean_worktree_and_branch};
use crate::round::reaper::settle_task;
use crate::task::lookup::find_task;
use ganger_docker::Docker;
use ganger_events::RoundStatus;
use ganger_sandbox::{Cgroup, RoundMarker, kill_round, marked_processes};
use ganger_store::{Backend, Claim, CleanClaim, Round, StoreError, Task};
use std::collections::BTreeSet;

/// What `ganger clean` was asked.
#[derive(Debug, Clone, Default)]
pub struct CleanOptions {
    /// The tasks; empty for every task.
    pub slugs: Vec<String>,
    /// Remove worktrees with uncommitted changes and branches with unmerged commits too.
    pub force: bool,
    /// Say what would be removed, and change nothing.
    pub dry_run: bool,
    pub commander: Option<String>,
}

/// Cleans up after the tasks asked for (every task by default).
pub fn clean(
    ws: &Workspace,
    options: &CleanOptions,
    notices: &mut dyn Notices,
) -> Result<CleanReport> {
    let mut report = CleanReport {
        schema: CLEAN_SCHEMA,
        dry_run: options.dry_run,
        force: options.force,
        docker: None,
        settled: Vec::new(),
        temporary_dirs: Vec::new(),
        tasks: Vec::new(),
    };
    let Some(mut store) = ws.existing_store()? else {
        if let Some(slug) = options.slugs.first() {
            crate::base::slug::check_slug(slug)?;
            return Err(EngineError::not_found(format!("no task {slug}")));
        }
        report.temporary_dirs = crate::env::agent_tmp_sweep::remove_dead_hosts(options.dry_run);
        return Ok(report);
    };
    // Starts killed before their task was recorded: their half-made worktrees go first.
    let settled = if options.dry_run {
        crate::evidence::half_made::would_settle(ws, &*store)?
    } else {
        crate::evidence::half_made::settle_dead_starts(ws, &mut *store)?
    };
    // Every slug is checked before anything is touched.
    let tasks: Vec<Task> = if options.slugs.is_empty() {
        let mut tasks = Vec::new();
        for summary in store.task_summaries()? {
            tasks.push(find_task(&*store, &summary.slug)?);
        }
        tasks
    } else {
        let mut tasks = Vec::new();
        for slug in &options.slugs {
            match find_task(&*store, slug) {
                Ok(task) => tasks.push(task),
                // Only a half-made start of it was left, and it is settled now.
                Err(_) if settled.iter().any(|(s, _)| s == slug) => {}
                Err(e) => return Err(e),
            }
        }
        tasks
    };
    report.settled = settled.into_iter().map(|(_, what)| what).collect();
    // Not a task's: whatever a killed host of this user left, once every slug is known good.
    report.temporary_dirs = crate::env::agent_tmp_sweep::remove_dead_hosts(options.dry_run);
    let mode = Mode {
        force: options.force,
        dry_run: options.dry_run,
    };
    let mut docker = DockerState::Unasked;
    let commander = commander(options.commander.as_deref());
    for task in tasks {
        let (cleaned, claim) = clean_task(
            ws,
            &mut *store,
            &task,
            mode,
            &commander,
            &mut docker,
            notices,
        )?;
        if let Some(claim) = claim {
            if cleaned.removed.is_empty() {
                store.end_clean(task.id, claim.key())?;
            } else {
                let detail = serde_json::to_value(&cleaned).unwrap_or_default();
                store.mark_cleaned(task.id, &commander, detail)?;
            }
            claim.release();
        }
        report.tasks.push(cleaned);
    }
    if let DockerState::Unreachable(why) = docker {
        report.docker = Some(why);
    }
    Ok(report)
}

/// Docker, connected on first need, once per command.
enum DockerState {
    Unasked,
    Absent,
    Unreachable(String),
    Connected(Box<Docker>),
}

impl DockerState {
    fn get(&mut self) -> Option<&Docker> {
        if let DockerState::Unasked = self {
            *self = match docker_if_present() {
                None => DockerState::Absent,
                Some(Ok(docker)) => DockerState::Connected(Box::new(docker)),
                Some(Err(why)) => DockerState::Unreachable(why),
            };
        }
        match self {
            DockerState::Connected(docker) => Some(docker),
            _ => None,
        }
    }
}

/// Cleans one task; with the claim's lock when it changed anything (not a dry run), for the
/// caller to end the claim.
fn clean_task(
    ws: &Workspace,
    store: &mut dyn Backend,
    task: &Task,
    mode: Mode,
    commander: &str,
    docker: &mut DockerState,
    notices: &mut dyn Notices,
) -> Result<(TaskCleanup, Option<Claim>)> {
    let mut report = TaskCleanup::new(&task.slug);
    // A round whose host died is settled first (which stops what is left of it).
    settle_task(ws, store, task, notices)?;
    let rounds: Vec<Round> = (1..=task.rounds)
        .filter_map(|number| store.round(task.id, Some(number)).transpose())
        .collect::<std::result::Result<_, _>>()?;
    if let Some(running) = rounds.iter().find(|r| r.status == RoundStatus::Running) {
        report.skipped = Some(running_skip(running.number, &task.slug));
        return Ok((report, None));
    }
    // Recorded before anything is removed: no round of the task begins until the claim ends,
    // and a store that cannot record it has nothing removed.
    let claim = if mode.dry_run {
        None
    } else {
        match claim(store, task, commander)? {
            Claimed::Yes(claim) => Some(claim),
            Claimed::No(why) => {
                report.skipped = Some(why);
                return Ok((report, None));
            }
        }
    };
    stop_processes(ws, &rounds, mode, &mut report);
    if crate::round::warm::registry::host_alive(ws, &*store, &task.slug) {
        if !mode.dry_run {
            let _ = crate::round::warm::registry::stop_warm(ws, &*store, &task.slug);
        }
        report.removed(LeftoverKind::Processes, "warm agent".to_owned(), None);
    }
    if let Some(docker) = docker.get() {
        remove_docker_objects(ws, docker, task, mode, &mut report);
    }
    clean_worktree_and_branch(ws, task, mode, &mut report);
    remove_agent_home(ws, task, mode, &mut report);
    Ok((report, claim))
}

fn running_skip(number: u32, slug: &str) -> String {
    format!("round {number} is running (`ganger cancel {slug}` stops it)")
}

/// Whether this clean may go on with a task.
enum Claimed {
    Yes(Claim),
    No(String),
}

/// Claims the task for this clean in the store (settling the claim of a clean that died).
fn claim(store: &mut dyn Backend, task: &Task, commander: &str) -> Result<Claimed> {
    let held = crate::round::launch::take_claim(
        &*store,
        &format!("clean-{}", crate::base::tokens::new_token()),
    )?;
    let claim = CleanClaim {
        task_id: task.id,
        claim: held.key().clone(),
        commander: commander.to_owned(),
        started_at: ganger_store::now_ms(),
    };
    let mut settled = false;
    loop {
        let why = match store.begin_clean(&claim) {
            Ok(()) => return Ok(Claimed::Yes(held)),
            Err(StoreError::Busy { number, .. }) => running_skip(number, &task.slug),
            Err(StoreError::BeingCleaned { claim, .. }) => {
                if !settled && !store.is_alive(&claim)? {
                    store.end_clean(task.id, &claim)?;
                    settled = true;
                    continue;
                }
                "another `ganger clean` is cleaning it".to_owned()
            }
            Err(other) => {
                held.release();
                return Err(other.into());
            }
        };
        held.release();
        return Ok(Claimed::No(why));
    }
}

/// Removes the agent's home of a task that ran in a sandbox (`.ganger/tasks/SLUG/agent`: its
/// sessions, which can hold what tools printed), once the task's worktree is gone.
fn remove_agent_home(ws: &Workspace, task: &Task, mode: Mode, report: &mut TaskCleanup) {
    let home = ws.state.task_agent_dir(&task.slug);
    if !home.exists() || task.worktree.exists() {
        return;
    }
    let name = home.display().to_string();
    match if mode.dry_run {
        Ok(())
    } else {
        std::fs::remove_dir_all(&home)
    } {
        Ok(()) => report.removed(LeftoverKind::AgentHome, name, None),
        Err(e) => report.kept(
            LeftoverKind::AgentHome,
            name,
            format!("removing it failed: {e}"),
        ),
    }
}

/// Stops what is still running of the task's finished rounds (by their marker only: the
/// agent's session id may name someone else's process by now) and removes their cgroups.
fn stop_processes(ws: &Workspace, rounds: &[Round], mode: Mode, report: &mut TaskCleanup) {
    let tokens: BTreeSet<String> = rounds.iter().map(|r| r.token.clone()).collect();
    let found = marked_processes(&tokens);
    for round in rounds {
        let cgroup = round
            .cgroup
            .as_ref()
            .map(Cgroup::at)
            .filter(|c| c.path().is_dir());
        let pids = found.get(&round.token).map_or(0, BTreeSet::len);
        let in_cgroup = cgroup.as_ref().map_or(0, |c| c.pids().len());
        let living = pids.max(in_cgroup);
        if living == 0 && cgroup.is_none() {
            continue;
        }
        if !mode.dry_run {
            let marker = RoundMarker {
                token: round.token.clone(),
                session: None,
                cgroup,
            };
            kill_round(&marker, ws.config.defaults.grace.0);
        }
        if living > 0 {
            report.removed(
                LeftoverKind::Processes,
                format!("round {}", round.number),
                Some(count(living, "process", "processes")),
            );
        }
    }
}

/// Removes the task's containers (running ones are killed) and volumes.
fn remove_docker_objects(
    ws: &Workspace,
    docker: &Docker,
    task: &Task,
    mode: Mode,
    report: &mut TaskCleanup,
) {
    let filter = task_filter(ws, &task.slug);
    match docker.managed_containers(&filter) {
        Ok(containers) => {
            for container in containers {
                let name = container.display_name().to_owned();
                let removed = if mode.dry_run {
                    Ok(())
                } else {
                    docker.remove_container(&container.id)
                };
                match removed {
                    Ok(()) => report.removed(
                        LeftoverKind::Container,
                        name,
                        Some(container.state.clone()).filter(|s| !s.is_empty()),
                    ),
                    Err(e) => report.kept(
                        LeftoverKind::Container,
                        name,
                        format!("removing it failed: {e}"),
                    ),
                }
            }
        }
        Err(e) => report.kept(
            LeftoverKind::Container,
            "*".into(),
            format!("listing them failed: {e}"),
        ),
    }
    match docker.managed_volumes(&filter) {
        Ok(volumes) => {
            for volume in volumes {
                let removed = if mode.dry_run {
                    Ok(())
                } else {
                    docker.remove_volume(&volume)
                };
                match removed {
                    Ok(()) => report.removed(LeftoverKind::Volume, volume, None),
                    Err(e) => report.kept(
                        LeftoverKind::Volume,
                        volume,
                        format!("removing it failed: {e}"),
                    ),
                }
            }
        }
        Err(e) => report.kept(
            LeftoverKind::Volume,
            "*".into(),
            format!("listing them failed: {e}"),
        ),
    }
}
