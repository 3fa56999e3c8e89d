//! Each tool's arguments as a plain serde type: its JSON Schema (the tool's `inputSchema`) is
//! derived from it with `schemars`, field docs included, and a call's arguments are read into
//! it, so the schema a client sees and what the server accepts cannot drift apart. Unknown
//! fields are refused, as the command line refuses unknown options.

use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

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

/// A task named alone: `cancel`, `release`, `approve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The task.
    pub slug: String,
}

/// `wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// The task whose running round to wait for.
    pub slug: String,
    /// The longest wait in seconds (default 120, at most 3600); if the round still runs then,
    /// the answer says so: call again.
    pub timeout_seconds: Option<u64>,
}

/// `status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// One task: its last round's report (or its pipeline). Leave out for the task table.
    pub slug: Option<String>,
    /// Only the tasks with this label, as KEY=VALUE.
    pub label: Option<String>,
    /// Only the tasks this commander owns.
    pub owner: Option<String>,
}

/// `report`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// The task.
    pub slug: String,
    /// The round (default: the last).
    pub round: Option<u32>,
}

/// `diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Diff {
    /// The task.
    pub slug: String,
    /// Only what this round changed (default: the whole task against its base).
    pub round: Option<u32>,
    /// A diffstat (files and line counts) instead of the patch.
    #[serde(default)]
    pub stat: bool,
    /// Where this page starts, in bytes of the patch (the last page's `next_offset`).
    #[serde(default)]
    pub offset: usize,
    /// The page's size in bytes (default 20000, at most 100000).
    pub limit: Option<usize>,
}

/// `log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// The task.
    pub slug: String,
    /// The round (default: the last).
    pub round: Option<u32>,
    /// How many of the last events (default 30, at most 500).
    pub lines: Option<usize>,
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

/// `plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The task.
    pub slug: String,
    /// What the plan is for.
    pub brief: String,
    /// The planner's agent.
    pub agent: Option<String>,
    /// The planner's model.
    pub model: Option<String>,
    /// The revision to start from.
    pub base: Option<String>,
    /// Where rounds run: local, bwrap or docker.
    pub sandbox: Option<String>,
}

/// `reject`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reject {
    /// The task.
    pub slug: String,
    /// What the planner must change.
    pub notes: String,
}

/// `assign`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assign {
    /// The task.
    pub slug: String,
    /// Who gets it (default: this commander).
    pub to: Option<String>,
}

/// `transfer`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// The task.
    pub slug: String,
    /// The commander who owns it next.
    pub to: String,
}

/// `policy`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The task.
    pub slug: String,
    /// accept (new rounds run), hold (they wait in the queue) or refuse.
    pub policy: String,
}

/// `allow`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    /// The task.
    pub slug: String,
    /// Commanders who may send it rounds besides its owner.
    pub names: Vec<String>,
    /// Stop letting them instead.
    #[serde(default)]
    pub remove: bool,
}

/// `broadcast`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Broadcast {
    /// The message, sent as one fix round to each task.
    pub brief: String,
    /// Only these tasks (default: every task this commander owns).
    #[serde(default)]
    pub only: Vec<String>,
}

/// `fleet_run`, `fleet_submit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetFile {
    /// The fleet file (TOML: tasks with briefs, agents, models, `after` dependencies, limits).
    pub file: String,
    /// At most this many rounds at once (fleet_run).
    pub max: Option<u32>,
}

/// `fleet_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetStatus {
    /// The fleet (default: every queued item).
    pub name: Option<String>,
}

/// `groups`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Groups {
    /// The label whose values group the tasks.
    pub key: String,
}

/// `watch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// The longest wait in seconds for something new (default 120, at most 3600; 0 looks
    /// once).
    pub timeout_seconds: Option<u64>,
    /// Entries after this number (default: after the cursor `ack` moved).
    pub after: Option<i64>,
}

/// `ack`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ack {
    /// The last entry read: the cursor moves past it.
    pub upto: i64,
}

/// `agents`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agents {}

/// `models`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Models {
    /// The agent.
    pub agent: String,
}
