//! One fix round of a task, in the same session: who may send it, what the task lets in, the
//! checks and keys it runs with; then the round is begun (recorded as running in the store,
//! which refuses it while another runs or the task is being cleaned) and launched. A model or
//! keys given here hold for this round and the later ones; they are stored in the same
//! transaction that starts the round, so a round refused because one is running changes
//! nothing.

use crate::base::brief::{Brief, read_brief};
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::agent_env;
use crate::env::keys::{LoadedKey, load_keys, parse_key_args};
use crate::env::workspace::Workspace;
use crate::round::launch::{Begin, Launched, begin};
use crate::task::admission::{known_adapter, require_model, warn_untested};
use crate::task::lookup::{busy, find_task, settled_task};
use ganger_store::{Backend, NewRound, RoundKind, StoreError, Task, TaskUpdate};

/// What `ganger fix` was asked.
#[derive(Debug, Clone, Default)]
pub struct FixOptions {
    pub slug: String,
    pub brief: Option<Brief>,
    pub model: Option<String>,
    pub keys: Vec<String>,
    pub commander: Option<String>,
    pub detach: bool,
    /// One-off checks (`--check CMD`), run after the configured ones.
    pub checks: Vec<String>,
    /// `--until-green N`: fix rounds sent while checks fail.
    pub until_green: Option<u32>,
    /// Cancel a running round first and send this one into the same session, instead of
    /// being refused (the owner only).
    pub interrupt: bool,
}

/// Runs one round of a task (no `--until-green` loop after it) under `generation`, the
/// task's generation when the round was asked for (a queued round's); `None`: the generation
/// it has now. The store refuses the round (`Stale`) when an ownership change has ended that
/// generation.
pub(crate) fn send_fix_round(
    ws: &Workspace,
    options: FixOptions,
    generation: Option<i64>,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    let (store, task) = settled_task(ws, &options.slug, notices)?;
    let sender = commander(options.commander.as_deref());
    require_inbound(&*store, &task, &sender)?;
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    if let Some(why) = crate::evidence::budget::exhausted(&*store, &task) {
        return Err(EngineError::invalid(format!(
            "task {} has spent its budget: {why}",
            task.slug
        ))
        .hint("no new round starts on a spent budget; start a new task to go on"));
    }
    let brief_text = read_brief(brief)?;
    let permission = task.permission;
    let checks = crate::evidence::checks::planned(&ws.config, &options.checks, permission)?;
    crate::task::admission::check_limit(options.until_green)?;
    let keys = parse_key_args(&options.keys)?;
    crate::evidence::task_worktree::check_task_worktree(ws, &task)?;
    let adapter = known_adapter(ws, &task.agent)?;
    crate::task::admission::check_model_name(adapter, options.model.as_deref())?;
    let program = agent_env::resolve_program(adapter, &ws.config)?;
    let sandbox = crate::env::sandboxing::TaskSandbox::of(ws, &task)?;
    crate::env::sandboxing::check_round(ws, &sandbox, &task.worktree)?;
    crate::env::sandboxing::check_ready(ws, &sandbox, &task.agent)?;
    let (mut store, task) = settle_running(ws, store, task, &sender, options.interrupt, notices)?;
    if options.model.is_some() {
        require_model(ws, adapter, &program, options.model.as_deref(), notices)?;
    }
    warn_untested(ws, adapter, &program, notices);
    let model = options.model.clone().or_else(|| task.model.clone());
    let mut all_keys = task.keys.clone();
    all_keys.extend(keys.clone());
    let loaded = load_keys(&ws.config, &all_keys)?;
    crate::round::gateway::check(ws, adapter, model.as_deref(), &loaded)?;
    let commander = sender;
    // A task whose earlier rounds never named a session: the session is looked for, else
    // the earlier prompts go first; the brief is never lost.
    let continued = crate::round::lost_session::continue_task(ws, &*store, &task, brief_text)?;
    let prompt = continued.prompt;
    // A lost session is forgotten by the task, so that the round's new one becomes its own.
    let new_session = continued.session.is_none() && task.session.is_some();
    // Between the ownership check above and the store's own check as the round begins.
    crate::base::faults::pause("before-begin-round");
    let update = TaskUpdate {
        model: options.model.clone(),
        keys,
        new_session,
    };
    let round = Begin {
        kind: RoundKind::Fix,
        model,
        session_before: continued.session,
        commander,
        checks,
        generation: Some(generation.unwrap_or(task.generation)),
        prompt,
        redactor: LoadedKey::redactor(&ws.store, &loaded),
        detach: options.detach,
        until_green: options.until_green,
    };
    let record = |store: &mut dyn Backend, new_round: &NewRound, _: &mut dyn Notices| {
        let round = match begin_round(store, task.id, new_round, &update) {
            Ok(round) => round,
            // A commit whose answer was lost (launch::recorded_anyway).
            Err(error) => {
                match crate::round::launch::recorded_anyway(
                    &*store,
                    &error,
                    &task.slug,
                    &new_round.token,
                ) {
                    Some((_, round)) => round,
                    None => return Err(error),
                }
            }
        };
        Ok((find_task(&*store, &task.slug)?, round))
    };
    begin(ws, &mut *store, round, record, notices)
}

/// Who may send the task a round, and whether the task lets one in now.
fn require_inbound(store: &dyn Backend, task: &Task, sender: &str) -> Result<()> {
    crate::task::rules::require_admitted(task, sender, "send rounds to")?;
    crate::task::rules::refuse_attached(store, task)?;
    match crate::task::rules::Inbound::of(task) {
        crate::task::rules::Inbound::Refuse => Err(crate::task::rules::refused(task)),
        crate::task::rules::Inbound::Hold => Err(crate::task::rules::held(task)),
        crate::task::rules::Inbound::Accept => Ok(()),
    }
}

/// The task once no round of it runs: a running round refuses this one, unless `interrupt`
/// (the owner's) cancels it first; an ownership change meanwhile makes the round stale.
fn settle_running(
    ws: &Workspace,
    mut store: Box<dyn Backend>,
    task: Task,
    sender: &str,
    interrupt: bool,
    notices: &mut dyn Notices,
) -> Result<(Box<dyn Backend>, Task)> {
    let running = store
        .round(task.id, None)?
        .filter(|r| r.status == ganger_events::RoundStatus::Running);
    match running {
        Some(_) if interrupt => {
            crate::task::rules::require_owner(&task, sender, "interrupt")?;
            drop(store);
            crate::task::cancel::cancel(ws, &task.slug, Some(sender), notices)?;
            store = ws.open_store()?;
            let now = find_task(&*store, &task.slug)?;
            if now.generation != task.generation {
                return Err(ganger_store::StoreError::Stale {
                    slug: now.slug,
                    sent: task.generation,
                    now: now.generation,
                    owner: now.owner,
                }
                .into());
            }
            Ok((store, now))
        }
        Some(running) => Err(busy(
            &task.slug,
            running.number,
            running.host.map(|h| h.pid),
        )),
        None => Ok((store, task)),
    }
}

/// Records the round as running; a clean of the task whose command died is settled first, a
/// live one refuses the round (the two exclude each other in the store).
fn begin_round(
    store: &mut dyn Backend,
    task_id: i64,
    round: &NewRound,
    update: &TaskUpdate,
) -> Result<ganger_store::Round> {
    let mut settled = false;
    loop {
        return match store.begin_round(task_id, round, update) {
            Ok(round) => Ok(round),
            Err(StoreError::Busy {
                slug,
                number,
                host_pid,
            }) => Err(busy(&slug, number, host_pid)),
            Err(StoreError::BeingCleaned { slug, claim }) => {
                if !settled && !store.is_alive(&claim)? {
                    store.end_clean(task_id, &claim)?;
                    settled = true;
                    continue;
                }
                Err(EngineError::invalid(format!(
                    "task {slug} is being cleaned (`ganger clean`); no round begins"
                )))
            }
            Err(other) => Err(other.into()),
        };
    }
}
