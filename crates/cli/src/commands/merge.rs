//! `ganger rewind` and `ganger merge`: the engine's report, printed as what changed (or as
//! `ganger.rewind/1` and `ganger.merge/1` with `--json`).

use crate::Outcome;
use crate::args::{MergeArgs, RewindArgs};
use crate::exit;
use crate::printer::Printer;
use ganger_engine::{
    Engine, MergeMode, MergeOptions, MergeOutcome, MergeReport, RewindOptions, RewindReport,
};
use std::fmt::Write;

pub(crate) fn rewind(engine: &Engine, args: RewindArgs) -> Outcome {
    let options = RewindOptions {
        slug: args.slug,
        to: args.to,
        commander: args.as_name,
    };
    let out = Printer::new(args.json);
    let report = engine.rewind(options, &mut out.notices())?;
    out.print(&report, || rewind_text(&report))?;
    Ok(exit::OK)
}

fn rewind_text(report: &RewindReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "task {} is back at the end of round {} (snapshot {})",
        report.task,
        report.to,
        &report.snapshot[..report.snapshot.len().min(12)]
    );
    if let Some(was) = &report.moved_from {
        let _ = writeln!(
            out,
            "its worktree was on another host ({}): the task was brought here first",
            was.display()
        );
    }
    if !report.rewound.is_empty() {
        let numbers: Vec<String> = report.rewound.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "rewound rounds: {}", numbers.join(", "));
    }
    let _ = writeln!(
        out,
        "worktree: {}: {} written back, {} removed; the files before the rewind are kept in {}",
        report.worktree.display(),
        report.written.len(),
        report.removed.len(),
        report.saved
    );
    for path in &report.removed {
        let _ = writeln!(out, "  removed {path}");
    }
    for path in &report.written {
        let _ = writeln!(out, "  written {path}");
    }
    let id = report.session_id.as_deref().unwrap_or("-");
    let _ = match report.session {
        "forked" => writeln!(
            out,
            "session: forked at the end of round {}: {id}",
            report.to
        ),
        "new" => writeln!(
            out,
            "session: the next round starts a new one, with a summary of the rounds kept"
        ),
        _ => writeln!(
            out,
            "session: kept ({id}): nothing after this round was in it"
        ),
    };
    if let Some(why) = &report.fork_error {
        let _ = writeln!(out, "the session could not be forked: {why}");
    }
    out
}

pub(crate) fn merge(engine: &Engine, args: MergeArgs) -> Outcome {
    let mode = if args.squash {
        MergeMode::Squash
    } else if args.rebase {
        MergeMode::Rebase
    } else {
        MergeMode::Merge
    };
    let options = MergeOptions {
        slug: args.slug,
        mode,
        fix: args.fix,
        commander: args.as_name,
    };
    let out = Printer::new(args.json);
    let report = engine.merge(options, &mut out.notices())?;
    out.print(&report, || merge_text(&report))?;
    Ok(match report.outcome {
        MergeOutcome::Merged => exit::OK,
        MergeOutcome::Conflict | MergeOutcome::Unresolved => exit::NOT_DONE,
    })
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn merge_text(report: &MergeReport) -> String {
    let mut out = String::new();
    let rounds: Vec<String> = report.rounds.iter().map(u32::to_string).collect();
    if let Some(commit) = &report.task_commit {
        let _ = writeln!(
            out,
            "committed the work of {} ({} {}) on {}: {}",
            report.task,
            if rounds.len() == 1 { "round" } else { "rounds" },
            rounds.join(", "),
            report.branch,
            short(commit)
        );
    }
    match report.outcome {
        MergeOutcome::Merged => {
            if let Some(round) = report.fix_round {
                let _ = writeln!(
                    out,
                    "round {round} of {} resolved the conflict",
                    report.task
                );
            }
            if let Some(commit) = &report.resolution_commit {
                let _ = writeln!(
                    out,
                    "committed the resolution on {}: {}",
                    report.branch,
                    short(commit)
                );
            }
            let commit = report.commit.as_deref().map_or("", short);
            let _ = writeln!(
                out,
                "merged {} into {} ({}): {commit}",
                report.branch,
                report.base,
                report.mode.as_str()
            );
        }
        MergeOutcome::Conflict => {
            let _ = writeln!(
                out,
                "conflict: {} does not merge into {}; nothing was merged. Conflicting files:",
                report.branch, report.base
            );
            files(&mut out, &report.conflicts);
            let _ = writeln!(
                out,
                "hint: `ganger merge {} --fix` has the worker resolve it",
                report.task
            );
        }
        MergeOutcome::Unresolved => {
            if let Some(round) = report.fix_round {
                let _ = writeln!(
                    out,
                    "round {round} of {} did not resolve the conflict",
                    report.task
                );
            }
            let _ = writeln!(
                out,
                "unresolved: {}; nothing was merged. Files:",
                report.reason.as_deref().unwrap_or("the conflict remains")
            );
            files(&mut out, &report.conflicts);
            let _ = writeln!(
                out,
                "hint: the worktree is mid-merge; `ganger fix {}` then `ganger merge {}` goes on",
                report.task, report.task
            );
        }
    }
    out
}

fn files(out: &mut String, files: &[String]) {
    for file in files {
        let _ = writeln!(out, "  {file}");
    }
}
