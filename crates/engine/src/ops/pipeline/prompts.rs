//! What each role is sent. A hand-off from one role to the next carries the previous role's
//! last answer, trimmed; a reviewer gets the cumulative diff in its prompt.

use crate::task::pipeline::plan_steps::Step;
use crate::task::pipeline::text::{HANDOFF_LIMIT, trim_middle};
use ganger_store::Round;

/// The planner's first round.
pub fn planner(brief: &str) -> String {
    format!(
        "## The task\n\n{brief}\n\nWrite the plan now: numbered steps (`1.`, `2.`, ...), as your instructions say."
    )
}

/// The planner's round after a rejection.
pub fn replan(version: u32, notes: &str, critique: &str) -> String {
    let critique = if critique.is_empty() {
        "(none)"
    } else {
        critique
    };
    format!(
        "Version {version} of your plan was rejected. The notes of the person who decides:\n\n{notes}\n\n\
         ## The critic's findings on version {version}\n\n{}\n\n\
         Write version {} of the whole plan now, in the same form (numbered steps).",
        trim_middle(critique, HANDOFF_LIMIT),
        version + 1
    )
}

/// The critic's round on a version of the plan.
pub fn critic(brief: &str, version: u32, plan: &str) -> String {
    format!(
        "## The task\n\n{brief}\n\n## The plan, version {version} (hand-off from the planner)\n\n{plan}\n\n\
         Review this version of the plan now."
    )
}

/// The executor's round on a step; the first one carries the task, the plan and the
/// critic's last findings.
pub fn step(first: Option<(&str, &str, &str)>, step: &Step, total: u32) -> String {
    let mut out = String::new();
    if let Some((brief, plan, critique)) = first {
        out.push_str(&format!(
            "## The task\n\n{brief}\n\n## The approved plan\n\n{plan}\n\n\
             ## Hand-off from the critic (its last answer)\n\n{}\n\n",
            trim_middle(critique, HANDOFF_LIMIT)
        ));
    }
    out.push_str(&format!(
        "Do step {} of {total} now, and only it:\n\n{}. {}\n",
        step.number, step.number, step.text
    ));
    out
}

/// The executor's fix round after a round whose checks failed (each failing check's command,
/// how it ended and its output, as `--until-green` sends them), or that failed.
pub fn fix_failed_round(round: &Round, step: Option<u32>) -> String {
    let within = step.map_or_else(String::new, |n| format!(" (still step {n})"));
    if round.failed_checks().next().is_some() {
        return format!(
            "{}\nStay within the step you were given{within}.\n",
            crate::evidence::checks::fix_prompt(round)
        );
    }
    format!(
        "Your last round ended {}{}. Finish the work{within}.\n",
        round.status.as_str(),
        round
            .reason
            .as_deref()
            .map_or_else(String::new, |r| format!(": {r}"))
    )
}

/// A reviewer's round: the task, the plan, the executor's hand-off, the diff.
pub fn review(
    brief: &str,
    plan: &str,
    executor_answer: &str,
    base: &str,
    diff: &str,
    round: u32,
) -> String {
    format!(
        "## The task\n\n{brief}\n\n## The plan\n\n{plan}\n\n\
         ## Hand-off from the executor (its last answer)\n\n{}\n\n\
         ## The change: the cumulative diff against {base}\n\n```diff\n{diff}```\n\n\
         This is review round {round}. Answer in the form of your instructions: the first line \
         `VERDICT: pass` or `VERDICT: fail`, then one finding per line as `path:line: text`.",
        trim_middle(executor_answer, HANDOFF_LIMIT)
    )
}

/// The executor's round on what the reviewers found.
pub fn fix_findings(round: u32, failing: &[(String, Vec<String>)]) -> String {
    let mut out = format!("The reviewers found problems in review round {round}. Fix them:\n");
    for (reviewer, findings) in failing {
        out.push_str(&format!("\n### {reviewer}\n\n"));
        for finding in findings {
            out.push_str(&format!("- {finding}\n"));
        }
    }
    out
}

/// A round as stored, for tests: its status, reason and checks, the rest empty.
#[cfg(test)]
pub(crate) fn test_round(status: &str, reason: Option<&str>, checks: serde_json::Value) -> Round {
    serde_json::from_value(serde_json::json!({
        "id": 1, "task_id": 1, "number": 3, "kind": "fix", "status": status,
        "reason": reason, "model": null, "session_before": null, "session": null,
        "commander": "t", "token": "t", "claim": "/x", "host": null, "agent": null,
        "cgroup": null, "cancel_requested": false, "started_at": 0, "progress_at": null,
        "ended_at": null, "exit_code": null, "exit_signal": null, "summary": {},
        "snapshot_before": null, "snapshot_after": null, "changed": [],
        "worktree_changes": [], "checks": checks, "rewound": false
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(status: &str, reason: Option<&str>, checks: serde_json::Value) -> Round {
        test_round(status, reason, checks)
    }

    #[test]
    fn a_fix_round_carries_each_failing_check_with_its_command_and_output() {
        let checks = serde_json::json!([
            { "name": "tests", "command": "cargo test", "timeout_ms": 1000,
              "result": { "passed": false, "exit_code": 101, "signal": null, "timed_out": false,
                          "duration_ms": 5, "tail": "assertion failed: left == right\n",
                          "log": "/x/tests.log" } },
            { "name": "lint", "command": "cargo clippy", "timeout_ms": 1000,
              "result": { "passed": true, "exit_code": 0, "signal": null, "timed_out": false,
                          "duration_ms": 5, "tail": "", "log": "/x/lint.log" } }
        ]);
        let failed = round("failed", Some("checks failed: tests"), checks);
        let text = fix_failed_round(&failed, Some(2));
        assert!(text.contains("(still step 2)"), "{text}");
        assert!(
            text.contains("`tests`: `cargo test` exited with code 101"),
            "{text}"
        );
        assert!(text.contains("assertion failed: left == right"), "{text}");
        assert!(!text.contains("cargo clippy"), "{text}");
    }

    #[test]
    fn a_fix_round_after_a_failed_round_says_why() {
        let text = fix_failed_round(
            &round("failed", Some("the agent exited 1"), serde_json::json!([])),
            None,
        );
        assert_eq!(
            text,
            "Your last round ended failed: the agent exited 1. Finish the work.\n"
        );
    }

    #[test]
    fn findings_go_to_the_executor_by_reviewer() {
        let text = fix_findings(
            1,
            &[(
                "code".to_owned(),
                vec!["src/a.rs:3: the error is dropped".to_owned()],
            )],
        );
        assert!(
            text.contains("### code\n\n- src/a.rs:3: the error is dropped\n"),
            "{text}"
        );
    }
}
