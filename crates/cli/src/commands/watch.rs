//! The commands that look at tasks: `status`, `wait`, `cancel`, `diff`.

use super::round::{notices, status_code};
use crate::Outcome;
use crate::args::{CancelArgs, DiffArgs, StatusArgs, WaitArgs};
use crate::exit;
use crate::printer;
use ganger_engine::{StatusView, WaitOutcome, Workspace};
use std::io::IsTerminal;

pub(crate) fn status(ws: &Workspace, args: StatusArgs) -> Outcome {
    if let Some(key) = &args.group_by {
        let groups = ganger_engine::labels::task_groups(ws, key)?;
        if args.json {
            printer::emit_json(&groups)?;
        } else {
            printer::emit(&printer::groups_text(&groups))?;
        }
        return Ok(exit::OK);
    }
    let view =
        ganger_engine::status_of(ws, args.slug.as_deref(), args.tree, &mut notices(args.json))?;
    match view {
        StatusView::List(list) => {
            if args.json {
                printer::emit_json(&list)?;
            } else {
                printer::emit(&printer::task_table(&list, ws.state.root()))?;
            }
        }
        StatusView::Round(report) => {
            if args.json {
                printer::emit_json(&report)?;
            } else {
                printer::emit(&printer::report_text(&report))?;
            }
        }
        StatusView::Pipeline(report) => {
            if args.json {
                printer::emit_json(&report)?;
            } else {
                printer::emit(&printer::pipeline_text(&report))?;
            }
        }
    }
    Ok(exit::OK)
}

/// `ganger.still-running/1` (docs/json.md).
#[derive(serde::Serialize)]
struct StillRunning<'a> {
    schema: &'static str,
    task: &'a str,
    round: u32,
    status: &'static str,
    host_pid: Option<i32>,
    started_at: &'a str,
}

pub(crate) fn wait(ws: &Workspace, args: WaitArgs) -> Outcome {
    match ganger_engine::wait(ws, &args.slug, args.timeout, &mut notices(args.json))? {
        WaitOutcome::Ended(report) => {
            if args.json {
                printer::emit_json(&report)?;
            } else {
                printer::emit(&printer::report_text(&report))?;
            }
            Ok(status_code(report.status))
        }
        WaitOutcome::StillRunning {
            number,
            host_pid,
            started_at,
        } => {
            if args.json {
                printer::emit_json(&StillRunning {
                    schema: "ganger.still-running/1",
                    task: &args.slug,
                    round: number,
                    status: "running",
                    host_pid,
                    started_at: &started_at,
                })?;
            } else {
                let host = host_pid
                    .map(|p| format!("host pid {p}, "))
                    .unwrap_or_default();
                printer::emit(&format!(
                    "round {number} of {} is still running ({host}started {started_at}); wait again\n",
                    args.slug
                ))?;
            }
            Ok(exit::STILL_RUNNING)
        }
    }
}

pub(crate) fn cancel(ws: &Workspace, args: CancelArgs) -> Outcome {
    let report = ganger_engine::cancel(
        ws,
        &args.slug,
        args.as_name.as_deref(),
        &mut notices(args.json),
    )?;
    if args.json {
        printer::emit_json(&report)?;
    } else {
        printer::emit(&printer::report_text(&report))?;
    }
    Ok(exit::OK)
}

pub(crate) fn diff(ws: &Workspace, args: DiffArgs) -> Outcome {
    let terminal = std::io::stdout().is_terminal();
    let color = terminal && std::env::var_os("NO_COLOR").is_none();
    let bytes = ganger_engine::diff(ws, &args.slug, args.stat, color)?;
    if terminal {
        // The agent's files may hold terminal controls: only git's colours reach the terminal.
        let text = String::from_utf8_lossy(&bytes);
        printer::emit_verbatim(printer::escape_controls_but_colours(&text).as_bytes())?;
    } else {
        // A patch, exact.
        printer::emit_verbatim(&bytes)?;
    }
    Ok(exit::OK)
}
