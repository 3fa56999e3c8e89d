//! A race as a fleet file's task (`attempts = "SPEC"`, docs/races.md): its attempts are the
//! fleet's tasks `SLUG.1`..`SLUG.N`, queued by the submission under the file's fleet (so that
//! `fleet run` drains them and the fleet's limits, budget and `after` hold them), and the race
//! itself is recorded in the store (its request says `queue` and the fleet) and driven by a
//! detached `ganger race-host SLUG`, which follows the attempts and picks the winner. A
//! second submission finds the race: a race that ended is finished, a running one gets a
//! driver again (one that finds a live driver leaves it the race).

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::race_request::Request;
use crate::task::race_spec::{self, AttemptSpec};
use ganger_store::{Backend, NewRace, RaceRecord, StoreError};

/// A fleet task that is a race.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRace {
    /// The SPEC as written.
    pub spec: String,
    pub first_green: bool,
    /// Its attempts, each a task of the fleet: its slug and its start's options.
    pub attempts: Vec<FleetAttempt>,
}

/// One attempt of a fleet's race.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetAttempt {
    pub slug: String,
    pub options: serde_json::Value,
}

/// What a race task may not give, by the keys the file gave it: `agent`, `model` (the SPEC
/// names them) and `land` (not built).
pub(super) struct Given {
    pub agent: bool,
    pub model: bool,
    pub land: bool,
}

/// The race of task `slug`, whose options (as a plain task's) are `options`, with the SPEC
/// `spec`; bad input is refused with the task's name.
pub(super) fn race_of(
    slug: &str,
    spec: &str,
    first_green: bool,
    options: &serde_json::Value,
    given: Given,
) -> Result<FleetRace> {
    let attempts = race_spec::parse(spec)
        .map_err(|e| EngineError::invalid(format!("task {slug}: {}", e.message)))?;
    let refused = [
        (given.agent, "agent"),
        (given.model, "model"),
        (given.land, "land"),
    ];
    if let Some((_, key)) = refused.iter().find(|(given, _)| *given) {
        return Err(EngineError::invalid(format!(
            "task {slug}: a race (attempts = ...) takes no {key}: its SPEC names each attempt's \
             agent and model, and a race does not land"
        )));
    }
    let attempts = attempts
        .iter()
        .enumerate()
        .map(|(index, attempt)| FleetAttempt {
            slug: format!("{slug}.{}", index + 1),
            options: attempt_options(options, attempt),
        })
        .collect();
    Ok(FleetRace {
        spec: spec.to_owned(),
        first_green,
        attempts,
    })
}

/// An attempt's start: the race task's options with the attempt's agent and model, and no
/// budget of its own (the race task's `budget` is the whole race's, kept with the race).
fn attempt_options(options: &serde_json::Value, attempt: &AttemptSpec) -> serde_json::Value {
    let mut options = options.clone();
    options["agent"] = attempt.agent.clone().into();
    options["model"] = attempt.model.clone().into();
    options["budget_usd"] = serde_json::Value::Null;
    options["budget_tokens"] = serde_json::Value::Null;
    options["dotted"] = true.into();
    options
}

/// Refuses, before anything is written, a race whose attempts' agents are not known, whose
/// judge could not run (its agent unknown or not installed), a `first_green` without checks, and a slug a task or a race of another SPEC holds.
pub(super) fn check(
    ws: &Workspace,
    store: Option<&dyn Backend>,
    slug: &str,
    race: &FleetRace,
    options: &serde_json::Value,
) -> Result<()> {
    for attempt in &race.attempts {
        if let Some(agent) = attempt.options["agent"].as_str() {
            crate::task::admission::known_adapter(ws, agent)?;
        }
    }
    // The judge too, unless nothing will be judged: the driver runs in the background, where
    // a judge that cannot run would only show in its log.
    if !race.first_green {
        crate::task::race_judge::check_judge(ws, &format!("task {slug}: the race's judge"))?;
    }
    if race.first_green {
        let checks: Vec<String> = serde_json::from_value(options["checks"].clone())
            .map_err(|e| EngineError::invalid(format!("task {slug}: checks: {e}")))?;
        let permission = ws.config.defaults.permission;
        if crate::evidence::checks::planned(&ws.config, &checks, permission)?.is_empty() {
            return Err(EngineError::invalid(format!(
                "task {slug}: first_green needs checks to pass: none are configured \
                 ([[checks]] in ganger.toml) or given (checks = [...])"
            )));
        }
    }
    let Some(store) = store else {
        return Ok(());
    };
    match store.race(slug)? {
        Some(found) if found.spec != race.spec => Err(EngineError::conflict(format!(
            "task {slug}: race {slug} exists with other attempts ({})",
            found.spec
        ))),
        Some(_) => Ok(()),
        None if store.task(slug)?.is_some() => Err(EngineError::conflict(format!(
            "task {slug}: the slug is a task's, not a race's"
        ))),
        None => Ok(()),
    }
}

/// The race recorded now (its attempts queued under `fleet`), or as another submission
/// recorded it.
pub(super) fn record(
    store: &mut dyn Backend,
    fleet: &str,
    slug: &str,
    (race, prompt, options): (&FleetRace, &str, &serde_json::Value),
    owner: &str,
) -> Result<RaceRecord> {
    let text = |key: &str| options[key].as_str().map(str::to_owned);
    let request = Request {
        brief: prompt.to_owned(),
        first_green: race.first_green,
        queue: true,
        fleet: Some(fleet.to_owned()),
        checks: serde_json::from_value(options["checks"].clone()).unwrap_or_default(),
        sandbox: text("sandbox").and_then(|s| s.parse().ok()),
        base: text("base"),
        timeout_ms: options["timeout_ms"].as_u64(),
        budget_usd: options["budget_usd"].as_f64(),
        budget_tokens: options["budget_tokens"].as_u64(),
        ..Request::default()
    };
    let new = NewRace {
        slug: slug.to_owned(),
        owner: owner.to_owned(),
        spec: race.spec.clone(),
        attempts: race.attempts.len() as u32,
        request: request.to_json()?,
    };
    match store.create_race(&new) {
        Ok(recorded) => {
            // The whole race's budget, attempts and judges together (`race --budget-*`).
            if request.budget_usd.is_some() || request.budget_tokens.is_some() {
                let fleet = crate::task::race_request::race_fleet(slug);
                store.set_fleet_budget(&fleet, request.budget_usd, request.budget_tokens)?;
            }
            Ok(recorded)
        }
        Err(StoreError::SlugTaken(taken)) => store.race(slug)?.ok_or_else(|| {
            EngineError::conflict(format!("task {slug}: the slug {taken} is a task's"))
        }),
        Err(other) => Err(other.into()),
    }
}

/// Starts the driver of each running race `races` (a `ganger race-host` that finds a live
/// driver leaves the race to it).
pub(super) fn drive(ws: &Workspace, races: &[String]) -> Result<()> {
    for slug in races {
        crate::task::race_driver::spawn_race_driver(ws, slug)?;
    }
    Ok(())
}
