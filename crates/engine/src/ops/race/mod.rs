//! `ganger race`: one brief, several attempts (agents and models) at once, and a winner chosen
//! on evidence. Each attempt is a task of its own (`SLUG.1`..`SLUG.N`, started as `start`
//! starts one, detached, with the race's checks and `--until-green`); the race's budget is a
//! fleet's (`race:SLUG`), which the round hosts hold every attempt to. The winner is chosen by
//! a fixed rule (`decide.rs`): checks first, then a tournament of pairwise reviews by the
//! read-only `judge` role (each pair twice, sides swapped), then diff size, cost, finish.
//!
//! Everything is in the store, so a driver killed at any point resumes with the same command:
//! an attempt whose task exists is not started again, a recorded verdict is not asked again,
//! and a race that ended keeps its end (the store ends a race once).

mod admit;
mod at_once;
mod attempts;
mod cancel;
mod decide;
mod detach;
mod evidence;
mod graft;
mod judge;
mod judge_answer;
mod judge_queued;
mod queued;
mod report;
mod request;
mod state;
mod wake;

pub use crate::task::race_request::race_fleet;
pub use crate::task::race_spec::{AttemptSpec, MAX_ATTEMPTS};
pub use decide::{Decision, PairOutcome, Rule, Side, Standing};
pub use detach::{race_detached, race_resume};
pub use evidence::Work;
pub use graft::graft_request;
pub use report::{AttemptRow, RACE_SCHEMA, RaceReport, VerdictRow};

use crate::base::brief::Brief;
use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::task::race_request::Request;
use crate::task::start::StartOptions;
use ganger_store::{NewRace, RaceEnd, RaceRecord, StoreError};

/// What `ganger race` was asked.
#[derive(Debug, Clone, Default)]
pub struct RaceOptions {
    pub slug: String,
    pub brief: Option<Brief>,
    /// The attempts: `AGENT[:MODEL][*COUNT],...`.
    pub attempts: String,
    /// The first attempt to pass its checks wins at once; the others are cancelled.
    pub first_green: bool,
    /// At most this many attempts working at once (`None`: all of them).
    pub max: Option<u32>,
    /// What every attempt's start takes (checks, `--until-green`, base, sandbox, limits...);
    /// its slug, agent, model and brief are the race's, and its budget is the whole race's.
    pub start: StartOptions,
}

/// How a race is driven, beside what it was asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Driving {
    /// By a detached driver (`ganger race-host`): the report as it stands is returned at once.
    pub detach: bool,
    /// The attempts go through the scheduler's queue (`--queue`: `ganger serve` starts them,
    /// under its limits) instead of being started by the race. Recorded with the race's
    /// request, so that a resumed driver queues as the first one did.
    pub queue: bool,
}

/// Runs the race (or resumes it) as `driving` says: to its end, or in the background.
pub fn race_driven(
    ws: &Workspace,
    options: RaceOptions,
    driving: Driving,
    notices: &mut dyn Notices,
) -> Result<RaceReport> {
    if driving.detach {
        return detach::detached(ws, options, driving.queue, notices);
    }
    let admitted = admit::admit(ws, &options, driving.queue, notices)?;
    let race = record(ws, &options, driving.queue, &admitted)?;
    drive(ws, &options, race, &admitted, notices)
}

/// The task of attempt `number`.
pub fn attempt_slug(slug: &str, number: u32) -> String {
    format!("{slug}.{number}")
}

/// Runs the race `options.slug` (or resumes it) to its end and returns its report.
pub fn race(ws: &Workspace, options: RaceOptions, notices: &mut dyn Notices) -> Result<RaceReport> {
    race_driven(ws, options, Driving::default(), notices)
}

/// Drives the recorded race to its end (or reports the end it had).
fn drive(
    ws: &Workspace,
    options: &RaceOptions,
    race: RaceRecord,
    admitted: &admit::Admitted,
    notices: &mut dyn Notices,
) -> Result<RaceReport> {
    if race.status != "running" {
        say(
            notices,
            &race.slug,
            "ended already; its report follows".into(),
        );
        return report::build(ws, &race);
    }
    let first_green = attempts::run(ws, &race, admitted, options, notices)?;
    let entrants = evidence::gather(ws, &race)?;
    let decision = judge::decide_with_reviews(ws, &race, &entrants, first_green, notices)?;
    let ended = end(ws, &race, &entrants, &decision)?;
    report::build_from(ws, &ended, entrants)
}

/// The report of the race `slug`, if there is one.
pub fn race_report(ws: &Workspace, slug: &str) -> Result<Option<RaceReport>> {
    let Some(store) = ws.existing_store()? else {
        return Ok(None);
    };
    match store.race(slug)? {
        Some(race) => report::build(ws, &race).map(Some),
        None => Ok(None),
    }
}

/// The task `ganger merge SLUG` merges when SLUG is a race: its winner's.
pub fn winner_task(ws: &Workspace, slug: &str) -> Result<Option<String>> {
    let Some(store) = ws.existing_store()? else {
        return Ok(None);
    };
    let Some(race) = store.race(slug)? else {
        return Ok(None);
    };
    match race.winner {
        Some(number) => Ok(Some(attempt_slug(slug, number))),
        None => Err(EngineError::invalid(format!(
            "race {slug} has no winner ({}); see `ganger status {slug}`",
            race.status
        ))),
    }
}

/// The tasks `ganger clean SLUG` removes when SLUG is a race that has ended: every attempt
/// but the winner, and the judges (their work stays in `refs/ganger/`); `None` when SLUG is
/// no race.
pub fn race_losers(ws: &Workspace, slug: &str) -> Result<Option<Vec<String>>> {
    let Some(store) = ws.existing_store()? else {
        return Ok(None);
    };
    let Some(race) = store.race(slug)? else {
        return Ok(None);
    };
    if race.status == "running" {
        return Err(EngineError::invalid(format!(
            "race {slug} is still running; clean it once it has ended"
        ))
        .hint(format!("see `ganger status {slug}`")));
    }
    let mut losers: Vec<String> = (1..=race.attempts)
        .filter(|n| Some(*n) != race.winner)
        .map(|n| attempt_slug(slug, n))
        .collect();
    for verdict in store.race_verdicts(slug)? {
        losers.push(format!("{slug}.j{}v{}", verdict.a, verdict.b));
    }
    let mut found = Vec::new();
    for task in losers {
        if store.task(&task)?.is_some() {
            found.push(task);
        }
    }
    Ok(Some(found))
}

fn say(notices: &mut dyn Notices, slug: &str, message: String) {
    notices.notice(Notice::Race {
        slug: slug.to_owned(),
        message,
    });
}

/// The race in the store: recorded now, or found (the same attempts) to resume.
fn record(
    ws: &Workspace,
    options: &RaceOptions,
    queue: bool,
    admitted: &admit::Admitted,
) -> Result<RaceRecord> {
    let mut store = ws.open_store()?;
    if let Some(found) = store.race(&options.slug)? {
        if found.spec != options.attempts {
            return Err(other_attempts(&options.slug, &found.spec));
        }
        return Ok(found);
    }
    let new = NewRace {
        slug: options.slug.clone(),
        owner: admitted.owner.clone(),
        spec: options.attempts.clone(),
        attempts: admitted.attempts.len() as u32,
        request: Request {
            queue,
            ..Request::of(options, &admitted.prompt)
        }
        .to_json()?,
    };
    let race = match store.create_race(&new) {
        Ok(race) => race,
        Err(StoreError::SlugTaken(slug)) => return Err(slug_taken(&slug)),
        Err(other) => return Err(other.into()),
    };
    if options.start.budget.is_set() {
        let budget = &options.start.budget;
        store.set_fleet_budget(&race_fleet(&race.slug), budget.usd, budget.tokens)?;
    }
    Ok(race)
}

fn other_attempts(slug: &str, spec: &str) -> EngineError {
    EngineError::conflict(format!("race {slug} exists with other attempts ({spec})"))
        .hint(format!("see `ganger status {slug}`"))
}

fn slug_taken(slug: &str) -> EngineError {
    EngineError::conflict(format!(
        "slug {slug} is taken by a task (or a task {slug}.N)"
    ))
    .hint("give the race a slug of its own")
}

/// Ends the race in the store (once: a race that another driver ended keeps that end).
fn end(
    ws: &Workspace,
    race: &RaceRecord,
    entrants: &[evidence::AttemptEvidence],
    decision: &Decision,
) -> Result<RaceRecord> {
    let mut store = ws.open_store()?;
    let journal_task = decision
        .winner
        .and_then(|w| entrants.iter().find(|e| e.number == w))
        .or(entrants.first())
        .and_then(|e| e.task_id)
        .ok_or_else(|| EngineError::invalid(format!("race {} has no attempt", race.slug)))?;
    let status = if decision.winner.is_some() {
        "won"
    } else {
        "failed"
    };
    let mut detail = serde_json::to_value(decision)
        .map_err(|e| EngineError::environment("the race's decision cannot be recorded", e))?;
    detail["race"] = race.slug.clone().into();
    detail["line"] = report::decision_line(&race.slug, decision).into();
    Ok(store.end_race(&RaceEnd {
        slug: &race.slug,
        status,
        winner: decision.winner,
        decision: &detail,
        journal_task,
    })?)
}
