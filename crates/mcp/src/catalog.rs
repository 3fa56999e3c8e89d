//! The tools, as a client lists them: a name, a description that teaches where the tool fits
//! in the supervise loop, the input schema derived from its argument type (`args.rs`), and
//! whether it only reads. The order is the loop's: start, wait, read, fix or merge.

use crate::args;
use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;

/// One tool: its name, what it is for, its arguments' type, whether it changes nothing.
fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    reads: bool,
) -> Tool {
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = Some(reads);
    Tool::new(name, description, rmcp::model::JsonObject::new())
        .with_input_schema::<T>()
        .annotate(annotations)
}

/// Every tool the server offers.
pub fn tools() -> Vec<Tool> {
    vec![
        tool::<args::Start>(
            "start",
            "Start a task: a worker agent in its own git worktree and branch gets the brief as \
             round 1 of a new session. Returns at once (the round runs in the background): then \
             call `wait`. One task per concern; write a self-contained brief and ask for a last \
             line `DONE: <one-line result>`.",
            false,
        ),
        tool::<args::Wait>(
            "wait",
            "Wait for a task's running round to end and return its report (status, the worker's \
             answer and DONE: line, changed files, check results, cost). If the round still \
             runs at the timeout the answer says so: call `wait` again. After it: read `diff`, \
             then `fix` or `merge`.",
            true,
        ),
        tool::<args::Status>(
            "status",
            "The task table (each task's rounds, last status, owner, DONE: line), filtered by \
             label or owner; or, with a slug, that task's last round's report.",
            true,
        ),
        tool::<args::Report>(
            "report",
            "The report of one round of a task (default: the last): status, finish reason, the \
             worker's answer, changed files, checks, errors, cost and tokens.",
            true,
        ),
        tool::<args::Diff>(
            "diff",
            "What a task changed against its base (or what one round changed), as a patch or a \
             diffstat, a page at a time: when `next_offset` is set, call again with it as \
             `offset`. Read it before deciding to fix or merge: the diff is the evidence, the \
             worker's claim is not.",
            true,
        ),
        tool::<args::Log>(
            "log",
            "The last events of a round (tool calls, text, errors), for seeing what the worker \
             did or why it failed.",
            true,
        ),
        tool::<args::Fix>(
            "fix",
            "Send the next round to a task: the worker continues the same session with the whole \
             earlier conversation. Say exactly what is wrong and what to change. Returns at once; \
             then `wait`. Refused while a round runs unless `interrupt` is set.",
            false,
        ),
        tool::<args::Merge>(
            "merge",
            "Commit the task's worktree on its branch and merge it into its base. Refused unless \
             the last round passed; a conflict changes nothing and lists the files (`fix: true` \
             has the worker resolve it).",
            false,
        ),
        tool::<args::Task>(
            "cancel",
            "Stop a task's running round (it is recorded as cancelled; a later fix resumes the \
             session).",
            false,
        ),
        tool::<args::Rewind>(
            "rewind",
            "Take a task back to the end of an earlier round: its files become that round's, \
             and the next round continues the conversation from there.",
            false,
        ),
        tool::<args::Plan>(
            "plan",
            "The role pipeline: a planner writes numbered steps and a critic attacks them; then \
             `approve` (execution and reviews) or `reject` with notes. Runs until the plan waits \
             for a decision.",
            false,
        ),
        tool::<args::Task>(
            "approve",
            "Approve a pipeline's plan: the executor does each step, the reviewers check the \
             work, their findings go back as fix rounds. Runs until the pipeline ends.",
            false,
        ),
        tool::<args::Reject>(
            "reject",
            "Send a pipeline's plan back to the planner with notes; the critic reviews the new \
             version.",
            false,
        ),
        tool::<args::Assign>(
            "assign",
            "Take a task nobody owns (or, as its owner, give it to `to`). Only a task's owner \
             fixes, cancels, merges or hands it on.",
            false,
        ),
        tool::<args::Transfer>(
            "transfer",
            "Hand a task you own to another commander. Its generation goes up: rounds sent under \
             the old one are refused, never delivered to the wrong owner.",
            false,
        ),
        tool::<args::Task>(
            "release",
            "Let a task go: nobody owns it until someone assigns it.",
            false,
        ),
        tool::<args::Policy>(
            "policy",
            "What a task does with new rounds: accept, hold (they wait in the queue) or refuse.",
            false,
        ),
        tool::<args::Allow>(
            "allow",
            "Let other commanders send a task rounds besides its owner (or stop letting them).",
            false,
        ),
        tool::<args::Broadcast>(
            "broadcast",
            "Queue one fix round for many tasks at once (every task you own, or `only`); the \
             scheduler (`ganger serve`) runs them under its limits.",
            false,
        ),
        tool::<args::FleetFile>(
            "fleet_run",
            "Run a fleet file's tasks here until they are all done (dependencies, limits); \
             returns the fleet's table.",
            false,
        ),
        tool::<args::FleetFile>(
            "fleet_submit",
            "Queue a fleet file's tasks for the scheduler (`ganger serve`) and return at once.",
            false,
        ),
        tool::<args::FleetStatus>(
            "fleet_status",
            "A fleet's tasks (queue state, rounds, last status, DONE: line), or every queued item.",
            true,
        ),
        tool::<args::Groups>(
            "groups",
            "Tasks grouped by a label's value: how many in each state and the group's last \
             DONE: line.",
            true,
        ),
        tool::<args::Watch>(
            "watch",
            "Block until your journal has something new (a round ended, a check failed, a task \
             was transferred, a budget was reached), or the timeout passes. Use it instead of \
             polling when several tasks run: then `ack` the entries you handled.",
            true,
        ),
        tool::<args::Ack>(
            "ack",
            "Move your journal's cursor past entry `upto`: `watch` then shows only newer ones.",
            false,
        ),
        tool::<args::Agents>(
            "agents",
            "The worker agents ganger knows, the tested version of each and what is installed.",
            true,
        ),
        tool::<args::Models>(
            "models",
            "The models an agent lists (OpenCode has a catalog; the others take any name).",
            true,
        ),
    ]
}

/// The tools' names, in the catalog's order.
pub fn tool_names() -> Vec<String> {
    tools().into_iter().map(|t| t.name.into_owned()).collect()
}
