//! Who owns a task and what it lets in: ownership changes (each bumps the task's generation,
//! so work sent under the old one is refused at delivery), the inbound policy, the allow-list,
//! and tasks adopted from a session a person started by hand. Apart from the
//! [`Store`](crate::Store) trait so that a backend without them still compiles.

use crate::error::StoreError;
use crate::journal::{JournalEvent, OwnerMove};
use crate::records::{NewTask, Task};

/// An ownership change: who the task goes to and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerChange<'a> {
    /// A commander takes a task nobody owns (or gives one it owns to `to`).
    Assign { to: &'a str },
    /// The owner gives the task to another commander.
    Transfer { to: &'a str },
    /// The owner lets the task go: nobody owns it until someone assigns it.
    Release,
}

impl<'a> OwnerChange<'a> {
    /// The journal entry's kind.
    pub fn kind(self) -> &'static str {
        match self {
            OwnerChange::Assign { .. } => "assigned",
            OwnerChange::Transfer { .. } => "transferred",
            OwnerChange::Release => "released",
        }
    }

    /// The journal's event for this change, as `moved` says it.
    pub(crate) fn event(self, moved: OwnerMove) -> JournalEvent {
        match self {
            OwnerChange::Assign { .. } => JournalEvent::Assigned(moved),
            OwnerChange::Transfer { .. } => JournalEvent::Transferred(moved),
            OwnerChange::Release => JournalEvent::Released(moved),
        }
    }

    /// The new owner (empty for nobody).
    pub fn new_owner(self) -> &'a str {
        match self {
            OwnerChange::Assign { to } | OwnerChange::Transfer { to } => to,
            OwnerChange::Release => "",
        }
    }
}

/// The store's side of ownership.
pub trait OwnershipStore {
    /// Changes the task's owner if its generation is still `seen` (else `Stale`), bumps the
    /// generation, clears the allow-list (the new owner decides whom to let in) and journals
    /// the change, in one transaction. Returns the task as it is now.
    fn change_owner(
        &mut self,
        task_id: i64,
        seen: i64,
        change: OwnerChange<'_>,
        commander: &str,
    ) -> Result<Task, StoreError>;

    /// Sets the task's inbound policy (`accept`, `hold` or `refuse`), with a journal entry.
    fn set_inbound(
        &mut self,
        task_id: i64,
        inbound: &str,
        commander: &str,
    ) -> Result<(), StoreError>;

    /// Sets the commanders the task lets in besides its owner, with a journal entry.
    fn set_allowed(
        &mut self,
        task_id: i64,
        allowed: &[String],
        commander: &str,
    ) -> Result<(), StoreError>;

    /// Records a task for a session a person started by hand (no round yet; its first round
    /// resumes `session`), with an `adopted` journal entry.
    fn adopt_task(&mut self, task: &NewTask, session: &str) -> Result<Task, StoreError>;
}
