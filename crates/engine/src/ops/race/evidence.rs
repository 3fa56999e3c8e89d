//! What each attempt demonstrably did, read from the store and git once it has ended: its
//! last round's status and checks, why it failed, its diff against its base (files, lines
//! added and removed, from its last snapshot), what it spent and how long it took.

use super::attempt_slug;
use super::decide::Entrant;
use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_events::RoundStatus;
use ganger_store::{Backend, QueueItem, RaceRecord, Round, Task};
use serde::Serialize;

/// What an attempt did, in figures: its rounds, its diff against its base (files, lines
/// added and removed), what it spent, and its time from its first round's start to its last
/// round's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Work {
    pub rounds: u32,
    pub files: u64,
    pub added: u64,
    pub removed: u64,
    pub cost_usd: f64,
    pub tokens: u64,
    pub seconds: f64,
}

/// One attempt's evidence.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AttemptEvidence {
    pub number: u32,
    pub slug: String,
    pub task_id: Option<i64>,
    pub agent: String,
    pub model: Option<String>,
    /// The last round's status (`not-started` before its task exists).
    pub status: String,
    pub passed: bool,
    /// Each check of the last round: its name and whether it passed (`None`: it did not run).
    pub checks: Vec<(String, Option<bool>)>,
    /// Why it is out of the race, when it is.
    pub reason: Option<String>,
    pub work: Work,
    pub finished_at: Option<i64>,
    /// Its base commit and its last snapshot: the two ends of its diff.
    pub ends: Option<(String, String)>,
}

impl AttemptEvidence {
    pub(super) fn entrant(&self) -> Entrant {
        Entrant {
            number: self.number,
            passed: self.passed,
            lines: self.work.added + self.work.removed,
            cost_usd: self.work.cost_usd,
            finished_at: self.finished_at,
        }
    }
}

/// The evidence of every attempt of `race`, in order.
pub(super) fn gather(ws: &Workspace, race: &RaceRecord) -> Result<Vec<AttemptEvidence>> {
    let store = ws.open_store()?;
    let queued = super::queued::items(&*store, race)?;
    let mut attempts = (1..=race.attempts)
        .map(|number| {
            let slug = attempt_slug(&race.slug, number);
            match store.task(&slug)? {
                Some(task) => of_attempt(&*store, task, number, slug),
                None => Ok(not_started(number, slug.clone(), queued.get(&slug))),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let ends: Vec<_> = attempts.iter().map(|a| a.ends.clone()).collect();
    for (attempt, (files, added, removed)) in attempts.iter_mut().zip(sizes(ws, &ends)) {
        attempt.work.files = files;
        attempt.work.added = added;
        attempt.work.removed = removed;
    }
    Ok(attempts)
}

/// An attempt's evidence but its diff's size, which [`gather`] adds.
fn of_attempt(
    store: &dyn Backend,
    task: Task,
    number: u32,
    slug: String,
) -> Result<AttemptEvidence> {
    let rounds = store.rounds(task.id)?;
    let kept: Vec<&Round> = rounds.iter().filter(|r| !r.rewound).collect();
    let Some(last) = kept.last() else {
        return Ok(AttemptEvidence {
            task_id: Some(task.id),
            ..not_started(number, slug, None)
        });
    };
    let spent = store.task_spent(task.id, None)?;
    let first_start = kept.first().map_or(last.started_at, |r| r.started_at);
    let ends = diff_ends(&task, last);
    Ok(AttemptEvidence {
        number,
        slug,
        task_id: Some(task.id),
        agent: task.agent.clone(),
        model: last.model.clone().or(task.model.clone()),
        status: last.status.as_str().to_owned(),
        passed: last.checks_passed(),
        checks: last
            .checks
            .iter()
            .map(|c| (c.name.clone(), c.result.as_ref().map(|r| r.passed)))
            .collect(),
        // A round still running is not out of anything yet.
        reason: (last.status != RoundStatus::Running && !last.checks_passed())
            .then(|| why_out(last)),
        work: Work {
            rounds: kept.len() as u32,
            cost_usd: spent.usd,
            tokens: spent.tokens,
            seconds: last
                .ended_at
                .map_or(0.0, |end| (end - first_start).max(0) as f64 / 1000.0),
            ..Work::default()
        },
        finished_at: last.ended_at,
        ends,
    })
}

/// An attempt without a round: `queued` while its item waits for the scheduler (`--queue`),
/// else not started, with why its item was refused if it was.
fn not_started(number: u32, slug: String, item: Option<&QueueItem>) -> AttemptEvidence {
    let (status, reason) = match item {
        Some(item) if item.state.is_open() => ("queued", None),
        Some(item) => (
            "not-started",
            Some(format!(
                "not started: {}",
                item.reason.as_deref().unwrap_or(item.state.as_str())
            )),
        ),
        None => ("not-started", Some("not started".to_owned())),
    };
    AttemptEvidence {
        number,
        slug,
        task_id: None,
        agent: String::new(),
        model: None,
        status: status.into(),
        passed: false,
        checks: Vec::new(),
        reason,
        work: Work::default(),
        finished_at: None,
        ends: None,
    }
}

/// Why an attempt's last round does not count: its failed checks, else its status and reason.
fn why_out(round: &Round) -> String {
    let failed: Vec<String> = round
        .failed_checks()
        .map(|c| match c.result.as_ref().and_then(|r| r.exit_code) {
            Some(code) => format!("{} (exit {code})", c.name),
            None => c.name.clone(),
        })
        .collect();
    if !failed.is_empty() {
        return format!("checks failed: {}", failed.join(", "));
    }
    match &round.reason {
        Some(reason) => format!("{}: {reason}", round.status.as_str()),
        None => round.status.as_str().to_owned(),
    }
}

fn diff_ends(task: &Task, last: &Round) -> Option<(String, String)> {
    let base = task
        .base_commit
        .clone()
        .unwrap_or_else(|| task.base.clone());
    Some((base, last.snapshot_after.clone()?))
}

/// Each diff's size (files, lines added, lines removed) between its two ends (`None`: no
/// diff), all in one `git diff-tree --stdin`: a line `SNAPSHOT BASE` each, the base taken as
/// the snapshot's parent, so that each diff runs from the base, under a line naming the
/// snapshot (a diff of nothing prints nothing). Ends that are not both object ids, or a
/// snapshot given twice, are asked one by one ([`numstat`]).
fn sizes(ws: &Workspace, ends: &[Option<(String, String)>]) -> Vec<(u64, u64, u64)> {
    let is_id =
        |rev: &str| matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b.is_ascii_hexdigit());
    let mut batched = std::collections::HashSet::new();
    let mut input = String::new();
    for (from, to) in ends.iter().flatten() {
        if is_id(from) && is_id(to) && batched.insert(to.as_str()) {
            input.push_str(&format!("{to} {from}\n"));
        }
    }
    let mut found: std::collections::HashMap<String, (u64, u64, u64)> = Default::default();
    let args = ["diff-tree", "--stdin", "-r", "--numstat", "--no-renames"];
    let output = match input.is_empty() {
        true => Ok(Vec::new()),
        false => ws.repo.git().run_with_input(args, Some(input.as_bytes())),
    };
    let batch_read = output.is_ok();
    let text = String::from_utf8_lossy(&output.unwrap_or_default()).into_owned();
    let mut current = None;
    for line in text.lines() {
        if !line.contains('\t') {
            current = Some(line.trim().to_owned());
            continue;
        }
        if let Some(snapshot) = &current {
            let size = found.entry(snapshot.clone()).or_default();
            add_line(size, line);
        }
    }
    ends.iter()
        .map(|pair| match pair {
            None => (0, 0, 0),
            Some((_, to)) if batch_read && batched.contains(to.as_str()) => {
                found.get(to).copied().unwrap_or_default()
            }
            Some((from, to)) => numstat(ws, from, to),
        })
        .collect()
}

/// Adds one `--numstat` line (`ADDED\tREMOVED\tPATH`; `-` for a binary file) to a size.
fn add_line((files, added, removed): &mut (u64, u64, u64), line: &str) {
    let mut parts = line.split('\t');
    let count = |part: Option<&str>| part.and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
    *added += count(parts.next());
    *removed += count(parts.next());
    *files += 1;
}

/// Files changed, lines added and lines removed between two commits (binary files count as
/// a file with no lines). A diff git cannot give counts as nothing changed.
fn numstat(ws: &Workspace, from: &str, to: &str) -> (u64, u64, u64) {
    let Ok(text) = ws
        .repo
        .git()
        .text(["diff", "--numstat", "--no-renames", from, to])
    else {
        return (0, 0, 0);
    };
    let mut size = (0, 0, 0);
    text.lines().for_each(|line| add_line(&mut size, line));
    size
}
