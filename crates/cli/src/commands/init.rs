//! `ganger init`.

use crate::Outcome;
use crate::exit;
use crate::printer;
use ganger_engine::Workspace;
use std::fmt::Write;

pub(crate) fn run(ws: &Workspace, json: bool) -> Outcome {
    let report = ganger_engine::init(ws)?;
    if json {
        printer::emit_json(&report)?;
        return Ok(exit::OK);
    }
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
        let found = match (&agent.path, &agent.version) {
            (Some(path), Some(version)) => {
                let tested = if *version == agent.tested_version {
                    "the tested version".to_owned()
                } else {
                    format!("tested with {}", agent.tested_version)
                };
                format!("{version} at {} ({tested})", path.display())
            }
            (Some(path), None) => format!("at {} (its version could not be read)", path.display()),
            (None, _) => format!(
                "not found (npm install -g {}@{})",
                agent.package, agent.tested_version
            ),
        };
        let support = if agent.supported {
            ""
        } else {
            " [no ganger adapter yet]"
        };
        let _ = writeln!(out, "  {:<9} {found}{support}", agent.name);
    }
    printer::emit(&out)?;
    Ok(exit::OK)
}
