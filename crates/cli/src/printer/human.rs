//! Human text for reports, the task table and progress notices: plain lines, readable without
//! colour, with long things clipped and a pointer to where the whole is.

use ganger_engine::Notice;
use ganger_engine::report::{RoundReport, TaskList};
use std::fmt::Write;

fn indent(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn seconds(ms: i64) -> String {
    if ms < 10_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 600_000 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} min", ms / 60_000)
    }
}

fn paths(out: &mut String, title: &str, list: &ganger_engine::report::Clipped, more: &str) {
    match list.total {
        0 => {
            let _ = writeln!(out, "{title}: none");
        }
        1 => {
            let _ = writeln!(out, "{title}: 1 path");
        }
        n => {
            let _ = writeln!(out, "{title}: {n} paths");
        }
    }
    for line in &list.shown {
        let _ = writeln!(out, "  {line}");
    }
    if list.total > list.shown.len() {
        let _ = writeln!(out, "  ... {} more: {more}", list.total - list.shown.len());
    }
}

/// The report of one round.
pub fn report_text(report: &RoundReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "task: {}, round {} ({}), branch {}",
        report.task, report.round, report.kind, report.branch
    );
    let gone = if report.worktree_gone { " (gone)" } else { "" };
    let _ = writeln!(out, "worktree: {}{gone}", report.worktree.display());
    let read_only = if report.permission == "read-only" {
        " (read-only)"
    } else {
        ""
    };
    let sandbox = match (report.sandbox.as_str(), report.network.as_str()) {
        ("local", _) => String::new(),
        (kind, "none") => format!(", sandbox: {kind}, no network"),
        (kind, _) => format!(", sandbox: {kind}"),
    };
    let _ = writeln!(
        out,
        "agent: {}{read_only}, model: {}{sandbox}",
        report.agent,
        report.model.as_deref().unwrap_or("the agent's default")
    );
    let _ = writeln!(
        out,
        "session: {}",
        report.session.as_deref().unwrap_or("none yet")
    );
    if let Some(warm) = &report.warm {
        let _ = writeln!(
            out,
            "warm agent: pid {} (host {}{}), {} MB, {} turn(s), {}",
            warm.agent_pid,
            warm.host_pid,
            warm.kept_by
                .map(|pid| format!(", kept by ganger serve {pid}"))
                .unwrap_or_default(),
            warm.memory_bytes / 1_000_000,
            warm.turns,
            if warm.busy {
                "busy".to_owned()
            } else {
                format!("idle {} s", warm.idle_ms / 1000)
            }
        );
    }
    let mut when = format!("started: {}", report.started_at);
    if let Some(ended) = &report.ended_at {
        let _ = write!(when, ", ended {ended}");
    }
    if let Some(ms) = report.duration_ms {
        let _ = write!(when, " ({})", seconds(ms));
    }
    let _ = writeln!(out, "{when}");
    let mut status = report.status.to_string();
    if let Some(code) = report.exit_code {
        let _ = write!(status, ", exit {code}");
    }
    if let Some(signal) = report.exit_signal {
        let _ = write!(status, ", killed by signal {signal}");
    }
    if let Some(finish) = &report.finish {
        let _ = write!(status, ", finish {finish}");
    }
    if let (Some(quiet), Some(pid)) = (report.quiet_ms, report.host_pid) {
        let _ = write!(
            status,
            " (host pid {pid}; last progress {} ago)",
            seconds(quiet)
        );
    }
    if report.rewound {
        status.push_str(" (rewound)");
    }
    let _ = writeln!(out, "status: {status}");
    if let Some(reason) = &report.reason {
        let _ = writeln!(out, "reason: {reason}");
    }
    if let Some(done) = &report.done {
        let _ = writeln!(out, "{done}");
    }
    let mut events: Vec<String> = report
        .events
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if events.is_empty() {
        events.push("none".into());
    }
    let mut line = format!("events: {}", events.join(", "));
    if report.malformed_lines > 0 {
        let _ = write!(line, "; {} lines not events", report.malformed_lines);
    }
    if report.unknown_lines > 0 {
        let _ = write!(line, "; {} of unknown types", report.unknown_lines);
    }
    if report.long_lines > 0 {
        let _ = write!(
            line,
            "; {} over {} MiB not read",
            report.long_lines,
            ganger_agents::scan::MAX_LINE >> 20
        );
    }
    let _ = writeln!(out, "{line}");
    let cost = report
        .cost_usd
        .map_or_else(|| "not reported".to_owned(), |c| format!("${c:.4}"));
    let _ = writeln!(
        out,
        "cost: {cost}, tokens {} in / {} out",
        report.tokens.input, report.tokens.output
    );
    if let Some(budget) = &report.budget {
        if let Some(task) = &budget.task {
            let _ = writeln!(out, "budget: {}", budget_use(task));
        }
        if let Some(fleet) = &budget.fleet {
            let _ = writeln!(
                out,
                "fleet {} budget: {}",
                fleet.fleet,
                budget_use(&fleet.budget)
            );
        }
    }
    for error in &report.errors {
        let _ = writeln!(out, "error: {error}");
    }
    if report.error_count as usize > report.errors.len() {
        let _ = writeln!(
            out,
            "error: ... {} more",
            report.error_count as usize - report.errors.len()
        );
    }
    for rejection in &report.rejections {
        let _ = writeln!(out, "rejected: {rejection}");
    }
    if !report.stderr_tail.is_empty() {
        let _ = writeln!(out, "stderr (last lines):");
        for line in &report.stderr_tail {
            let _ = writeln!(out, "  {line}");
        }
    }
    match &report.answer {
        Some(answer) => {
            let _ = writeln!(out, "worker's last answer:");
            indent(&mut out, answer);
            let shown = answer.chars().count();
            if report.answer_chars > shown {
                let place = report
                    .files
                    .answer
                    .as_ref()
                    .unwrap_or(&report.files.events)
                    .display();
                let _ = writeln!(
                    out,
                    "  ... ({} more characters in {place})",
                    report.answer_chars - shown
                );
            }
        }
        None => {
            let _ = writeln!(out, "worker's last answer: none");
        }
    }
    checks(&mut out, report);
    let status_hint = format!("git -C {} status --short", report.worktree.display());
    paths(
        &mut out,
        "changed in this round",
        &report.changed,
        &format!("ganger diff {}", report.task),
    );
    paths(
        &mut out,
        "worktree changes",
        &report.worktree_changes,
        &status_hint,
    );
    let files = &report.files;
    let dir = files
        .events
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let answer = if files.answer.is_some() {
        ",answer.md"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "files: {dir}/round-{}.{{prompt.md,jsonl,err{answer}}}",
        report.round
    );
    out
}

/// What was spent of a budget: `$0.0100 of $0.5000, 110 of 1000 tokens`.
fn budget_use(budget: &ganger_engine::budget::BudgetUse) -> String {
    let mut parts = Vec::new();
    if let Some(usd) = budget.usd {
        parts.push(format!("${:.4} of ${usd:.4}", budget.spent_usd));
    }
    if let Some(tokens) = budget.tokens {
        parts.push(format!("{} of {tokens} tokens", budget.spent_tokens));
    }
    parts.join(", ")
}

/// Appends `text` left-aligned in `width` columns, then a space. (Formatter padding writes its
/// fill one character at a time; the table has ten thousand rows to pad.)
fn left(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    let used = text.chars().count();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used) + 1));
}

/// Appends `text` right-aligned in `width` columns, then a space.
fn right(out: &mut String, text: &str, width: usize) {
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
    out.push_str(text);
    out.push(' ');
}

/// The task table.
pub fn task_table(list: &TaskList, root: &std::path::Path) -> String {
    // Queued starts are tasks to be: a table without them must not read as an empty queue.
    let queued = match list.queued_starts {
        0 => String::new(),
        1 => "1 start is queued; `ganger fleet status` shows the queue".to_owned(),
        n => format!("{n} starts are queued; `ganger fleet status` shows the queue"),
    };
    if list.tasks.is_empty() {
        let mut out = match queued.is_empty() {
            false => format!("no tasks in {} yet: {queued}\n", root.display()),
            true => format!("no tasks in {}\n", root.display()),
        };
        killed_starts(&mut out, list);
        return out;
    }
    let mut out = String::with_capacity((list.tasks.len() + 1) * 160);
    let mut number = String::new();
    let columns: [(&str, usize, bool); 7] = [
        ("task", 28, false),
        ("rounds", 6, true),
        ("last", 12, false),
        ("session", 32, false),
        ("agent", 9, false),
        ("model", 24, false),
        ("cost", 9, true),
    ];
    for (name, width, align_right) in columns {
        if align_right {
            right(&mut out, name, width);
        } else {
            left(&mut out, name, width);
        }
    }
    out.push_str("worktree\n");
    for task in &list.tasks {
        match &task.role {
            // `status --tree`: a role's task under its pipeline's task.
            Some(role) => left(&mut out, &format!("  └ {role}"), 28),
            None => left(&mut out, &task.slug, 28),
        }
        number.clear();
        let _ = write!(number, "{}", task.rounds);
        right(&mut out, &number, 6);
        left(&mut out, task.last_status.map_or("-", |s| s.as_str()), 12);
        left(&mut out, task.session.as_deref().unwrap_or("-"), 32);
        left(&mut out, &task.agent, 9);
        left(&mut out, task.model.as_deref().unwrap_or("-"), 24);
        number.clear();
        let _ = write!(number, "${:.4}", task.cost_usd);
        right(&mut out, &number, 9);
        out.push_str(&task.worktree.to_string_lossy());
        if task.worktree_gone {
            out.push_str(" (gone)");
        }
        if let Some(warm) = &task.warm {
            let _ = write!(
                out,
                "  [warm, {} MB{}]",
                warm.memory_bytes / 1_000_000,
                if warm.busy { ", busy" } else { "" }
            );
        }
        if let Some(done) = &task.done {
            out.push_str("  ");
            out.push_str(done);
        }
        out.push('\n');
    }
    for overlap in &list.overlaps {
        let _ = writeln!(
            out,
            "overlap: {} and {} both change {}",
            overlap.tasks[0],
            overlap.tasks[1],
            overlap.files.join(", ")
        );
    }
    if !queued.is_empty() {
        let _ = writeln!(out, "{queued}");
    }
    killed_starts(&mut out, list);
    out
}

/// A line per start killed before its task was recorded: what it left, and what settles it.
fn killed_starts(out: &mut String, list: &TaskList) {
    for start in &list.killed_starts {
        let _ = writeln!(
            out,
            "the start of {} was killed before its task was recorded: it may have left worktree {} and branch {} (`ganger clean` settles them, as does `ganger start {}` again)",
            start.slug,
            start.worktree.display(),
            start.branch,
            start.slug
        );
    }
}

/// The round's checks: one line for all, then the end of each failing one's output.
fn checks(out: &mut String, report: &RoundReport) {
    if report.checks.is_empty() {
        return;
    }
    let line: Vec<String> = report
        .checks
        .iter()
        .map(|c| {
            let mut text = format!("{} {}", c.name, c.state);
            if c.state == "failed" {
                match (c.exit_code, c.signal) {
                    (Some(code), _) => {
                        let _ = write!(text, " (exit {code})");
                    }
                    (None, Some(signal)) => {
                        let _ = write!(text, " (signal {signal})");
                    }
                    _ => {}
                }
            }
            if let Some(ms) = c.duration_ms {
                let _ = write!(text, " in {}", seconds(ms as i64));
            }
            text
        })
        .collect();
    let _ = writeln!(out, "checks: {}", line.join(", "));
    for check in report.checks.iter().filter(|c| c.tail.is_some()) {
        let log = check
            .log
            .as_ref()
            .map(|l| format!("; whole output: {}", l.display()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "check {} (`{}`), the end of its output{log}:",
            check.name, check.command
        );
        let tail = check.tail.as_deref().unwrap_or_default();
        let lines: Vec<&str> = tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(CHECK_LINES)..] {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// How many lines of a failing check's output a report shows (the store keeps more).
const CHECK_LINES: usize = 12;

/// A progress line for a notice.
pub fn notice_line(notice: &Notice) -> String {
    match notice {
        Notice::Model { model, verdict } => format!("model: {model}: {verdict}\n"),
        Notice::WorktreeCreated { path, branch, base } => {
            format!(
                "worktree: created {} on {branch} from {base}\n",
                path.display()
            )
        }
        Notice::RoundStarted {
            slug,
            number,
            events,
        } => {
            format!(
                "round {number} of {slug} started; events: {}\n",
                events.display()
            )
        }
        Notice::Detached {
            slug,
            number,
            host_pid,
            log,
        } => format!(
            "round {number} of {slug} runs in the background (host pid {host_pid}); host log: {}\nwait for it: ganger wait {slug}\n",
            log.display()
        ),
        Notice::UntestedVersion {
            agent,
            program,
            version,
            tested,
        } => format!(
            "warning: {agent} at {} is {}, not the tested {tested}; using it anyway (`ganger agents install` installs the tested one)\n",
            program.display(),
            version.as_deref().map_or_else(
                || "of an unknown version".to_owned(),
                |v| format!("version {v}")
            )
        ),
        Notice::Pipeline { slug, message } => format!("pipeline {slug}: {message}\n"),
        Notice::Settled { slug, number } => {
            format!("round {number} of {slug} was found interrupted: its host had died\n")
        }
        Notice::ChecksSentBack {
            slug,
            number,
            attempt,
            limit,
            failed,
        } => format!(
            "checks failed after round {number} of {slug} ({}); sending them back, fix round {attempt} of at most {limit} (--until-green)\n",
            failed.join(", ")
        ),
        Notice::UntilGreenGaveUp {
            slug,
            rounds,
            failed,
        } => format!(
            "gave up on {slug}: checks still fail after {rounds} fix round{} (--until-green {rounds}): {}\n",
            if *rounds == 1 { "" } else { "s" },
            failed.join(", ")
        ),
        Notice::BudgetSpent { slug, why } => {
            format!("stopped sending fix rounds to {slug}: {why}\n")
        }
        Notice::WarmStopped { slug } => format!(
            "stopped {slug}'s warm agent: the next round takes up the session as it is then\n"
        ),
    }
}
