//! `ganger init`, and with `--supervisor AGENT` the registration of `ganger mcp` with that
//! supervising agent (its adapter's [`ganger_agents::mcp_registration`]).

use crate::Outcome;
use crate::exit;
use crate::mcp_args::InitArgs;
use crate::printer::Printer;
use ganger_agents::mcp_registration::{self, RegistrationError};
use ganger_engine::documents::InitSupervisor;
use ganger_engine::{Engine, EngineError};
use std::fmt::Write;

pub(crate) fn run(engine: &Engine, args: &InitArgs) -> Outcome {
    let report = engine.init()?;
    let out = Printer::new(args.json);
    let Some(name) = args.supervisor.as_deref() else {
        out.print(&report, || init_text(&report))?;
        return Ok(exit::OK);
    };
    // The files are meant to be committed, and read on other machines: they name the command,
    // never this build's path.
    let command = GANGER.to_owned();
    let path_note = path_note();
    let registration = ganger_agents::adapter(name)
        .and_then(|agent| agent.mcp_registration())
        .ok_or_else(|| EngineError::invalid(format!("{name} cannot supervise")))?;
    let root = &engine.workspace().repo.main;
    let files = mcp_registration::install(registration, root, &command, ganger_mcp::SUPERVISE_LOOP)
        .map_err(engine_error)?;
    let document = InitSupervisor::new(report, name.to_owned(), command, path_note, files);
    if let Some(note) = &document.path_note {
        out.warn(&format!("note: {note}\n"))?;
    }
    out.print(&document, || {
        let mut text = init_text(&document.init);
        let command = &document.command;
        let _ = writeln!(text, "supervisor {name} (runs `{command} mcp`):");
        for file in &document.files {
            let _ = writeln!(
                text,
                "  {} {}: {}",
                file.change,
                file.path.display(),
                file.what
            );
        }
        text
    })?;
    Ok(exit::OK)
}

fn engine_error(error: RegistrationError) -> EngineError {
    match error {
        RegistrationError::Invalid { message, hint } => {
            let error = EngineError::invalid(message);
            match hint {
                Some(hint) => error.hint(hint),
                None => error,
            }
        }
        RegistrationError::Environment { message, cause } => {
            EngineError::environment(message, cause)
        }
    }
}

/// The command a supervisor's configuration runs: `ganger`, from its `PATH`.
const GANGER: &str = "ganger";

/// Why the supervisor, which runs `ganger` from its `PATH`, may not reach this program: none
/// is there, or another one is. `None` when the `PATH` leads here.
fn path_note() -> Option<String> {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(GANGER))
            .find(|candidate| candidate.is_file())
    });
    let found = on_path.as_ref().and_then(|p| p.canonicalize().ok());
    match (me, on_path) {
        (Some(me), Some(_)) if found.as_ref() == Some(&me) => None,
        (me, Some(other)) => Some(format!(
            "the supervisor runs `{GANGER} mcp`, and `{GANGER}` on PATH is {}, not this program{}; \
             install this one there if it is the one to run",
            other.display(),
            me.map(|me| format!(" ({})", me.display()))
                .unwrap_or_default()
        )),
        (me, None) => Some(format!(
            "the supervisor runs `{GANGER} mcp`, and no `{GANGER}` is on PATH{}: put it there \
             (`cargo install --path crates/cli`, or a link in a directory on PATH) before the \
             supervisor starts",
            me.map(|me| format!(" (this program is {})", me.display()))
                .unwrap_or_default()
        )),
    }
}

fn init_text(report: &ganger_engine::InitReport) -> String {
    let mut out = String::new();
    let made = if report.created_state_dir {
        "created"
    } else {
        "exists"
    };
    let _ = writeln!(
        out,
        "state: {} ({made}; kept out of git by .git/info/exclude)",
        report.state_dir.display()
    );
    let wrote = if report.wrote_config {
        "written (commented defaults)"
    } else {
        "exists, left as it is"
    };
    let _ = writeln!(out, "config: {} ({wrote})", report.config.display());
    let _ = writeln!(out, "agents:");
    for agent in &report.agents {
        let _ = writeln!(out, "  {}", super::agents::describe(agent));
    }
    out
}
