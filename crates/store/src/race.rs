//! What the store keeps for races (`ganger race`): a race's request, its pairwise verdicts and
//! its end. The attempts themselves are ordinary tasks (`SLUG.1`..`SLUG.N`), so "started once"
//! is the tasks' unique slug; "decided once" is here: a race ends by one conditional write,
//! and a verdict is recorded once, the first kept.

use crate::error::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A race to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRace {
    pub slug: String,
    pub owner: String,
    /// The attempts as given (`opencode:p/m*2,claude`).
    pub spec: String,
    /// How many attempts the spec makes.
    pub attempts: u32,
    /// What its driver needs to resume it (the engine's request, as JSON).
    pub request: Value,
}

/// A race as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceRecord {
    pub slug: String,
    pub owner: String,
    pub spec: String,
    pub attempts: u32,
    pub request: Value,
    /// `running`, `won` or `failed`.
    pub status: String,
    /// The winning attempt's number, once won.
    pub winner: Option<u32>,
    /// How it was decided (the engine's decision, as JSON), once ended.
    pub decision: Option<Value>,
    pub created_at: i64,
    pub ended_at: Option<i64>,
}

/// One pairwise judgement: attempt `a` shown as side A, `b` as side B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceVerdict {
    pub a: u32,
    pub b: u32,
    /// `A`, `B`, or `none` (the reviewer gave no verdict that parses).
    pub winner: String,
    /// The reviewer's reasons.
    pub reasons: String,
}

/// How a race ends.
#[derive(Debug, Clone)]
pub struct RaceEnd<'a> {
    pub slug: &'a str,
    /// `won` or `failed`.
    pub status: &'a str,
    pub winner: Option<u32>,
    pub decision: &'a Value,
    /// The task the journal's line goes on (the winner's, else an attempt's).
    pub journal_task: i64,
}

/// What a backend keeps for races.
pub trait RaceStore {
    /// Records a new race, running. `SlugTaken` when a race of that slug exists, or a task
    /// named `SLUG` or `SLUG.*` does.
    fn create_race(&mut self, race: &NewRace) -> Result<RaceRecord, StoreError>;

    /// The race called `slug`.
    fn race(&self, slug: &str) -> Result<Option<RaceRecord>, StoreError>;

    /// Records a verdict of the race unless one of that pair and order is recorded already;
    /// returns the recorded one (the first).
    fn record_race_verdict(
        &mut self,
        slug: &str,
        verdict: &RaceVerdict,
    ) -> Result<RaceVerdict, StoreError>;

    /// The race's verdicts, by `a` then `b`.
    fn race_verdicts(&self, slug: &str) -> Result<Vec<RaceVerdict>, StoreError>;

    /// Ends a running race (`won` with its winner, or `failed`) with its decision, and in the
    /// same transaction journals `RaceEnded(decision)` on the task `journal_task` as `owner`;
    /// a race that ended already keeps its end and journals nothing. Returns the race as
    /// stored after.
    fn end_race(&mut self, end: &RaceEnd<'_>) -> Result<RaceRecord, StoreError>;
}
