//! `ganger land`: the engine's merge queue, printed as lines (or `ganger.land/1` and
//! `ganger.land-status/1` with `--json`).

use crate::Outcome;
use crate::exit;
use crate::land_args::{LandAction, LandArgs};
use crate::printer::Printer;
use crate::printer::notice_line;
use ganger_engine::{BatchEntry, Engine, LandOptions, LandReport, LandStatus, Notice, QueueEntry};
use std::fmt::Write;

pub(crate) fn run(engine: &Engine, args: LandArgs) -> Outcome {
    if let Some(LandAction::Status(status)) = args.action {
        let out = Printer::new(status.json);
        let report = engine.land_status()?;
        out.print(&report, || status_text(&report))?;
        return Ok(exit::OK);
    }
    let options = LandOptions {
        slugs: args.slugs,
        run: args.run,
        batch: args.batch,
        priority: args.priority,
        fix: args.fix,
        commander: args.as_name,
    };
    let out = Printer::new(args.json);
    // A lander's steps go to stderr, with --json too: stdout is the report alone.
    let mut steps = |notice: Notice| {
        let _ = out.warn(&notice_line(&notice));
    };
    let report = engine.land(options, &mut steps)?;
    out.print(&report, || land_text(&report))?;
    Ok(exit::OK)
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn land_text(report: &LandReport) -> String {
    let mut out = String::new();
    for queued in &report.queued {
        let _ = writeln!(
            out,
            "queued {} to land on {} ({})",
            queued.task,
            queued.base,
            short(&queued.commit)
        );
    }
    if report.queued.is_empty() && report.batches.is_empty() {
        out.push_str("nothing to land: the queue is empty\n");
    }
    for batch in &report.batches {
        let landed = if batch.landed.is_empty() {
            "nothing landed".to_owned()
        } else {
            format!("landed {}", batch.landed.join(", "))
        };
        let back: Vec<String> = batch
            .returned
            .iter()
            .map(|r| format!("{} ({})", r.task, r.reason))
            .collect();
        let _ = write!(
            out,
            "batch {} on {}: {}: {landed}; {} check run{}",
            batch.batch,
            batch.base,
            batch.outcome,
            batch.check_runs,
            if batch.check_runs == 1 { "" } else { "s" }
        );
        if !back.is_empty() {
            let _ = write!(out, "; sent back: {}", back.join(", "));
        }
        if !batch.flaky.is_empty() {
            let _ = write!(out, "; flaky: {}", batch.flaky.join(", "));
        }
        out.push('\n');
        for fixed in &batch.fix_rounds {
            let round = fixed
                .round
                .map_or_else(|| "-".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "  {}: fix round {round} {}{}",
                fixed.task,
                if fixed.passed {
                    "passed"
                } else {
                    "did not pass"
                },
                if fixed.requeued { ", queued again" } else { "" }
            );
        }
    }
    out
}

fn status_text(status: &LandStatus) -> String {
    let mut out = String::new();
    if status.queue.is_empty() {
        out.push_str("queue: empty\n");
    } else {
        out.push_str("queue:\n");
        for entry in &status.queue {
            let _ = writeln!(out, "  {}", entry_line(entry));
        }
    }
    for batch in &status.testing {
        let _ = writeln!(out, "under test: {}", batch_line(batch));
        if let Some(probes) = batch.progress["probes"].as_array() {
            for probe in probes {
                let tasks: Vec<&str> = probe["tasks"]
                    .as_array()
                    .map(|t| t.iter().filter_map(|s| s.as_str()).collect())
                    .unwrap_or_default();
                let verdict = if probe["green"] == true {
                    "green"
                } else {
                    "red"
                };
                let _ = writeln!(out, "  {}: {verdict}", tasks.join(" + "));
            }
        }
    }
    for batch in &status.recent {
        let _ = writeln!(out, "batch {}", batch_line(batch));
    }
    if !status.flaky.is_empty() {
        let _ = writeln!(out, "flaky checks: {}", status.flaky.join(", "));
    }
    for entry in &status.returned {
        let _ = writeln!(
            out,
            "sent back: {} ({})",
            entry.task,
            entry.reason.as_deref().unwrap_or("-")
        );
    }
    out
}

fn entry_line(entry: &QueueEntry) -> String {
    let batch = entry
        .batch
        .map_or_else(String::new, |b| format!(" in batch {b}"));
    format!(
        "{} on {}: {}{batch} ({})",
        entry.task,
        entry.base,
        entry.state,
        short(&entry.commit)
    )
}

fn batch_line(batch: &BatchEntry) -> String {
    let runs = batch.progress["check_runs"].as_u64().unwrap_or(0);
    let landed: Vec<&str> = batch.progress["landed"]
        .as_array()
        .map(|t| t.iter().filter_map(|s| s.as_str()).collect())
        .unwrap_or_default();
    let mut line = format!(
        "{} on {} ({}): {}, {runs} check run{}",
        batch.batch,
        batch.base,
        short(&batch.head),
        batch.state,
        if runs == 1 { "" } else { "s" }
    );
    if !landed.is_empty() {
        let _ = write!(line, ", landed {}", landed.join(", "));
    }
    line
}
