//! `--first-green`'s end: every other attempt still working is stopped, all at once (one not
//! started yet never starts: the driver starts them one by one and looks between two). Each
//! running round is cancelled on a thread of its own (a cancel signals the round's host and
//! waits until it has recorded the round `cancelled`, so the report that follows is true),
//! and the attempts are looked at again at once; only an attempt whose fix loop is between
//! two rounds (or a queued one being delivered) makes the driver wait a little and look
//! again, until its next round is cancelled too (a cancelled round ends the loop).

use super::at_once::at_once;
use super::state::{State, state};
use super::wake::Wake;
use super::{attempt_slug, queued, say};
use crate::base::error::{ErrorKind, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use ganger_events::RoundStatus;
use ganger_store::RaceRecord;
use std::time::Duration;

/// How often `--first-green` looks again at an attempt it could not cancel yet: one between
/// two rounds of its fix loop is cancelled as its next round starts.
const CANCEL_LOOK_EVERY: Duration = Duration::from_millis(50);

/// Stops every attempt but `winner` that is still working (see the module's note).
pub(super) fn cancel_others(
    ws: &Workspace,
    race: &RaceRecord,
    queue: bool,
    winner: u32,
    notices: &mut dyn Notices,
) -> Result<()> {
    say(
        notices,
        &race.slug,
        format!("attempt {winner} passed first (--first-green); cancelling the others"),
    );
    let mut store = ws.open_store()?;
    if !queue {
        for number in (1..=race.attempts).filter(|n| *n != winner) {
            if store.task(&attempt_slug(&race.slug, number))?.is_none() {
                let why = format!("attempt {number} not started: attempt {winner} passed first");
                say(notices, &race.slug, why);
            }
        }
    }
    // Only the looks matter here: each cancel waits for its round's end.
    let mut wake = Wake::new();
    loop {
        // Those still in the queue first: the scheduler starts none of them after this.
        let mut waiting = queue && queued::withdraw(&mut *store, race, winner)?;
        let mut running = Vec::new();
        for number in (1..=race.attempts).filter(|n| *n != winner) {
            let slug = attempt_slug(&race.slug, number);
            let Some(task) = store.task(&slug)? else {
                continue;
            };
            if state(&mut *store, ws, &task, &mut wake, notices)? != State::Working {
                continue;
            }
            match store.round(task.id, None)? {
                Some(round) if round.status == RoundStatus::Running => running.push(number),
                // Between two rounds of its fix loop: its next round is cancelled.
                _ => waiting = true,
            }
        }
        if running.is_empty() && !waiting {
            return Ok(());
        }
        let cancelled = cancel_all(ws, race, &running, notices)?;
        // (A round that would not cancel, having just ended, is looked at again after a
        // pause too, never in a busy loop.)
        if waiting || cancelled < running.len() {
            std::thread::sleep(CANCEL_LOOK_EVERY);
        }
    }
}

/// Cancels the running rounds of the attempts `numbers`, each on a thread of its own; their
/// notices told in order once all have ended. A round that ended meanwhile is no longer to
/// cancel: not an error here. How many were cancelled; the first error is returned after
/// every cancel has ended ([`at_once`]).
fn cancel_all(
    ws: &Workspace,
    race: &RaceRecord,
    numbers: &[u32],
    notices: &mut dyn Notices,
) -> Result<usize> {
    let outcomes = at_once(numbers, notices, |number, tell| {
        let slug = attempt_slug(&race.slug, number);
        match crate::task::cancel::cancel(ws, &slug, Some(race.owner.as_str()), tell) {
            Ok(report) => Ok(Some(report.status)),
            Err(e) if e.kind == ErrorKind::Invalid => Ok(None),
            Err(e) => Err(e),
        }
    })?;
    let mut cancelled = 0;
    for (number, ended) in outcomes {
        let Some(status) = ended else { continue };
        cancelled += 1;
        // A round already recording its end when the cancel came keeps that end.
        let how = match status {
            RoundStatus::Cancelled => "cancelled".to_owned(),
            other => format!("ended {} before its cancel took hold", other.as_str()),
        };
        say(notices, &race.slug, format!("attempt {number} {how}"));
    }
    Ok(cancelled)
}
