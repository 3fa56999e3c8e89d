//! The human form of a pipeline's report: stage, plan, reviewers' verdicts, roles, and what
//! to do next.

use ganger_engine::PipelineReport;
use std::fmt::Write;

/// A pipeline report as text.
pub fn pipeline_text(report: &PipelineReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pipeline: {}, stage {}", report.task, report.stage);
    if let Some(reason) = &report.reason {
        let _ = writeln!(out, "why: {reason}");
    }
    let plan = &report.plan;
    let file = plan
        .file
        .as_ref()
        .map_or_else(|| "(none yet)".to_owned(), |f| f.display().to_string());
    let _ = writeln!(
        out,
        "plan: {file}, version {}, {} of {} steps done",
        plan.version, plan.steps_done, plan.steps_total
    );
    for (index, step) in plan.steps.iter().enumerate() {
        let mark = if (index as u32) < plan.steps_done {
            "x"
        } else {
            " "
        };
        let _ = writeln!(out, "  [{mark}] {}. {step}", index + 1);
    }
    let _ = writeln!(
        out,
        "reviews: round {} of at most {}",
        report.review_round, report.review_rounds
    );
    for verdict in &report.reviewers {
        let round = if verdict.round > 0 {
            format!(" (round {})", verdict.round)
        } else {
            String::new()
        };
        let _ = writeln!(out, "  {}: {}{round}", verdict.reviewer, verdict.verdict);
        for finding in &verdict.findings {
            let _ = writeln!(out, "    {finding}");
        }
    }
    if !report.roles.is_empty() {
        let _ = writeln!(out, "roles:");
    }
    for role in &report.roles {
        let _ = writeln!(
            out,
            "  {:<9} {:<28} {} {} {}, {} rounds, last {}, session {}",
            role.role,
            role.task,
            role.agent,
            role.model.as_deref().unwrap_or("(default model)"),
            role.permission,
            role.rounds,
            role.last_status.map_or("-", |s| s.as_str()),
            role.session.as_deref().unwrap_or("-")
        );
    }
    let next = match report.stage.as_str() {
        "awaiting-approval" => format!(
            "next: `ganger approve {0}`, or `ganger reject {0} --message NOTES`",
            report.task
        ),
        "done" => format!("next: `ganger diff {}`", report.task),
        "failed" if report.roles.iter().any(|r| r.role == "executor") => format!(
            "next: `ganger approve {}` goes on from where it stopped",
            report.task
        ),
        "failed" => format!(
            "next: `ganger reject {} --message NOTES` asks for a new plan",
            report.task
        ),
        _ => String::new(),
    };
    if !next.is_empty() {
        let _ = writeln!(out, "{next}");
    }
    out
}
