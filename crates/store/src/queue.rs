//! The queue of rounds asked for but not started yet, the fleets submitted, and the models
//! paused after a rate limit: what the scheduler (`ganger serve`, `ganger fleet run`) reads
//! and writes. Apart from the [`Store`](crate::Store) trait so that the parts of the fleet
//! work do not collide, and so a backend without a scheduler still compiles.

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use serde::{Deserialize, Serialize};

/// What a queued item asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueKind {
    /// A new task's first round.
    Start,
    /// The next round of a task, in its session.
    Fix,
    /// One round of a broadcast (a fix sent to many tasks at once).
    Broadcast,
}

impl QueueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueKind::Start => "start",
            QueueKind::Fix => "fix",
            QueueKind::Broadcast => "broadcast",
        }
    }

    pub fn parse(text: &str) -> Option<QueueKind> {
        match text {
            "start" => Some(QueueKind::Start),
            "fix" => Some(QueueKind::Fix),
            "broadcast" => Some(QueueKind::Broadcast),
            _ => None,
        }
    }
}

/// Where a queued item is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueState {
    /// Waiting for its dependencies, a limit, a paused model or its `not_before`.
    Queued,
    /// Claimed by the scheduler, which is starting its round.
    Delivering,
    /// Its round was recorded (`round`) and runs.
    Delivered,
    /// Its round ended and the scheduler has looked at how.
    Ended,
    /// Refused at delivery (ownership, policy, a failed dependency, bad options), with why.
    Refused,
    /// Queued under a generation of the task that is no longer its own.
    Stale,
}

impl QueueState {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Queued => "queued",
            QueueState::Delivering => "delivering",
            QueueState::Delivered => "delivered",
            QueueState::Ended => "ended",
            QueueState::Refused => "refused",
            QueueState::Stale => "stale",
        }
    }

    pub fn parse(text: &str) -> Option<QueueState> {
        match text {
            "queued" => Some(QueueState::Queued),
            "delivering" => Some(QueueState::Delivering),
            "delivered" => Some(QueueState::Delivered),
            "ended" => Some(QueueState::Ended),
            "refused" => Some(QueueState::Refused),
            "stale" => Some(QueueState::Stale),
            _ => None,
        }
    }

    /// The states of an item that still has something to do (the scheduler's open work).
    pub const OPEN: [QueueState; 3] = [
        QueueState::Queued,
        QueueState::Delivering,
        QueueState::Delivered,
    ];

    /// Whether the item still has something to do (the scheduler's open work).
    pub fn is_open(self) -> bool {
        QueueState::OPEN.contains(&self)
    }
}

/// `states` as an SQL list of quoted names (`'queued', 'delivering'`), to write into a
/// statement: the names are this enum's own, never a caller's text. An empty list matches
/// nothing.
pub(crate) fn state_list(states: &[QueueState]) -> String {
    if states.is_empty() {
        return "NULL".to_owned();
    }
    states
        .iter()
        .map(|state| format!("'{}'", state.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An item to queue.
#[derive(Debug, Clone, PartialEq)]
pub struct NewQueued {
    pub slug: String,
    pub kind: QueueKind,
    /// The start's options (agent, model, sandbox, ...) as JSON; `{}` for a fix.
    pub options: serde_json::Value,
    /// The prompt, in a file beside the round files: items queued before the prompt was
    /// kept in the store; empty otherwise.
    pub prompt_file: std::path::PathBuf,
    /// The prompt itself, readable by a worker on any host.
    pub prompt: Option<String>,
    pub commander: String,
    /// The task's generation when the item was queued (a fix); `None` for a start.
    pub generation: Option<i64>,
    pub fleet: Option<String>,
    /// Slugs whose tasks must have ended `done` first.
    pub after: Vec<String>,
    /// Not before this time (Unix ms; 0: at once).
    pub not_before: i64,
}

/// A queued item as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueItem {
    pub id: i64,
    pub slug: String,
    pub kind: QueueKind,
    pub options: serde_json::Value,
    /// The prompt's file, for an item queued before prompts were kept in the store.
    pub prompt_file: std::path::PathBuf,
    /// The prompt.
    pub prompt: Option<String>,
    pub commander: String,
    pub generation: Option<i64>,
    pub fleet: Option<String>,
    pub after: Vec<String>,
    pub not_before: i64,
    pub state: QueueState,
    pub reason: Option<String>,
    /// The round it became, once delivered.
    pub round: Option<u32>,
    /// When the scheduler claimed it (Unix ms).
    pub claimed_at: Option<i64>,
    /// The claim (its key's text) of the scheduler that claimed it, while it is delivered or
    /// followed: a scheduler or worker whose claim is dead left it to whoever takes it over.
    /// `None` for an item claimed before ganger recorded who claimed it.
    pub claimed_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A fleet as submitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetRecord {
    pub name: String,
    /// The file it came from.
    pub file: Option<String>,
    /// Its limits as JSON (`global`, `agents`, `models`).
    pub limits: serde_json::Value,
    /// The git remote its workers get the repository from and push each round to.
    #[serde(default)]
    pub remote: Option<String>,
    pub created_at: i64,
}

/// Who a slug belongs to, as a fleet that names it sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlugHolder {
    /// No task and no open item has it.
    Free,
    /// A task of this fleet, or an open item this fleet queued.
    Fleet(String),
    /// A task started outside any fleet, or an open item queued outside one.
    NoFleet,
}

/// An item a fleet queues only if its task is still as the submitter saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetItem {
    pub item: NewQueued,
    /// The task's rounds when the submitter looked; `None`: there was no task.
    pub rounds: Option<u32>,
}

/// A fleet file's submission (`fleet run|submit`), written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSubmission {
    pub fleet: FleetRecord,
    /// The fleet's budget, replacing the one stored; `None`: left as it is.
    pub budget: Option<crate::Budget>,
    /// Every slug the file names: each must be free or the fleet's own.
    pub slugs: Vec<String>,
    pub items: Vec<FleetItem>,
}

/// A model paused after a rate limit, until `until` (Unix ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPause {
    pub model: String,
    pub until: i64,
    /// Rate limits in a row: the backoff doubles with each.
    pub strikes: u32,
    pub reason: Option<String>,
}

/// What a backend keeps for the scheduler.
pub trait QueueStore {
    /// Queues an item. A second open `start` of one slug, or a second open item of one
    /// slug in fleets, is [`StoreError::AlreadyQueued`]: the store holds that under races.
    fn enqueue(&mut self, item: &NewQueued) -> Result<QueueItem, StoreError>;

    /// The first of `slugs` that fleet `fleet` may not use, with who holds it.
    fn fleet_conflict(
        &self,
        fleet: &str,
        slugs: &[String],
    ) -> Result<Option<(String, SlugHolder)>, StoreError>;

    /// Submits a fleet in one transaction: checks every slug as [`fleet_conflict`] does
    /// ([`StoreError::FleetConflict`], and nothing written), saves the fleet and its budget,
    /// and queues each item whose slug has no open item of the fleet yet and whose task has
    /// the rounds the submitter saw. One entry per item: `None` for one left out because
    /// another submission (or the scheduler) got there first.
    ///
    /// [`fleet_conflict`]: QueueStore::fleet_conflict
    fn submit_fleet(
        &mut self,
        submission: &FleetSubmission,
    ) -> Result<Vec<Option<QueueItem>>, StoreError>;

    /// How many starts are queued or being delivered whose task does not exist yet.
    fn waiting_starts(&self) -> Result<u64, StoreError>;

    /// The items still to do (queued, delivering, delivered), oldest first.
    fn open_items(&self) -> Result<Vec<QueueItem>, StoreError> {
        self.items_in(&QueueState::OPEN, 0, u32::MAX)
    }

    /// The items in one of `states` after the one numbered `after_id`, oldest first, at most
    /// `limit`: what a scheduler reads a page at a time, so that a pass over a long queue reads
    /// only as far as it can start rounds.
    fn items_in(
        &self,
        states: &[QueueState],
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<QueueItem>, StoreError>;

    /// Whether `slug` has an item still to do (queued, delivering, delivered).
    fn slug_is_open(&self, slug: &str) -> Result<bool, StoreError>;

    /// Every item, of one fleet or of all, oldest first.
    fn queue_items(&self, fleet: Option<&str>) -> Result<Vec<QueueItem>, StoreError>;

    /// How many items, of one fleet or of all, are in each state (states with none left
    /// out): what a scheduler reports after each pass, without reading every item.
    fn queue_counts(&self, fleet: Option<&str>) -> Result<Vec<(QueueState, u64)>, StoreError>;

    /// Moves an item from `from` to `to` with `reason`, and `round` when given; false when it
    /// was not in `from` (someone else moved it). Claiming (`delivering`) sets `claimed_at`.
    fn move_item(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        round: Option<u32>,
    ) -> Result<bool, StoreError>;

    /// Moves an item from `from` to `to` with `reason` and queues `next` in the same
    /// transaction (a round sent again, a task continued after a rate limit), so that a
    /// scheduler killed in between neither loses nor doubles it; false (and nothing queued)
    /// when the item was not in `from`.
    fn move_and_enqueue(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        next: &NewQueued,
    ) -> Result<bool, StoreError>;

    /// Claims a queued item for the scheduler holding `claimant`: `queued` → `delivering`,
    /// recording who and when; false when it was not queued (another scheduler took it).
    fn claim_item(&mut self, id: i64, claimant: &ClaimKey) -> Result<bool, StoreError>;

    /// Gives an item being delivered or followed by `from` (a scheduler found dead; `None`:
    /// one that recorded no claimant) to `to`; false when it is no longer `from`'s (another
    /// took it over first) or no longer claimed.
    fn take_over_item(
        &mut self,
        id: i64,
        from: Option<&str>,
        to: &ClaimKey,
    ) -> Result<bool, StoreError>;

    /// Puts a claimed item back in the queue, not before `not_before` (unclaimed).
    fn requeue(&mut self, id: i64, not_before: i64, reason: Option<&str>)
    -> Result<(), StoreError>;

    /// Creates or replaces a fleet.
    fn save_fleet(&mut self, fleet: &FleetRecord) -> Result<(), StoreError>;

    /// Every fleet, by name.
    fn fleets(&self) -> Result<Vec<FleetRecord>, StoreError>;

    /// The models paused now or before.
    fn model_pauses(&self) -> Result<Vec<ModelPause>, StoreError>;

    /// Pauses a model (replacing its pause).
    fn pause_model(&mut self, pause: &ModelPause) -> Result<(), StoreError>;

    /// Forgets a model's pause (its rounds succeed again).
    fn clear_pause(&mut self, model: &str) -> Result<(), StoreError>;

    /// A number that changes whenever another connection commits (SQLite's `data_version`):
    /// a poll that finds it unchanged has nothing new to read.
    fn data_version(&self) -> Result<i64, StoreError>;
}
