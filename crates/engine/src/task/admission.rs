//! Whether an agent, a model and a worktree may take a round: the adapter by name, the model's
//! name and whether the agent has it, a CLI at an untested version (said, never silent), a
//! worktree the user gives. Everything here refuses before anything is made.

use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::models::{ModelCheck, check_model};
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree;
use crate::round::reaper::settle_running;
use ganger_agents::Adapter;
use ganger_store::Backend;
use std::path::{Path, PathBuf};

/// The adapter named `name` (reading the stream format its settings name), or a clear error
/// listing the known ones.
pub(crate) fn known_adapter(ws: &Workspace, name: &str) -> Result<&'static dyn Adapter> {
    ganger_agents::configured(name, &ws.config.agent(name))
        .map_err(|unknown| EngineError::invalid(unknown.to_string()))
}

/// Says so when the agent's program is not the version ganger is tested with: it is used
/// anyway, never silently. The version is cached by the program's identity, so this costs a
/// `--version` run only after the CLI changed.
pub(crate) fn warn_untested(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    notices: &mut dyn Notices,
) {
    // A CLI the user brings has no tested version to compare with.
    let Some(package) = adapter.package() else {
        return;
    };
    let found = crate::env::agents::cached_version(adapter, program, &ws.state.cache_dir());
    if found.as_deref() != Some(package.tested_version) {
        notices.notice(Notice::UntestedVersion {
            agent: adapter.display_name().into(),
            program: program.to_path_buf(),
            version: found,
            tested: package.tested_version.into(),
        });
    }
}

/// Refuses a model name no model of the agent can have (exit 2), before anything is made;
/// `require_model` then asks the agent whether it has the model (exit 3).
pub(crate) fn check_model_name(adapter: &dyn Adapter, model: Option<&str>) -> Result<()> {
    let Some(model) = model else {
        return Ok(());
    };
    if model.trim().is_empty() {
        return Err(EngineError::invalid("the model name is empty"));
    }
    if model.chars().any(char::is_control) || model.starts_with('-') {
        return Err(EngineError::invalid(format!(
            "{model:?} is not a model name"
        )));
    }
    match adapter.model_name_problem(model) {
        Some(problem) => Err(EngineError::invalid(problem)),
        None => Ok(()),
    }
}

/// Checks `model` and reports it; exit 3 when it is missing.
pub(crate) fn require_model(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    model: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<()> {
    let Some(model) = model else {
        notices.notice(Notice::Model {
            model: format!("{}'s default", adapter.display_name()),
            verdict: "not checked".into(),
        });
        return Ok(());
    };
    let check = check_model(ws, adapter, program, model)?;
    notices.notice(Notice::Model {
        model: model.to_owned(),
        verdict: check.describe(),
    });
    match check {
        ModelCheck::Missing { closest } => {
            let mut error = EngineError::model(format!(
                "model {model} is not available to {}",
                adapter.display_name()
            ));
            if let Some(closest) = closest {
                error = error.hint(format!("the closest available model is {closest}"));
            }
            Err(error)
        }
        _ => Ok(()),
    }
}

/// Checks a `--worktree` given by the user: a worktree of this repository and not the main
/// checkout. Returns its top directory and branch.
pub(crate) fn check_given_worktree(ws: &Workspace, path: &Path) -> Result<(PathBuf, String)> {
    let opened = ws.repo.open_worktree(path).map_err(|e| {
        EngineError::invalid(format!(
            "--worktree {}: not a worktree of this repository ({e})",
            path.display()
        ))
    })?;
    if opened.worktree == ws.repo.main {
        return Err(EngineError::invalid(format!(
            "--worktree {} is the main checkout; give the task a worktree of its own",
            path.display()
        )));
    }
    let branch = opened
        .branch()
        .unwrap_or_else(|| task_worktree::DETACHED.to_owned());
    Ok((opened.worktree, branch))
}

/// Refuses a worktree in which a round of another task is running.
pub(crate) fn refuse_busy_worktree(
    ws: &Workspace,
    store: &mut dyn Backend,
    worktree: &Path,
) -> Result<()> {
    settle_running(ws, store, &mut |_: Notice| {})?;
    for (task, round) in store.running_rounds()? {
        if task.worktree == worktree {
            return Err(EngineError::invalid(format!(
                "round {} of task {} is running in {}",
                round.number,
                task.slug,
                worktree.display()
            )));
        }
    }
    Ok(())
}

/// The most fix rounds `--until-green` may ask for.
pub const UNTIL_GREEN_MAX: u32 = 50;

/// Refuses a limit out of range, before anything is made.
pub(crate) fn check_limit(limit: Option<u32>) -> Result<()> {
    match limit {
        Some(n) if n == 0 || n > UNTIL_GREEN_MAX => Err(crate::base::error::EngineError::invalid(
            format!("--until-green {n}: give a number of fix rounds from 1 to {UNTIL_GREEN_MAX}"),
        )),
        _ => Ok(()),
    }
}
