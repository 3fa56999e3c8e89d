//! `ganger warm list|stop`: the agents kept warm between rounds, and stopping them; and the
//! hidden `ganger warm-host SLUG N` a warm round starts to keep its task's agent.

use crate::Outcome;
use crate::args::{HostArgs, WarmAction, WarmArgs};
use crate::exit;
use crate::printer::Printer;
use ganger_engine::documents::{WarmList, WarmStop};
use ganger_engine::{Engine, WarmAgent, Workspace};

/// `warm list` for people: a line per agent, then their memory against `[warm] memory`.
fn list_text(agents: &[WarmAgent], limit: Option<u64>) -> String {
    if agents.is_empty() {
        return "no warm agents\n".to_owned();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut text: String = agents
        .iter()
        .map(|a| match &a.info.unreadable {
            Some(why) => format!(
                "{:<24} warm host pid {}: {why}; `ganger warm stop {}` stops it\n",
                a.info.slug, a.info.host_pid, a.info.slug
            ),
            None => format!(
                "{:<24} {:<9} {} turns, {} MB, idle {} s, session {}{}\n",
                a.info.slug,
                a.info.agent,
                a.info.turns,
                a.memory_bytes / 1_000_000,
                (now - a.info.last_used_ms).max(0) / 1000,
                a.info.session.as_deref().unwrap_or("-"),
                a.info
                    .kept_by
                    .map(|pid| format!(
                        ", kept by ganger {} {pid}",
                        a.info.kept_by_command.as_deref().unwrap_or("serve")
                    ))
                    .unwrap_or_default()
            ),
        })
        .collect();
    let held: u64 = agents.iter().map(|a| a.memory_bytes).sum();
    if let Some(limit) = limit {
        text.push_str(&format!(
            "{} MB in all, of the {} MB [warm] memory allows\n",
            held / 1_000_000,
            limit / 1_000_000
        ));
    }
    text
}

pub(crate) fn host(ws: &Workspace, args: HostArgs) -> Outcome {
    ganger_engine::warm::host::serve_warm_host(ws, &args.slug, args.round, args.kept_by)?;
    Ok(exit::OK)
}

pub(crate) fn run(engine: &Engine, args: WarmArgs) -> Outcome {
    let out = Printer::new(args.json);
    match args.action.unwrap_or(WarmAction::List) {
        WarmAction::List => {
            let list = WarmList::new(
                engine.warm_agents()?,
                engine.workspace().config.warm.memory_bytes(),
            );
            out.print(&list, || list_text(&list.agents, list.memory_limit_bytes))?;
            Ok(exit::OK)
        }
        WarmAction::Stop { slugs, all } => {
            let document = WarmStop::new(engine.stop_warm(&slugs, all)?);
            out.print(&document, || match document.stopped.len() {
                0 => "no warm agent to stop\n".to_owned(),
                _ => format!("stopped: {}\n", document.stopped.join(", ")),
            })?;
            Ok(exit::OK)
        }
    }
}
