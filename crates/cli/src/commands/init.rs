//! `ganger init`, and with `--supervisor AGENT` the registration of `ganger mcp` with that
//! supervising agent (`supervisor.rs`).

use super::supervisor::{self, FileChange};
use crate::Outcome;
use crate::exit;
use crate::mcp_args::InitArgs;
use crate::printer::Printer;
use ganger_engine::Engine;
use std::fmt::Write;

/// `ganger.init-supervisor/1` (docs/json.md): what `init --supervisor` wrote, beside the
/// repository's own `init` report.
#[derive(serde::Serialize)]
struct SupervisorInit<'a> {
    schema: &'static str,
    init: &'a ganger_engine::InitReport,
    supervisor: &'a str,
    command: &'a str,
    files: &'a [FileChange],
}

pub(crate) fn run(engine: &Engine, args: &InitArgs) -> Outcome {
    let report = engine.init()?;
    let out = Printer::new(args.json);
    let Some(chosen) = args.supervisor else {
        out.print(&report, || init_text(&report))?;
        return Ok(exit::OK);
    };
    let command = ganger_command();
    let files = supervisor::install(&engine.workspace().repo.main, chosen, &command)?;
    let name = format!("{chosen:?}").to_lowercase();
    let document = SupervisorInit {
        schema: "ganger.init-supervisor/1",
        init: &report,
        supervisor: &name,
        command: &command,
        files: &files,
    };
    out.print(&document, || {
        let mut text = init_text(&report);
        let _ = writeln!(text, "supervisor {name} (runs `{command} mcp`):");
        for file in &files {
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

/// How the supervisor starts ganger: `ganger` when that is this program on `PATH`, else this
/// program's full path (a build not installed).
fn ganger_command() -> String {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("ganger"))
            .find(|candidate| candidate.is_file())
            .and_then(|p| p.canonicalize().ok())
    });
    match (me, on_path) {
        (Some(me), Some(found)) if me == found => "ganger".to_owned(),
        (Some(me), _) => me.display().to_string(),
        (None, _) => "ganger".to_owned(),
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
