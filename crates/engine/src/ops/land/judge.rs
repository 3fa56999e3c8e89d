//! One check run of a batch: the checks on a commit in the lander's scratch worktree, counted
//! in the batch's report (runs, retries, flaky checks, the probe) and told as a step.

use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::land::checks::Verdict;
use crate::ops::land::context::Lander;
use crate::ops::land::report::{BatchReport, Probe};

/// Runs the checks on `commit` (the tasks `tasks` on the head; none: the head alone).
pub(crate) fn judge(
    lander: &mut Lander<'_>,
    report: &mut BatchReport,
    commit: &str,
    tasks: Vec<String>,
    notices: &mut dyn Notices,
) -> Result<Verdict> {
    let place = lander
        .place
        .as_ref()
        .ok_or_else(|| crate::base::error::EngineError::invalid("a check run outside a batch"))?;
    let confine = |command| place.confine(lander.ws, command);
    let verdict = lander
        .scratch
        .judge(commit, &lander.checks, &confine, &|token| {
            place.after(token)
        })?;
    report.check_runs += 1;
    report.retries += verdict.retries;
    for name in &verdict.flaky {
        if !report.flaky.contains(name) {
            report.flaky.push(name.clone());
        }
    }
    let failed: Vec<String> = verdict.failed.iter().map(|f| f.name.clone()).collect();
    let what = if tasks.is_empty() {
        format!("{} alone", lander.base)
    } else {
        tasks.join(" + ")
    };
    let mut line = format!(
        "batch {} check run {}: {what}: {}",
        report.batch,
        report.check_runs,
        if verdict.green() {
            "green".to_owned()
        } else {
            format!("red ({})", failed.join(", "))
        }
    );
    if !verdict.flaky.is_empty() {
        line.push_str(&format!("; flaky: {}", verdict.flaky.join(", ")));
    }
    report.probes.push(Probe {
        tasks,
        green: verdict.green(),
        failed,
        flaky: verdict.flaky.clone(),
    });
    lander.step(report, "check-run", line, notices)?;
    Ok(verdict)
}
