//! `ganger clean`: removes what finished tasks left behind (processes of their rounds still
//! running, their Docker containers and volumes, their worktrees, their merged branches) and
//! says per task what it removed and what it kept and why. Uncommitted changes and commits
//! the base does not have are never lost without `--force`; a task with a running round is
//! skipped. The task's record, round files and snapshots stay (`diff` still works), and the
//! task is marked cleaned.

use crate::clean_git::{Mode, clean_worktree_and_branch};
use crate::clean_report::{CLEAN_SCHEMA, CleanReport, LeftoverKind, TaskCleanup, count};
use crate::commander::commander;
use crate::error::{EngineError, Result};
use crate::fix::find_task;
use crate::leftovers::{docker_if_present, task_filter};
use crate::notice::Notices;
use crate::reaper::settle_task;
use crate::workspace::Workspace;
use ganger_docker::Docker;
use ganger_events::RoundStatus;
use ganger_sandbox::{Cgroup, RoundMarker, kill_round, marked_processes};
use ganger_store::{Round, Store, Task};
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
        tasks: Vec::new(),
    };
    let Some(mut store) = ws.existing_store()? else {
        if let Some(slug) = options.slugs.first() {
            crate::slug::check_slug(slug)?;
            return Err(EngineError::invalid(format!("no task {slug}")));
        }
        return Ok(report);
    };
    // Every slug is checked before anything is touched.
    let tasks: Vec<Task> = if options.slugs.is_empty() {
        let mut tasks = Vec::new();
        for summary in store.task_summaries()? {
            tasks.push(find_task(&store, &summary.slug)?);
        }
        tasks
    } else {
        options
            .slugs
            .iter()
            .map(|slug| find_task(&store, slug))
            .collect::<Result<_>>()?
    };
    let mode = Mode {
        force: options.force,
        dry_run: options.dry_run,
    };
    let mut docker = DockerState::Unasked;
    let commander = commander(options.commander.as_deref());
    for task in tasks {
        let cleaned = clean_task(ws, &mut store, &task, mode, &mut docker, notices)?;
        if !options.dry_run && !cleaned.removed.is_empty() {
            let detail = serde_json::to_value(&cleaned).unwrap_or_default();
            store.mark_cleaned(task.id, &commander, detail)?;
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

fn clean_task(
    ws: &Workspace,
    store: &mut dyn Store,
    task: &Task,
    mode: Mode,
    docker: &mut DockerState,
    notices: &mut dyn Notices,
) -> Result<TaskCleanup> {
    let mut report = TaskCleanup::new(&task.slug);
    // A round whose host died is settled first (which stops what is left of it).
    settle_task(ws, store, task, notices)?;
    let rounds: Vec<Round> = (1..=task.rounds)
        .filter_map(|number| store.round(task.id, Some(number)).transpose())
        .collect::<std::result::Result<_, _>>()?;
    if let Some(running) = rounds.iter().find(|r| r.status == RoundStatus::Running) {
        report.skipped = Some(format!(
            "round {} is running (`ganger cancel {}` stops it)",
            running.number, task.slug
        ));
        return Ok(report);
    }
    stop_processes(ws, &rounds, mode, &mut report);
    if let Some(docker) = docker.get() {
        remove_docker_objects(ws, docker, task, mode, &mut report);
    }
    clean_worktree_and_branch(ws, task, mode, &mut report);
    Ok(report)
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
