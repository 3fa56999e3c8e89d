//! `ganger clean`: the engine's clean-up, printed per task as what was removed and what was
//! kept and why (or as `ganger.clean/1` with `--json`).

use crate::Outcome;
use crate::args::CleanArgs;
use crate::exit;
use crate::printer::Printer;
use ganger_engine::clean_report::{CleanReport, TaskCleanup};
use ganger_engine::{CleanOptions, Engine};
use std::fmt::Write;

pub(crate) fn run(engine: &Engine, args: CleanArgs) -> Outcome {
    let options = CleanOptions {
        slugs: args.slugs,
        force: args.force,
        dry_run: args.dry_run,
        commander: args.as_name,
    };
    let out = Printer::new(args.json);
    let report = engine.clean(options, &mut out.notices())?;
    out.print(&report, || clean_text(&report))?;
    Ok(exit::OK)
}

/// The human report: one line per thing removed or kept, tasks with nothing left counted.
fn clean_text(report: &CleanReport) -> String {
    let mut out = String::new();
    let removed = if report.dry_run {
        "would remove"
    } else {
        "removed"
    };
    for what in &report.settled {
        let _ = writeln!(out, "{what}");
    }
    for dir in &report.temporary_dirs {
        let _ = writeln!(
            out,
            "{removed} {}: an agent's temporary directory whose host was killed",
            dir.display()
        );
    }
    let mut nothing = 0;
    for task in &report.tasks {
        if task.is_empty() {
            nothing += 1;
            continue;
        }
        task_lines(&mut out, task, removed);
    }
    if nothing > 0 {
        let tasks = if nothing == 1 { "task" } else { "tasks" };
        let _ = writeln!(out, "{nothing} {tasks} with nothing left to clean");
    }
    if report.tasks.is_empty() && report.settled.is_empty() && report.temporary_dirs.is_empty() {
        out.push_str("no tasks\n");
    }
    if let Some(why) = &report.docker {
        let _ = writeln!(out, "Docker was not cleaned: {why}");
    }
    if report.dry_run {
        out.push_str("dry run: nothing was changed\n");
    }
    out
}

fn task_lines(out: &mut String, task: &TaskCleanup, removed: &str) {
    let _ = writeln!(out, "{}:", task.task);
    if let Some(why) = &task.skipped {
        let _ = writeln!(out, "  skipped: {why}");
    }
    for item in &task.removed {
        let _ = write!(out, "  {removed} {} {}", item.kind.as_str(), item.name);
        if let Some(detail) = &item.detail {
            let _ = write!(out, " ({detail})");
        }
        out.push('\n');
    }
    for item in &task.kept {
        let _ = writeln!(
            out,
            "  kept {} {}: {}",
            item.kind.as_str(),
            item.name,
            item.reason
        );
    }
}
