//! `ganger start`: a new task. Everything that can be refused is checked before anything is
//! made (the slug, the text, the keys, the agent's program, the model, the worktree), the
//! worktree is created, and the task and its first round are recorded in one transaction; if
//! that fails, the worktree and branch just made are removed again, so nothing is left half
//! way.

use crate::base::brief::{Brief, read_brief};
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::base::slug::check_slug;
use crate::env::agent_env;
use crate::env::keys::{LoadedKey, load_keys, parse_key_args};
use crate::env::sandboxing;
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree;
use crate::round::launch::{Begin, Launched, begin};
use crate::task::admission::{
    check_given_worktree, check_model_name, known_adapter, refuse_busy_worktree, require_model,
    warn_untested,
};
use ganger_store::{Backend, NewRound, NewTask, RoundKind, StoreError};
use std::path::PathBuf;
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
    /// `--warm` (`Some(true)`) or `--cold`: whether the task's rounds go to a warm agent
    /// (`None`: as `[warm] default` says).
    pub warm: Option<bool>,
}

/// Starts a task: round 1 in a new session titled with the slug.
pub fn start(ws: &Workspace, options: StartOptions, notices: &mut dyn Notices) -> Result<Launched> {
    check_slug(&options.slug)?;
    let slug = options.slug.clone();
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    let prompt = read_brief(brief)?;
    crate::task::admission::check_limit(options.until_green)?;
    let labels = crate::task::labels::parse_labels(&options.labels)?;
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
    let permission = options.permission.unwrap_or(ws.config.defaults.permission);
    let checks = crate::evidence::checks::planned(&ws.config, &options.checks, permission)?;
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
    // What hosts killed outright left in the temporary directory goes before this one adds.
    crate::env::agent_tmp_sweep::now_and_then();
    if let Some(fleet) = &options.fleet
        && let Some(why) = crate::evidence::budget::fleet_exhausted(&*store, fleet)
    {
        return Err(EngineError::invalid(format!(
            "task {slug} of fleet {fleet} was not started: {why}"
        )));
    }
    if store.task(&slug)?.is_some() {
        return Err(
            EngineError::conflict(format!("task {slug} exists already")).hint(format!(
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
    let round = Begin {
        kind: RoundKind::Start,
        model: model.clone(),
        session_before: None,
        commander: owner.clone(),
        checks,
        generation: None,
        prompt,
        redactor: LoadedKey::redactor(&ws.store, &loaded),
        detach: options.detach,
        until_green: options.until_green,
    };
    let record = |store: &mut dyn Backend, new_round: &NewRound, notices: &mut dyn Notices| {
        let claim = &new_round.claim;
        let (worktree, branch, base, made) = match &place {
            Place::Planned(planned) => {
                // Recorded as under way before the worktree is made: a start killed from here
                // on leaves a record that `start` again or `clean` settles.
                task_worktree::begin(ws, store, planned, &slug, &owner, claim, notices)?;
                // A start killed here leaves a worktree and a record, no task (tests kill it).
                crate::base::faults::pause("start-after-worktree");
                let planned = planned.clone();
                (planned.path, planned.branch, planned.base, true)
            }
            Place::Given { path, branch, base } => {
                refuse_busy_worktree(ws, store, path)?;
                (path.clone(), branch.clone(), base.clone(), false)
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
            model,
            base,
            base_commit,
            branch,
            worktree,
            worktree_made: made,
            owner: owner.clone(),
            keys,
            timeout_ms: options.timeout.map(|d| d.as_millis() as u64),
            stall_ms: options.stall.map(|d| d.as_millis() as u64),
            permission,
            sandbox: sandbox.kind(),
            network: sandbox.network,
            rw: sandbox.rw.clone(),
            warm: options.warm,
            labels: labels.clone(),
            budget: options.budget,
            fleet: options.fleet.clone(),
        };
        let error = match store.create_task(&new_task, new_round) {
            Ok(created) => return Ok(created),
            Err(StoreError::SlugTaken(slug)) => {
                EngineError::conflict(format!("task {slug} exists already"))
            }
            Err(other) => other.into(),
        };
        // A commit whose answer was lost: the task is there, and its worktree is its own.
        if let Some(created) =
            crate::round::launch::recorded_anyway(&*store, &error, &slug, &new_round.token)
        {
            return Ok(created);
        }
        if let Place::Planned(planned) = &place {
            task_worktree::abandon(ws, store, planned, &slug, claim);
        }
        Err(error)
    };
    let launched = begin(ws, &mut *store, round, record, notices)?;
    drop(store);
    crate::task::until_green::after_launch(ws, launched, options.until_green, notices)
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
