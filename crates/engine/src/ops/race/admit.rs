//! What a race must pass before anything is made: its slug, its brief, its attempts (each
//! agent known and installed, each model's name), `--until-green`, the budget, and
//! `--first-green` only with checks to pass. Bad input is refused here, exit 2, with nothing
//! in the store or on disk.

use super::RaceOptions;
use crate::base::brief::read_brief;
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::base::slug::check_slug;
use crate::env::agent_env;
use crate::env::workspace::Workspace;
use crate::task::admission::{check_model_name, known_adapter, require_model};
use crate::task::race_spec::{self as spec, AttemptSpec};

/// A race nothing refused.
#[derive(Debug, Clone)]
pub(super) struct Admitted {
    pub attempts: Vec<AttemptSpec>,
    /// The brief's text.
    pub prompt: String,
    pub owner: String,
}

pub(super) fn admit(
    ws: &Workspace,
    options: &RaceOptions,
    queue: bool,
    notices: &mut dyn Notices,
) -> Result<Admitted> {
    check_slug(&options.slug)?;
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the race's brief with --brief FILE or --message TEXT")
    })?;
    let prompt = read_brief(brief)?;
    let attempts = spec::parse(&options.attempts)?;
    crate::task::admission::check_limit(options.start.until_green)?;
    if options.max == Some(0) {
        return Err(EngineError::invalid(
            "--max 0 would never start an attempt; give at least 1",
        ));
    }
    if queue && (options.max.is_some() || options.start.until_green.is_some()) {
        return Err(EngineError::invalid(
            "--queue takes no --max or --until-green: `ganger serve` starts the queued attempts \
             under its own limits, one round each",
        ));
    }
    crate::task::start::check_budget(&options.start.budget)?;
    if options.start.worktree.is_some() || options.start.branch.is_some() {
        return Err(EngineError::invalid(
            "a race's attempts each get a worktree and branch of their own: no --worktree or --branch",
        ));
    }
    let permission = options
        .start
        .permission
        .unwrap_or(ws.config.defaults.permission);
    let checks = crate::evidence::checks::planned(&ws.config, &options.start.checks, permission)?;
    if options.first_green && checks.is_empty() {
        return Err(EngineError::invalid(
            "--first-green needs checks to pass: none are configured ([[checks]] in ganger.toml) or given (--check CMD)",
        ));
    }
    refuse_taken(ws, options)?;
    // Every agent known and installed, every model's name sound, before any model list is
    // asked for (that may write the list's cache); then each model, as `start` checks it (a
    // model the agent's list lacks is exit 3).
    let mut distinct: Vec<&AttemptSpec> = Vec::new();
    for attempt in &attempts {
        if !distinct.contains(&attempt) {
            distinct.push(attempt);
        }
    }
    // The judge's agent too, unless nothing will be judged.
    if !options.first_green {
        crate::task::race_judge::check_judge(ws, "the race's judge")?;
    }
    let mut programs = Vec::new();
    for attempt in &distinct {
        let adapter = known_adapter(ws, &attempt.agent)?;
        check_model_name(adapter, attempt.model.as_deref())?;
        programs.push((adapter, agent_env::resolve_program(adapter, &ws.config)?));
    }
    for (attempt, (adapter, program)) in distinct.iter().zip(&programs) {
        let model = attempt
            .model
            .clone()
            .or_else(|| ws.config.defaults.model.clone());
        require_model(ws, *adapter, program, model.as_deref(), notices)?;
    }
    Ok(Admitted {
        attempts,
        prompt,
        owner: commander(options.start.commander.as_deref()),
    })
}

/// A slug a task uses (or a race of other attempts) is refused before any model is asked for;
/// the store's check when the race is recorded is the one that holds under races.
fn refuse_taken(ws: &Workspace, options: &RaceOptions) -> Result<()> {
    let Some(store) = ws.existing_store()? else {
        return Ok(());
    };
    let slug = &options.slug;
    if let Some(race) = store.race(slug)? {
        if race.spec != options.attempts {
            return Err(super::other_attempts(slug, &race.spec));
        }
        return Ok(());
    }
    if store.task(slug)?.is_some() || store.task(&super::attempt_slug(slug, 1))?.is_some() {
        return Err(super::slug_taken(slug));
    }
    Ok(())
}
