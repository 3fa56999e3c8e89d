//! `ganger init`.

use crate::Outcome;
use crate::exit;
use crate::printer::Printer;
use ganger_engine::Engine;
use std::fmt::Write;

pub(crate) fn run(engine: &Engine, json: bool) -> Outcome {
    let report = engine.init()?;
    Printer::new(json).print(&report, || init_text(&report))?;
    Ok(exit::OK)
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
