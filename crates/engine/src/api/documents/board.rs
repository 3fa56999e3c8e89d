//! The HTTP API's own documents (`ganger.web-*/1`): the board's views of tasks, rounds, the
//! journal, fleets and the predicted conflicts, which have no command of their own.

use crate::api::Engine;
use crate::api::feed::BoardTask;
use crate::base::error::Result;
use crate::evidence::report::{CheckReport, RoundReport};
use ganger_store::JournalEntry;
use serde::Serialize;
use std::collections::BTreeMap;

document! {
    /// `ganger.web-tasks/1`: the task table.
    #[derive(PartialEq)]
    WebTasks("ganger.web-tasks/1") {
        tasks: Vec<BoardTask>,
    }
}

document! {
    /// `ganger.web-task/1`: a task's row and every round's report.
    WebTask("ganger.web-task/1") {
        task: Option<BoardTask>,
        rounds: Vec<RoundReport>,
    }
}

document! {
    /// `ganger.web-checks/1`: the last round's checks.
    WebChecks("ganger.web-checks/1") {
        task: String,
        /// The last round (`None` before the first).
        round: Option<u32>,
        checks: Vec<CheckReport>,
    }
}

document! {
    /// `ganger.web-journal/1`: every commander's journal entries.
    #[derive(PartialEq)]
    WebJournal("ganger.web-journal/1") {
        entries: Vec<JournalEntry>,
    }
}

/// A fleet as the board shows it: its file and limits, and its tasks counted by status
/// (`none` for a task with no round yet).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetSummary {
    pub name: String,
    pub file: Option<String>,
    pub limits: serde_json::Value,
    pub created_at: i64,
    pub states: BTreeMap<String, u32>,
}

document! {
    /// `ganger.web-fleets/1`: every fleet submitted.
    #[derive(PartialEq)]
    WebFleets("ganger.web-fleets/1") {
        fleets: Vec<FleetSummary>,
    }
}

document! {
    /// `ganger.web-conflicts/1`: the open tasks whose work conflicts, as `status` lists them.
    WebConflicts("ganger.web-conflicts/1") {
        conflicts: Vec<ganger_store::PredictedConflict>,
    }
}

/// The name of a task's last status as the API writes it (`none` before the first round).
pub fn status_name(task: &BoardTask) -> String {
    task.status
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "none".into())
}

impl Engine {
    /// `ganger.web-task/1` of task `slug`.
    pub fn web_task(&self, slug: &str) -> Result<WebTask> {
        let rounds = self.round_reports(slug)?;
        let task = self.board_tasks()?.into_iter().find(|t| t.slug == slug);
        Ok(WebTask::new(task, rounds))
    }

    /// `ganger.web-checks/1` of task `slug`.
    pub fn web_checks(&self, slug: &str) -> Result<WebChecks> {
        let rounds = self.round_reports(slug)?;
        let last = rounds.last();
        Ok(WebChecks::new(
            slug.to_owned(),
            last.map(|r| r.round),
            last.map(|r| r.checks.clone()).unwrap_or_default(),
        ))
    }

    /// `ganger.web-journal/1`: at most `limit` entries after entry `after`.
    pub fn web_journal(&self, after: i64, limit: u32) -> Result<WebJournal> {
        Ok(WebJournal::new(self.journal_after(after, limit)?))
    }

    /// `ganger.web-fleets/1`.
    pub fn web_fleets(&self) -> Result<WebFleets> {
        let (records, tasks) = (self.fleet_records()?, self.board_tasks()?);
        let mut states: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
        for task in &tasks {
            if let Some(fleet) = &task.fleet {
                let counts = states.entry(fleet.clone()).or_default();
                *counts.entry(status_name(task)).or_default() += 1;
            }
        }
        let fleets = records
            .into_iter()
            .map(|record| FleetSummary {
                states: states.remove(&record.name).unwrap_or_default(),
                name: record.name,
                file: record.file,
                limits: record.limits,
                created_at: record.created_at,
            })
            .collect();
        Ok(WebFleets::new(fleets))
    }

    /// `ganger.web-conflicts/1`: the conflicts the rounds' ends predicted between open tasks
    /// (docs/land.md), as `ganger status` lists them.
    pub fn web_conflicts(&self) -> Result<WebConflicts> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(WebConflicts::new(Vec::new()));
        };
        let list = crate::evidence::report::task_list(store.task_summaries()?);
        let all = ganger_store::ConflictStore::conflicts(&*store)?;
        Ok(WebConflicts::new(crate::ops::status::open_conflicts(
            &list, all,
        )))
    }

    /// The prompt of round `number` of `slug` and its report, for a front end that shows one
    /// round (`NotFound` for a round the task does not have).
    pub fn round_with_prompt(
        &self,
        slug: &str,
        number: u32,
    ) -> Result<(RoundReport, Option<String>)> {
        let report = self.report_of(slug, Some(number))?;
        let prompt = self.round_prompt(slug, number).ok();
        Ok((report, prompt))
    }
}
