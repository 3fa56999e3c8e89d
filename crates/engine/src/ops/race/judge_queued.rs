//! A judge's round through the scheduler's queue, for a race run with `--queue` (MCP's and
//! the HTTP API's `queue: true`): the judgement is queued as `start --queue` queues a task
//! (a `start` item of slug `SLUG.jAvB`, read-only, under the race's fleet), so that `ganger
//! serve` starts it under its limits (`--max`, `--max-agent`, `--max-model`, a paused model,
//! the race's budget), and the driver follows it until its round has ended: its answer, or
//! why it gave none (an item the scheduler refused, a round that did not end `done`: a tie).
//! A judgement queued already (by a driver that died) is not queued again: its item, then its
//! task, is followed.

use super::judge_answer::answer_of;
use super::{queued, say};
use crate::base::error::{ErrorKind, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::reaper::settle_task;
use crate::task::queued::queue_start_of;
use crate::task::race_request::Request;
use crate::task::start::StartOptions;
use ganger_events::RoundStatus;
use ganger_store::RaceRecord;
use std::time::Duration;

/// How often the driver looks at a judgement still in the queue (its round, once it has one,
/// is waited for through its claim).
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Queues the judgement `start` (its prompt `prompt`) unless it is queued or delivered
/// already, and follows it to its round's end; its answer, or why there is none.
pub(super) fn judge_round_queued(
    ws: &Workspace,
    race: &RaceRecord,
    start: &StartOptions,
    prompt: &str,
    notices: &mut dyn Notices,
) -> Result<std::result::Result<String, String>> {
    let slug = start.slug.as_str();
    let mut store = ws.open_store()?;
    loop {
        if let Some(task) = store.task(slug)? {
            let Some(round) = store.round(task.id, None)? else {
                std::thread::sleep(LOOK_EVERY);
                continue;
            };
            if round.status == RoundStatus::Running {
                // Its host's end (or death, settled here) is told by its claim.
                store.wait_for_end(&round.claim, None)?;
                settle_task(ws, &mut *store, &task, notices)?;
                continue;
            }
            return Ok(match round.status {
                RoundStatus::Done => Ok(answer_of(ws, slug, &round)),
                other => Err(format!("the judge's round ended {}", other.as_str())),
            });
        }
        match queued::items(&*store, race)?.get(slug) {
            Some(item) if item.state.is_open() => std::thread::sleep(LOOK_EVERY),
            // Delivered since the look at its task above: followed as a task.
            Some(_) if store.task(slug)?.is_some() => {}
            // Refused (the race's budget spent, say): a tie.
            Some(item) => {
                let why = item.reason.as_deref().unwrap_or(item.state.as_str());
                return Ok(Err(format!("not started: {why}")));
            }
            None => {
                let fleet = Some(Request::fleet_of(race));
                match queue_start_of(&mut *store, start, prompt, &race.owner, fleet) {
                    Ok(_) => say(
                        notices,
                        &race.slug,
                        format!("{slug} queued for `ganger serve`"),
                    ),
                    Err(e) if e.kind == ErrorKind::Conflict => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
}
