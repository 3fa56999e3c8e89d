//! A race in the background (`ganger race --detach`): admitted and recorded here, as in the
//! foreground, so that bad input is refused before anything runs; then driven by a detached
//! `ganger race-host SLUG`, which reads the race's request from the store. The same command
//! (or `race-host`) again resumes a driver that died, as for a race in the foreground.

use super::request::Request;
use super::{RaceOptions, RaceReport, admit, race, record, report, say};
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use std::ffi::OsString;

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
        let program = std::env::current_exe()
            .map_err(|e| EngineError::environment("cannot find ganger's own binary", e))?;
        let log = ws
            .state
            .root()
            .join("races")
            .join(format!("{}.host.log", race.slug));
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
        }
        let args: Vec<OsString> = vec![
            "--directory".into(),
            ws.repo.main.clone().into(),
            "race-host".into(),
            race.slug.clone().into(),
        ];
        let handed = ws.handed_store()?;
        let host = ganger_sandbox::spawn_detached_host(
            &program,
            &args,
            None,
            &handed.env,
            &handed.input(b""),
            &log,
        )
        .map_err(|e| EngineError::environment("cannot start the race's driver", e))?;
        say(
            notices,
            &race.slug,
            format!(
                "runs in the background (pid {}, log {}); follow it with `ganger status {}`",
                host.pid,
                log.display(),
                race.slug
            ),
        );
    }
    report::build(ws, &race)
}

/// Drives the race `slug` as its request in the store says, to its end.
pub fn race_resume(ws: &Workspace, slug: &str, notices: &mut dyn Notices) -> Result<RaceReport> {
    let Some(found) = ws.open_store()?.race(slug)? else {
        return Err(EngineError::not_found(format!("no race {slug}")));
    };
    let options = Request::options(&found.request, slug, &found.spec, &found.owner)?;
    race(ws, options, notices)
}
