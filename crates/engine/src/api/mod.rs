//! The engine as one value for every front end (the CLI now; `ganger serve`'s HTTP API, the
//! MCP server and remote workers next). An [`Engine`] is opened once per process for a
//! repository and a commander, and then asked operations: a typed request in, a typed result
//! or an [`EngineError`] out, progress as [`Notice`]s handed to the caller's sink (a closure,
//! or a channel's `Sender`). It prints nothing and exits nothing, and it holds no state
//! between calls but the workspace it read at open: each operation opens its own connection
//! to the store and does its changes in the store's transactions, so many operations can be
//! in flight at once from one long-running process (`Engine` is `Send + Sync`).
//!
//! Identity is explicit: the commander the engine was opened for acts in every request that
//! names none, so a front end decides who acts (the CLI from `--as`, `GANGER_COMMANDER` or
//! the user name; a server from its token), never the process's environment.
//!
//! Policy is the engine's: a round sent to a task that holds new rounds waits in the queue
//! ([`Sent::Queued`]), whoever sends it.

pub(crate) mod diff_stream;
pub mod documents;
mod elsewhere;
pub(crate) mod feed;
pub(crate) mod history;
pub(crate) mod journal_wait;
pub(crate) mod land;
pub mod metrics;
pub mod models;
pub(crate) mod race;
pub(crate) mod round_diff;
pub(crate) mod round_report;
pub(crate) mod task_filter;
pub(crate) mod trees;
pub(crate) mod warm;

use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::store_location::StoreLocation;
use crate::env::workspace::Workspace;
use crate::ops::fleet::QueueItem;
use crate::{
    AdoptOptions, CleanOptions, CleanReport, FixOptions, Launched, MergeOptions, MergeReport,
    OwnershipAction, OwnershipReport, PipelineReport, PlanOptions, RewindOptions, RewindReport,
    RoundReport, StartOptions, StatusView, WaitOutcome,
};
use std::path::Path;
use std::time::Duration;

/// The engine, opened for one repository and one commander.
#[derive(Debug)]
pub struct Engine {
    ws: Workspace,
    commander: String,
}

/// What became of a round sent to a task.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one value per request, returned once; boxing would only add a step to reading it"
)]
pub enum Sent {
    /// It ran (in the foreground), or runs in a detached host.
    Launched(Launched),
    /// It waits in the queue: asked for (`queue`), or the task holds new rounds (its policy).
    Queued { item: QueueItem, held: bool },
    /// The task's worktree is on another host: the round is queued for the workers there
    /// ([`Engine::follow_queued`] follows it to its end).
    Elsewhere { item: QueueItem },
}

/// `ganger status`: every task, one task's last round, or a task's pipeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusRequest {
    pub slug: Option<String>,
    /// The task table with each pipeline's roles under its task.
    pub tree: bool,
}

impl Notices for std::sync::mpsc::Sender<Notice> {
    /// Notices sent to a channel; a receiver that went away stops nothing.
    fn notice(&mut self, notice: Notice) {
        let _ = self.send(notice);
    }
}

impl Engine {
    /// The engine for the repository containing `dir`, acting as `commander`, on the store
    /// the user named (`--store`, `GANGER_STORE`: [`crate::store_location::named`]), else the
    /// configuration's (`[store] url`), else the local one.
    pub fn open(dir: &Path, store: Option<StoreLocation>, commander: &str) -> Result<Engine> {
        let commander = crate::base::commander::check_commander_name(commander)
            .map_err(EngineError::invalid)?
            .to_owned();
        Ok(Engine {
            ws: Workspace::discover(dir, store)?,
            commander,
        })
    }

    /// The repository, its state directory and its configuration.
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// Who acts when a request names no one.
    pub fn commander(&self) -> &str {
        &self.commander
    }

    fn who(&self, named: Option<String>) -> Option<String> {
        Some(named.unwrap_or_else(|| self.commander.clone()))
    }

    fn who_ref<'a>(&'a self, named: Option<&'a str>) -> &'a str {
        named.unwrap_or(&self.commander)
    }

    /// Starts a task (round 1), or queues its start with `queue`.
    pub fn start(
        &self,
        mut request: StartOptions,
        queue: bool,
        notices: &mut dyn Notices,
    ) -> Result<Sent> {
        request.commander = self.who(request.commander.take());
        if queue {
            let item = crate::ops::fleet::queue_start(&self.ws, &request)?;
            return Ok(Sent::Queued { item, held: false });
        }
        Ok(Sent::Launched(crate::task::start::start(
            &self.ws, request, notices,
        )?))
    }

    /// Sends the next round of a task: it runs, or waits in the queue when asked to (`queue`)
    /// or when the task holds new rounds.
    pub fn fix(
        &self,
        mut request: FixOptions,
        queue: bool,
        notices: &mut dyn Notices,
    ) -> Result<Sent> {
        request.commander = self.who(request.commander.take());
        if queue {
            let item = crate::ops::fleet::queue_fix(&self.ws, &request)?;
            return Ok(Sent::Queued { item, held: false });
        }
        // A task on hold takes new rounds into the queue: they run once its policy is accept.
        if !request.interrupt && crate::task::rules::holds_rounds(&self.ws, &request.slug)? {
            if request.until_green.is_some() || request.model.is_some() {
                return Err(EngineError::invalid(format!(
                    "task {} holds new rounds, so this one would wait in the queue, and a queued \
                     round takes no --until-green or --model",
                    request.slug
                )));
            }
            let request = FixOptions {
                detach: false,
                ..request
            };
            let item = crate::ops::fleet::queue_fix(&self.ws, &request)?;
            return Ok(Sent::Queued { item, held: true });
        }
        if crate::round::task_move::runs_elsewhere(&self.ws, &request.slug)? {
            if request.until_green.is_some()
                || request.model.is_some()
                || !request.keys.is_empty()
                || request.interrupt
            {
                return Err(EngineError::invalid(format!(
                    "task {}'s worktree is on another host, so this round goes there through \
                     the queue, and a queued round takes no --until-green, --model, --key or \
                     --interrupt",
                    request.slug
                )));
            }
            let request = FixOptions {
                detach: false,
                ..request
            };
            let item = crate::ops::fleet::queue_fix(&self.ws, &request)?;
            return Ok(Sent::Elsewhere { item });
        }
        Ok(Sent::Launched(crate::task::fix::fix(
            &self.ws, request, notices,
        )?))
    }

    /// The report of a round that ran in the foreground or runs detached, as `status` shows it.
    pub fn round_report(
        &self,
        task: &ganger_store::Task,
        round: &ganger_store::Round,
    ) -> RoundReport {
        crate::evidence::report::round_report(&self.ws, task, round)
    }

    /// The report of a round that ran to its end here ([`crate::Launched::Finished`]), with
    /// the budgets its host read at the end.
    pub fn outcome_report(&self, outcome: &crate::HostOutcome) -> RoundReport {
        crate::evidence::report::round_report_with(
            &self.ws,
            &outcome.task,
            &outcome.round,
            outcome.budgets.clone(),
        )
    }

    /// The task table, one task's last round, or a task's pipeline.
    pub fn status(&self, request: &StatusRequest, notices: &mut dyn Notices) -> Result<StatusView> {
        crate::ops::status::status_of(&self.ws, request.slug.as_deref(), request.tree, notices)
    }

    /// Tasks counted by the values of label `key`.
    pub fn groups(&self, key: &str) -> Result<crate::task::labels::TaskGroups> {
        crate::task::labels::task_groups(&self.ws, key)
    }

    /// Waits for a task's running round to end (at most `timeout`).
    pub fn wait(
        &self,
        slug: &str,
        timeout: Option<Duration>,
        notices: &mut dyn Notices,
    ) -> Result<WaitOutcome> {
        crate::ops::wait::wait(&self.ws, slug, timeout, notices)
    }

    /// Stops a task's running round.
    pub fn cancel(
        &self,
        slug: &str,
        commander: Option<&str>,
        notices: &mut dyn Notices,
    ) -> Result<RoundReport> {
        crate::task::cancel::cancel(&self.ws, slug, Some(self.who_ref(commander)), notices)
    }

    /// The task's changes against its base: a patch, or a diffstat with `stat`.
    pub fn diff(&self, slug: &str, stat: bool, color: bool) -> Result<Vec<u8>> {
        crate::ops::diff::diff(&self.ws, slug, stat, color)
    }

    /// A round's events, line by line, to `out` (following a running round with `follow`).
    pub fn log(
        &self,
        request: &crate::LogOptions,
        out: &mut dyn FnMut(crate::LogLine<'_>) -> std::io::Result<()>,
    ) -> Result<()> {
        crate::ops::log::log(&self.ws, request, out)
    }

    /// Merges a task's work into its base.
    pub fn merge(
        &self,
        mut request: MergeOptions,
        notices: &mut dyn Notices,
    ) -> Result<MergeReport> {
        request.commander = self.who(request.commander.take());
        // A race's slug merges its winner.
        if let Some(winner) = crate::ops::race::winner_task(&self.ws, &request.slug)? {
            request.slug = winner;
        }
        crate::ops::merge::merge(&self.ws, &request, notices)
    }

    /// Takes a task back to its state after a round.
    pub fn rewind(
        &self,
        mut request: RewindOptions,
        notices: &mut dyn Notices,
    ) -> Result<RewindReport> {
        request.commander = self.who(request.commander.take());
        crate::ops::rewind::rewind(&self.ws, &request, notices)
    }

    /// Removes what finished tasks left behind.
    pub fn clean(
        &self,
        mut request: CleanOptions,
        notices: &mut dyn Notices,
    ) -> Result<CleanReport> {
        request.commander = self.who(request.commander.take());
        // A race's slug cleans its losers (`api/race.rs`).
        self.clean_races(request, notices)
    }

    /// Makes `.ganger/` and `ganger.toml`, and lists the agents found.
    pub fn init(&self) -> Result<crate::InitReport> {
        crate::ops::init::init(&self.ws)
    }

    /// A session started by hand becomes a task.
    pub fn adopt(
        &self,
        mut request: AdoptOptions,
        notices: &mut dyn Notices,
    ) -> Result<ganger_store::Task> {
        request.commander = self.who(request.commander.take());
        crate::ops::adopt::adopt(&self.ws, &request, notices)
    }

    /// The agent's own interactive interface on a task's session; the agent's exit code.
    pub fn attach(
        &self,
        slug: &str,
        commander: Option<&str>,
        notices: &mut dyn Notices,
    ) -> Result<i32> {
        crate::ops::attach::attach(&self.ws, slug, Some(self.who_ref(commander)), notices)
    }

    /// Changes who owns a task or what it lets in.
    pub fn ownership(
        &self,
        slug: &str,
        action: &OwnershipAction,
        commander: Option<&str>,
        notices: &mut dyn Notices,
    ) -> Result<OwnershipReport> {
        crate::ops::ownership::change_ownership(
            &self.ws,
            slug,
            action,
            Some(self.who_ref(commander)),
            notices,
        )
    }

    /// Starts a pipeline: a plan by the planner, attacked by the critic.
    pub fn plan(
        &self,
        mut request: PlanOptions,
        notices: &mut dyn Notices,
    ) -> Result<PipelineReport> {
        request.commander = self.who(request.commander.take());
        crate::ops::pipeline::plan(&self.ws, request, notices)
    }

    /// Approves a pipeline's plan: the executor's steps, then the reviewers.
    pub fn approve(
        &self,
        slug: &str,
        commander: Option<&str>,
        notices: &mut dyn Notices,
    ) -> Result<PipelineReport> {
        crate::ops::pipeline::approve(&self.ws, slug, Some(self.who_ref(commander)), notices)
    }

    /// Sends a pipeline's plan back to the planner with notes.
    pub fn reject(
        &self,
        slug: &str,
        notes: &crate::Brief,
        commander: Option<&str>,
        notices: &mut dyn Notices,
    ) -> Result<PipelineReport> {
        crate::ops::pipeline::reject(
            &self.ws,
            slug,
            notes,
            Some(self.who_ref(commander)),
            notices,
        )
    }

    /// The commander's journal after its cursor (settling dead rounds first with `settle`).
    pub fn watch(
        &self,
        commander: Option<&str>,
        after: Option<i64>,
        settle: bool,
    ) -> Result<crate::ops::journal::JournalPage> {
        crate::ops::journal::watch(&self.ws, Some(self.who_ref(commander)), after, settle)
    }

    /// Moves the commander's journal cursor.
    pub fn ack(
        &self,
        commander: Option<&str>,
        upto: i64,
    ) -> Result<crate::ops::journal::AckReport> {
        crate::ops::journal::ack(&self.ws, Some(self.who_ref(commander)), upto)
    }

    /// Queues one fix round for many tasks.
    pub fn broadcast(
        &self,
        prompt: &str,
        only: &[String],
        commander: Option<&str>,
    ) -> Result<Vec<QueueItem>> {
        crate::ops::fleet::broadcast(&self.ws, prompt, only, Some(self.who_ref(commander)))
    }

    /// Queues a fleet file's tasks.
    pub fn submit_fleet(
        &self,
        fleet: &crate::ops::fleet::Fleet,
        commander: Option<&str>,
    ) -> Result<crate::ops::fleet::Submitted> {
        crate::ops::fleet::submit_fleet(&self.ws, fleet, Some(self.who_ref(commander)))
    }

    /// Queues a fleet file's tasks and drives them to their end: as the scheduler when none
    /// runs, else following the one that does.
    pub fn run_fleet(
        &self,
        fleet: &crate::ops::fleet::Fleet,
        options: crate::ops::fleet::SchedulerOptions,
        commander: Option<&str>,
        submitted: &mut dyn FnMut(&crate::ops::fleet::Submitted, Option<u32>),
        events: &mut dyn crate::ops::fleet::FleetEvents,
    ) -> Result<crate::ops::fleet::FleetRun> {
        crate::ops::fleet::run_fleet(
            &self.ws,
            fleet,
            options,
            Some(self.who_ref(commander)),
            submitted,
            events,
        )
    }

    /// The scheduler for queued work, until it is stopped (one per repository). `ready` is
    /// told the scheduler's claim in the store once this process is the repository's
    /// scheduler, before anything starts; an error of its own ends `serve` there.
    pub fn serve(
        &self,
        options: crate::ops::fleet::SchedulerOptions,
        ready: &mut dyn FnMut(&ganger_store::ClaimKey) -> Result<()>,
        events: &mut (dyn crate::ops::fleet::FleetEvents + Send),
    ) -> Result<crate::ops::fleet::Drained> {
        self.with_lander(events, |events| {
            crate::ops::fleet::serve(&self.ws, options, ready, events)
        })
    }

    /// Runs a worker (`ganger worker`): a scheduler recorded under a name that takes from the
    /// shared queue what it can run, up to its capacity; runs until it fails.
    pub fn worker(
        &self,
        worker: crate::ops::fleet::WorkerOptions,
        options: crate::ops::fleet::SchedulerOptions,
        ready: &mut dyn FnMut(&ganger_store::ClaimKey) -> Result<()>,
        events: &mut (dyn crate::ops::fleet::FleetEvents + Send),
    ) -> Result<crate::ops::fleet::Drained> {
        self.with_lander(events, |events| {
            crate::ops::fleet::run_worker(&self.ws, worker, options, ready, events)
        })
    }

    /// Every worker recorded in the store, alive or not.
    pub fn workers(&self) -> Result<Vec<crate::ops::fleet::WorkerStatus>> {
        crate::ops::fleet::list_workers(&self.ws)
    }

    /// The pid of the scheduler that runs for this repository, if one does.
    pub fn scheduler(&self) -> Option<u32> {
        crate::ops::fleet::serve_holder(&self.ws)
    }

    /// A fleet's tasks, or every queued item.
    pub fn fleet_status(&self, name: Option<&str>) -> Result<crate::ops::fleet::FleetStatus> {
        crate::ops::fleet::fleet_status(&self.ws, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_engine_can_be_shared_by_many_threads() {
        assert_send_sync::<Engine>();
    }
}
