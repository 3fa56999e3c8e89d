//! A race's driver in the background: a detached `ganger race-host SLUG`, which reads the
//! race's request from the store and drives it to its end, its output in
//! `.ganger/races/SLUG.host.log`. Started by `ganger race --detach` and by a fleet file's
//! race (`attempts = "SPEC"`), so it lives below the operations.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use std::ffi::OsString;
use std::path::PathBuf;

/// The driver started: its pid and its log.
pub(crate) struct Driver {
    pub pid: u32,
    pub log: PathBuf,
}

/// Starts the driver of the recorded race `slug` in the background.
pub(crate) fn spawn_race_driver(ws: &Workspace, slug: &str) -> Result<Driver> {
    let program = std::env::current_exe()
        .map_err(|e| EngineError::environment("cannot find ganger's own binary", e))?;
    let log = ws
        .state
        .root()
        .join("races")
        .join(format!("{slug}.host.log"));
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    }
    let args: Vec<OsString> = vec![
        "--directory".into(),
        ws.repo.main.clone().into(),
        "race-host".into(),
        slug.into(),
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
    Ok(Driver { pid: host.pid, log })
}
