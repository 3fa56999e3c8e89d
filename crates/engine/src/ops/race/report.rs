//! The race's report, `ganger.race/1`: one row per attempt (agent, model, status, checks,
//! pairwise wins and losses, diff size, cost, tokens, time, why it is out), the verdicts with
//! the reviewers' reasons, then the winner and the rule that decided. Built from the store
//! alone, so `ganger status SLUG` shows a running race as it stands and an ended one as it
//! was decided.

use super::decide::{Judged, Rule, decide};
use super::evidence::{AttemptEvidence, Work, gather};
use super::{Decision, attempt_slug};
use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_store::RaceRecord;
use serde::Serialize;

/// The schema of [`RaceReport`].
pub const RACE_SCHEMA: &str = "ganger.race/1";

/// `ganger.race/1`.
#[derive(Debug, Clone, Serialize)]
pub struct RaceReport {
    pub schema: &'static str,
    pub race: String,
    /// `running`, `won` or `failed`.
    pub status: String,
    pub owner: String,
    /// The attempts as given.
    pub spec: String,
    pub first_green: bool,
    pub attempts: Vec<AttemptRow>,
    pub verdicts: Vec<VerdictRow>,
    /// The winning attempt's number and task, once won.
    pub winner: Option<u32>,
    pub winner_task: Option<String>,
    /// The rule that decided, once ended (`tournament`, `smaller-diff`, `first-green`, ...).
    pub rule: Option<Rule>,
    /// The rule in words, and the one-line summary the journal keeps.
    pub rule_text: Option<String>,
    pub line: Option<String>,
}

/// One attempt in the report's table.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptRow {
    pub number: u32,
    pub task: String,
    pub agent: String,
    pub model: Option<String>,
    pub status: String,
    /// Its last round ended done and every check passed.
    pub passed: bool,
    pub checks: Vec<CheckCell>,
    pub wins: u32,
    pub losses: u32,
    pub ties: u32,
    /// Why it is out of the race, when it is (failed checks, a failed round, cancelled).
    pub reason: Option<String>,
    #[serde(flatten)]
    pub work: Work,
}

/// A check of an attempt's last round: `passed` is `None` when it did not run.
#[derive(Debug, Clone, Serialize)]
pub struct CheckCell {
    pub name: String,
    pub passed: Option<bool>,
}

/// A pairwise judgement: attempt `a` shown as A, `b` as B; `winner` the attempt it chose.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictRow {
    pub a: u32,
    pub b: u32,
    /// `A`, `B` or `none`.
    pub side: String,
    pub winner: Option<u32>,
    pub reasons: String,
}

/// The report of `race` as the store has it now.
pub(super) fn build(ws: &Workspace, race: &RaceRecord) -> Result<RaceReport> {
    build_from(ws, race, gather(ws, race)?)
}

/// The report of `race` from its attempts' evidence, gathered already (a race that has just
/// ended: its attempts no longer change).
pub(super) fn build_from(
    ws: &Workspace,
    race: &RaceRecord,
    attempts: Vec<AttemptEvidence>,
) -> Result<RaceReport> {
    let stored = ws.open_store()?.race_verdicts(&race.slug)?;
    let verdicts: Vec<VerdictRow> = stored
        .iter()
        .map(|v| VerdictRow {
            a: v.a,
            b: v.b,
            side: v.winner.clone(),
            winner: match v.winner.as_str() {
                "A" => Some(v.a),
                "B" => Some(v.b),
                _ => None,
            },
            reasons: v.reasons.clone(),
        })
        .collect();
    let judged: Vec<Judged> = stored
        .iter()
        .map(|v| Judged {
            a: v.a,
            b: v.b,
            side: super::judge::side(&v.winner),
        })
        .collect();
    let entrants: Vec<_> = attempts.iter().map(AttemptEvidence::entrant).collect();
    let standings = decide(&entrants, &judged, None).standings;
    let rule: Option<Rule> = race
        .decision
        .as_ref()
        .and_then(|d| serde_json::from_value(d["rule"].clone()).ok());
    let rows = attempts
        .iter()
        .map(|a| {
            let standing = standings.iter().find(|s| s.number == a.number);
            AttemptRow {
                number: a.number,
                task: a.slug.clone(),
                agent: a.agent.clone(),
                model: a.model.clone(),
                status: a.status.clone(),
                passed: a.passed,
                checks: a
                    .checks
                    .iter()
                    .map(|(name, passed)| CheckCell {
                        name: name.clone(),
                        passed: *passed,
                    })
                    .collect(),
                wins: standing.map_or(0, |s| s.wins),
                losses: standing.map_or(0, |s| s.losses),
                ties: standing.map_or(0, |s| s.ties),
                reason: a.reason.clone(),
                work: a.work,
            }
        })
        .collect();
    Ok(RaceReport {
        schema: RACE_SCHEMA,
        race: race.slug.clone(),
        status: race.status.clone(),
        owner: race.owner.clone(),
        spec: race.spec.clone(),
        first_green: race.request["first_green"].as_bool().unwrap_or(false),
        attempts: rows,
        verdicts,
        winner: race.winner,
        winner_task: race.winner.map(|w| attempt_slug(&race.slug, w)),
        rule,
        rule_text: rule.map(|r| r.describe().to_owned()),
        line: race
            .decision
            .as_ref()
            .and_then(|d| d["line"].as_str().map(str::to_owned)),
    })
}

/// The race's end in one line, as the journal keeps it.
pub(super) fn decision_line(slug: &str, decision: &Decision) -> String {
    match decision.winner {
        Some(w) => format!(
            "{} won ({})",
            attempt_slug(slug, w),
            decision.rule.describe()
        ),
        None => format!("no winner: {}", decision.rule.describe()),
    }
}
