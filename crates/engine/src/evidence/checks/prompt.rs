//! The fix round `--until-green` sends when checks fail: each failing check's command, how it
//! ended and the end of its output, and what is asked.

use ganger_store::{CheckRun, Round};

/// The prompt of the round after `round`, whose checks failed.
pub(crate) fn fix_prompt(round: &Round) -> String {
    let failed: Vec<&CheckRun> = round.failed_checks().collect();
    let mut prompt = format!(
        "ganger ran this task's checks in the worktree after your last round, and {} failed. \
         Fix the code so that every check passes; do not change the checks themselves. \
         ganger runs them again after this round.\n",
        if failed.len() == 1 {
            "one of them".to_owned()
        } else {
            format!("{} of them", failed.len())
        }
    );
    for check in failed {
        let Some(result) = &check.result else {
            continue;
        };
        let ended = if result.timed_out {
            format!(
                "was stopped after {} s, its time limit",
                check.timeout_ms / 1000
            )
        } else if let Some(code) = result.exit_code {
            format!("exited with code {code}")
        } else {
            format!("was killed by signal {}", result.signal.unwrap_or(0))
        };
        prompt.push_str(&format!(
            "\n## Check `{}`: `{}` {ended}\n\nThe end of its output:\n\n```\n{}\n```\n",
            check.name, check.command, result.tail
        ));
    }
    prompt
}
