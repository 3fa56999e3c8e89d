//! The store trait: tasks, their rounds and the journal, the core of a
//! [`Backend`](crate::Backend). Every method that changes state is one transaction; the ones
//! that end a round only act on a round that is still running, so that a host finishing and
//! an observer settling a dead host can never both win.

use crate::error::StoreError;
use crate::journal::JournalEntry;
use crate::records::{
    Move, NewRound, NewTask, ProcessRef, Rewind, Round, RoundEnd, Task, TaskSummary, TaskUpdate,
};
use ganger_events::RoundSummary;
use std::path::Path;

/// A backend for ganger's state (with what it keeps for fleets' evidence).
pub trait Store: Send + crate::evidence::EvidenceStore + crate::claims::ClaimStore {
    /// Creates a task and its first round, running, in one transaction.
    fn create_task(
        &mut self,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError>;

    /// Starts the next round of a task, applying `update` to the task in the same
    /// transaction; `Busy` if a round of the task is running.
    fn begin_round(
        &mut self,
        task_id: i64,
        round: &NewRound,
        update: &TaskUpdate,
    ) -> Result<Round, StoreError>;

    /// Records the round's host (a detached host replaces the command that started it).
    fn record_host(&mut self, round_id: i64, host: ProcessRef) -> Result<(), StoreError>;

    /// Records the agent process and its cgroup once started, and the session the round
    /// named up front (if it did), so that a round whose host dies before the agent's first
    /// event still leaves its session to continue.
    fn record_agent(
        &mut self,
        round_id: i64,
        agent: ProcessRef,
        cgroup: Option<&Path>,
        session: Option<&str>,
    ) -> Result<(), StoreError>;

    /// Records a running round's summary so far and when it last showed progress.
    fn record_progress(
        &mut self,
        round_id: i64,
        summary: &RoundSummary,
        progress_at: i64,
    ) -> Result<(), StoreError>;

    /// Ends a running round; false if it had already ended (nothing is changed then).
    fn finish_round(&mut self, round_id: i64, end: &RoundEnd) -> Result<bool, StoreError>;

    /// Records that `ganger clean` cleaned up after the task, now, with a journal entry;
    /// `detail` says what was removed and what was kept.
    fn mark_cleaned(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError>;

    /// Records that the task's worktree is now `moved.worktree`, made by ganger (a worker on
    /// another host made it there from the task's branch, to run the task's next round),
    /// with a `moved` journal entry; with a resume note, the task's session is dropped and
    /// its next round begins with the note.
    fn move_worktree(&mut self, task_id: i64, moved: &Move) -> Result<(), StoreError>;

    /// Takes a task back to its state after round `to`: the rounds after it are marked
    /// rewound, the task's session becomes `session` (`None`: the next round starts a new
    /// one) and its next round's note `resume_note`, with a journal entry; `Busy` if a round
    /// of the task is running. Returns the numbers of the rounds it marked.
    fn rewind(&mut self, task_id: i64, to: u32, rewind: &Rewind) -> Result<Vec<u32>, StoreError>;

    /// Records in the journal that the task's work was merged into its base (`detail`: the
    /// mode, the commits, the rounds).
    fn record_merge(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError>;

    /// Marks a running round cancel-requested; false if it is not running.
    fn request_cancel(&mut self, round_id: i64, commander: &str) -> Result<bool, StoreError>;

    /// The task named `slug`.
    fn task(&self, slug: &str) -> Result<Option<Task>, StoreError>;

    /// What the task table shows of every task, by slug.
    fn task_summaries(&self) -> Result<Vec<TaskSummary>, StoreError>;

    /// A round of a task by number, or its last round with `None`.
    fn round(&self, task_id: i64, number: Option<u32>) -> Result<Option<Round>, StoreError>;

    /// Every round of a task, oldest first.
    fn rounds(&self, task_id: i64) -> Result<Vec<Round>, StoreError>;

    /// Every running round with its task.
    fn running_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError>;

    /// The journal after entry `after`, oldest first, at most `limit` entries.
    fn journal(&self, after: i64, limit: u32) -> Result<Vec<JournalEntry>, StoreError>;
}
