//! What the store keeps for fleets' evidence: budgets (per task, and per fleet over its
//! tasks) with what was spent, labels, each task's last `DONE:` line, and the commanders'
//! journal cursors (`ganger watch`, `ganger ack`). A trait of its own, beside
//! [`Store`](crate::Store), so that these parts grow without touching the round tables.

use crate::error::StoreError;
use crate::journal::{JournalEntry, JournalEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A budget: a limit in US dollars, in tokens, or both (`None`: no limit of that kind).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl Budget {
    /// Whether the budget limits anything.
    pub fn is_set(&self) -> bool {
        self.usd.is_some() || self.tokens.is_some()
    }
}

/// What rounds spent: their cost (the agent's, else the price table's) and their tokens
/// (input, output and reasoning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub usd: f64,
    pub tokens: u64,
}

/// A task of `status --group-by`: its label value for the key, its last status and last
/// `DONE:` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelledTask {
    pub slug: String,
    /// The task's value of the key; `None` for a task without that label.
    pub value: Option<String>,
    pub last_status: Option<String>,
    pub done: Option<String>,
    /// When the `DONE:` line was recorded (Unix ms).
    pub done_at: Option<i64>,
}

/// What a backend keeps for budgets, labels, `DONE:` lines and journal cursors.
pub trait EvidenceStore {
    /// Sets (replaces) a task's budget.
    fn set_task_budget(&mut self, task_id: i64, budget: &Budget) -> Result<(), StoreError>;

    /// A task's budget (unset: nothing limited).
    fn task_budget(&self, task_id: i64) -> Result<Budget, StoreError>;

    /// Sets (replaces) the budget of the fleet called `fleet`.
    fn set_fleet_budget(
        &mut self,
        fleet: &str,
        usd: Option<f64>,
        tokens: Option<u64>,
    ) -> Result<(), StoreError>;

    /// A fleet's budget (unset: nothing limited).
    fn fleet_budget(&self, fleet: &str) -> Result<Budget, StoreError>;

    /// Links a task to a fleet (`None`: to none), so that the fleet's budget counts it.
    fn set_task_fleet(&mut self, task_id: i64, fleet: Option<&str>) -> Result<(), StoreError>;

    /// The fleet a task belongs to.
    fn task_fleet(&self, task_id: i64) -> Result<Option<String>, StoreError>;

    /// What a task's rounds spent (running ones as far as their stored summary goes), but the
    /// round `except` (a running round that counts its own spending live).
    fn task_spent(&self, task_id: i64, except: Option<i64>) -> Result<Spent, StoreError>;

    /// What the rounds of a fleet's tasks spent, but the round `except`.
    fn fleet_spent(&self, fleet: &str, except: Option<i64>) -> Result<Spent, StoreError>;

    /// What the rounds of the race `race`'s tasks spent (its attempts and judges: the tasks
    /// `RACE.*`, a dot being in no slug a person gives), but the round `except`.
    fn race_spent(&self, race: &str, except: Option<i64>) -> Result<Spent, StoreError>;

    /// Sets labels of a task (a key given again replaces its value).
    fn set_labels(&mut self, task_id: i64, labels: &[(String, String)]) -> Result<(), StoreError>;

    /// A task's labels.
    fn labels(&self, task_id: i64) -> Result<BTreeMap<String, String>, StoreError>;

    /// Every task (role tasks excepted) with its value of the label `key`, by slug.
    fn labelled_tasks(&self, key: &str) -> Result<Vec<LabelledTask>, StoreError>;

    /// Records a task's last `DONE:` line, given by round `round`.
    fn record_done(&mut self, task_id: i64, round: u32, line: &str) -> Result<(), StoreError>;

    /// Every task's last `DONE:` line, by slug.
    fn done_lines(&self) -> Result<BTreeMap<String, String>, StoreError>;

    /// Every other task's uncommitted work as its last ended round left it (`"M path"`
    /// style), for tasks not cleaned, not merged since that round, and not a pipeline's role.
    fn open_work(&self, except_task: i64) -> Result<Vec<(String, Vec<String>)>, StoreError>;

    /// Adds `event` to the journal, of round `round` of the task, by `commander`; returns the
    /// entry's number.
    fn add_journal(
        &mut self,
        task_id: i64,
        round: Option<u32>,
        commander: Option<&str>,
        event: &JournalEvent,
    ) -> Result<i64, StoreError>;

    /// How far `commander` has read its journal (0: nothing acknowledged).
    fn journal_cursor(&self, commander: &str) -> Result<i64, StoreError>;

    /// Moves `commander`'s cursor to `cursor` (an entry number; never backwards). Returns the
    /// cursor as it is now.
    fn ack_journal(&mut self, commander: &str, cursor: i64) -> Result<i64, StoreError>;

    /// The last journal entry's number (0 for an empty journal).
    fn last_journal_id(&self) -> Result<i64, StoreError>;

    /// `commander`'s journal after entry `after`, oldest first, at most `limit` entries: the
    /// entries of tasks it owns now, the ones it wrote, and the ownership changes naming it
    /// (`transferred`, `assigned`, `released` with `detail.from` or `detail.to`);
    /// `round-started` entries are left out (the end of a round says what came of it).
    fn commander_journal(
        &self,
        commander: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JournalEntry>, StoreError>;
}
