//! A race in the background (`ganger race --detach`): admitted and recorded here, as in the
//! foreground, so that bad input is refused before anything runs; then driven by a detached
//! `ganger race-host SLUG`, which reads the race's request from the store. The same command
//! (or `race-host`) again resumes a driver that died, as for a race in the foreground.

use super::{RaceOptions, RaceReport, admit, race, record, report, say};
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::task::race_driver::spawn_race_driver;
use crate::task::race_request::Request;
use ganger_store::StoreError;

/// Records the race and starts its driver in the background; its report as it stands.
pub fn race_detached(
    ws: &Workspace,
    options: RaceOptions,
    notices: &mut dyn Notices,
) -> Result<RaceReport> {
    detached(ws, options, false, notices)
}

/// [`race_detached`], its attempts queued for the scheduler when `queue`.
pub(super) fn detached(
    ws: &Workspace,
    options: RaceOptions,
    queue: bool,
    notices: &mut dyn Notices,
) -> Result<RaceReport> {
    let admitted = admit::admit(ws, &options, queue, notices)?;
    let race = record(ws, &options, queue, &admitted)?;
    if race.status == "running" {
        let driver = spawn_race_driver(ws, &race.slug)?;
        say(
            notices,
            &race.slug,
            format!(
                "runs in the background (pid {}, log {}); follow it with `ganger status {}`",
                driver.pid,
                driver.log.display(),
                race.slug
            ),
        );
    }
    report::build(ws, &race)
}

/// Drives the race `slug` as its request in the store says, to its end. One driver of the
/// kind at a time: a second `race-host` (a fleet file submitted again while its race runs)
/// finds the first one's claim and reports the race as it stands.
pub fn race_resume(ws: &Workspace, slug: &str, notices: &mut dyn Notices) -> Result<RaceReport> {
    let store = ws.open_store()?;
    let Some(found) = store.race(slug)? else {
        return Err(EngineError::not_found(format!("no race {slug}")));
    };
    let _driving = match store.claim(&format!("race-host-{slug}")) {
        Ok(claim) => claim,
        Err(StoreError::ClaimHeld { .. }) => {
            say(notices, slug, "has a live driver already".into());
            return report::build(ws, &found);
        }
        Err(other) => return Err(other.into()),
    };
    let options = Request::options(&found.request, slug, &found.spec, &found.owner)?;
    race(ws, options, notices)
}
