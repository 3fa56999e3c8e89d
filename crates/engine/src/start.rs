//! `ganger start`: a new task. Everything that can be refused is checked before anything is
//! made (the slug, the text, the keys, the agent's program, the model, the worktree), the
//! worktree is created, and the task and its first round are recorded in one transaction; if
//! that fails, the worktree and branch just made are removed again, so nothing is left half
//! way.

use crate::agent_env;
use crate::brief::{Brief, read_brief};
use crate::commander::commander;
use crate::error::{EngineError, Result};
use crate::keys::{LoadedKey, load_keys, parse_key_args};
use crate::launch::{Launch, Launched, launch, new_token, take_claim, this_process};
use crate::models::{ModelCheck, check_model};
use crate::notice::{Notice, Notices};
use crate::reaper::settle_running;
use crate::sandboxing;
use crate::slug::check_slug;
use crate::task_worktree;
use crate::workspace::Workspace;
use ganger_agents::Adapter;
use ganger_store::{Backend, NewRound, NewTask, RoundKind, StoreError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `ganger start` was asked.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    pub slug: String,
    pub brief: Option<Brief>,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub base: Option<String>,
    pub branch: Option<String>,
    pub worktree: Option<PathBuf>,
    pub keys: Vec<String>,
    pub timeout: Option<Duration>,
    pub stall: Option<Duration>,
    pub commander: Option<String>,
    pub detach: bool,
    /// What the agent may do; `None` for `ganger.toml`'s default.
    pub permission: Option<ganger_agents::Permission>,
    /// Where the rounds run; `None` for `ganger.toml`'s default.
    pub sandbox: Option<ganger_sandbox::SandboxKind>,
    /// The sandbox's network; `None` for `ganger.toml`'s default.
    pub network: Option<ganger_sandbox::Network>,
    /// Extra writable paths inside the worktree.
    pub rw: Vec<String>,
    /// One-off checks (`--check CMD`), run after the configured ones.
    pub checks: Vec<String>,
    /// `--until-green N`: fix rounds sent while checks fail.
    pub until_green: Option<u32>,
    /// `--label KEY=VALUE` (repeatable).
    pub labels: Vec<String>,
    /// `--budget-usd`, `--budget-tokens`: the task's budget over all its rounds.
    pub budget: ganger_store::Budget,
    /// The fleet the task belongs to (the scheduler's): its budget counts the task, from the
    /// first round on, and a fleet that has spent its budget starts no task.
    pub fleet: Option<String>,
}

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
    let found = crate::agents::cached_version(adapter, program, &ws.state.cache_dir());
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

/// Starts a task: round 1 in a new session titled with the slug.
pub fn start(ws: &Workspace, options: StartOptions, notices: &mut dyn Notices) -> Result<Launched> {
    check_slug(&options.slug)?;
    let slug = options.slug.clone();
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    let prompt = read_brief(brief)?;
    crate::until_green::check_limit(options.until_green)?;
    let labels = crate::labels::parse_labels(&options.labels)?;
    check_budget(&options.budget)?;
    let agent_name = options
        .agent
        .clone()
        .unwrap_or_else(|| ws.config.defaults.agent.clone());
    let adapter = known_adapter(ws, &agent_name)?;
    check_model_name(
        adapter,
        options
            .model
            .as_deref()
            .or(ws.config.defaults.model.as_deref()),
    )?;
    let permission = match options.permission {
        Some(permission) => permission,
        None => ws
            .config
            .defaults
            .permission
            .parse()
            .map_err(EngineError::invalid)?,
    };
    let checks = crate::checks::planned(&ws.config, &options.checks, permission)?;
    let keys = parse_key_args(&options.keys)?;
    let loaded = load_keys(&ws.config, &keys)?;
    let program = agent_env::resolve_program(adapter, &ws.config)?;
    let given = options
        .worktree
        .as_deref()
        .map(|path| check_given_worktree(ws, path))
        .transpose()?;
    // The branch and base are checked before git sees them, and before `.ganger/` is made.
    let place = match given {
        None => Place::Planned(task_worktree::plan(
            ws,
            &slug,
            options.base.as_deref(),
            options.branch.as_deref(),
        )?),
        Some((path, branch)) => {
            if options.branch.is_some() {
                return Err(EngineError::invalid(
                    "--branch names a new branch; a --worktree keeps its own",
                ));
            }
            let base = options
                .base
                .clone()
                .unwrap_or_else(|| ws.config.defaults.base.clone());
            task_worktree::base_commit(ws, &base)?;
            Place::Given { path, branch, base }
        }
    };
    let worktree_path = match &place {
        Place::Planned(planned) => &planned.path,
        Place::Given { path, .. } => path,
    };
    agent_env::check_plan(
        adapter,
        &ws.config,
        &prompt,
        None,
        worktree_path,
        &ws.state.agent_dir(adapter.name()),
    )?;
    let sandbox = sandboxing::choose(ws, options.sandbox, options.network, &options.rw)?;
    sandboxing::check_ready(ws, &sandbox, &agent_name)?;
    match &place {
        Place::Given { path, .. } => sandboxing::check_round(ws, &sandbox, path)?,
        // Without a store there is no start of this slug to settle first.
        Place::Planned(planned) if !ws.has_state() => {
            task_worktree::refuse_existing(ws, planned)?;
        }
        Place::Planned(_) => {}
    }
    let mut store = ws.open_store()?;
    if let Some(fleet) = &options.fleet
        && let Some(why) = crate::budget::fleet_exhausted(&*store, fleet)
    {
        return Err(EngineError::invalid(format!(
            "task {slug} of fleet {fleet} was not started: {why}"
        )));
    }
    if store.task(&slug)?.is_some() {
        return Err(
            EngineError::invalid(format!("task {slug} exists already")).hint(format!(
                "send the next round with `ganger fix {slug}`, or see `ganger status {slug}`"
            )),
        );
    }
    let model = options
        .model
        .clone()
        .or_else(|| ws.config.defaults.model.clone());
    require_model(ws, adapter, &program, model.as_deref(), notices)?;
    warn_untested(ws, adapter, &program, notices);

    let owner = commander(options.commander.as_deref());
    let token = new_token();
    let claim = take_claim(&*store, &token)?;
    let (worktree, branch, base, made) = match &place {
        Place::Planned(planned) => {
            // Recorded as under way before the worktree is made: a start killed from here on
            // leaves a record that `start` again or `clean` settles.
            let begun = task_worktree::begin(
                ws,
                &mut *store,
                planned,
                &slug,
                &owner,
                claim.key(),
                notices,
            );
            if let Err(e) = begun {
                claim.release();
                return Err(e);
            }
            // A start killed here leaves a worktree and a record, no task (tests kill it).
            crate::faults::pause("start-after-worktree");
            let planned = planned.clone();
            (planned.path, planned.branch, planned.base, true)
        }
        Place::Given { path, branch, base } => {
            if let Err(e) = refuse_busy_worktree(ws, &mut *store, path) {
                claim.release();
                return Err(e);
            }
            (path.clone(), branch.clone(), base.clone(), false)
        }
    };
    let undo = |ws: &Workspace, store: &mut dyn Backend, claim: &ganger_store::ClaimKey| {
        if let Place::Planned(planned) = &place {
            task_worktree::abandon(ws, store, planned, &slug, claim);
        }
    };
    let base_commit = ws
        .repo
        .open_worktree(&worktree)
        .ok()
        .and_then(|w| w.head().ok().flatten());
    let new_task = NewTask {
        slug: slug.clone(),
        agent: agent_name,
        model: model.clone(),
        base,
        base_commit,
        branch: branch.clone(),
        worktree: worktree.clone(),
        worktree_made: made,
        owner: owner.clone(),
        keys: keys.clone(),
        timeout_ms: options.timeout.map(|d| d.as_millis() as u64),
        stall_ms: options.stall.map(|d| d.as_millis() as u64),
        permission: permission.as_str().to_owned(),
        sandbox: sandbox.kind().as_str().to_owned(),
        network: sandbox.network.as_str().to_owned(),
        rw: sandbox.rw.clone(),
    };
    let new_round = NewRound {
        kind: RoundKind::Start,
        model,
        session_before: None,
        commander: owner,
        token,
        claim: claim.key().clone(),
        host: this_process(),
        snapshot_before: None,
        checks,
        generation: None,
    };
    let (task, round) = match store.create_task(&new_task, &new_round) {
        Ok(created) => created,
        Err(e) => {
            undo(ws, &mut *store, claim.key());
            claim.release();
            return Err(match e {
                StoreError::SlugTaken(slug) => {
                    EngineError::invalid(format!("task {slug} exists already"))
                }
                other => other.into(),
            });
        }
    };
    // Before the round's host reads them (a detached host starts in `launch`).
    if options.budget.is_set() {
        store.set_task_budget(task.id, &options.budget)?;
    }
    if !labels.is_empty() {
        store.set_labels(task.id, &labels)?;
    }
    if let Some(fleet) = &options.fleet {
        store.set_task_fleet(task.id, Some(fleet))?;
    }
    let redactor = LoadedKey::redactor(&loaded);
    let launched = launch(
        ws,
        &mut *store,
        Launch {
            task,
            round,
            prompt,
            claim,
            redactor,
            detach: options.detach,
            until_green: options.until_green,
        },
        notices,
    )?;
    drop(store);
    crate::until_green::after_launch(ws, launched, options.until_green, notices)
}

/// Where a new task works: a worktree ganger makes, or one the user gave.
enum Place {
    Planned(task_worktree::PlannedWorktree),
    Given {
        path: PathBuf,
        branch: String,
        base: String,
    },
}

/// Refuses a budget that could never be spent: not a positive, finite amount.
fn check_budget(budget: &ganger_store::Budget) -> Result<()> {
    if let Some(usd) = budget.usd
        && !(usd.is_finite() && usd > 0.0)
    {
        return Err(EngineError::invalid(format!(
            "--budget-usd {usd}: give a positive amount of US dollars"
        )));
    }
    if budget.tokens == Some(0) {
        return Err(EngineError::invalid(
            "--budget-tokens 0: give a positive number of tokens",
        ));
    }
    Ok(())
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
