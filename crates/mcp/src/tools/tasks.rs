//! The tools that act on a task: `start`, `fix`, `merge`, `cancel`, `rewind`.

use super::{TaskArgs, answered, json_of, parsed, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::documents::SentDocument;
use ganger_engine::{
    Brief, Budget, Engine, EngineError, FixOptions, MergeMode, MergeOptions, RewindOptions,
    StartOptions,
};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `start`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// The task's name: `[a-z0-9][a-z0-9-]{0,47}`; its branch is `agent/SLUG`.
    pub slug: String,
    /// The brief: everything the worker needs, self-contained (it sees nothing else). Ask for
    /// a last line `DONE: <one-line result>`.
    pub brief: String,
    /// The worker agent: opencode, claude, codex, gemini, qwen (default: ganger.toml's).
    pub agent: Option<String>,
    /// The model, as the agent names it (OpenCode: provider/model).
    pub model: Option<String>,
    /// Where rounds run: local, bwrap or docker (default: ganger.toml's).
    pub sandbox: Option<String>,
    /// What the worker may do: write or read-only.
    pub permission: Option<String>,
    /// The revision the branch starts from (default: the base branch).
    pub base: Option<String>,
    /// Commands ganger runs on the worktree after each round; their results are the evidence.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Send the failing checks back as fix rounds, at most this many, until they pass.
    pub until_green: Option<u32>,
    /// Labels to group and filter tasks by, e.g. {"team": "parser"}.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Stop sending rounds once the task has cost this many dollars.
    pub budget_usd: Option<f64>,
    /// Stop sending rounds once the task has used this many tokens.
    pub budget_tokens: Option<u64>,
    /// Queue the start for the scheduler (`ganger serve`) instead of starting it now.
    #[serde(default)]
    pub queue: bool,
}

/// `fix`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    /// The task.
    pub slug: String,
    /// What to do next; the worker sees the whole earlier conversation of its session.
    pub brief: String,
    /// Switch the model for this round and later ones.
    pub model: Option<String>,
    /// One-off checks for this round, after the configured ones.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Fix rounds sent back while checks fail, at most this many.
    pub until_green: Option<u32>,
    /// Cancel the running round first and send this one into the same session (else a fix
    /// while a round runs is refused).
    #[serde(default)]
    pub interrupt: bool,
    /// Queue the round for the scheduler instead of starting it now.
    #[serde(default)]
    pub queue: bool,
}

/// `merge`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Merge {
    /// The task.
    pub slug: String,
    /// merge (a merge commit, the default), squash or rebase.
    pub mode: Option<String>,
    /// On a conflict, have the worker resolve it in a fix round, then merge.
    #[serde(default)]
    pub fix: bool,
}

/// `rewind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rewind {
    /// The task.
    pub slug: String,
    /// The round whose end the task goes back to.
    pub to: u32,
}

#[tool_router(router = task_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Start a task: a worker agent in its own git worktree and branch gets the brief as \
             round 1 of a new session. Returns at once (the round runs in the background): then \
             call `wait`. One task per concern; write a self-contained brief and ask for a last \
             line `DONE: <one-line result>`.",
        annotations(read_only_hint = false)
    )]
    async fn start(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Start>,
    ) -> CallToolResult {
        answered(engine, move |e| start(e, a)).await
    }

    #[tool(
        description = "Send the next round to a task: the worker continues the same session with the whole \
             earlier conversation. Say exactly what is wrong and what to change. Returns at once; \
             then `wait`. Refused while a round runs unless `interrupt` is set.",
        annotations(read_only_hint = false)
    )]
    async fn fix(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Fix>,
    ) -> CallToolResult {
        answered(engine, move |e| fix(e, a)).await
    }

    #[tool(
        description = "Commit the task's worktree on its branch and merge it into its base. Refused unless \
             the last round passed; a conflict changes nothing and lists the files (`fix: true` \
             has the worker resolve it).",
        annotations(read_only_hint = false)
    )]
    async fn merge(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Merge>,
    ) -> CallToolResult {
        answered(engine, move |e| merge(e, a)).await
    }

    #[tool(
        description = "Stop a task's running round (it is recorded as cancelled; a later fix resumes the \
             session).",
        annotations(read_only_hint = false)
    )]
    async fn cancel(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<TaskArgs>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.cancel(&a.slug, None, &mut quiet()), |r| {
                Answer::of(&r, text::report(&r))
            })
        })
        .await
    }

    #[tool(
        description = "Take a task back to the end of an earlier round: its files become that round's, \
             and the next round continues the conversation from there.",
        annotations(read_only_hint = false)
    )]
    async fn rewind(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Rewind>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            let options = RewindOptions {
                slug: a.slug,
                to: a.to,
                commander: None,
            };
            answer(e.rewind(options, &mut quiet()), |r| {
                Answer::of(&r, text::compact(&json_of(&r)))
            })
        })
        .await
    }
}

fn start(engine: &Engine, a: Start) -> Answer {
    let options = (|| -> Result<StartOptions, EngineError> {
        Ok(StartOptions {
            slug: a.slug,
            brief: Some(Brief::Message(a.brief)),
            agent: a.agent,
            model: a.model,
            base: a.base,
            // A queued round runs detached anyway; the queue takes no detach of its own.
            detach: !a.queue,
            permission: parsed(a.permission)?,
            sandbox: parsed(a.sandbox)?,
            checks: a.checks,
            until_green: a.until_green,
            labels: a
                .labels
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
            budget: Budget {
                usd: a.budget_usd,
                tokens: a.budget_tokens,
            },
            ..StartOptions::default()
        })
    })();
    match options {
        Ok(options) => answer(engine.start(options, a.queue, &mut quiet()), |s| {
            sent(engine.sent_document(s))
        }),
        Err(error) => Answer::failure(&error),
    }
}

fn fix(engine: &Engine, a: Fix) -> Answer {
    let options = FixOptions {
        slug: a.slug,
        brief: Some(Brief::Message(a.brief)),
        model: a.model,
        detach: !a.queue,
        checks: a.checks,
        until_green: a.until_green,
        interrupt: a.interrupt,
        ..FixOptions::default()
    };
    answer(engine.fix(options, a.queue, &mut quiet()), |s| {
        sent(engine.sent_document(s))
    })
}

/// A round sent: running detached (`ganger.detached/1`), queued (`ganger.queued/1`), or run
/// here to its end (its report).
fn sent(document: SentDocument) -> Answer {
    match document {
        SentDocument::Queued(queued) => {
            let mut answer = super::fleets::queued(&queued);
            if queued.held {
                for item in &queued.items {
                    answer.text.push_str(&format!(
                        "task {} holds new rounds: it waits until its policy is accept\n",
                        item.slug
                    ));
                }
            }
            answer
        }
        SentDocument::Detached(detached) => {
            let line = format!(
                "round {} of {} is running; call wait with slug {:?} for its report\n",
                detached.round, detached.task, detached.task
            );
            Answer::of(&detached, line)
        }
        SentDocument::Finished(report) => Answer::of(&report, text::report(&report)),
    }
}

fn merge(engine: &Engine, a: Merge) -> Answer {
    let mode = match a.mode.as_deref().map(str::parse::<MergeMode>).transpose() {
        Ok(mode) => mode.unwrap_or_default(),
        Err(problem) => return Answer::failure(&EngineError::invalid(problem)),
    };
    let options = MergeOptions {
        slug: a.slug,
        mode,
        fix: a.fix,
        commander: None,
    };
    answer(engine.merge(options, &mut quiet()), |r| {
        Answer::of(&r, text::merge(&r))
    })
}
