//! The records the store keeps: tasks, rounds, journal entries, and the inputs that create or
//! change them. Times are Unix milliseconds.

use crate::liveness::ClaimKey;
use ganger_events::{Network, Permission, RoundStatus, RoundSummary, SandboxKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Now, in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A process named for good: pid and start time (clock ticks after boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRef {
    pub pid: i32,
    pub start_ticks: u64,
}

/// A task as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: i64,
    pub slug: String,
    /// The agent adapter's name (`opencode`, ...).
    pub agent: String,
    /// The model every new round uses; `None` for the agent's default.
    pub model: Option<String>,
    /// The base revision as given (`main`), and the commit it was when the task started.
    pub base: String,
    pub base_commit: Option<String>,
    pub branch: String,
    pub worktree: PathBuf,
    /// Whether ganger made the worktree (and may remove it on a failed start or a clean-up).
    pub worktree_made: bool,
    /// The agent's session id, once the first round named it.
    pub session: Option<String>,
    /// The commander that owns the task.
    pub owner: String,
    /// Bumped by every change of ownership.
    pub generation: i64,
    /// Key files by provider: only the paths, never the keys.
    pub keys: BTreeMap<String, PathBuf>,
    /// The task's wall-clock and stall limits, when set for it.
    pub timeout_ms: Option<u64>,
    pub stall_ms: Option<u64>,
    pub created_at: i64,
    /// How many rounds the task has had, the last one's status, and the cost so far.
    pub rounds: u32,
    pub last_status: Option<RoundStatus>,
    pub cost_usd: f64,
    /// What the agent may do: `write` or `read-only`.
    pub permission: Permission,
    /// Where the task's rounds run: `local`, `bwrap` or `docker`.
    pub sandbox: SandboxKind,
    /// The sandbox's network: `gateway`, `shared` or `none`.
    pub network: Network,
    /// Extra writable paths inside the worktree (relative to it).
    pub rw: Vec<String>,
    /// When `ganger clean` last cleaned up after the task (Unix ms).
    pub cleaned_at: Option<i64>,
    /// What the task's next round begins with: after a rewind that could not fork the
    /// agent's session, a summary of the rounds kept (cleared once that round is recorded).
    pub resume_note: Option<String>,
    /// Where the task's next round forks the agent's session, after a rewind (moved to that
    /// round once it is recorded).
    pub fork_from: Option<ForkPoint>,
    /// For a role's task in a pipeline: the pipeline's task (its id) and the role's name.
    pub parent: Option<i64>,
    pub role: Option<String>,
    /// What happens to a new round sent to the task: `accept`, `hold` (queued until the
    /// policy is accept again) or `refuse`.
    pub inbound: String,
    /// Commanders besides the owner who may send the task rounds.
    pub allowed: Vec<String>,
    /// Whether the task's rounds go to a warm agent (`None`: as `[warm] default` says).
    pub warm: Option<bool>,
    /// `HOST:PORT` its `gateway` rounds may reach besides their model (`--allow`).
    pub allow: Vec<String>,
}

impl Task {
    /// Whether `commander` may send the task rounds: its owner or a commander it allows.
    pub fn admits(&self, commander: &str) -> bool {
        (!self.owner.is_empty() && self.owner == commander)
            || self.allowed.iter().any(|a| a == commander)
    }
}

/// A point of an agent's session to continue from as a new session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    pub session: String,
    /// The agent's own name for the last thing kept (Claude Code: an assistant event's uuid).
    pub at: String,
}

/// What the task table shows of a task: read without the columns a table does not need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    pub slug: String,
    pub agent: String,
    pub model: Option<String>,
    pub session: Option<String>,
    pub owner: String,
    pub worktree: PathBuf,
    pub rounds: u32,
    pub last_status: Option<RoundStatus>,
    pub cost_usd: f64,
}

/// Why a round started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundKind {
    Start,
    Fix,
}

impl RoundKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RoundKind::Start => "start",
            RoundKind::Fix => "fix",
        }
    }
}

/// A round as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub id: i64,
    pub task_id: i64,
    pub number: u32,
    pub kind: RoundKind,
    pub status: RoundStatus,
    /// Why the round ended as it did (for anything but a clean `done`).
    pub reason: Option<String>,
    pub model: Option<String>,
    /// The session the round resumed (`None` for a new session) and the one it ended in.
    pub session_before: Option<String>,
    pub session: Option<String>,
    /// Who started the round.
    pub commander: String,
    /// The round's token: its processes carry it, its host's claim is named by it.
    pub token: String,
    /// Its host's claim ([`Liveness`](crate::Liveness)): alive while the host lives.
    pub claim: ClaimKey,
    pub host: Option<ProcessRef>,
    pub agent: Option<ProcessRef>,
    pub cgroup: Option<PathBuf>,
    pub cancel_requested: bool,
    pub started_at: i64,
    /// When the agent last showed progress.
    pub progress_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    pub summary: RoundSummary,
    /// Snapshot commits of the worktree before and after the round.
    pub snapshot_before: Option<String>,
    pub snapshot_after: Option<String>,
    /// What the round changed in the worktree, `"M path"` style.
    pub changed: Vec<String>,
    /// Everything the worktree differs in from its index (its base, as the worker never
    /// stages) as the round left it, `"M path"` style.
    pub worktree_changes: Vec<String>,
    /// The round's checks: what was to run and, once the round ended, how each went.
    pub checks: Vec<CheckRun>,
    /// Whether `ganger rewind` took the task back to before this round.
    pub rewound: bool,
    /// The point of an earlier session this round forked from, after a rewind.
    pub fork_from: Option<ForkPoint>,
}

impl Round {
    /// Whether the round is done with evidence: the agent finished, and every check ran and
    /// passed (true when the round had no check).
    pub fn checks_passed(&self) -> bool {
        self.status == RoundStatus::Done && self.checks.iter().all(CheckRun::passed)
    }

    /// The checks that ran and failed.
    pub fn failed_checks(&self) -> impl Iterator<Item = &CheckRun> {
        self.checks
            .iter()
            .filter(|c| c.result.as_ref().is_some_and(|r| !r.passed))
    }
}

/// One check of a round: a shell command run in the task's worktree, in its sandbox, after
/// the agent's part of the round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    pub name: String,
    pub command: String,
    pub timeout_ms: u64,
    /// How it went; `None` while the round runs, or when it did not run (the agent failed to
    /// finish, or the round was stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<CheckResult>,
}

impl CheckRun {
    /// Whether the check ran and passed.
    pub fn passed(&self) -> bool {
        self.result.as_ref().is_some_and(|r| r.passed)
    }
}

/// How a check went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// Exit code 0 within the time limit.
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// The end of its output (stdout and stderr together), trimmed to what a fix round needs.
    pub tail: String,
    /// Its whole output, beside the round's files.
    pub log: PathBuf,
}

/// What a new task is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    pub slug: String,
    pub agent: String,
    pub model: Option<String>,
    pub base: String,
    pub base_commit: Option<String>,
    pub branch: String,
    pub worktree: PathBuf,
    pub worktree_made: bool,
    pub owner: String,
    pub keys: BTreeMap<String, PathBuf>,
    pub timeout_ms: Option<u64>,
    pub stall_ms: Option<u64>,
    /// What the agent may do: `write` or `read-only`.
    pub permission: Permission,
    /// Where the task's rounds run: `local`, `bwrap` or `docker`.
    pub sandbox: SandboxKind,
    /// The sandbox's network: `gateway`, `shared` or `none`.
    pub network: Network,
    /// Extra writable paths inside the worktree (relative to it).
    pub rw: Vec<String>,
    /// Whether the task's rounds go to a warm agent (`None`: as `[warm] default` says).
    pub warm: Option<bool>,
    /// `HOST:PORT` its `gateway` rounds may reach besides their model (`--allow`).
    pub allow: Vec<String>,
    /// Its labels (`key`, `value`), recorded with it.
    pub labels: Vec<(String, String)>,
    /// Its own budget (recorded when a limit is set).
    pub budget: crate::Budget,
    /// The fleet it belongs to.
    pub fleet: Option<String>,
}

/// Changes a fix makes to its task for this round and later ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskUpdate {
    pub model: Option<String>,
    pub keys: BTreeMap<String, PathBuf>,
    /// The round starts a new session: the task's session (lost) is forgotten, so that the
    /// new one becomes the task's when the round names it.
    pub new_session: bool,
}

/// What a new round is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRound {
    pub kind: RoundKind,
    pub model: Option<String>,
    pub session_before: Option<String>,
    pub commander: String,
    pub token: String,
    /// The claim its host holds (taken before the round is recorded).
    pub claim: ClaimKey,
    pub host: Option<ProcessRef>,
    pub snapshot_before: Option<String>,
    /// The checks to run after the agent's part of the round.
    pub checks: Vec<CheckRun>,
    /// The task's generation as the sender saw it, for a round a commander sends: the store
    /// starts it only if the generation is still the same and `commander` is the task's owner
    /// or allowed by it (`None`: a round ganger starts itself, not checked).
    pub generation: Option<i64>,
}

/// How a round ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundEnd {
    pub status: RoundStatus,
    /// The snapshot before the round, when the host took one (kept if already recorded).
    pub snapshot_before: Option<String>,
    pub reason: Option<String>,
    pub session: Option<String>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    pub summary: RoundSummary,
    pub snapshot_after: Option<String>,
    pub changed: Vec<String>,
    pub worktree_changes: Vec<String>,
    /// The round's checks with their results (kept as recorded at the start when empty).
    pub checks: Vec<CheckRun>,
}

/// What a rewind sets on its task besides marking the later rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewind {
    /// The session the next round resumes (a fork at the rewound point), or `None` for a
    /// new session.
    pub session: Option<String>,
    /// What the next round's prompt begins with (a summary of the rounds kept).
    pub resume_note: Option<String>,
    /// Where the next round forks the session from (with `session` `None`).
    pub fork_from: Option<ForkPoint>,
    pub commander: String,
    /// What the journal entry records (how the worktree and the session were taken back).
    pub detail: serde_json::Value,
}

/// A task's worktree made anew on another host, to run its next round there
/// ([`Store::move_worktree`](crate::Store::move_worktree)).
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub worktree: PathBuf,
    /// What the next round begins with when the agent's session did not come along (a
    /// summary of the earlier rounds); the task's session is then dropped, and the next round
    /// starts a new one. `None`: the session came along.
    pub resume_note: Option<String>,
    pub commander: String,
    /// What the journal entry records (the host, and whether the session came along).
    pub detail: serde_json::Value,
}
