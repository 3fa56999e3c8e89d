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
    /// `--allow HOST:PORT`: what the task's `gateway` rounds may reach besides their model.
    pub allow: Vec<String>,
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
    /// A task ganger names itself (a race's attempt or judge, `SLUG.N`): a dotted name, which
    /// no slug a person gives can be.
    pub dotted: bool,
}

/// Starts a task: round 1 in a new session titled with the slug. Three steps: `admit` checks
/// everything that can be refused without making anything; `record` makes the worktree and
/// writes the task with its first round; `begin` takes the round's claim around `record` and
/// launches it.
pub fn start(ws: &Workspace, options: StartOptions, notices: &mut dyn Notices) -> Result<Launched> {
    let admitted = admit(ws, &options)?;
    let mut store = ws.open_store()?;
    // What hosts killed outright left in the temporary directory goes before this one adds.
    crate::env::agent_tmp_sweep::now_and_then();
    admitted.check_with_store(ws, &*store, &options, notices)?;
    let round = Begin {
        kind: RoundKind::Start,
        model: admitted.model.clone(),
        session_before: None,
        commander: admitted.owner.clone(),
        checks: admitted.checks.clone(),
        generation: None,
        prompt: admitted.prompt.clone(),
        redactor: LoadedKey::redactor(&ws.store, &admitted.loaded),
        detach: options.detach,
        until_green: options.until_green,
    };
    let record = |store: &mut dyn Backend, new_round: &NewRound, notices: &mut dyn Notices| {
        record(ws, &admitted, &options, store, new_round, notices)
    };
    let launched = begin(ws, &mut *store, round, record, notices)?;
    drop(store);
    crate::task::until_green::after_launch(ws, launched, options.until_green, notices)
}

/// A start that nothing refused: what its task and first round will be.
struct Admitted {
    slug: String,
    prompt: String,
    labels: Vec<(String, String)>,
    agent: String,
    adapter: &'static dyn ganger_agents::Adapter,
    program: PathBuf,
    model: Option<String>,
    permission: ganger_agents::Permission,
    checks: Vec<ganger_store::CheckRun>,
    keys: std::collections::BTreeMap<String, PathBuf>,
    loaded: Vec<LoadedKey>,
    place: Place,
    sandbox: sandboxing::TaskSandbox,
    owner: String,
}

/// Checks everything about a start that can be refused before the store is opened, and makes
/// nothing: the slug, the text, the limits, the agent, its model and program, the keys, the
/// worktree and branch, the sandbox.
fn admit(ws: &Workspace, options: &StartOptions) -> Result<Admitted> {
    if options.dotted {
        crate::base::slug::check_task_name(&options.slug)?;
    } else {
        check_slug(&options.slug)?;
    }
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    let prompt = read_brief(brief)?;
    crate::task::admission::check_limit(options.until_green)?;
    let labels = crate::task::labels::parse_labels(&options.labels)?;
    check_budget(&options.budget)?;
    let agent = options
        .agent
        .clone()
        .unwrap_or_else(|| ws.config.defaults.agent.clone());
    let adapter = known_adapter(ws, &agent)?;
    let model = options
        .model
        .clone()
        .or_else(|| ws.config.defaults.model.clone());
    check_model_name(adapter, model.as_deref())?;
    let permission = options.permission.unwrap_or(ws.config.defaults.permission);
    let checks = crate::evidence::checks::planned(&ws.config, &options.checks, permission)?;
    let keys = parse_key_args(&options.keys)?;
    let loaded = load_keys(&ws.config, &keys)?;
    crate::round::gateway::check(ws, adapter, model.as_deref(), &loaded)?;
    let program = agent_env::resolve_program(adapter, &ws.config)?;
    let mut place = place(ws, options)?;
    agent_env::check_plan(
        adapter,
        &ws.config,
        &prompt,
        None,
        place.path(),
        &ws.state.agent_dir(adapter.name()),
    )?;
    let sandbox = sandboxing::choose(ws, options.sandbox, options.network, &options.rw)?;
    sandboxing::allow_list(ws, &options.allow)?;
    sandboxing::check_ready(ws, &sandbox, &agent)?;
    if let Place::Planned(planned) = &mut place {
        // A sandboxed task's tree may be an overlay on the cached base (docs/trees.md).
        planned.sandboxed = sandbox.isolates();
        planned.as_the_user = sandbox.runs_as_the_user();
    }
    match &place {
        Place::Given { path, .. } => sandboxing::check_round(ws, &sandbox, path)?,
        // Without a store there is no start of this slug to settle first.
        Place::Planned(planned) if !ws.has_state() => {
            task_worktree::refuse_existing(ws, planned)?;
        }
        Place::Planned(_) => {}
    }
    Ok(Admitted {
        slug: options.slug.clone(),
        prompt,
        labels,
        agent,
        adapter,
        program,
        model,
        permission,
        checks,
        keys,
        loaded,
        place,
        sandbox,
        owner: commander(options.commander.as_deref()),
    })
}

/// The worktree of a new task: planned (its branch and base checked before git sees them,
/// and before `.ganger/` is made) or the one given, which keeps its own branch.
fn place(ws: &Workspace, options: &StartOptions) -> Result<Place> {
    let given = options
        .worktree
        .as_deref()
        .map(|path| check_given_worktree(ws, path))
        .transpose()?;
    let Some((path, branch)) = given else {
        return Ok(Place::Planned(task_worktree::plan(
            ws,
            &options.slug,
            options.base.as_deref(),
            options.branch.as_deref(),
        )?));
    };
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
    Ok(Place::Given { path, branch, base })
}

impl Admitted {
    /// What only the store can refuse: a fleet that has spent its budget, a slug taken, a
    /// model the agent's program must be asked about.
    fn check_with_store(
        &self,
        ws: &Workspace,
        store: &dyn Backend,
        options: &StartOptions,
        notices: &mut dyn Notices,
    ) -> Result<()> {
        let slug = &self.slug;
        if let Some(fleet) = &options.fleet
            && let Some(why) = crate::evidence::budget::fleet_exhausted(store, fleet)
        {
            return Err(EngineError::invalid(format!(
                "task {slug} of fleet {fleet} was not started: {why}"
            )));
        }
        // An attempt or judge of a fleet file's race: the race's own budget.
        if let Some(why) =
            crate::evidence::budget::race_exhausted(store, slug, options.fleet.as_deref())
        {
            return Err(EngineError::invalid(format!(
                "task {slug} was not started: {why}"
            )));
        }
        if store.race(slug)?.is_some() {
            return Err(EngineError::conflict(format!(
                "slug {slug} is a race's; see `ganger status {slug}`"
            )));
        }
        if store.task(slug)?.is_some() {
            return Err(
                EngineError::conflict(format!("task {slug} exists already")).hint(format!(
                    "send the next round with `ganger fix {slug}`, or see `ganger status {slug}`"
                )),
            );
        }
        require_model(
            ws,
            self.adapter,
            &self.program,
            self.model.as_deref(),
            notices,
        )?;
        warn_untested(ws, self.adapter, &self.program, notices);
        Ok(())
    }
}

/// Makes the task's worktree (unless it was given) and writes the task with its first round.
/// A refused write takes back the worktree and branch just made, so nothing is left half way.
fn record(
    ws: &Workspace,
    admitted: &Admitted,
    options: &StartOptions,
    store: &mut dyn Backend,
    new_round: &NewRound,
    notices: &mut dyn Notices,
) -> Result<(ganger_store::Task, ganger_store::Round)> {
    let slug = &admitted.slug;
    let claim = &new_round.claim;
    let (worktree, branch, base, made) = match &admitted.place {
        Place::Planned(planned) => {
            // Recorded as under way before the worktree is made: a start killed from here
            // on leaves a record that `start` again or `clean` settles.
            task_worktree::begin(ws, store, planned, slug, &admitted.owner, claim, notices)?;
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
    let sandbox = &admitted.sandbox;
    let new_task = NewTask {
        slug: slug.clone(),
        agent: admitted.agent.clone(),
        model: admitted.model.clone(),
        base,
        base_commit,
        branch,
        worktree,
        worktree_made: made,
        owner: admitted.owner.clone(),
        keys: admitted.keys.clone(),
        timeout_ms: options.timeout.map(|d| d.as_millis() as u64),
        stall_ms: options.stall.map(|d| d.as_millis() as u64),
        permission: admitted.permission,
        sandbox: sandbox.kind(),
        network: sandbox.network,
        rw: sandbox.rw.clone(),
        allow: options.allow.clone(),
        warm: options.warm,
        labels: admitted.labels.clone(),
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
        crate::round::launch::recorded_anyway(&*store, &error, slug, &new_round.token)
    {
        return Ok(created);
    }
    if let Place::Planned(planned) = &admitted.place {
        task_worktree::abandon(ws, store, planned, slug, claim);
    }
    Err(error)
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

impl Place {
    fn path(&self) -> &std::path::Path {
        match self {
            Place::Planned(planned) => &planned.path,
            Place::Given { path, .. } => path,
        }
    }
}

/// Refuses a budget that could never be spent: not a positive, finite amount.
pub(crate) fn check_budget(budget: &ganger_store::Budget) -> Result<()> {
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
