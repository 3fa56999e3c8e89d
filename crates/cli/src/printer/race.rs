//! The human form of a race's report: one table of the attempts, why each one out is out,
//! the reviewers' verdicts with their reasons, then the winner and the rule that decided.

use ganger_engine::race::{AttemptRow, RaceReport};
use std::fmt::Write;

/// A race's report as text.
/// The status column holds the longest status (`not-started`, `interrupted`: 11), so that no
/// row's later columns move.
pub fn race_text(report: &RaceReport) -> String {
    let mut out = String::new();
    let first = if report.first_green {
        ", --first-green"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "race: {}, {} ({}{first})",
        report.race, report.status, report.spec
    );
    let _ = writeln!(
        out,
        "{:<3} {:<20} {:<9} {:<24} {:<11} {:<7} {:<7} {:>5} {:>13} {:>9} {:>8} {:>7}",
        "#",
        "task",
        "agent",
        "model",
        "status",
        "checks",
        "w-l-t",
        "files",
        "lines +/-",
        "cost",
        "tokens",
        "time"
    );
    for row in &report.attempts {
        let _ = writeln!(
            out,
            "{:<3} {:<20} {:<9} {:<24} {:<11} {:<7} {:<7} {:>5} {:>13} {:>9} {:>8} {:>7}",
            row.number,
            row.task,
            dash(&row.agent),
            row.model.as_deref().unwrap_or("-"),
            row.status,
            checks(row),
            format!("{}-{}-{}", row.wins, row.losses, row.ties),
            row.work.files,
            format!("+{}/-{}", row.work.added, row.work.removed),
            format!("${:.4}", row.work.cost_usd),
            row.work.tokens,
            format!("{:.1}s", row.work.seconds),
        );
    }
    for row in report.attempts.iter().filter(|r| r.reason.is_some()) {
        let _ = writeln!(
            out,
            "  {} out: {}",
            row.task,
            row.reason.as_deref().unwrap_or_default()
        );
    }
    if !report.verdicts.is_empty() {
        let _ = writeln!(out, "reviews (A first):");
    }
    for verdict in &report.verdicts {
        let chose = verdict
            .winner
            .map_or_else(|| "no verdict".to_owned(), |w| format!("attempt {w}"));
        let _ = writeln!(
            out,
            "  {} v {}: WINNER {} = {chose}",
            verdict.a, verdict.b, verdict.side
        );
        for line in verdict
            .reasons
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(6)
        {
            let _ = writeln!(out, "    {line}");
        }
    }
    match (&report.winner_task, &report.rule_text) {
        (Some(task), Some(rule)) => {
            let _ = writeln!(out, "winner: {task}");
            let _ = writeln!(out, "rule: {rule}");
            let _ = writeln!(
                out,
                "next: `ganger diff {task}`, `ganger merge {}`",
                report.race
            );
        }
        (None, Some(rule)) => {
            let _ = writeln!(out, "no winner: {rule}");
        }
        _ => {
            let _ = writeln!(
                out,
                "the race is still running: `ganger status SLUG` shows it as it goes"
            );
        }
    }
    out
}

fn dash(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}

/// `pass`, `-` (no check ran, or none yet) or `n/m ok` (n of the m checks passed).
fn checks(row: &AttemptRow) -> String {
    if row.checks.iter().all(|c| c.passed.is_none()) {
        return "-".into();
    }
    let passed = row.checks.iter().filter(|c| c.passed == Some(true)).count();
    if passed == row.checks.len() {
        "pass".into()
    } else {
        format!("{passed}/{} ok", row.checks.len())
    }
}

#[cfg(test)]
mod tests {
    use super::race_text;
    use ganger_engine::race::{AttemptRow, RaceReport, Work};

    fn row(number: u32, status: &str) -> AttemptRow {
        AttemptRow {
            number,
            task: format!("r.{number}"),
            agent: "command".to_owned(),
            model: Some("m".to_owned()),
            status: status.to_owned(),
            passed: false,
            checks: Vec::new(),
            wins: 0,
            losses: 0,
            ties: 0,
            reason: None,
            work: Work {
                rounds: 1,
                files: 1,
                added: 1,
                removed: 0,
                cost_usd: 0.0,
                tokens: 0,
                seconds: 0.0,
            },
        }
    }

    #[test]
    fn every_status_keeps_the_columns_after_it_in_place() {
        let statuses = ["done", "failed", "not-started", "interrupted", "cancelled"];
        let report = RaceReport {
            schema: ganger_engine::race::RACE_SCHEMA,
            race: "r".to_owned(),
            status: "won".to_owned(),
            owner: "me".to_owned(),
            spec: "command*5".to_owned(),
            first_green: true,
            attempts: (1..).zip(statuses).map(|(n, s)| row(n, s)).collect(),
            verdicts: Vec::new(),
            winner: None,
            winner_task: None,
            rule: None,
            rule_text: None,
            line: None,
        };
        let text = race_text(&report);
        let lines: Vec<&str> = text.lines().skip(1).take(1 + statuses.len()).collect();
        let checks = lines[0].find("checks").unwrap();
        for line in &lines[1..] {
            assert_eq!(line.find(" -  ").map(|at| at + 1), Some(checks), "{text}");
            assert_eq!(line.len(), lines[1].len(), "{text}");
        }
    }
}
