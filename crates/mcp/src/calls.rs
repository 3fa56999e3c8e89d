//! One function per tool: the call's arguments read into its type (`args.rs`), one engine call
//! as the server's commander, and the answer as text and the command line's JSON document.
//! Everything here blocks (a `wait` for minutes): the server runs it on tokio's blocking pool.
//! Rounds always run detached, as `--detach` does: a tool call returns once the round is
//! recorded as running, and `wait` or `watch` follows it.

use crate::args;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::{
    Brief, Budget, Engine, EngineError, FixOptions, Launched, MergeMode, MergeOptions, Notice,
    OwnershipAction, RewindOptions, Sent, StartOptions, StatusRequest, StatusView, WaitOutcome,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::Duration;

/// The longest `wait` or `watch` a call may ask for.
const MAX_WAIT: u64 = 3600;
/// A `wait` or `watch` that names no timeout.
const DEFAULT_WAIT: u64 = 120;
/// A diff page that names no size, and the largest one.
const DEFAULT_PAGE: usize = 20_000;
const MAX_PAGE: usize = 100_000;

/// Runs tool `name` with `arguments` as `engine`'s commander.
pub fn call(engine: &Engine, name: &str, arguments: Value) -> Answer {
    match name {
        "start" => with(name, arguments, |a| start(engine, a)),
        "fix" => with(name, arguments, |a| fix(engine, a)),
        "wait" => with(name, arguments, |a| wait(engine, a)),
        "status" => with(name, arguments, |a| status(engine, a)),
        "report" => with(name, arguments, |a: args::Report| {
            answer(engine.report_of(&a.slug, a.round), |r| {
                Answer::of(&r, text::report(&r))
            })
        }),
        "diff" => with(name, arguments, |a| diff(engine, a)),
        "log" => with(name, arguments, |a| log(engine, a)),
        "cancel" => with(name, arguments, |a: args::Task| {
            answer(engine.cancel(&a.slug, None, &mut quiet()), |r| {
                Answer::of(&r, text::report(&r))
            })
        }),
        "merge" => with(name, arguments, |a| merge(engine, a)),
        "rewind" => with(name, arguments, |a: args::Rewind| {
            let options = RewindOptions {
                slug: a.slug,
                to: a.to,
                commander: None,
            };
            answer(engine.rewind(options, &mut quiet()), |r| {
                Answer::of(&r, text::compact(&json_of(&r)))
            })
        }),
        "plan" => with(name, arguments, |a| plan(engine, a)),
        "approve" => with(name, arguments, |a: args::Task| {
            answer(engine.approve(&a.slug, None, &mut quiet()), |r| {
                Answer::of(&r, text::compact(&json_of(&r)))
            })
        }),
        "reject" => with(name, arguments, |a: args::Reject| {
            let notes = Brief::Message(a.notes);
            answer(engine.reject(&a.slug, &notes, None, &mut quiet()), |r| {
                Answer::of(&r, text::compact(&json_of(&r)))
            })
        }),
        "assign" => with(name, arguments, |a: args::Assign| {
            ownership(engine, &a.slug, OwnershipAction::Assign { to: a.to })
        }),
        "transfer" => with(name, arguments, |a: args::Transfer| {
            ownership(engine, &a.slug, OwnershipAction::Transfer { to: a.to })
        }),
        "release" => with(name, arguments, |a: args::Task| {
            ownership(engine, &a.slug, OwnershipAction::Release)
        }),
        "policy" => with(name, arguments, |a: args::Policy| match a.policy.parse() {
            Ok(policy) => ownership(engine, &a.slug, OwnershipAction::Policy(policy)),
            Err(why) => Answer::failure(&EngineError::invalid(why)),
        }),
        "allow" => with(name, arguments, |a: args::Allow| {
            let action = OwnershipAction::Allow {
                names: a.names,
                remove: a.remove,
            };
            ownership(engine, &a.slug, action)
        }),
        "broadcast" => with(name, arguments, |a: args::Broadcast| {
            answer(engine.broadcast(&a.brief, &a.only, None), |items| {
                queued(&items)
            })
        }),
        "fleet_run" => with(name, arguments, |a| fleet_run(engine, a)),
        "fleet_submit" => with(name, arguments, |a| fleet_submit(engine, a)),
        "fleet_status" => with(name, arguments, |a: args::FleetStatus| {
            answer(engine.fleet_status(a.name.as_deref()), |s| {
                Answer::of(&s, text::compact(&json_of(&s)))
            })
        }),
        "groups" => with(name, arguments, |a: args::Groups| {
            answer(engine.groups(&a.key), |g| {
                Answer::of(&g, text::compact(&json_of(&g)))
            })
        }),
        "watch" => with(name, arguments, |a: args::Watch| {
            let timeout =
                Duration::from_secs(a.timeout_seconds.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT));
            answer(engine.wait_journal(a.after, timeout), |page| {
                Answer::of(&page, text::journal(&page))
            })
        }),
        "ack" => with(name, arguments, |a: args::Ack| {
            answer(engine.ack(None, a.upto), |r| {
                let line = format!(
                    "{}: journal acknowledged up to entry {}\n",
                    r.commander, r.cursor
                );
                Answer::of(&r, line)
            })
        }),
        "agents" => with(name, arguments, |_: args::Agents| agents(engine)),
        "models" => with(name, arguments, |a: args::Models| {
            answer(engine.agent_models(&a.agent), |m| {
                let line = if m.catalog {
                    format!("{} models: {}\n", m.agent, m.models.join(", "))
                } else {
                    format!(
                        "{} has no model catalog: it takes any model name\n",
                        m.agent
                    )
                };
                Answer::of(&m, line)
            })
        }),
        other => Answer::bad_arguments(
            other,
            &format!(
                "no such tool; the tools are {}",
                crate::catalog::tool_names().join(", ")
            ),
        ),
    }
}

/// Reads the arguments into the tool's type, or answers why they do not fit.
fn with<T: DeserializeOwned>(
    tool: &str,
    arguments: Value,
    run: impl FnOnce(T) -> Answer,
) -> Answer {
    match serde_json::from_value::<T>(arguments) {
        Ok(parsed) => run(parsed),
        Err(why) => Answer::bad_arguments(tool, &why.to_string()),
    }
}

/// Notices are progress for a person; a tool answers with its result alone.
fn quiet() -> impl FnMut(Notice) {
    |_| {}
}

fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn parsed<T: std::str::FromStr<Err = String>>(
    text: Option<String>,
) -> Result<Option<T>, EngineError> {
    text.map(|t| t.parse().map_err(EngineError::invalid))
        .transpose()
}

fn start(engine: &Engine, a: args::Start) -> Answer {
    let options = (|| -> Result<StartOptions, EngineError> {
        Ok(StartOptions {
            slug: a.slug,
            brief: Some(Brief::Message(a.brief)),
            agent: a.agent,
            model: a.model,
            base: a.base,
            branch: None,
            worktree: None,
            keys: Vec::new(),
            timeout: None,
            stall: None,
            commander: None,
            // A queued round runs detached anyway; the queue takes no detach of its own.
            detach: !a.queue,
            permission: parsed(a.permission)?,
            sandbox: parsed(a.sandbox)?,
            network: None,
            rw: Vec::new(),
            checks: a.checks,
            until_green: a.until_green,
            labels: a
                .labels
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            budget: Budget {
                usd: a.budget_usd,
                tokens: a.budget_tokens,
            },
            fleet: None,
            warm: None,
        })
    })();
    match options {
        Ok(options) => answer(engine.start(options, a.queue, &mut quiet()), |s| {
            sent(engine, s)
        }),
        Err(error) => Answer::failure(&error),
    }
}

fn fix(engine: &Engine, a: args::Fix) -> Answer {
    let options = FixOptions {
        slug: a.slug,
        brief: Some(Brief::Message(a.brief)),
        model: a.model,
        keys: Vec::new(),
        commander: None,
        detach: !a.queue,
        checks: a.checks,
        until_green: a.until_green,
        interrupt: a.interrupt,
    };
    answer(engine.fix(options, a.queue, &mut quiet()), |s| {
        sent(engine, s)
    })
}

/// A round sent: running detached (`ganger.detached/1`), or queued (`ganger.queued/1`).
fn sent(engine: &Engine, sent: Sent) -> Answer {
    match sent {
        Sent::Queued { item, held } => {
            let mut answer = queued(std::slice::from_ref(&item));
            if held {
                answer.text.push_str(&format!(
                    "task {} holds new rounds: it waits until its policy is accept\n",
                    item.slug
                ));
            }
            answer
        }
        Sent::Launched(Launched::Detached {
            task,
            round,
            host_pid,
        }) => {
            let document = json!({
                "schema": "ganger.detached/1",
                "task": task.slug,
                "round": round.number,
                "status": "running",
                "host_pid": host_pid,
                "events": engine.workspace().state.round_file(&task.slug, round.number, "jsonl"),
            });
            let line = format!(
                "round {} of {} is running; call wait with slug {:?} for its report\n",
                round.number, task.slug, task.slug
            );
            Answer::of(&document, line)
        }
        Sent::Launched(Launched::Finished(outcome)) => {
            let report = engine.outcome_report(&outcome);
            Answer::of(&report, text::report(&report))
        }
    }
}

fn queued(items: &[ganger_engine::fleet::QueueItem]) -> Answer {
    let document = json!({"schema": "ganger.queued/1", "items": items});
    let text = items
        .iter()
        .map(|item| {
            format!(
                "queued {} {} (item {}); the scheduler (`ganger serve`) starts it\n",
                item.kind.as_str(),
                item.slug,
                item.id
            )
        })
        .collect();
    Answer::of(&document, text)
}

fn wait(engine: &Engine, a: args::Wait) -> Answer {
    let timeout = Duration::from_secs(a.timeout_seconds.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT));
    answer(
        engine.wait(&a.slug, Some(timeout), &mut quiet()),
        |outcome| match outcome {
            WaitOutcome::Ended(report) => Answer::of(&report, text::report(&report)),
            WaitOutcome::StillRunning {
                number,
                host_pid,
                started_at,
            } => {
                let document = json!({
                    "schema": "ganger.still-running/1",
                    "task": a.slug,
                    "round": number,
                    "status": "running",
                    "host_pid": host_pid,
                    "started_at": started_at,
                });
                let line = format!(
                    "round {number} of {} is still running (started {started_at}); call wait again\n",
                    a.slug
                );
                Answer::of(&document, line)
            }
        },
    )
}

fn status(engine: &Engine, a: args::Status) -> Answer {
    let label = match a.label.as_deref().map(|l| l.split_once('=')) {
        None => None,
        Some(Some((key, value))) => match engine.tasks_labelled(key, value) {
            Ok(slugs) => Some(slugs),
            Err(error) => return Answer::failure(&error),
        },
        Some(None) => {
            return Answer::failure(&EngineError::invalid(format!(
                "label {:?}: expected KEY=VALUE",
                a.label.unwrap_or_default()
            )));
        }
    };
    let request = StatusRequest {
        slug: a.slug,
        tree: false,
    };
    answer(engine.status(&request, &mut quiet()), |view| match view {
        StatusView::List(mut list) => {
            list.tasks.retain(|t| {
                a.owner.as_deref().is_none_or(|o| t.owner == o)
                    && label.as_ref().is_none_or(|slugs| slugs.contains(&t.slug))
            });
            Answer::of(&list, text::task_table(&list))
        }
        StatusView::Round(report) => Answer::of(&report, text::report(&report)),
        StatusView::Pipeline(report) => Answer::of(&report, text::compact(&json_of(&report))),
    })
}

fn diff(engine: &Engine, a: args::Diff) -> Answer {
    let limit = a.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let page = engine.diff_page(&a.slug, a.round, a.stat, a.offset as u64, limit);
    answer(page, |page| {
        let document = json!({
            "schema": "ganger.diff-page/1",
            "task": a.slug,
            "round": a.round,
            "stat": a.stat,
            "offset": page.start,
            "total_bytes": page.total,
            "next_offset": page.next,
            "text": page.text,
        });
        let what = a
            .round
            .map_or_else(|| "the task".to_owned(), |n| format!("round {n}"));
        let mut line = if page.total == 0 {
            format!("{}: no changes in {what}\n", a.slug)
        } else {
            format!(
                "{} ({what}): bytes {}..{} of {}\n{}",
                a.slug,
                page.start,
                page.next.unwrap_or(page.total),
                page.total,
                page.text
            )
        };
        if let Some(next) = page.next {
            line.push_str(&format!("\n(more: call diff again with offset {next})\n"));
        }
        Answer::of(&document, line)
    })
}

fn log(engine: &Engine, a: args::Log) -> Answer {
    let keep = a.lines.unwrap_or(30).clamp(1, 500);
    let mut lines: VecDeque<Value> = VecDeque::new();
    let options = ganger_engine::LogOptions {
        slug: a.slug.clone(),
        round: a.round,
        raw: false,
        follow: false,
    };
    let result = engine.log(&options, &mut |line| {
        let document = match line {
            ganger_engine::LogLine::Parsed { number, parsed, .. } => {
                json!({"line": number, "kind": parsed.kind, "events": parsed.events})
            }
            ganger_engine::LogLine::TooLong { number, bytes } => {
                json!({"line": number, "too_long": bytes})
            }
            ganger_engine::LogLine::Raw(_) => return Ok(()),
        };
        if lines.len() == keep {
            lines.pop_front();
        }
        lines.push_back(document);
        Ok(())
    });
    answer(result, |()| {
        let text: String = lines
            .iter()
            .map(|l| {
                format!(
                    "{} {}\n",
                    l["line"],
                    serde_json::to_string(&l["events"]).unwrap_or_default()
                )
            })
            .collect();
        let document = json!({
            "schema": "ganger.log-tail/1",
            "task": a.slug,
            "round": a.round,
            "lines": lines,
        });
        Answer::of(&document, text)
    })
}

fn merge(engine: &Engine, a: args::Merge) -> Answer {
    let mode = match a.mode.as_deref().map(str::parse::<MergeMode>).transpose() {
        Ok(mode) => mode.unwrap_or_default(),
        Err(problem) => return Answer::failure(&EngineError::invalid(problem)),
    };
    let options = MergeOptions {
        slug: a.slug,
        mode,
        fix: a.fix,
        commander: None,
    };
    answer(engine.merge(options, &mut quiet()), |r| {
        Answer::of(&r, text::merge(&r))
    })
}

fn plan(engine: &Engine, a: args::Plan) -> Answer {
    let sandbox = match parsed(a.sandbox) {
        Ok(sandbox) => sandbox,
        Err(error) => return Answer::failure(&error),
    };
    let options = ganger_engine::PlanOptions {
        slug: a.slug,
        brief: Some(Brief::Message(a.brief)),
        agent: a.agent,
        model: a.model,
        base: a.base,
        sandbox,
        network: None,
        commander: None,
    };
    answer(engine.plan(options, &mut quiet()), |r| {
        Answer::of(&r, text::compact(&json_of(&r)))
    })
}

fn ownership(engine: &Engine, slug: &str, action: OwnershipAction) -> Answer {
    answer(engine.ownership(slug, &action, None, &mut quiet()), |r| {
        let owner = if r.owner.is_empty() {
            "nobody"
        } else {
            &r.owner
        };
        let mut line = format!(
            "{}: owned by {owner} (generation {}), new rounds: {}",
            r.task, r.generation, r.inbound
        );
        if !r.allowed.is_empty() {
            line.push_str(&format!(", also allowed: {}", r.allowed.join(", ")));
        }
        line.push('\n');
        Answer::of(&r, line)
    })
}

fn fleet_submit(engine: &Engine, a: args::FleetFile) -> Answer {
    let fleet = match ganger_engine::fleet::read_fleet(std::path::Path::new(&a.file)) {
        Ok(fleet) => fleet,
        Err(error) => return Answer::failure(&error),
    };
    answer(engine.submit_fleet(&fleet, None), |submitted| {
        let document = json!({
            "schema": "ganger.fleet-submitted/1",
            "fleet": fleet.name,
            "submitted": submitted,
        });
        let mut line = format!(
            "fleet {}: {} queued to start, {} to continue, {} pending, {} finished\n",
            fleet.name,
            submitted.started.len(),
            submitted.resumed.len(),
            submitted.pending.len(),
            submitted.finished.len()
        );
        if engine.scheduler().is_none() {
            line.push_str(
                "no `ganger serve` runs for this repository yet: the tasks wait for one\n",
            );
        }
        Answer::of(&document, line)
    })
}

fn fleet_run(engine: &Engine, a: args::FleetFile) -> Answer {
    let fleet = match ganger_engine::fleet::read_fleet(std::path::Path::new(&a.file)) {
        Ok(fleet) => fleet,
        Err(error) => return Answer::failure(&error),
    };
    let options = ganger_engine::fleet::SchedulerOptions {
        limits: ganger_engine::fleet::Limits {
            global: a.max,
            ..ganger_engine::fleet::Limits::default()
        },
        drain: ganger_engine::fleet::Drain::Fleet(fleet.name.clone()),
        ..ganger_engine::fleet::SchedulerOptions::default()
    };
    let run = engine.run_fleet(&fleet, options, None, &mut |_, _| {}, &mut |_| {});
    answer(run, |run| {
        Answer::of(&run.status, text::compact(&json_of(&run.status)))
    })
}

fn agents(engine: &Engine) -> Answer {
    let agents = ganger_engine::agents::find_all(&engine.workspace().config);
    let text = agents
        .iter()
        .map(|a| {
            format!(
                "{}: {} (tested {})\n",
                a.name,
                a.version
                    .as_deref()
                    .map_or("not installed".to_owned(), |v| format!("{v} installed")),
                a.tested_version
            )
        })
        .collect();
    Answer::of(
        &json!({"schema": "ganger.agents/1", "agents": agents}),
        text,
    )
}
