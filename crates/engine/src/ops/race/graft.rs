//! `ganger race SLUG --graft`: one fix round for the race's winner with what only the other
//! passing attempts did, for it to adopt or reject: their hunks in files the winner left
//! alone (each loser's diff against the base, cut to those files), and the reviewers' reasons
//! against the winner (each verdict of a pair the winner lost). Built from the store and git
//! alone; the round itself is an ordinary `fix` of the winner's task.

use super::decide::Side;
use super::evidence::{AttemptEvidence, gather};
use super::{attempt_slug, judge::side};
use crate::base::brief::Brief;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::fix::FixOptions;
use std::collections::BTreeSet;

/// The most of one loser's hunks put in the round's brief (the rest is in its worktree).
const HUNKS_SHOWN: usize = 24_000;

/// The fix round `--graft` sends: to the winner's task, with a brief of the losers' hunks and
/// the reasons against it. Refused (nothing sent) for a race still running, one without a
/// winner, and one with nothing to graft.
pub fn graft_request(ws: &Workspace, slug: &str) -> Result<FixOptions> {
    let Some(store) = ws.existing_store()? else {
        return Err(EngineError::not_found(format!("no race {slug}")));
    };
    let Some(race) = store.race(slug)? else {
        return Err(EngineError::not_found(format!("no race {slug}")));
    };
    let winner = match (race.status.as_str(), race.winner) {
        ("running", _) => {
            return Err(EngineError::invalid(format!(
                "race {slug} is still running; graft once it has a winner"
            )));
        }
        (_, Some(winner)) => winner,
        (status, None) => {
            return Err(EngineError::invalid(format!(
                "race {slug} has no winner ({status}): nothing to graft onto"
            )));
        }
    };
    let attempts = gather(ws, &race)?;
    let won = attempts
        .iter()
        .find(|a| a.number == winner)
        .ok_or_else(|| EngineError::invalid(format!("race {slug} lost its winner's record")))?;
    let left_alone = |attempt: &AttemptEvidence| -> Vec<String> {
        let theirs = changed_files(ws, attempt);
        let own: BTreeSet<String> = changed_files(ws, won).into_iter().collect();
        theirs.into_iter().filter(|f| !own.contains(f)).collect()
    };
    let mut hunks = Vec::new();
    for loser in attempts.iter().filter(|a| a.passed && a.number != winner) {
        let files = left_alone(loser);
        if let (Some((base, snapshot)), false) = (&loser.ends, files.is_empty()) {
            let mut args = vec![
                "diff",
                "--no-renames",
                base.as_str(),
                snapshot.as_str(),
                "--",
            ];
            args.extend(files.iter().map(String::as_str));
            let patch = ws.repo.git().text(args)?;
            hunks.push((loser, patch));
        }
    }
    let reasons = reasons_against(&*store, slug, winner)?;
    if hunks.is_empty() && reasons.is_empty() {
        return Err(EngineError::invalid(format!(
            "race {slug}: nothing to graft: no passing attempt changed a file the winner left \
             alone, and no reviewer gave a reason against it"
        )));
    }
    Ok(FixOptions {
        slug: attempt_slug(slug, winner),
        brief: Some(Brief::Message(brief(slug, &hunks, &reasons))),
        ..FixOptions::default()
    })
}

/// The files an attempt changed against its base.
fn changed_files(ws: &Workspace, attempt: &AttemptEvidence) -> Vec<String> {
    let Some((base, snapshot)) = &attempt.ends else {
        return Vec::new();
    };
    ws.repo
        .git()
        .text(["diff", "--name-only", "--no-renames", base, snapshot])
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The reasons of each verdict that named the other side of a pair with the winner in it.
fn reasons_against(
    store: &dyn ganger_store::Backend,
    slug: &str,
    winner: u32,
) -> Result<Vec<(u32, String)>> {
    Ok(store
        .race_verdicts(slug)?
        .into_iter()
        .filter_map(|v| {
            let other = match side(&v.winner) {
                Side::A if v.b == winner => v.a,
                Side::B if v.a == winner => v.b,
                _ => return None,
            };
            let reasons = v.reasons.trim();
            (!reasons.is_empty()).then(|| (other, reasons.to_owned()))
        })
        .collect())
}

fn brief(slug: &str, hunks: &[(&AttemptEvidence, String)], reasons: &[(u32, String)]) -> String {
    let mut text = format!(
        "Your attempt won race {slug}. Other attempts that passed their checks did what follows. \
         Adopt what makes your work better and reject the rest; keep the checks passing.\n"
    );
    if !hunks.is_empty() {
        text.push_str("\n## What they changed in files you left alone\n");
    }
    for (loser, patch) in hunks {
        let shown: String = patch.chars().take(HUNKS_SHOWN).collect();
        let cut = if shown.len() < patch.len() {
            "\n(cut here)"
        } else {
            ""
        };
        text.push_str(&format!(
            "\n### Attempt {} ({})\n\n```diff\n{}{cut}\n```\n",
            loser.number,
            loser.slug,
            shown.trim_end()
        ));
    }
    if !reasons.is_empty() {
        text.push_str("\n## What reviewers held against your attempt\n");
    }
    for (other, why) in reasons {
        text.push_str(&format!("\n- preferring attempt {other}: {why}\n"));
    }
    text
}
