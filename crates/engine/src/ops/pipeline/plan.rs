//! `ganger plan` and `ganger reject`: the planner writes a version of the plan (read-only;
//! ganger saves its answer as `.ganger/plans/SLUG.vN.md` and `SLUG.md`), the critic reviews
//! it and its findings are appended, and the pipeline waits for a decision. `plan` makes the
//! task and its worktree when they do not exist yet; `reject` sends the person's notes to the
//! planner's session for the next version, then the critic again.

use super::prompts;
use super::role_round;
use crate::base::brief::{Brief, read_brief};
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::base::slug::check_slug;
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree;
use crate::task::admission::known_adapter;
use crate::task::lookup::find_task;
use crate::task::pipeline::plan_steps::parse_steps;
use crate::task::pipeline::report::{PipelineReport, no_pipeline, pipeline_report};
use crate::task::pipeline::roles::{CRITIC, PLANNER, resolve, role_slug};
use crate::task::pipeline::state::{
    CRITIQUE_MARK, HEADER_START, PlanFiles, Stage, set_stage, settled_stage,
};
use ganger_sandbox::{Network, SandboxKind};
use ganger_store::{NewTask, PipelineRecord, ReviewerVerdict, Task};

/// What `ganger plan` was asked.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub slug: String,
    pub brief: Option<Brief>,
    /// The task's agent and model, the roles' defaults (when the task is made here).
    pub agent: Option<String>,
    pub model: Option<String>,
    pub base: Option<String>,
    pub sandbox: Option<SandboxKind>,
    pub network: Option<Network>,
    pub commander: Option<String>,
}

/// Plans a task: the first version of the plan and its critique.
pub fn plan(
    ws: &Workspace,
    options: PlanOptions,
    notices: &mut dyn Notices,
) -> Result<PipelineReport> {
    check_slug(&options.slug)?;
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    let brief = read_brief(brief)?;
    // Nothing is made before every role is checked: the store is only read until then.
    let existing = match ws.existing_store()? {
        Some(store) => match store.task(&options.slug)? {
            Some(task) => {
                let me = commander(options.commander.as_deref());
                crate::task::rules::require_owner(&task, &me, "plan")?;
                refuse_existing(&*store, &task)?;
                Some(task)
            }
            None => None,
        },
        None => None,
    };
    let (agent, model) = match &existing {
        Some(task) => (task.agent.clone(), task.model.clone()),
        None => (
            options
                .agent
                .clone()
                .unwrap_or_else(|| ws.config.defaults.agent.clone()),
            options
                .model
                .clone()
                .or_else(|| ws.config.defaults.model.clone()),
        ),
    };
    crate::task::pipeline::roles::preflight(ws, &agent, model.as_deref(), notices)?;
    let mut store = ws.open_store()?;
    let task = match existing {
        Some(task) => task,
        None => new_task(ws, &mut *store, &options, notices)?,
    };
    let _held = crate::task::pipeline::state::lock(ws, &options.slug)?;
    if store.pipeline(task.id)?.is_some() {
        return Err(EngineError::invalid(format!(
            "task {} has a pipeline already",
            task.slug
        )));
    }
    let mut record = PipelineRecord {
        task_id: task.id,
        stage: Stage::Planning.as_str().to_owned(),
        reason: None,
        brief: brief.clone(),
        plan_version: 0,
        steps_total: 0,
        steps_done: 0,
        review_round: 0,
        verdicts: pending_verdicts(ws),
        updated_at: 0,
    };
    store.save_pipeline(&record)?;
    drop(store);
    guarded(ws, &mut record, |record| {
        new_version(ws, &task, record, &prompts::planner(&brief), notices)
    })?;
    pipeline_report(ws, &task.slug)
}

/// Refuses to plan a role's task, or a task that has a pipeline already.
fn refuse_existing(store: &dyn ganger_store::Backend, task: &Task) -> Result<()> {
    if task.parent.is_some() {
        return Err(EngineError::invalid(format!(
            "{} is a role's task in a pipeline; plan its pipeline's task",
            task.slug
        )));
    }
    if let Some(record) = store.pipeline(task.id)? {
        return Err(EngineError::invalid(format!(
            "task {} has a pipeline already, at stage {}",
            task.slug, record.stage
        ))
        .hint(format!(
            "`ganger reject {} --message NOTES` asks the planner for a new version",
            task.slug
        )));
    }
    Ok(())
}

/// Rejects the current version: the notes go to the planner for the next one.
pub fn reject(
    ws: &Workspace,
    slug: &str,
    notes: &Brief,
    as_name: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<PipelineReport> {
    let notes = read_brief(notes)?;
    let mut store = existing_store(ws, slug)?;
    let task = find_task(&*store, slug)?;
    crate::task::rules::require_owner(&task, &commander(as_name), "reject the plan of")?;
    let _held = crate::task::pipeline::state::lock(ws, slug)?;
    let mut record = store.pipeline(task.id)?.ok_or_else(|| no_pipeline(slug))?;
    let at = settled_stage(ws, &mut *store, &record, notices)?;
    let planning_failed = at == Stage::Failed
        && store
            .task(&role_slug(slug, crate::task::pipeline::roles::EXECUTOR))?
            .is_none();
    if at != Stage::AwaitingApproval && !planning_failed {
        return Err(EngineError::invalid(format!(
            "the pipeline of {slug} is at stage {}, not waiting for a decision on its plan",
            record.stage
        )));
    }
    let critique = PlanFiles::of(ws, slug).critique();
    let planner_has_session = store
        .task(&role_slug(slug, PLANNER))?
        .is_some_and(|t| t.session.is_some());
    drop(store);
    let mut body = String::new();
    if !planner_has_session {
        body.push_str(&prompts::planner(&record.brief));
        body.push_str("\n\n");
    }
    body.push_str(&prompts::replan(record.plan_version, &notes, &critique));
    guarded(ws, &mut record, |record| {
        new_version(ws, &task, record, &body, notices)
    })?;
    pipeline_report(ws, slug)
}

/// Runs `work` on the record; an error stops the pipeline as failed, with the error as the
/// reason, so that it never stays at a stage nothing is working on.
pub(crate) fn guarded(
    ws: &Workspace,
    record: &mut PipelineRecord,
    work: impl FnOnce(&mut PipelineRecord) -> Result<()>,
) -> Result<()> {
    let outcome = work(record);
    if let Err(error) = &outcome {
        set_stage(record, Stage::Failed, Some(error.message.clone()));
        ws.open_store()?.save_pipeline(record)?;
    }
    outcome
}

/// The store, when there is one; without one there is no task `slug` (and nothing is made).
pub(crate) fn existing_store(ws: &Workspace, slug: &str) -> Result<Box<dyn ganger_store::Backend>> {
    match ws.existing_store()? {
        Some(store) => Ok(store),
        None => {
            crate::base::slug::check_task_name(slug)?;
            Err(EngineError::not_found(format!("no task {slug}")))
        }
    }
}

/// Every configured reviewer, pending.
pub(crate) fn pending_verdicts(ws: &Workspace) -> Vec<ReviewerVerdict> {
    ws.config
        .pipeline
        .reviewers
        .iter()
        .map(|reviewer| ReviewerVerdict {
            reviewer: reviewer.clone(),
            verdict: "pending".into(),
            round: 0,
            findings: Vec::new(),
        })
        .collect()
}

/// The pipeline's task and its worktree, made as `ganger start` makes them, with no round.
fn new_task(
    ws: &Workspace,
    store: &mut dyn ganger_store::Backend,
    options: &PlanOptions,
    notices: &mut dyn Notices,
) -> Result<Task> {
    let agent = options
        .agent
        .clone()
        .unwrap_or_else(|| ws.config.defaults.agent.clone());
    known_adapter(ws, &agent)?;
    let sandbox = crate::env::sandboxing::choose(ws, options.sandbox, options.network, &[])?;
    let planned = task_worktree::plan(ws, &options.slug, options.base.as_deref(), None)?;
    let owner = commander(options.commander.as_deref());
    let token = crate::base::tokens::new_token();
    let claim = crate::round::launch::take_claim(&*store, &token)?;
    task_worktree::begin(
        ws,
        store,
        &planned,
        &options.slug,
        &owner,
        claim.key(),
        notices,
    )?;
    let (worktree, branch, base) = (
        planned.path.clone(),
        planned.branch.clone(),
        planned.base.clone(),
    );
    let base_commit = Some(planned.base_commit.clone());
    let task = NewTask {
        slug: options.slug.clone(),
        agent,
        model: options
            .model
            .clone()
            .or_else(|| ws.config.defaults.model.clone()),
        base,
        base_commit,
        branch: branch.clone(),
        worktree: worktree.clone(),
        worktree_made: true,
        owner,
        keys: Default::default(),
        timeout_ms: None,
        stall_ms: None,
        permission: ws.config.defaults.permission,
        sandbox: sandbox.kind(),
        network: sandbox.network,
        rw: Vec::new(),
        allow: Vec::new(),
        warm: None,
        labels: Vec::new(),
        budget: ganger_store::Budget::default(),
        fleet: None,
    };
    let created = store
        .create_bare_task(&task)
        .inspect_err(|_| task_worktree::abandon(ws, store, &planned, &options.slug, claim.key()))
        .map_err(Into::into);
    claim.release();
    created
}

/// The planner writes the next version from `body`; ganger saves it and the critic reviews
/// it. Ends waiting for approval, or failed with the reason.
fn new_version(
    ws: &Workspace,
    task: &Task,
    record: &mut PipelineRecord,
    body: &str,
    notices: &mut dyn Notices,
) -> Result<()> {
    let save = |record: &mut PipelineRecord| -> Result<()> {
        ws.open_store()?.save_pipeline(record)?;
        Ok(())
    };
    set_stage(record, Stage::Planning, None);
    save(record)?;
    let planner = resolve(ws, task, PLANNER)?;
    let planned = role_round::run(ws, task, &planner, body, notices)?;
    if !planned.passed() || planned.answer.trim().is_empty() {
        let reason = format!(
            "the planner's round {} ended {}",
            planned.round.number,
            planned.describe()
        );
        set_stage(record, Stage::Failed, Some(reason));
        return save(record);
    }
    let version = record.plan_version + 1;
    let steps = parse_steps(&planned.answer);
    let files = PlanFiles::of(ws, &task.slug);
    files.write(
        version,
        &format!(
            "{HEADER_START} the plan of {}, version {version}, the answer of {} round {} -->\n\n{}\n",
            task.slug,
            planned.task.slug,
            planned.round.number,
            planned.answer.trim_end()
        ),
    )?;
    record.plan_version = version;
    record.steps_total = steps.len() as u32;
    record.steps_done = 0;
    notices.notice(Notice::Pipeline {
        slug: task.slug.clone(),
        message: format!(
            "plan version {version}: {} steps, saved to {}",
            steps.len(),
            files.current().display()
        ),
    });
    if steps.is_empty() {
        set_stage(
            record,
            Stage::Failed,
            Some(format!(
                "version {version} of the plan has no numbered steps"
            )),
        );
        return save(record);
    }
    set_stage(record, Stage::Critiquing, None);
    save(record)?;
    let critic = resolve(ws, task, CRITIC)?;
    let plan = files.plan_only(version)?;
    let reviewed = role_round::run(
        ws,
        task,
        &critic,
        &prompts::critic(&record.brief, version, &plan),
        notices,
    )?;
    if matches!(
        reviewed.round.status,
        ganger_events::RoundStatus::Cancelled | ganger_events::RoundStatus::Interrupted
    ) {
        let reason = format!("the critic's round {}", reviewed.describe());
        set_stage(record, Stage::Failed, Some(reason));
        return save(record);
    }
    let critique = if reviewed.passed() {
        reviewed.answer.trim().to_owned()
    } else {
        format!(
            "(no critique: the critic's round {} ended {})",
            reviewed.round.number,
            reviewed.describe()
        )
    };
    files.append(
        version,
        &format!(
            "{CRITIQUE_MARK} (the critic, {} round {})\n\n{critique}\n",
            reviewed.task.slug, reviewed.round.number
        ),
    )?;
    set_stage(record, Stage::AwaitingApproval, None);
    save(record)
}
