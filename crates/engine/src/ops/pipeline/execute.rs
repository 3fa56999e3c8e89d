//! `ganger approve`: the executor carries out the plan step by step in one session (a step
//! whose round fails, or fails its checks, gets fix rounds with the failure, bounded), then
//! every configured reviewer reads the cumulative diff and gives its verdict; what they find
//! goes back to the executor as a fix round, until every reviewer passes or the review round
//! limit is reached. Approving a failed pipeline again goes on from where it stopped.

use super::plan::guarded;
use super::prompts;
use super::role_round::{self, RoleRound};
use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::task::lookup::find_task;
use crate::task::pipeline::plan_steps::{Step, parse_steps};
use crate::task::pipeline::report::no_pipeline;
use crate::task::pipeline::report::{PipelineReport, pipeline_report};
use crate::task::pipeline::roles::{EXECUTOR, Role, resolve, role_slug};
use crate::task::pipeline::state::{PlanFiles, Stage, set_stage, settled_stage};
use crate::task::pipeline::text::{DIFF_LIMIT, trim_bytes};
use crate::task::pipeline::verdict::{Review, parse_review};
use ganger_events::RoundStatus;
use ganger_store::{PipelineRecord, ReviewerVerdict, Task};

/// Approves the plan and runs the pipeline to its end.
pub fn approve(
    ws: &Workspace,
    slug: &str,
    as_name: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<PipelineReport> {
    let mut store = super::plan::existing_store(ws, slug)?;
    let task = find_task(&*store, slug)?;
    let me = crate::base::commander::commander(as_name);
    crate::task::rules::require_owner(&task, &me, "approve the plan of")?;
    let _held = crate::task::pipeline::state::lock(ws, slug)?;
    let mut record = store.pipeline(task.id)?.ok_or_else(|| no_pipeline(slug))?;
    let at = settled_stage(ws, &mut *store, &record, notices)?;
    let resumable = at == Stage::Failed && store.task(&role_slug(slug, EXECUTOR))?.is_some();
    if at != Stage::AwaitingApproval && !resumable {
        return Err(EngineError::invalid(format!(
            "the pipeline of {slug} is at stage {}: there is no plan waiting for approval",
            record.stage
        ))
        .hint(match at {
            Stage::Failed => format!("`ganger reject {slug} --message NOTES` asks for a new plan"),
            _ => format!("`ganger status {slug}` shows where it is"),
        }));
    }
    drop(store);
    let files = PlanFiles::of(ws, slug);
    let plan = files.plan_only(record.plan_version)?;
    let steps = parse_steps(&plan);
    if steps.is_empty() {
        return Err(EngineError::invalid(format!(
            "version {} of the plan of {slug} has no numbered steps",
            record.plan_version
        )));
    }
    let critique = files.critique();
    let context = Context {
        ws,
        task: &task,
        plan: &plan,
        critique: &critique,
        executor: resolve(ws, &task, EXECUTOR)?,
    };
    guarded(ws, &mut record, |record| {
        context.run(record, &steps, notices)
    })?;
    pipeline_report(ws, slug)
}

struct Context<'a> {
    ws: &'a Workspace,
    task: &'a Task,
    plan: &'a str,
    critique: &'a str,
    executor: Role,
}

impl Context<'_> {
    fn save(&self, record: &PipelineRecord) -> Result<()> {
        self.ws.open_store()?.save_pipeline(record)?;
        Ok(())
    }

    fn say(&self, notices: &mut dyn Notices, message: String) {
        notices.notice(Notice::Pipeline {
            slug: self.task.slug.clone(),
            message,
        });
    }

    fn stop(&self, record: &mut PipelineRecord, reason: String) -> Result<()> {
        set_stage(record, Stage::Failed, Some(reason));
        self.save(record)
    }

    fn run(
        &self,
        record: &mut PipelineRecord,
        steps: &[Step],
        notices: &mut dyn Notices,
    ) -> Result<()> {
        record.steps_total = steps.len() as u32;
        if record.steps_done < record.steps_total {
            set_stage(record, Stage::Executing, None);
            self.save(record)?;
        }
        let mut last_answer = self.last_executor_answer()?;
        for step in steps.iter().skip(record.steps_done as usize) {
            self.say(notices, format!("step {} of {}", step.number, steps.len()));
            let has_session = self
                .ws
                .open_store()?
                .task(&role_slug(&self.task.slug, EXECUTOR))?
                .is_some_and(|t| t.session.is_some());
            let first = (!has_session).then_some((record.brief.as_str(), self.plan, self.critique));
            let body = prompts::step(first, step, record.steps_total);
            let ended = role_round::run(self.ws, self.task, &self.executor, &body, notices)?;
            match self.until_passed(ended, Some(step.number), notices)? {
                Ok(ended) => last_answer = ended.answer,
                Err(reason) => return self.stop(record, format!("step {}: {reason}", step.number)),
            }
            record.steps_done = step.number;
            self.save(record)?;
        }
        self.review_loop(record, last_answer, notices)
    }

    /// Fix rounds while the executor's round failed or its checks failed, bounded.
    fn until_passed(
        &self,
        mut ended: RoleRound,
        step: Option<u32>,
        notices: &mut dyn Notices,
    ) -> Result<std::result::Result<RoleRound, String>> {
        let limit = self.ws.config.pipeline.fix_rounds;
        let mut fixes = 0;
        while !ended.passed() {
            if stopped(&ended) || fixes >= limit {
                return Ok(Err(format!(
                    "the executor's round {} ended {}{}",
                    ended.round.number,
                    if ended.round.status == RoundStatus::Done {
                        "with failing checks".to_owned()
                    } else {
                        ended.describe()
                    },
                    if fixes > 0 {
                        format!(" after {fixes} fix rounds")
                    } else {
                        String::new()
                    }
                )));
            }
            fixes += 1;
            self.say(
                notices,
                format!(
                    "the executor's round {} did not pass; fix round {fixes} of {limit}",
                    ended.round.number
                ),
            );
            let body = prompts::fix_failed_round(&ended.round, step);
            ended = role_round::run(self.ws, self.task, &self.executor, &body, notices)?;
        }
        Ok(Ok(ended))
    }

    fn review_loop(
        &self,
        record: &mut PipelineRecord,
        mut last_answer: String,
        notices: &mut dyn Notices,
    ) -> Result<()> {
        let limit = self.ws.config.pipeline.review_rounds;
        let reviewers = self.ws.config.pipeline.reviewers.clone();
        if reviewers.is_empty() {
            set_stage(record, Stage::Done, None);
            return self.save(record);
        }
        // A pipeline approved again after it stopped gets the whole loop again, with the
        // reviewers configured now.
        record.review_round = 0;
        record.verdicts = super::plan::pending_verdicts(self.ws);
        loop {
            record.review_round += 1;
            let round = record.review_round;
            set_stage(record, Stage::Reviewing, None);
            self.save(record)?;
            let diff = self.diff()?;
            let mut failing: Vec<(String, Vec<String>)> = Vec::new();
            for name in &reviewers {
                let role = resolve(self.ws, self.task, name)?;
                let body = prompts::review(
                    &record.brief,
                    self.plan,
                    &last_answer,
                    &self.base(),
                    &diff,
                    round,
                );
                let ended = role_round::run(self.ws, self.task, &role, &body, notices)?;
                if stopped(&ended) {
                    return self.stop(
                        record,
                        format!("the {name}'s review round {}", ended.describe()),
                    );
                }
                let review = if ended.round.status == RoundStatus::Done {
                    parse_review(&ended.answer)
                } else {
                    Review::Unparsed(format!(
                        "the review round {} ended {}",
                        ended.round.number,
                        ended.describe()
                    ))
                };
                self.say(
                    notices,
                    format!("review round {round}: {name} says {}", review.verdict()),
                );
                set_verdict(record, name, &review, round);
                self.save(record)?;
                if !review.passed() {
                    failing.push((name.clone(), review.lines()));
                }
            }
            if failing.is_empty() {
                set_stage(record, Stage::Done, None);
                return self.save(record);
            }
            if round >= limit {
                let names: Vec<&str> = failing.iter().map(|(n, _)| n.as_str()).collect();
                return self.stop(
                    record,
                    format!(
                        "{} still fail after {round} review rounds",
                        names.join(", ")
                    ),
                );
            }
            let body = prompts::fix_findings(round, &failing);
            let ended = role_round::run(self.ws, self.task, &self.executor, &body, notices)?;
            match self.until_passed(ended, None, notices)? {
                Ok(ended) => last_answer = ended.answer,
                Err(reason) => {
                    return self.stop(record, format!("fixing review round {round}: {reason}"));
                }
            }
        }
    }

    fn base(&self) -> String {
        self.task
            .base_commit
            .clone()
            .unwrap_or_else(|| self.task.base.clone())
    }

    /// The task's cumulative diff against its base, untracked files included, trimmed.
    fn diff(&self) -> Result<String> {
        let worktree = self.ws.repo.open_worktree(&self.task.worktree)?;
        let patch = worktree.diff_against(&self.base(), false, false)?;
        Ok(trim_bytes(
            &String::from_utf8_lossy(&patch),
            DIFF_LIMIT,
            "read the files in the worktree for the rest",
        ))
    }

    fn last_executor_answer(&self) -> Result<String> {
        let slug = role_slug(&self.task.slug, EXECUTOR);
        let store = self.ws.open_store()?;
        let Some(task) = store.task(&slug)? else {
            return Ok(String::new());
        };
        let Some(round) = store.round(task.id, None)? else {
            return Ok(String::new());
        };
        let file = self.ws.state.round_file(&slug, round.number, "answer.md");
        Ok(std::fs::read_to_string(file)
            .ok()
            .or(round.summary.answer)
            .unwrap_or_default())
    }
}

/// A round someone stopped (`cancel`, Ctrl-C) or whose host died stops the pipeline.
fn stopped(ended: &RoleRound) -> bool {
    matches!(
        ended.round.status,
        RoundStatus::Cancelled | RoundStatus::Interrupted
    )
}

fn set_verdict(record: &mut PipelineRecord, reviewer: &str, review: &Review, round: u32) {
    let verdict = ReviewerVerdict {
        reviewer: reviewer.to_owned(),
        verdict: review.verdict().to_owned(),
        round,
        findings: review.lines(),
    };
    match record.verdicts.iter_mut().find(|v| v.reviewer == reviewer) {
        Some(slot) => *slot = verdict,
        None => record.verdicts.push(verdict),
    }
}
