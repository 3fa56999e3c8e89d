//! Who may do what to a task, and what it lets in: the owner's actions, the commanders it
//! admits, its inbound policy (accept, hold, refuse), and no round while a person is attached.
//! Operations check these; `ownership` changes them.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_store::{Backend, Claim, Liveness, Task};
use serde::Serialize;

/// A task's owner as people read it.
pub(crate) fn owner_name(task: &Task) -> &str {
    if task.owner.is_empty() {
        "nobody"
    } else {
        &task.owner
    }
}

/// Refuses `commander` unless it owns the task; `action` says what it tried ("cancel").
pub(crate) fn require_owner(task: &Task, commander: &str, action: &str) -> Result<()> {
    if !task.owner.is_empty() && task.owner == commander {
        return Ok(());
    }
    Err(not_owner(task, commander, action))
}

/// Refuses `commander` unless it owns the task or the owner allows it.
pub(crate) fn require_admitted(task: &Task, commander: &str, action: &str) -> Result<()> {
    if task.admits(commander) {
        return Ok(());
    }
    Err(not_owner(task, commander, action))
}

fn not_owner(task: &Task, commander: &str, action: &str) -> EngineError {
    let slug = &task.slug;
    if task.owner.is_empty() {
        return EngineError::not_permitted(format!(
            "{commander} may not {action} task {slug}: nobody owns it"
        ))
        .hint(format!("take it with `ganger assign {slug}`"));
    }
    EngineError::not_permitted(format!(
        "{commander} may not {action} task {slug}: it is owned by {}",
        task.owner
    ))
    .hint(format!(
        "ask {} to `ganger transfer {slug} --to {commander}` or `ganger allow {slug} {commander}`",
        task.owner
    ))
}

/// What a task lets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inbound {
    /// New rounds run.
    Accept,
    /// New rounds wait in the queue until the policy is accept again.
    Hold,
    /// New rounds are refused.
    Refuse,
}

impl Inbound {
    pub fn as_str(self) -> &'static str {
        match self {
            Inbound::Accept => "accept",
            Inbound::Hold => "hold",
            Inbound::Refuse => "refuse",
        }
    }

    /// The task's policy (anything unknown counts as accept: the store only writes these).
    pub(crate) fn of(task: &Task) -> Inbound {
        task.inbound.parse().unwrap_or(Inbound::Accept)
    }
}

impl std::str::FromStr for Inbound {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "accept" => Ok(Inbound::Accept),
            "hold" => Ok(Inbound::Hold),
            "refuse" => Ok(Inbound::Refuse),
            other => Err(format!(
                "unknown policy {other:?}; policies: accept, hold, refuse"
            )),
        }
    }
}

/// The error of a round sent to a task that refuses new rounds.
pub(crate) fn refused(task: &Task) -> EngineError {
    EngineError::invalid(format!(
        "task {} refuses new rounds (its policy is refuse)",
        task.slug
    ))
    .hint(format!(
        "{} can let rounds in again with `ganger policy {} accept`",
        owner_name(task),
        task.slug
    ))
}

/// Whether the task named `slug` holds new rounds (a `fix` to it is queued instead); false
/// when there is no such task (the fix then says so).
pub fn holds_rounds(ws: &Workspace, slug: &str) -> Result<bool> {
    let Some(store) = ws.existing_store()? else {
        return Ok(false);
    };
    Ok(ganger_store::Store::task(&*store, slug)?.is_some_and(|t| Inbound::of(&t) == Inbound::Hold))
}

/// The error of a round sent to a task that holds new rounds, where it cannot be queued.
pub(crate) fn held(task: &Task) -> EngineError {
    EngineError::passing(format!(
        "task {} holds new rounds (its policy is hold)",
        task.slug
    ))
    .hint(format!(
        "queue it with `--queue`, or {} can let rounds in with `ganger policy {} accept`",
        owner_name(task),
        task.slug
    ))
}

/// The claim a person attached to task `slug` holds.
pub(crate) fn attach_claim_name(slug: &str) -> String {
    format!("attach-{slug}")
}

/// Refuses a new round of a task a person is attached to.
pub(crate) fn refuse_attached(store: &dyn Backend, task: &Task) -> Result<()> {
    if store.is_alive(&store.claim_key(&attach_claim_name(&task.slug)))? {
        return Err(EngineError::invalid(format!(
            "a person is attached to task {} (`ganger attach`); no round starts until they quit",
            task.slug
        )));
    }
    Ok(())
}

/// The name of the claim a fix loop holds from before its first round ends to its last
/// round's end, so that `ganger wait` waits for the loop, not for one of its rounds.
pub(crate) fn loop_claim_name(slug: &str) -> String {
    format!("loop-{slug}")
}

/// Claims the fix loop of `slug` for this process.
pub(crate) fn take_loop_claim(store: &dyn Liveness, slug: &str) -> Result<Claim> {
    Ok(store.claim(&loop_claim_name(slug))?)
}
