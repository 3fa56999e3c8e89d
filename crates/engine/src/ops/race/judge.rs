//! The tournament's reviews. The judge is a read-only role: `[roles.judge]` of `ganger.toml`,
//! its unset keys taken from the pipeline's `code` reviewer (`[roles.code]`), then from
//! `[defaults]`. Each judgement is a round of a task of its own (`SLUG.jAvB`: attempt A shown
//! first), in a fresh worktree at the base, so it sees the brief and the two diffs and
//! nothing of either attempt's files; its answer's `WINNER: A` or `WINNER: B` is recorded in
//! the store once, with the reasons. A driver that resumes asks only what is not recorded.

use super::decide::{Decision, Judged, Side, decide, judgements_needed};
use super::evidence::AttemptEvidence;
use super::say;
use crate::base::brief::Brief;
use crate::base::error::{ErrorKind, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::launch::Launched;
use crate::round::reaper::settle_task;
use crate::task::fix::{FixOptions, fix};
use crate::task::race_request::Request;
use crate::task::start::{StartOptions, start};
use ganger_events::RoundStatus;
use ganger_store::{RaceRecord, RaceVerdict};

/// The most of one diff a judge is shown (the rest is in the attempt's worktree).
const DIFF_SHOWN: usize = 24_000;

/// The most of a judge's reasons kept with its verdict.
const REASONS_KEPT: usize = 2_000;

const INSTRUCTIONS: &str = include_str!("judge.md");

/// Decides the race: the survivors' pairs judged first where the rule needs them.
pub(super) fn decide_with_reviews(
    ws: &Workspace,
    race: &RaceRecord,
    attempts: &[AttemptEvidence],
    first_green: Option<u32>,
    notices: &mut dyn Notices,
) -> Result<Decision> {
    let entrants: Vec<_> = attempts.iter().map(AttemptEvidence::entrant).collect();
    let survivors: Vec<u32> = attempts
        .iter()
        .filter(|a| a.passed)
        .map(|a| a.number)
        .collect();
    let mut judged = Vec::new();
    if first_green.is_none() && survivors.len() > 1 {
        let recorded = ws.open_store()?.race_verdicts(&race.slug)?;
        for (a, b) in judgements_needed(&survivors) {
            let verdict = match recorded.iter().find(|v| v.a == a && v.b == b) {
                Some(verdict) => verdict.clone(),
                None => judge(ws, race, attempts, a, b, notices)?,
            };
            judged.push(Judged {
                a,
                b,
                side: side(&verdict.winner),
            });
        }
    }
    Ok(decide(&entrants, &judged, first_green))
}

pub(super) fn side(winner: &str) -> Side {
    match winner {
        "A" => Side::A,
        "B" => Side::B,
        _ => Side::None,
    }
}

/// The judge's agent, model and instructions.
pub(super) fn judge_role(ws: &Workspace) -> (String, Option<String>, String) {
    let (agent, model, prompt) = crate::task::race_judge::judge_agent(ws);
    let instructions = prompt
        .and_then(|path| std::fs::read_to_string(ws.repo.main.join(path)).ok())
        .unwrap_or_else(|| INSTRUCTIONS.to_owned());
    (agent, model, instructions)
}

/// Judges attempt `a` (side A) against `b` (side B) and records the verdict.
fn judge(
    ws: &Workspace,
    race: &RaceRecord,
    attempts: &[AttemptEvidence],
    a: u32,
    b: u32,
    notices: &mut dyn Notices,
) -> Result<RaceVerdict> {
    let (agent, model, instructions) = judge_role(ws);
    let slug = format!("{}.j{a}v{b}", race.slug);
    let brief = race.request["brief"].as_str().unwrap_or_default();
    let prompt = prompt(
        ws,
        &instructions,
        brief,
        &attempts[a as usize - 1],
        &attempts[b as usize - 1],
    );
    say(
        notices,
        &race.slug,
        format!("judging attempt {a} (A) against attempt {b} (B) in {slug} ({agent})"),
    );
    let answer = match judge_round(ws, race, &slug, &agent, model, prompt, notices)? {
        Ok(round_answer) => round_answer,
        Err(why) => format!("(no verdict: {why})"),
    };
    let (winner, reasons) = parse_verdict(&answer);
    let verdict = RaceVerdict {
        a,
        b,
        winner: winner.into(),
        reasons,
    };
    let recorded = ws.open_store()?.record_race_verdict(&race.slug, &verdict)?;
    say(
        notices,
        &race.slug,
        format!(
            "{}: WINNER {} ({})",
            slug,
            recorded.winner,
            attempt_of(&recorded, a, b)
        ),
    );
    Ok(recorded)
}

fn attempt_of(verdict: &RaceVerdict, a: u32, b: u32) -> String {
    match verdict.winner.as_str() {
        "A" => format!("attempt {a}"),
        "B" => format!("attempt {b}"),
        _ => "no verdict".into(),
    }
}

/// Runs (or, resumed, finishes) the judge's round; its answer, or why it gave none.
fn judge_round(
    ws: &Workspace,
    race: &RaceRecord,
    slug: &str,
    agent: &str,
    model: Option<String>,
    prompt: String,
    notices: &mut dyn Notices,
) -> Result<std::result::Result<String, String>> {
    let mut store = ws.open_store()?;
    let existing = store.task(slug)?;
    if let Some(task) = &existing {
        // A judge whose driver died: its round is settled (or waited for) first.
        if let Some(round) = store.round(task.id, None)?
            && round.status == RoundStatus::Running
        {
            store.wait_for_end(&round.claim, None)?;
            settle_task(ws, &mut *store, task, notices)?;
        }
        if let Some(round) = store.round(task.id, None)?
            && round.status == RoundStatus::Done
        {
            return Ok(Ok(super::judge_answer::answer_of(ws, slug, &round)));
        }
    }
    drop(store);
    let start_options = StartOptions {
        slug: slug.to_owned(),
        brief: Some(Brief::Message(prompt.clone())),
        agent: Some(agent.to_owned()),
        model,
        permission: Some(ganger_agents::Permission::ReadOnly),
        commander: Some(race.owner.clone()),
        // The attempts' fleet: the race's own, or the fleet file's (whose budget holds
        // them, beside the race's own).
        fleet: Some(Request::fleet_of(race)),
        dotted: true,
        ..StartOptions::default()
    };
    // With `--queue`, through serve's queue and limits; a fleet file's race is judged here
    // (its `fleet run` may have ended by then, and nothing would serve the queue).
    if Request::queued(race) && race.request.get("fleet").is_none_or(|f| f.is_null()) {
        return super::judge_queued::judge_round_queued(ws, race, &start_options, &prompt, notices);
    }
    let launched = match existing {
        None => start(ws, start_options, notices),
        Some(_) => fix(
            ws,
            FixOptions {
                slug: slug.to_owned(),
                brief: Some(Brief::Message(prompt)),
                model: None,
                keys: Vec::new(),
                commander: Some(race.owner.clone()),
                detach: false,
                checks: Vec::new(),
                until_green: None,
                interrupt: false,
            },
            notices,
        ),
    };
    match launched {
        Ok(Launched::Finished(outcome)) if outcome.round.status == RoundStatus::Done => {
            Ok(Ok(super::judge_answer::answer_of(ws, slug, &outcome.round)))
        }
        Ok(Launched::Finished(outcome)) => Ok(Err(format!(
            "the judge's round ended {}",
            outcome.round.status.as_str()
        ))),
        Ok(Launched::Detached { .. }) => Ok(Err("the judge's round was detached".into())),
        // A budget spent, a refused model: the pair is a tie, the rule goes on.
        Err(e) if e.kind == ErrorKind::Invalid => Ok(Err(e.message)),
        Err(e) => Err(e),
    }
}

/// The judge's prompt: its instructions, the brief, and the two diffs.
fn prompt(
    ws: &Workspace,
    instructions: &str,
    brief: &str,
    a: &AttemptEvidence,
    b: &AttemptEvidence,
) -> String {
    format!(
        "# Your role: judge\n\n{}\n\n---\n\n## The brief\n\n{}\n\n## Attempt A\n\n{}\n\n## Attempt B\n\n{}\n\n\
         Answer with `WINNER: A` or `WINNER: B` on the first line, then your reasons.\n",
        instructions.trim_end(),
        brief.trim_end(),
        diff_text(ws, a),
        diff_text(ws, b)
    )
}

fn diff_text(ws: &Workspace, attempt: &AttemptEvidence) -> String {
    let Some((from, to)) = &attempt.ends else {
        return "(no change)".into();
    };
    let patch = ws
        .repo
        .diff_commits(from, to, false, false)
        .unwrap_or_default();
    let mut text = String::from_utf8_lossy(&patch).into_owned();
    if text.len() > DIFF_SHOWN {
        let mut cut = DIFF_SHOWN;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[... the rest of the diff is cut]");
    }
    format!("```diff\n{}\n```", text.trim_end())
}

/// `WINNER: A` or `WINNER: B` from the first line that names a winner (any case, Markdown
/// emphasis allowed), and the other lines as the reasons; `none` when no line does.
pub(super) fn parse_verdict(answer: &str) -> (&'static str, String) {
    let mut winner = "none";
    let mut reasons = Vec::new();
    for line in answer.lines() {
        let bare = line
            .trim()
            .trim_matches(|c| c == '*' || c == '#' || c == '`' || c == ' ');
        let upper = bare.to_ascii_uppercase();
        if winner == "none"
            && let Some(rest) = upper.strip_prefix("WINNER:")
        {
            let side = rest.trim_start().trim_start_matches(['*', '`']);
            let after = side.get(1..).unwrap_or("");
            let alone = !after.starts_with(|c: char| c.is_ascii_alphanumeric());
            winner = match side.get(..1) {
                Some("A") if alone => "A",
                Some("B") if alone => "B",
                _ => "none",
            };
            if winner != "none" {
                // What follows the side on its line is a reason: `WINNER: A (smaller)`.
                let rest = bare[bare.len() - after.len()..].trim_matches(|c: char| {
                    c.is_whitespace() || matches!(c, '*' | '`' | '.' | ':' | '-' | '—' | ',')
                });
                if !rest.is_empty() {
                    reasons.push(rest);
                }
                continue;
            }
        }
        if !line.trim().is_empty() {
            reasons.push(line.trim());
        }
    }
    let mut reasons = reasons.join("\n");
    if reasons.len() > REASONS_KEPT {
        let mut cut = REASONS_KEPT;
        while !reasons.is_char_boundary(cut) {
            cut -= 1;
        }
        reasons.truncate(cut);
    }
    (winner, reasons)
}

#[cfg(test)]
mod tests {
    use super::parse_verdict;

    #[test]
    fn a_verdict_is_read_from_the_first_line_that_names_a_winner() {
        let cases = [
            ("WINNER: A\nsmaller and tested", "A", "smaller and tested"),
            (
                "winner: b\n- B handles the empty case",
                "B",
                "- B handles the empty case",
            ),
            ("**WINNER: B**", "B", ""),
            (
                "Looking at both.\nWINNER: A.\nA is simpler",
                "A",
                "Looking at both.\nA is simpler",
            ),
            ("WINNER: A\nWINNER: B", "A", "WINNER: B"),
            (
                "Reasons first.\nWINNER: B (it handles the empty case)",
                "B",
                "Reasons first.\n(it handles the empty case)",
            ),
            ("WINNER: A - smaller, tested", "A", "smaller, tested"),
            ("**WINNER: B** (Kept Case)", "B", "(Kept Case)"),
            ("WINNER: AB", "none", "WINNER: AB"),
            ("WINNER: Attempt A", "none", "WINNER: Attempt A"),
            ("WINNER: C\nno idea", "none", "WINNER: C\nno idea"),
            ("I prefer A", "none", "I prefer A"),
            ("", "none", ""),
        ];
        for (answer, winner, reasons) in cases {
            assert_eq!(
                parse_verdict(answer),
                (winner, reasons.to_owned()),
                "{answer:?}"
            );
        }
    }
}
