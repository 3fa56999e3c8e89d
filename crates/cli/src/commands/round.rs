//! `ganger start` and `ganger fix`: run a round and print its report, or the detached
//! round's coordinates.

use crate::args::{FixArgs, StartArgs, TaskText};
use crate::exit;
use crate::printer;
use crate::{Failure, Outcome};
use ganger_engine::{Brief, FixOptions, Launched, Notice, StartOptions, Workspace, round_report};
use ganger_events::RoundStatus;

pub(crate) fn brief(text: TaskText) -> Option<Brief> {
    match (text.brief, text.message) {
        (Some(file), _) => Some(Brief::File(file)),
        (None, Some(message)) => Some(Brief::Message(message)),
        (None, None) => None,
    }
}

/// Prints notices as they come in human mode; JSON mode prints only the final document.
pub(crate) fn notices(json: bool) -> impl FnMut(Notice) {
    move |notice| {
        if matches!(notice, Notice::UntestedVersion { .. }) {
            // A warning: on stderr, so that it is seen even with --json.
            let _ = printer::emit_err(&printer::notice_line(&notice));
        } else if !json {
            let _ = printer::emit(&printer::notice_line(&notice));
        }
    }
}

/// The exit code of a round's status.
pub(crate) fn status_code(status: RoundStatus) -> u8 {
    match status {
        RoundStatus::Done => exit::OK,
        _ => exit::NOT_DONE,
    }
}

/// `ganger.detached/1` (docs/json.md).
#[derive(serde::Serialize)]
struct Detached<'a> {
    schema: &'static str,
    task: &'a str,
    round: u32,
    status: &'static str,
    host_pid: u32,
    events: std::path::PathBuf,
}

fn print_launched(ws: &Workspace, launched: Launched, json: bool) -> Outcome {
    match launched {
        Launched::Finished(outcome) => {
            let report = round_report(ws, &outcome.task, &outcome.round);
            if json {
                printer::emit_json(&report)?;
            } else {
                printer::emit(&printer::report_text(&report))?;
            }
            Ok(status_code(outcome.round.status))
        }
        Launched::Detached {
            task,
            round,
            host_pid,
        } => {
            if json {
                printer::emit_json(&Detached {
                    schema: "ganger.detached/1",
                    task: &task.slug,
                    round: round.number,
                    status: "running",
                    host_pid,
                    events: ws.state.round_file(&task.slug, round.number, "jsonl"),
                })?;
            }
            Ok(exit::OK)
        }
    }
}

pub(crate) fn start(ws: &Workspace, args: StartArgs) -> Outcome {
    let json = args.json;
    let options = StartOptions {
        slug: args.slug,
        brief: brief(args.text),
        agent: args.agent,
        model: args.model,
        base: args.base,
        branch: args.branch,
        worktree: args.worktree,
        keys: args.keys,
        timeout: args.timeout,
        stall: args.stall,
        commander: args.as_name,
        detach: args.detach,
        permission: args.permission,
        sandbox: args.sandbox,
        network: args.network,
        rw: args.rw,
        checks: args.checks.checks,
        until_green: args.checks.until_green,
        labels: args.labels,
        budget: ganger_engine::Budget {
            usd: args.budget_usd,
            tokens: args.budget_tokens,
        },
        fleet: None,
    };
    if args.queue {
        let item = ganger_engine::fleet::queue_start(ws, &options)?;
        return super::fleet::print_queued(&[item], json);
    }
    let launched =
        ganger_engine::start(ws, options, &mut notices(json)).map_err(Failure::Engine)?;
    print_launched(ws, launched, json)
}

pub(crate) fn fix(ws: &Workspace, args: FixArgs) -> Outcome {
    let json = args.json;
    let options = FixOptions {
        slug: args.slug,
        brief: brief(args.text),
        model: args.model,
        keys: args.keys,
        commander: args.as_name,
        detach: args.detach,
        checks: args.checks.checks,
        until_green: args.checks.until_green,
        interrupt: args.interrupt,
    };
    if args.queue {
        let item = ganger_engine::fleet::queue_fix(ws, &options)?;
        return super::fleet::print_queued(&[item], json);
    }
    // A task on hold takes new rounds into the queue: they run once its policy is accept.
    if !options.interrupt && ganger_engine::holds_rounds(ws, &options.slug)? {
        if options.until_green.is_some() || options.model.is_some() {
            return Err(Failure::Engine(ganger_engine::EngineError::invalid(
                format!(
                    "task {} holds new rounds, so this one would wait in the queue, and a queued \
                 round takes no --until-green or --model",
                    options.slug
                ),
            )));
        }
        // A queued round always runs detached.
        let options = FixOptions {
            detach: false,
            ..options
        };
        let item = ganger_engine::fleet::queue_fix(ws, &options)?;
        if !json {
            printer::emit(&format!(
                "task {} holds new rounds: the round waits in the queue until `ganger policy {} accept`\n",
                item.slug, item.slug
            ))?;
        }
        return super::fleet::print_queued(&[item], json);
    }
    let launched = ganger_engine::fix(ws, options, &mut notices(json)).map_err(Failure::Engine)?;
    print_launched(ws, launched, json)
}
