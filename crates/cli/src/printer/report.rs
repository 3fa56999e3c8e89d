//! Human text for the report of one round (`ganger wait`, `status SLUG`, `round`): one
//! function per section, in the order the report shows them, plain lines readable without
//! colour, with long things clipped and a pointer to where the whole is.

use ganger_engine::TreeMade;
use ganger_engine::report::{Clipped, RoundReport};
use ganger_events::{Network, Permission, SandboxKind};
use std::fmt::Write;

/// The report of one round.
pub fn report_text(report: &RoundReport) -> String {
    let mut out = String::new();
    for section in SECTIONS {
        section(&mut out, report);
    }
    out
}

/// The report's sections, in order.
const SECTIONS: [fn(&mut String, &RoundReport); 12] = [
    place, agent, warm, times, status, events, spending, troubles, answer, checks, changes, files,
];

/// The task, round and branch, and the worktree.
fn place(out: &mut String, report: &RoundReport) {
    let _ = writeln!(
        out,
        "task: {}, round {} ({}), branch {}",
        report.task, report.round, report.kind, report.branch
    );
    let gone = if report.worktree_gone { " (gone)" } else { "" };
    let made = match report.tree {
        Some(TreeMade::Pool) => " (ready from the pool)",
        Some(TreeMade::Reflink) => " (a reflink copy of the cached tree)",
        Some(TreeMade::Overlay) => " (an overlay on the cached tree)",
        Some(TreeMade::Checkout) | None => "",
    };
    let shared = super::human::shared_words(&report.shared);
    let _ = writeln!(
        out,
        "worktree: {}{gone}{made}{shared}",
        report.worktree.display()
    );
}

/// The agent, what it may do, its model and sandbox; and its session.
fn agent(out: &mut String, report: &RoundReport) {
    let read_only = if report.permission == Permission::ReadOnly {
        " (read-only)"
    } else {
        ""
    };
    let sandbox = match (report.sandbox, report.network) {
        (SandboxKind::Local, _) => String::new(),
        (kind, Network::None) => format!(", sandbox: {kind}, no network"),
        (kind, Network::Gateway) => format!(", sandbox: {kind}, network: gateway only"),
        (kind, Network::Shared) => format!(", sandbox: {kind}"),
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
}

/// The warm agent that runs the task's rounds, if one does.
fn warm(out: &mut String, report: &RoundReport) {
    let Some(warm) = &report.warm else {
        return;
    };
    let _ = writeln!(
        out,
        "warm agent: pid {} (host {}{}), {} MB, {} turn(s), {}",
        warm.agent_pid,
        warm.host_pid,
        warm.kept_by
            .map(|pid| format!(
                ", kept by ganger {} {pid}",
                warm.kept_by_command.as_deref().unwrap_or("serve")
            ))
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

/// When the round started and ended, and how long it took.
fn times(out: &mut String, report: &RoundReport) {
    let mut when = format!("started: {}", report.started_at);
    if let Some(ended) = &report.ended_at {
        let _ = write!(when, ", ended {ended}");
    }
    if let Some(ms) = report.duration_ms {
        let _ = write!(when, " ({})", seconds(ms));
    }
    let _ = writeln!(out, "{when}");
}

/// The status, how the agent's process ended, the reason and what `done` says.
fn status(out: &mut String, report: &RoundReport) {
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
}

/// The events by kind, and the lines that were not events.
fn events(out: &mut String, report: &RoundReport) {
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
}

/// The cost and tokens, and what was spent of the task's and its fleet's budgets.
fn spending(out: &mut String, report: &RoundReport) {
    let cost = report
        .cost_usd
        .map_or_else(|| "not reported".to_owned(), |c| format!("${c:.4}"));
    let _ = writeln!(
        out,
        "cost: {cost}, tokens {} in / {} out",
        report.tokens.input, report.tokens.output
    );
    if let Some(gateway) = &report.gateway {
        gateway_line(out, report, gateway);
    }
    let Some(budget) = &report.budget else {
        return;
    };
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

/// What the model gateway counted: its requests, and its tokens when they differ from the
/// agent's (requests the agent does not count, such as title calls), and what it refused.
fn gateway_line(out: &mut String, report: &RoundReport, gateway: &ganger_events::GatewayTally) {
    let mut line = format!("gateway: {} model requests", gateway.requests);
    let (input, output) = (gateway.input_tokens, gateway.output_tokens);
    if (input, output) != (report.tokens.input, report.tokens.output) {
        let _ = write!(
            line,
            ", tokens {input} in / {output} out by its count (the agent reported {} / {})",
            report.tokens.input, report.tokens.output
        );
    }
    if gateway.tunnels > 0 {
        let _ = write!(line, ", {} tunnels", gateway.tunnels);
    }
    let _ = writeln!(out, "{line}");
    if gateway.refused_count > 0 {
        let _ = writeln!(out, "gateway refused {}:", gateway.refused_count);
        for refusal in &gateway.refused {
            let _ = writeln!(out, "  {refusal}");
        }
    }
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

/// The agent's errors, ganger's rejections of what it did, and the end of its stderr.
fn troubles(out: &mut String, report: &RoundReport) {
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
}

/// The worker's last answer, clipped, with where the whole is.
fn answer(out: &mut String, report: &RoundReport) {
    let Some(answer) = &report.answer else {
        let _ = writeln!(out, "worker's last answer: none");
        return;
    };
    let _ = writeln!(out, "worker's last answer:");
    for line in answer.lines() {
        let _ = writeln!(out, "  {line}");
    }
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

/// The paths the round changed, and those changed in the worktree.
fn changes(out: &mut String, report: &RoundReport) {
    paths(
        out,
        "changed in this round",
        &report.changed,
        &format!("ganger diff {}", report.task),
    );
    paths(
        out,
        "worktree changes",
        &report.worktree_changes,
        &format!("git -C {} status --short", report.worktree.display()),
    );
}

/// A list of paths, clipped, with the command that shows them all.
fn paths(out: &mut String, title: &str, list: &Clipped, more: &str) {
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

/// Where the round's files are.
fn files(out: &mut String, report: &RoundReport) {
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
}

/// A duration for people: tenths of a second below ten seconds, minutes from ten minutes.
fn seconds(ms: i64) -> String {
    if ms < 10_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 600_000 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} min", ms / 60_000)
    }
}
