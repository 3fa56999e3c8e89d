//! What the suite's tests are made of: a task, a round, an end, a summary, with the fields a
//! test does not care about filled in.

use ganger_events::{RoundStatus, RoundSummary, Tokens};
use ganger_store::{ClaimKey, NewRound, NewTask, ProcessRef, RoundEnd, RoundKind};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A task `slug` owned by `owner`.
pub fn new_task(slug: &str, owner: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "opencode".into(),
        model: Some("mock/scripted".into()),
        base: "main".into(),
        base_commit: Some("0".repeat(40)),
        branch: format!("agent/{slug}"),
        worktree: PathBuf::from(format!("/tmp/repo-agent-{slug}")),
        worktree_made: true,
        owner: owner.into(),
        keys: BTreeMap::new(),
        timeout_ms: None,
        stall_ms: Some(60_000),
        permission: ganger_events::Permission::Write,
        sandbox: ganger_events::SandboxKind::Local,
        network: ganger_events::Network::Shared,
        rw: Vec::new(),
        allow: Vec::new(),
        warm: None,
        labels: Vec::new(),
        budget: ganger_store::Budget::default(),
        fleet: None,
    }
}

/// A round sent by `commander`, whose host claim is `claim` (no live holder unless a test
/// holds it).
pub fn round_claimed(kind: RoundKind, token: &str, commander: &str, claim: ClaimKey) -> NewRound {
    NewRound {
        kind,
        model: Some("mock/scripted".into()),
        session_before: None,
        commander: commander.into(),
        token: token.into(),
        claim,
        host: Some(ProcessRef {
            pid: 42,
            start_ticks: 7,
        }),
        snapshot_before: None,
        checks: Vec::new(),
        generation: None,
    }
}

/// A round sent by `commander` under a claim nobody holds.
pub fn new_round(kind: RoundKind, token: &str, commander: &str) -> NewRound {
    round_claimed(
        kind,
        token,
        commander,
        ClaimKey::new(format!("unheld-{token}")),
    )
}

/// A summary of `input` input tokens (and 15 output), `cost` and a `DONE:` line.
pub fn summary(input: u64, cost: Option<f64>, done: Option<&str>) -> RoundSummary {
    RoundSummary {
        cost_usd: cost,
        done: done.map(str::to_owned),
        tokens: Tokens {
            input,
            output: 15,
            reasoning: 0,
            cache_read: 1000,
            cache_write: 0,
        },
        ..RoundSummary::default()
    }
}

/// A round's end: `status`, in `session`, with `summary`.
pub fn end(status: RoundStatus, session: &str, summary: RoundSummary) -> RoundEnd {
    RoundEnd {
        status,
        snapshot_before: None,
        reason: None,
        session: Some(session.into()),
        exit_code: Some(0),
        exit_signal: None,
        summary,
        snapshot_after: Some("1".repeat(40)),
        changed: vec!["A hello.txt".into()],
        worktree_changes: vec!["A hello.txt".into()],
        checks: Vec::new(),
    }
}

/// A plain `done` end.
pub fn done() -> RoundEnd {
    end(RoundStatus::Done, "ses_1", RoundSummary::default())
}
