//! Reports: what `ganger status`, `start`, `fix` and `wait` print about a round, and the task
//! table. One structure serves the human printer and `--json` (documented in docs/json.md; its
//! `schema` field names the format and its version).

use crate::env::workspace::Workspace;
use ganger_events::{Network, Permission, RoundStatus, SandboxKind, Tokens};
use ganger_store::{Round, Task, TaskSummary};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The schema of a round report.
pub const ROUND_REPORT_SCHEMA: &str = "ganger.round-report/1";
/// The schema of the task table.
pub const TASK_LIST_SCHEMA: &str = "ganger.task-list/1";
/// The most characters of the worker's answer a report shows.
pub const ANSWER_LIMIT: usize = 4000;
/// The most paths a report lists.
pub const PATHS_LIMIT: usize = 40;
/// The most stderr lines a report shows.
pub const STDERR_LINES: usize = 8;

/// Where a round's files are.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundFiles {
    pub prompt: PathBuf,
    pub events: PathBuf,
    pub stderr: PathBuf,
    pub answer: Option<PathBuf>,
    /// Whether they are on this host: false for a round that ran on another, whose stream
    /// `log` reads from the store.
    pub here: bool,
}

/// A list clipped to a limit, with the full count.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Clipped {
    pub total: usize,
    pub shown: Vec<String>,
}

impl Clipped {
    fn of(items: &[String], limit: usize) -> Clipped {
        Clipped {
            total: items.len(),
            shown: items.iter().take(limit).cloned().collect(),
        }
    }
}

/// The report of one round.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoundReport {
    pub schema: &'static str,
    pub task: String,
    pub round: u32,
    pub kind: &'static str,
    pub status: RoundStatus,
    /// Whether `ganger rewind` took the task back to before this round.
    pub rewound: bool,
    /// Why the round ended as it did, when it is not a plain `done`.
    pub reason: Option<String>,
    pub agent: String,
    /// What the agent may do: `write` or `read-only`.
    pub permission: Permission,
    /// Where the round ran: `local`, `bwrap` or `docker`; and the sandbox's network.
    pub sandbox: SandboxKind,
    pub network: Network,
    pub model: Option<String>,
    pub session: Option<String>,
    pub branch: String,
    pub worktree: PathBuf,
    pub worktree_gone: bool,
    /// How the worktree got its files (`checkout`, `pool`, `reflink`), when ganger noted it.
    pub tree: Option<crate::base::notice::TreeMade>,
    /// The main checkout's folders shared into an overlay task's tree (`[trees] share`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    pub owner: String,
    pub commander: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub duration_ms: Option<i64>,
    /// For a running round: how long since the agent last showed progress.
    pub quiet_ms: Option<i64>,
    pub host_pid: Option<i32>,
    /// The round's token: every process of the round carries it as `GANGER_ROUND`.
    pub token: String,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    /// Why the agent's last step ended (`stop`, `end_turn`, `cancelled`), when it said; null
    /// when the step did not end, or ended without a reason (a stream-json agent's interrupted
    /// turn).
    pub finish: Option<String>,
    /// Lines of the stream by the agent's own event type.
    pub events: BTreeMap<String, u64>,
    pub malformed_lines: u64,
    pub unknown_lines: u64,
    /// Lines over the stream's line cap: kept in the raw file, not read.
    pub long_lines: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub cost_usd: Option<f64>,
    pub tokens: Tokens,
    /// What the model gateway counted of the round (docs/gateway.md); absent when the round
    /// ran without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<ganger_events::GatewayTally>,
    pub errors: Vec<String>,
    pub error_count: u64,
    pub rejections: Vec<String>,
    /// The last lines of the agent's stderr, when the round did not end `done`.
    pub stderr_tail: Vec<String>,
    /// The answer's last line when it starts with `DONE:` (the reply convention a brief may
    /// ask for).
    pub done: Option<String>,
    /// The worker's last answer, clipped to [`ANSWER_LIMIT`] characters.
    pub answer: Option<String>,
    pub answer_chars: usize,
    /// What this round changed in the worktree (`A`, `M`, `D` and the path).
    pub changed: Clipped,
    /// Everything the worktree differs in from its base as the round left it; for a running
    /// round, `git status` now.
    pub worktree_changes: Clipped,
    pub snapshot_before: Option<String>,
    pub snapshot_after: Option<String>,
    /// The round's checks and how each went.
    pub checks: Vec<CheckReport>,
    /// The budgets the task is held to (its own, its fleet's) and what was spent; `null`
    /// when it has none.
    pub budget: Option<crate::evidence::budget::Budgets>,
    pub files: RoundFiles,
    /// The task's warm agent, when one is alive (docs/warm.md); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmView>,
}

/// A task's warm agent as a report shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WarmView {
    pub host_pid: u32,
    pub agent_pid: i32,
    pub session: Option<String>,
    pub turns: u64,
    pub memory_bytes: u64,
    pub idle_ms: i64,
    pub busy: bool,
    /// The pid of the `ganger serve` or `ganger worker` that owns the warm host, if one does.
    pub kept_by: Option<u32>,
    /// Which of the two it is (`serve` or `worker`).
    pub kept_by_command: Option<String>,
}

/// How one check of a round went.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckReport {
    pub name: String,
    pub command: String,
    /// `passed`, `failed`, `timed-out`, `pending` (the round runs) or `not-run` (the agent
    /// did not finish, or the round was stopped first).
    pub state: &'static str,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: Option<u64>,
    /// The end of its output, for a check that did not pass.
    pub tail: Option<String>,
    pub log: Option<PathBuf>,
}

fn check_reports(round: &Round) -> Vec<CheckReport> {
    round
        .checks
        .iter()
        .map(|check| {
            let result = check.result.as_ref();
            let state = match result {
                Some(r) if r.passed => "passed",
                Some(r) if r.timed_out => "timed-out",
                Some(_) => "failed",
                None if round.status == RoundStatus::Running => "pending",
                None => "not-run",
            };
            CheckReport {
                name: check.name.clone(),
                command: check.command.clone(),
                state,
                exit_code: result.and_then(|r| r.exit_code),
                signal: result.and_then(|r| r.signal),
                duration_ms: result.map(|r| r.duration_ms),
                tail: result.filter(|r| !r.passed).map(|r| r.tail.clone()),
                log: result.map(|r| r.log.clone()),
            }
        })
        .collect()
}

/// One line of the task table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskRow {
    pub slug: String,
    pub rounds: u32,
    pub last_status: Option<RoundStatus>,
    pub session: Option<String>,
    pub agent: String,
    pub model: Option<String>,
    pub cost_usd: f64,
    pub owner: String,
    pub worktree: PathBuf,
    pub worktree_gone: bool,
    /// The task's last `DONE:` line, from whichever round gave it last.
    pub done: Option<String>,
    /// In `status --tree`: for a role's task, its pipeline's task and its role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The task's warm agent, while it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmView>,
}

/// The task table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskList {
    pub schema: &'static str,
    pub tasks: Vec<TaskRow>,
    /// Running tasks whose worktrees change the same files.
    pub overlaps: Vec<crate::evidence::overlap::Overlap>,
    /// Open tasks whose work conflicts with another's or with their base's head, as their
    /// last rounds' ends found them (docs/land.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<ganger_store::PredictedConflict>,
    /// Starts queued or being delivered: tasks that do not exist yet (`fleet status` lists
    /// them).
    pub queued_starts: u64,
    /// Starts killed before their task was recorded, not settled yet: the worktree and branch
    /// each may have left (`clean`, or a `start` of the slug, settles them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub killed_starts: Vec<crate::evidence::half_made::KilledStart>,
}

/// The local time zone, read once per process. Without `TZ` it is `/etc/localtime` read
/// directly: jiff's general lookup walks the whole zone database first (about a millisecond,
/// on every command that prints a report).
fn local_zone() -> jiff::tz::TimeZone {
    static ZONE: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(|| {
        if std::env::var_os("TZ").is_none()
            && let Ok(data) = std::fs::read("/etc/localtime")
            && let Ok(zone) = jiff::tz::TimeZone::tzif("Local", &data)
        {
            return zone;
        }
        jiff::tz::TimeZone::system()
    })
    .clone()
}

/// A time as RFC 3339 in the local zone.
pub fn local_time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| {
            let zoned = t.to_zoned(local_zone());
            zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
        })
        .unwrap_or_else(|_| ms.to_string())
}

fn clip_chars(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}

/// How much of the end of a file [`tail_lines`] reads, and how many characters of a line it
/// keeps: a stderr file may be as large as the agent made it.
const TAIL_BYTES: u64 = 64 * 1024;
const TAIL_LINE_CHARS: usize = 500;

/// The last non-empty lines of a file, each clipped to [`TAIL_LINE_CHARS`] characters.
pub(crate) fn tail_lines(path: &std::path::Path, count: usize) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let length = file.metadata().map_or(0, |m| m.len());
    // One byte before the end read, to know whether the first line read is whole.
    let from = length.saturating_sub(TAIL_BYTES + 1);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err()
        || file.take(TAIL_BYTES + 1).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    let cut = from > 0 && bytes.first() != Some(&b'\n');
    if from > 0 {
        bytes.remove(0);
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<String> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        lines.push(if index == 0 && cut {
            format!("[...] {line}")
        } else {
            line.to_owned()
        });
    }
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|line| match line.char_indices().nth(TAIL_LINE_CHARS) {
            Some((at, _)) => format!("{} [...]", &line[..at]),
            None => line.clone(),
        })
        .collect()
}

/// The report of `round` of `task`, its budgets read from the store in a connection of its
/// own (a caller holding the store open passes them to [`round_report_with`]).
pub fn round_report(ws: &Workspace, task: &Task, round: &Round) -> RoundReport {
    let budgets = ws
        .existing_store()
        .ok()
        .flatten()
        .and_then(|store| crate::evidence::budget::budgets_of(&*store, task));
    round_report_with(ws, task, round, budgets)
}

/// The report of `round` of `task`, with its budgets as the caller read them.
pub fn round_report_with(
    ws: &Workspace,
    task: &Task,
    round: &Round,
    budgets: Option<crate::evidence::budget::Budgets>,
) -> RoundReport {
    let summary = &round.summary;
    let state = &files_state(ws, task);
    let answer_file = state.round_file(&task.slug, round.number, "answer.md");
    let answer_text = if answer_file.is_file() {
        std::fs::read_to_string(&answer_file).ok()
    } else {
        summary.answer.clone()
    };
    let stderr = state.round_file(&task.slug, round.number, "err");
    let worktree_gone = !task.worktree.is_dir();
    let worktree_changes = if round.status == RoundStatus::Running && !worktree_gone {
        ws.repo
            .open_worktree(&task.worktree)
            .and_then(|w| crate::evidence::tree_change::status(ws, &task.worktree, &w))
            .map(|s| s.entries.iter().map(|e| e.short()).collect())
            .unwrap_or_default()
    } else {
        round.worktree_changes.clone()
    };
    let now = ganger_store::now_ms();
    let tree = crate::evidence::tree_made::read(&task.worktree);
    RoundReport {
        schema: ROUND_REPORT_SCHEMA,
        task: task.slug.clone(),
        round: round.number,
        kind: round.kind.as_str(),
        status: round.status,
        rewound: round.rewound,
        reason: round.reason.clone(),
        agent: task.agent.clone(),
        permission: task.permission,
        sandbox: task.sandbox,
        network: task.network,
        model: round.model.clone(),
        session: round
            .session
            .clone()
            .or_else(|| summary.session.clone())
            .or_else(|| round.session_before.clone()),
        branch: task.branch.clone(),
        worktree: task.worktree.clone(),
        worktree_gone,
        tree: tree.as_ref().map(|(made, _)| *made),
        shared: tree.map(|(_, shared)| shared).unwrap_or_default(),
        owner: task.owner.clone(),
        commander: round.commander.clone(),
        started_at: local_time(round.started_at),
        ended_at: round.ended_at.map(local_time),
        duration_ms: Some(round.ended_at.unwrap_or(now) - round.started_at),
        quiet_ms: (round.status == RoundStatus::Running)
            .then(|| now - round.progress_at.unwrap_or(round.started_at)),
        host_pid: round.host.map(|h| h.pid),
        token: round.token.clone(),
        exit_code: round.exit_code,
        exit_signal: round.exit_signal,
        finish: summary.finish.clone().filter(|reason| !reason.is_empty()),
        events: summary.counts.clone(),
        malformed_lines: summary.malformed,
        unknown_lines: summary.unknown,
        long_lines: summary.long_lines,
        tool_calls: summary.tool_calls,
        tool_errors: summary.tool_errors,
        cost_usd: summary.cost_usd,
        tokens: summary.tokens,
        gateway: summary.gateway.clone(),
        errors: summary.errors.clone(),
        error_count: summary.error_count,
        rejections: summary.rejections.clone(),
        stderr_tail: if matches!(round.status, RoundStatus::Done | RoundStatus::Running) {
            Vec::new()
        } else {
            tail_lines(&stderr, STDERR_LINES)
        },
        done: summary.done.clone(),
        answer_chars: answer_text.as_deref().map_or(0, |a| a.chars().count()),
        answer: answer_text.as_deref().map(|a| clip_chars(a, ANSWER_LIMIT)),
        changed: Clipped::of(&round.changed, PATHS_LIMIT),
        worktree_changes: Clipped::of(&worktree_changes, PATHS_LIMIT),
        snapshot_before: round.snapshot_before.clone(),
        snapshot_after: round.snapshot_after.clone(),
        checks: check_reports(round),
        budget: budgets,
        files: {
            let prompt = state.round_file(&task.slug, round.number, "prompt.md");
            RoundFiles {
                here: prompt.is_file(),
                prompt,
                events: state.round_file(&task.slug, round.number, "jsonl"),
                stderr,
                answer: answer_file.is_file().then_some(answer_file),
            }
        },
        warm: None,
    }
}

/// The state directory holding the round files of `task`: this checkout's, or, for a task
/// whose worktree belongs to another main checkout on this host (a worker's clone of its
/// fleet's remote), that checkout's.
fn files_state(ws: &Workspace, task: &Task) -> ganger_store::StateDir {
    // Most tasks are this checkout's own, named by the same path: no look at the disk then.
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    owning_checkout(&task.worktree)
        .filter(|main| !same(main, &ws.repo.main))
        .map(|main| ganger_store::StateDir::of_checkout(&main))
        .unwrap_or_else(|| ws.state.clone())
}

/// The main checkout a linked worktree belongs to, read from its `.git` file
/// (`gitdir: MAIN/.git/worktrees/NAME`); `None` when it is not one (or not here).
fn owning_checkout(worktree: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(worktree.join(".git")).ok()?;
    let gitdir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let gitdir = if gitdir.is_absolute() {
        gitdir
    } else {
        worktree.join(gitdir)
    };
    let dot_git = gitdir.parent()?.parent()?;
    if dot_git.file_name()? != ".git" {
        return None;
    }
    dot_git.parent().map(Path::to_path_buf)
}

/// The task table.
pub fn task_list(tasks: Vec<TaskSummary>) -> TaskList {
    TaskList {
        schema: TASK_LIST_SCHEMA,
        tasks: tasks
            .into_iter()
            .map(|task| TaskRow {
                worktree_gone: !task.worktree.is_dir(),
                slug: task.slug,
                rounds: task.rounds,
                last_status: task.last_status,
                session: task.session,
                agent: task.agent,
                model: task.model,
                cost_usd: task.cost_usd,
                owner: task.owner,
                worktree: task.worktree,
                done: None,
                parent: None,
                role: None,
                warm: None,
            })
            .collect(),
        overlaps: Vec::new(),
        conflicts: Vec::new(),
        queued_starts: 0,
        killed_starts: Vec::new(),
    }
}
