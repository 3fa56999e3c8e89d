//! `ganger start` and `ganger fix`: run a round and print its report, or the detached
//! round's coordinates.

use crate::args::{FixArgs, StartArgs, TaskText};
use crate::exit;
use crate::printer::{self, Printer};
use crate::{Failure, Outcome};
use ganger_engine::{
    Brief, Engine, FixOptions, Launched, RoundReport, Sent, StartOptions, WaitOutcome,
};
use ganger_events::RoundStatus;

pub(crate) fn brief(text: TaskText) -> Option<Brief> {
    match (text.brief, text.message) {
        (Some(file), _) => Some(Brief::File(file)),
        (None, Some(message)) => Some(Brief::Message(message)),
        (None, None) => None,
    }
}

/// The exit code of a round's status.
pub(crate) fn status_code(status: RoundStatus) -> u8 {
    match status {
        RoundStatus::Done => exit::OK,
        _ => exit::NOT_DONE,
    }
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Tells a person, once, that the round's agent stays warm after the command, when the
/// command started it (`since_ms`: when it began): a process of hundreds of MB is left behind.
/// Asked only after a round that ran warm (its stream opens with ganger's `turn`): looking
/// opens the store again, which a cold start need not pay (0.9 ms of an instant round).
fn say_it_stays_warm(
    engine: &Engine,
    report: &RoundReport,
    since_ms: i64,
    out: Printer,
) -> Outcome {
    if out.is_json() || !report.events.contains_key("ganger.turn") {
        return Ok(exit::OK);
    }
    let slug = report.task.as_str();
    let Ok(Some(warm)) = engine.warm_agent(slug) else {
        return Ok(exit::OK);
    };
    if warm.info.started_ms < since_ms {
        return Ok(exit::OK);
    }
    let ends = match warm.info.kept_by {
        Some(pid) => format!(
            "it ends with the ganger {} that keeps it (pid {pid})",
            warm.info.kept_by_command.as_deref().unwrap_or("serve")
        ),
        None => format!(
            "it stops by itself after {} without a round",
            ganger_engine::config::format_duration(engine.workspace().config.warm.idle.0)
        ),
    };
    out.note(&format!(
        "the agent of {slug} stays warm for its next round ({} MB): `ganger warm stop {slug}` stops it, and {ends}\n",
        warm.memory_bytes / 1_000_000
    ))?;
    Ok(exit::OK)
}

pub(crate) fn print_sent(engine: &Engine, sent: Sent, out: Printer, since_ms: i64) -> Outcome {
    let launched = match sent {
        Sent::Launched(launched) => launched,
        Sent::Queued { item, held } => {
            if held {
                out.progress(&format!(
                    "task {} holds new rounds: the round waits in the queue until `ganger policy {} accept`\n",
                    item.slug, item.slug
                ))?;
            }
            return super::fleet::print_queued(vec![item], held, out);
        }
        // Only a fix goes elsewhere; it is followed by `fix` itself.
        Sent::Elsewhere { item } => return super::fleet::print_queued(vec![item], false, out),
    };
    match launched {
        Launched::Finished(outcome) => {
            let report = engine.outcome_report(&outcome);
            out.print(&report, || printer::report_text(&report))?;
            say_it_stays_warm(engine, &report, since_ms, out)?;
            Ok(status_code(outcome.round.status))
        }
        Launched::Detached {
            task,
            round,
            host_pid,
        } => {
            let detached = engine.detached(&task.slug, round.number, host_pid);
            // The human form was the notice that the round is detached.
            out.print(&detached, String::new)?;
            Ok(exit::OK)
        }
    }
}

pub(crate) fn start(engine: &Engine, args: StartArgs) -> Outcome {
    let out = Printer::new(args.json);
    let options = StartOptions {
        slug: args.slug,
        brief: brief(args.text),
        agent: args.agent,
        model: args.model,
        base: args.base,
        branch: args.branch,
        worktree: args.worktree,
        commander: args.as_name,
        detach: args.detach,
        permission: args.permission,
        checks: args.checks.checks,
        until_green: args.checks.until_green,
        labels: args.labels,
        budget: ganger_engine::Budget {
            usd: args.budget_usd,
            tokens: args.budget_tokens,
        },
        fleet: None,
        warm: match (args.warm, args.cold) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        dotted: false,
        ..args.place.start_options(args.run)
    };
    let since = now_ms();
    let sent = engine
        .start(options, args.queue, &mut out.notices())
        .map_err(Failure::Engine)?;
    print_sent(engine, sent, out, since)
}

pub(crate) fn fix(engine: &Engine, args: FixArgs) -> Outcome {
    let out = Printer::new(args.json);
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
    let since = now_ms();
    let sent = engine
        .fix(options, args.queue, &mut out.notices())
        .map_err(Failure::Engine)?;
    if let Sent::Elsewhere { item } = sent {
        return follow_elsewhere(engine, item, args.detach, out);
    }
    print_sent(engine, sent, out, since)
}

/// A round of a task whose worktree is on another host, queued for the workers there: with
/// `--detach`, the queued item as `--queue` prints it; else followed here to its end, and its
/// report printed as a round run here prints it.
fn follow_elsewhere(
    engine: &Engine,
    item: ganger_engine::fleet::QueueItem,
    detach: bool,
    out: Printer,
) -> Outcome {
    out.note(&format!(
        "task {}'s worktree is on another host: the round goes there through the queue (item {}){}\n",
        item.slug,
        item.id,
        if detach { "" } else { ", followed here" }
    ))?;
    if detach {
        return super::fleet::print_queued(vec![item], false, out);
    }
    match engine.follow_queued(item.id, &mut out.notices())? {
        WaitOutcome::Ended(report) => {
            out.print(&report, || printer::report_text(&report))?;
            Ok(status_code(report.status))
        }
        WaitOutcome::StillRunning { .. } => Ok(exit::STILL_RUNNING),
    }
}
