//! The attempts of a race: each started once (an attempt whose task exists is never started
//! again: the store's unique slug is the guard, so two drivers cannot both start it), detached,
//! as `start` starts a task, with the race's checks, `--until-green` and the race's fleet (its
//! budget), at most `--max` of them working at once (the next starts as one ends); then
//! followed until every one has ended, or, with `--first-green`, until the first passes, when
//! the others are cancelled (and those not started yet never start). With `--queue` an
//! attempt is queued instead of started (`queued.rs`), and the scheduler starts it. Between
//! two looks the driver waits for the end of a round or fix loop it saw working (`wake.rs`).

use super::admit::Admitted;
use super::at_once::at_once;
use super::queued;
use super::state::{State, state};
use super::wake::Wake;
use super::{RaceOptions, attempt_slug, say};
use crate::base::brief::Brief;
use crate::base::error::{ErrorKind, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::task::race_request::Request;
use crate::task::start::{StartOptions, start};
use ganger_store::RaceRecord;
use std::collections::HashMap;

/// Starts the attempts not started yet (at most `--max` working at once) and follows them to
/// their end; returns the winner `--first-green` chose, if it did.
pub(super) fn run(
    ws: &Workspace,
    race: &RaceRecord,
    admitted: &Admitted,
    options: &RaceOptions,
    notices: &mut dyn Notices,
) -> Result<Option<u32>> {
    let count = admitted.attempts.len() as u32;
    let mut store = ws.open_store()?;
    let mut told = vec![false; count as usize];
    // Attempts the race's spent budget kept from starting.
    let mut kept_out = vec![false; count as usize];
    let mut wake = Wake::new();
    let queue = Request::queued(race);
    loop {
        let mut working = 0;
        let mut waiting = Vec::new();
        let mut first_passed = None;
        let queued = match queue {
            true => queued::items(&*store, race)?,
            false => HashMap::new(),
        };
        for number in 1..=count {
            let slug = attempt_slug(&race.slug, number);
            let Some(task) = store.task(&slug)? else {
                let out = &mut kept_out[number as usize - 1];
                match queued.get(&slug) {
                    // Waiting for the scheduler to start it.
                    Some(item) if item.state.is_open() => working += 1,
                    Some(item) if !std::mem::replace(out, true) => {
                        let why = item.reason.as_deref().unwrap_or(item.state.as_str());
                        say(
                            notices,
                            &race.slug,
                            format!("attempt {number} not started: {why}"),
                        );
                    }
                    None if !*out => waiting.push(number),
                    _ => {}
                }
                continue;
            };
            let now = state(&mut *store, ws, &task, &mut wake, notices)?;
            if now == State::Working {
                working += 1;
                continue;
            }
            if now == State::Passed && first_passed.is_none() {
                first_passed = Some(number);
            }
            if !std::mem::replace(&mut told[number as usize - 1], true) {
                let how = if now == State::Passed {
                    "passed its checks"
                } else {
                    "ended without passing"
                };
                say(notices, &race.slug, format!("attempt {number} {how}"));
            }
        }
        if options.first_green
            && let Some(winner) = first_passed
        {
            super::cancel::cancel_others(ws, race, queue, winner, notices)?;
            return Ok(Some(winner));
        }
        let room = options
            .max
            .map_or(usize::MAX, |max| max.saturating_sub(working) as usize);
        let starting: Vec<u32> = waiting.iter().take(room).copied().collect();
        let started = !starting.is_empty();
        if queue {
            for number in starting {
                let attempt = (number, &admitted.attempts[number as usize - 1]);
                let prompt = &admitted.prompt;
                queued::queue_attempt(&mut *store, race, attempt, prompt, options, notices)?;
            }
        } else if options.first_green {
            // One after another, looking between two starts: an attempt that passed while
            // the others were being started wins at once, and those not started yet never
            // start (their spend is nothing). The starts wait for one another anyway: each
            // registers its worktree under the repository's worktree lock.
            for number in starting {
                let began = start_attempt(ws, race, admitted, options, number, notices)?;
                kept_out[number as usize - 1] = !began;
                if passed_already(&mut *store, ws, race, &mut wake, notices)? {
                    break;
                }
            }
        } else {
            for (number, began) in start_all(ws, race, admitted, options, &starting, notices)? {
                kept_out[number as usize - 1] = !began;
            }
        }
        if working == 0 && waiting.iter().all(|n| kept_out[*n as usize - 1]) {
            return Ok(None);
        }
        // An attempt just started is looked at at once, so that its round is watched.
        if !started {
            wake.wait();
        }
    }
}

/// Whether an attempt of `race` has passed its checks already (`--first-green`'s look between
/// two starts).
fn passed_already(
    store: &mut dyn ganger_store::Backend,
    ws: &Workspace,
    race: &RaceRecord,
    wake: &mut Wake,
    notices: &mut dyn Notices,
) -> Result<bool> {
    for number in 1..=race.attempts {
        let Some(task) = store.task(&attempt_slug(&race.slug, number))? else {
            continue;
        };
        if state(store, ws, &task, wake, notices)? == State::Passed {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Starts the attempts `numbers` at once, each on a thread of its own (a start is mostly git
/// making a worktree and a host being spawned), their notices told in order once all have
/// started; whether each started ([`start_attempt`]). The first error is returned after every
/// start has ended.
fn start_all(
    ws: &Workspace,
    race: &RaceRecord,
    admitted: &Admitted,
    options: &RaceOptions,
    numbers: &[u32],
    notices: &mut dyn Notices,
) -> Result<Vec<(u32, bool)>> {
    at_once(numbers, notices, |number, tell| {
        start_attempt(ws, race, admitted, options, number, tell)
    })
}

/// Starts attempt `number` as `start` starts a task, detached; one that another driver of the
/// same race started meanwhile is left to run. False when the race's budget is spent, which
/// keeps the attempt from starting.
fn start_attempt(
    ws: &Workspace,
    race: &RaceRecord,
    admitted: &Admitted,
    options: &RaceOptions,
    number: u32,
    notices: &mut dyn Notices,
) -> Result<bool> {
    let attempt = &admitted.attempts[number as usize - 1];
    let slug = attempt_slug(&race.slug, number);
    let start_options = StartOptions {
        slug: slug.clone(),
        brief: Some(Brief::Message(admitted.prompt.clone())),
        agent: Some(attempt.agent.clone()),
        model: attempt.model.clone(),
        detach: true,
        commander: Some(race.owner.clone()),
        budget: ganger_store::Budget::default(),
        fleet: Some(Request::fleet_of(race)),
        dotted: true,
        ..options.start.clone()
    };
    match start(ws, start_options, notices) {
        Ok(_) => say(
            notices,
            &race.slug,
            format!(
                "attempt {number} ({}, {}) started as {slug}",
                attempt.agent,
                attempt.model.as_deref().unwrap_or("its default model")
            ),
        ),
        Err(e) if e.kind == ErrorKind::Conflict => {}
        Err(e)
            if e.kind == ErrorKind::Invalid
                && crate::evidence::budget::fleet_exhausted(
                    &*ws.open_store()?,
                    &Request::fleet_of(race),
                )
                .is_some() =>
        {
            say(
                notices,
                &race.slug,
                format!("attempt {number} not started: {}", e.message),
            );
            return Ok(false);
        }
        Err(e) => return Err(e),
    }
    Ok(true)
}
