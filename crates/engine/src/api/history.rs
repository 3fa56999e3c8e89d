//! What plots and the fleet's view read: every round as a point in time (when it started and
//! ended, its state, agent, model, cost and tokens, its task's fleet), with the budgets of the
//! tasks and fleets that have one, so that spend and tokens can be drawn over time against
//! them; and the fleets submitted, with their files and limits. Only reads.

use crate::api::Engine;
use crate::base::error::Result;
use ganger_events::RoundStatus;
use ganger_store::{Budget, FleetRecord};
use serde::Serialize;
use std::collections::BTreeMap;

/// One round, as a plot draws it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundPoint {
    pub task: String,
    pub round: u32,
    pub fleet: Option<String>,
    pub agent: String,
    pub model: Option<String>,
    pub status: RoundStatus,
    /// Unix milliseconds.
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub cost_usd: f64,
    /// Input, output and reasoning tokens.
    pub tokens: u64,
}

/// Every round, and the budgets set: `ganger.web-rounds/1`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundHistory {
    pub schema: &'static str,
    pub rounds: Vec<RoundPoint>,
    pub task_budgets: BTreeMap<String, Budget>,
    pub fleet_budgets: BTreeMap<String, Budget>,
}

impl Default for RoundHistory {
    fn default() -> RoundHistory {
        RoundHistory {
            schema: "ganger.web-rounds/1",
            rounds: Vec::new(),
            task_budgets: BTreeMap::new(),
            fleet_budgets: BTreeMap::new(),
        }
    }
}

impl Engine {
    /// Every round of every task, oldest first, and the budgets of tasks and fleets.
    pub fn round_history(&self) -> Result<RoundHistory> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(RoundHistory::default());
        };
        let mut history = RoundHistory::default();
        for summary in store.task_summaries()? {
            let Some(task) = store.task(&summary.slug)? else {
                continue;
            };
            let fleet = store.task_fleet(task.id)?;
            let budget = store.task_budget(task.id)?;
            if budget.is_set() {
                history.task_budgets.insert(task.slug.clone(), budget);
            }
            if let Some(name) = &fleet
                && !history.fleet_budgets.contains_key(name)
            {
                let budget = store.fleet_budget(name)?;
                if budget.is_set() {
                    history.fleet_budgets.insert(name.clone(), budget);
                }
            }
            for round in store.rounds(task.id)? {
                let tokens = round.summary.tokens;
                history.rounds.push(RoundPoint {
                    task: task.slug.clone(),
                    round: round.number,
                    fleet: fleet.clone(),
                    agent: task.agent.clone(),
                    model: round.model.clone().or_else(|| task.model.clone()),
                    status: round.status,
                    started_at: round.started_at,
                    ended_at: round.ended_at,
                    cost_usd: round.summary.cost_usd.unwrap_or(0.0),
                    tokens: tokens.input + tokens.output + tokens.reasoning,
                });
            }
        }
        history.rounds.sort_by_key(|r| (r.started_at, r.round));
        Ok(history)
    }
}

impl Engine {
    /// Every fleet submitted (its name, file and limits), oldest first.
    pub fn fleet_records(&self) -> Result<Vec<FleetRecord>> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(Vec::new());
        };
        Ok(store.fleets()?)
    }
}
