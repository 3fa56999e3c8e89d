//! What a race was asked, as the store keeps it: enough to run the race again from the store
//! alone (a detached driver, `ganger race-host SLUG`, or a driver resumed after it was
//! killed) with the same brief and the same options for every attempt. On the task floor,
//! since a fleet file's `attempts = "SPEC"` records a race too (`ops/fleet/submit.rs`); what
//! turns it into the race's options is the race's (`ops/race/request.rs`).

use crate::base::error::{EngineError, Result};
use ganger_agents::Permission;
use ganger_sandbox::{Network, SandboxKind};
use ganger_store::RaceRecord;
use serde::{Deserialize, Serialize};

/// A race's request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Request {
    pub brief: String,
    pub first_green: bool,
    pub max: Option<u32>,
    /// Its attempts go through the scheduler's queue (`--queue`).
    pub queue: bool,
    /// The fleet its attempts are queued under, when a fleet file's task is the race (its
    /// limits, budget and `after` hold them); `None`: the race's own, `race:SLUG`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,
    pub checks: Vec<String>,
    pub until_green: Option<u32>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    pub permission: Option<Permission>,
    pub sandbox: Option<SandboxKind>,
    pub network: Option<Network>,
    pub rw: Vec<String>,
    /// `--allow HOST:PORT` for its attempts' gateway rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    pub base: Option<String>,
    /// `PROVIDER=FILE`: the key files' paths, never a key.
    pub keys: Vec<String>,
    pub timeout_ms: Option<u64>,
    pub stall_ms: Option<u64>,
    pub warm: Option<bool>,
}

/// The name of the fleet whose budget is the race's.
pub fn race_fleet(slug: &str) -> String {
    crate::evidence::budget::race_budget_fleet(slug)
}

impl Request {
    /// Whether the race `race` records goes through the queue (a request that does not
    /// say, recorded before `--queue`, does not).
    pub fn queued(race: &RaceRecord) -> bool {
        race.request
            .get("queue")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    }

    /// The fleet the attempts of `race` belong to: the fleet file's that recorded it, else
    /// the race's own (`race:SLUG`).
    pub fn fleet_of(race: &RaceRecord) -> String {
        race.request
            .get("fleet")
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| race_fleet(&race.slug), str::to_owned)
    }

    pub fn to_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self)
            .map_err(|e| EngineError::invalid(format!("the race's request: {e}")))
    }
}
