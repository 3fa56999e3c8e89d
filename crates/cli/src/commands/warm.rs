//! `ganger warm list|stop`: the agents kept warm between rounds, and stopping them; and the
//! hidden `ganger warm-host SLUG N` a warm round starts to keep its task's agent.

use crate::args::{HostArgs, WarmAction, WarmArgs};
use crate::exit;
use crate::printer::Printer;
use crate::{Failure, Outcome};
use ganger_engine::Workspace;
use ganger_engine::warm::{WarmAgentInfo, list_warm, stop_warm};
use serde::Serialize;

/// `ganger.warm/1` (docs/json.md).
#[derive(Serialize)]
struct WarmList {
    schema: &'static str,
    agents: Vec<WarmAgent>,
}

#[derive(Serialize)]
struct WarmAgent {
    #[serde(flatten)]
    info: WarmAgentInfo,
    memory_bytes: u64,
}

/// `ganger.warm-stop/1`.
#[derive(Serialize)]
struct Stopped {
    schema: &'static str,
    stopped: Vec<String>,
}

pub(crate) fn host(ws: &Workspace, args: HostArgs) -> Outcome {
    ganger_engine::warm::host::serve_warm_host(ws, &args.slug, args.round)?;
    Ok(exit::OK)
}

pub(crate) fn run(ws: &Workspace, args: WarmArgs) -> Outcome {
    let out = Printer::new(args.json);
    let store = ws.open_store().map_err(Failure::Engine)?;
    match args.action.unwrap_or(WarmAction::List) {
        WarmAction::List => {
            let agents: Vec<WarmAgent> = list_warm(ws, &*store)
                .into_iter()
                .map(|info| WarmAgent {
                    memory_bytes: info.memory_bytes(),
                    info,
                })
                .collect();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            out.print(
                &WarmList {
                    schema: "ganger.warm/1",
                    agents: agents
                        .iter()
                        .map(|a| WarmAgent {
                            info: a.info.clone(),
                            memory_bytes: a.memory_bytes,
                        })
                        .collect(),
                },
                || {
                    if agents.is_empty() {
                        return "no warm agents\n".to_owned();
                    }
                    agents
                        .iter()
                        .map(|a| {
                            format!(
                                "{:<24} {:<9} {} turns, {} MB, idle {} s, session {}",
                                a.info.slug,
                                a.info.agent,
                                a.info.turns,
                                a.memory_bytes / 1_000_000,
                                (now - a.info.last_used_ms).max(0) / 1000,
                                a.info.session.as_deref().unwrap_or("-")
                            )
                        })
                        .map(|line| line + "\n")
                        .collect::<String>()
                },
            )?;
            Ok(exit::OK)
        }
        WarmAction::Stop { slugs, all } => {
            let slugs = if all {
                list_warm(ws, &*store)
                    .into_iter()
                    .map(|info| info.slug)
                    .collect()
            } else {
                slugs
            };
            let mut stopped = Vec::new();
            for slug in slugs {
                if stop_warm(ws, &*store, &slug)? {
                    stopped.push(slug);
                }
            }
            out.print(
                &Stopped {
                    schema: "ganger.warm-stop/1",
                    stopped: stopped.clone(),
                },
                || match stopped.len() {
                    0 => "no warm agent to stop\n".to_owned(),
                    _ => format!("stopped: {}\n", stopped.join(", ")),
                },
            )?;
            Ok(exit::OK)
        }
    }
}
