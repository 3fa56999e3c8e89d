//! `ganger agents canary`: a thin front for the developer tool `ganger-dev canary`
//! (`crates/dev`), which runs the conformance suite on each agent's newest release beside the
//! pinned one and needs ganger's source tree, cargo and npm. It is found beside this program
//! (a workspace build puts both in `target/`), else on `PATH`, and runs with this command's
//! options, its output and exit code as they are. Without it: one line saying how to get it,
//! exit 2.

use crate::exit;
use crate::{Failure, Outcome};
use ganger_engine::EngineError;
use std::path::{Path, PathBuf};

/// The developer tool's program name.
const DEV: &str = "ganger-dev";

pub(crate) fn run(
    dir: Option<&Path>,
    names: &[String],
    suite: Option<&Path>,
    jobs: Option<u16>,
    json: bool,
) -> Outcome {
    let program = dev_program().ok_or_else(|| {
        EngineError::invalid(format!(
            "`ganger agents canary` runs the developer tool {DEV}, and there is none beside \
             ganger or on PATH: build it in ganger's source tree with `cargo build -p {DEV}`"
        ))
    })?;
    let mut command = std::process::Command::new(&program);
    if let Some(dir) = dir {
        command.arg("-C").arg(dir);
    }
    command.arg("canary").args(names);
    if let Some(suite) = suite {
        command.arg("--suite").arg(suite);
    }
    if let Some(jobs) = jobs {
        command.arg("--jobs").arg(jobs.to_string());
    }
    if json {
        command.arg("--json");
    }
    let status = command.status().map_err(|e| {
        Failure::Engine(EngineError::environment(
            format!("failed to run {}", program.display()),
            e,
        ))
    })?;
    Ok(status
        .code()
        .and_then(|code| u8::try_from(code).ok())
        .unwrap_or(exit::ENVIRONMENT))
}

/// `ganger-dev` beside this program, else the first on `PATH`.
fn dev_program() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|me| Some(me.parent()?.join(DEV)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(DEV))
            .find(|candidate| candidate.is_file())
    })
}
