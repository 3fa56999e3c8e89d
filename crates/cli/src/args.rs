//! The command line, as clap definitions only; what each command does is in `commands/`.
//! Options are never abbreviated (clap's inference stays off): `--det` is an error, not
//! `--detach`. `--json` is declared once, here, as a global option; a command that prints JSON
//! reads it with `#[arg(from_global)]`, and one without JSON output refuses it (`lib.rs`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// ganger: a supervisor for AI coding agents.
///
/// Gives a coding task to an agent (OpenCode, Claude Code, Codex, Gemini CLI, Qwen Code, or any
/// CLI described in ganger.toml) in its own git worktree and branch, follows it
/// round by round in the same session, and reports precisely what each round did.
#[derive(Debug, Parser)]
#[command(name = "ganger", version, about, long_about = None, after_help = crate::exit::HELP)]
pub struct Cli {
    /// Run as if started in DIR (like `git -C`).
    #[arg(short = 'C', long = "directory", value_name = "DIR", global = true)]
    pub directory: Option<PathBuf>,

    /// The store: postgres://USER:PASSWORD@HOST:PORT/DATABASE, or sqlite (.ganger/state.db,
    /// the default). Outranks GANGER_STORE and [store] url; the processes ganger starts
    /// get it through GANGER_STORE, never on a command line.
    #[arg(long = "store", value_name = "URL", global = true)]
    pub store: Option<String>,

    /// Print JSON, as docs/json.md documents (what streams prints an object per line); a
    /// command without JSON output refuses it.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// Each command's arguments are made only when it runs (clap's `defer`): building all of
/// them took a quarter of a millisecond of every ganger process's start.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Create .ganger/, write a commented ganger.toml, and report the agent CLIs found.
    Init(crate::mcp_args::InitArgs),
    /// Start a task: model check, a worktree on a new branch, round 1 in a new session.
    Start(Box<StartArgs>),
    /// Send the next round of a task into the same session.
    Fix(FixArgs),
    /// Show every task, or the report of one task's last round (or its pipeline).
    Status(StatusArgs),
    /// Run one brief as several attempts (agents, models) at once and pick a winner on
    /// evidence: checks first, then pairwise reviews, then the smaller diff.
    Race(Box<crate::race_args::RaceArgs>),
    /// Plan a task: the planner writes numbered steps, the critic reviews them; then wait.
    Plan(PlanArgs),
    /// Approve a task's plan: the executor does its steps, then the reviewers review.
    Approve(PipelineArgs),
    /// Reject a task's plan: the notes go to the planner for a new version, then the critic.
    Reject(RejectArgs),
    /// Wait until a task's running round ends, then print its report.
    Wait(WaitArgs),
    /// Stop a task's running round (SIGTERM, a grace period, SIGKILL).
    Cancel(CancelArgs),
    /// Show a round's normalized events, or its raw stream.
    Log(LogArgs),
    /// Show the commander's journal after its cursor: tasks started, rounds ended, checks
    /// failed, overlapping files, transfers, budgets reached, DONE lines.
    Watch(WatchArgs),
    /// Acknowledge the commander's journal up to entry N: `watch` shows it no more.
    Ack(AckArgs),
    /// Show what a task changed against its base.
    Diff(DiffArgs),
    /// Remove what finished tasks left: processes, containers, worktrees, merged branches.
    Clean(CleanArgs),
    /// Take a task back to its state after round N: files, rounds and the agent's session.
    Rewind(RewindArgs),
    /// Commit a task's work on its branch and merge it into its base branch.
    Merge(MergeArgs),
    /// Queue tasks to land on their base in batches whose combined checks pass; run a
    /// lander (--run); show the queue (status).
    Land(crate::land_args::LandArgs),
    /// Take a task nobody owns, or give one you own to another commander (--to).
    Assign(AssignArgs),
    /// Give a task you own to another commander (its generation is bumped: rounds sent
    /// before are refused at delivery).
    Transfer(TransferArgs),
    /// Let a task you own go: nobody owns it until someone assigns it.
    Release(OwnerArgs),
    /// Set what a task you own does with new rounds: accept, hold (queue them) or refuse.
    Policy(PolicyArgs),
    /// Let other commanders send rounds to a task you own (or stop letting them).
    Allow(AllowArgs),
    /// Open the agent's own interactive interface on a task's session in its worktree; the
    /// next round continues from where you leave it.
    Attach(AttachArgs),
    /// Put an agent session a person started by hand under ganger (its next round resumes it).
    Adopt(AdoptArgs),
    /// Summarize a raw agent stream file (the same code a live round uses).
    Summarize(SummarizeArgs),
    /// Run the scripted model server, to dry-run agents without spending tokens.
    #[command(name = "fake-llm")]
    FakeLlm(FakeLlmArgs),
    /// List the agent CLIs ganger knows, install the tested versions, check them.
    Agents(AgentsArgs),
    /// Build worker images offline (Debian packages and the tested agent CLI) and list them.
    Image(ImageArgs),
    /// Show what ganger does in under a minute: a scripted model, OpenCode, a task and a fix.
    Demo(DemoArgs),
    /// Run the scheduler for queued work (start/fix --queue, fleets, broadcasts); one per
    /// repository. Rounds run in detached hosts, so stopping it stops none.
    Serve(crate::fleet_args::ServeArgs),
    /// Take queued rounds from a shared store (`--store`) and run them here, with others
    /// doing the same on this machine or others: each round once, a dead worker's taken over.
    Worker(crate::fleet_args::WorkerArgs),
    /// List the workers recorded in the store: capacity, load, agents, sandboxes, last seen.
    Workers(crate::fleet_args::WorkersArgs),
    /// Run many tasks from a file: dependencies, limits, live progress; submit; status.
    Fleet(crate::fleet_args::FleetArgs),
    /// Queue one fix round for many tasks at once, run by the scheduler under its limits.
    Broadcast(crate::fleet_args::BroadcastArgs),
    /// Print a shell's completions for ganger (bash, zsh, fish), from its definitions.
    Completions(CompletionsArgs),
    /// Print ganger's manual page (roff), from its definitions: `ganger man | man -l -`.
    Man,
    /// Serve a commander's tools over the Model Context Protocol on stdio, for an LLM
    /// supervisor (register it with `ganger init --supervisor AGENT`).
    Mcp(crate::mcp_args::McpArgs),
    /// Run a detached round (started by start/fix --detach; not for people).
    #[command(hide = true)]
    Host(HostArgs),
    /// Drive a race in the background (started by `race --detach`; not for people).
    #[command(name = "race-host", hide = true)]
    RaceHost(crate::race_args::RaceHostArgs),
    /// Keep a task's agent warm between rounds (started by a warm round; not for people).
    #[command(name = "warm-host", hide = true)]
    WarmHost(HostArgs),
    /// List the agents kept warm (task, agent, session, memory, idle time), or stop them.
    Warm(WarmArgs),
    /// Run one round's container (started by a docker round's host; not for people).
    #[command(name = "docker-round", hide = true)]
    DockerRound,
    /// The pool of worktrees made ahead of time (`[trees] pool`): list, fill or drain it.
    Trees(crate::trees_args::TreesArgs),
    /// Make a task's tree a plain worktree at PATH, for an editor or to carry on by hand.
    Checkout(crate::trees_args::CheckoutArgs),
    /// Carry a sandboxed agent's connections to the model gateway's socket (run inside a
    /// bwrap round whose network is `gateway`; not for people).
    #[command(name = "gateway-relay", hide = true)]
    GatewayRelay(GatewayRelayArgs),
}

#[derive(Debug, Args)]
pub struct GatewayRelayArgs {
    /// The loopback port the agent was told.
    pub port: u16,
    /// The gateway's socket, as the sandbox sees it.
    pub socket: std::path::PathBuf,
    /// The agent's program and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct WarmArgs {
    #[command(subcommand)]
    pub action: Option<WarmAction>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum WarmAction {
    /// The warm agents of this repository, least recently used first (the default).
    List,
    /// Stop the warm agents of these tasks (their next rounds start a new one, or run cold).
    Stop {
        #[arg(value_name = "SLUG", required_unless_present = "all")]
        slugs: Vec<String>,
        /// Every warm agent of this repository.
        #[arg(long, conflicts_with = "slugs")]
        all: bool,
    },
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub action: Option<AgentsAction>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum AgentsAction {
    /// List the known agents, the version each is tested with, and what is installed (the
    /// default).
    List,
    /// Install the tested version of agents with npm into ganger's cache, and use it.
    Install {
        /// Agent names (opencode, claude, codex, gemini, qwen); `all` for every one.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Run a two-round check of each installed agent against the scripted model.
    Doctor {
        /// Agent names; default: every installed one.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
    },
    /// Run the conformance suite on each agent's newest release (installed into a scratch
    /// cache) and on the pinned one, and compare them scenario by scenario. Changes nothing
    /// else; runs the developer tool ganger-dev, and needs ganger's source tree (or --suite)
    /// and npm.
    Canary {
        /// Agent names; default: every one.
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// A built conformance test binary, instead of building it with cargo from the
        /// ganger source tree this runs in.
        #[arg(long, value_name = "BIN")]
        suite: Option<std::path::PathBuf>,
        /// How many scenarios run at once (default: the number of cores).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: Option<u16>,
    },
}

#[derive(Debug, Args)]
pub struct ImageArgs {
    #[command(subcommand)]
    pub action: ImageAction,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum ImageAction {
    /// Build the worker image of an agent unless it is there: a Debian root from mmdebstrap,
    /// ganger.toml's sandbox.docker.packages, and the tested agent CLI. Nothing is pulled.
    Build {
        /// opencode, claude, codex, gemini, qwen, command (the base image alone), or all.
        #[arg(long = "agent", required = true, value_name = "NAME")]
        agents: Vec<String>,
        /// Build again even when the images are there.
        #[arg(long)]
        force: bool,
        /// Build the fleet worker image instead, whose entrypoint is `ganger worker`: this
        /// binary, git and the agents named (docs/operations.md).
        #[arg(long)]
        worker: bool,
    },
    /// List ganger's images: agent, version, extra packages, size.
    List,
}

// The task text of a round. (Not a doc comment: clap would make it the about of every command
// that flattens this, once that command is built: the commands are deferred.)
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct TaskText {
    /// A file with the task text.
    #[arg(long, value_name = "FILE")]
    pub brief: Option<PathBuf>,
    /// The task text itself (it may start with a dash).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The task's name: lower-case letters, digits and dashes (at most 48).
    pub slug: String,
    #[command(flatten)]
    pub text: TaskText,
    /// The agent that works on the task: opencode, claude, codex, gemini, qwen or command.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// What the agent may do: write (edit files, run commands) or read-only.
    #[arg(long, value_name = "write|read-only", value_parser = permission)]
    pub permission: Option<ganger_agents::Permission>,
    /// The model, as PROVIDER/MODEL (checked before anything is created).
    #[arg(short = 'm', long, value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
    #[command(flatten)]
    pub place: SandboxArgs,
    /// The revision the new worktree starts from (default: defaults.base, main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The new branch (default: agent/SLUG).
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,
    /// Give the task this existing worktree of the repository instead of making one.
    #[arg(long, value_name = "PATH")]
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// The commander who owns the task (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    /// A label on the task, for `status --group-by KEY` (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Stop the task's rounds once they cost this much in all (US dollars).
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Stop the task's rounds once they used this many tokens in all (input, output,
    /// reasoning).
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Run the round in the background and return once it is recorded as running.
    #[arg(long)]
    pub detach: bool,
    /// Deliver the task's rounds into a live agent session kept warm between rounds
    /// (agents with a warm mode; `[warm] default` in ganger.toml sets it for every task).
    #[arg(long, conflicts_with = "cold")]
    pub warm: bool,
    /// Start the agent's CLI for every round of the task, whatever `[warm] default` says.
    #[arg(long)]
    pub cold: bool,
    /// Queue the round for the scheduler (`ganger serve`) instead of starting it now.
    #[arg(long, conflicts_with = "detach")]
    pub queue: bool,
    #[arg(from_global)]
    pub json: bool,
}

// Checks of a round besides `ganger.toml`'s, and the fix loop (a comment, not a doc comment:
// see TaskText).
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A one-off check: a shell command run in the worktree after the round (repeatable).
    #[arg(long = "check", value_name = "CMD")]
    pub checks: Vec<String>,
    /// While checks fail, send their output back as fix rounds, at most N of them.
    #[arg(long, value_name = "N")]
    pub until_green: Option<u32>,
}

// Where a task's rounds run (a comment, not a doc comment: see TaskText).
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Where every round runs: local, bwrap (bubblewrap) or docker (default: sandbox.default).
    #[arg(long, value_name = "local|bwrap|docker", value_parser = sandbox_kind)]
    pub sandbox: Option<ganger_engine::SandboxKind>,
    /// The network of a bwrap or docker round: gateway (default: only the model gateway,
    /// and --allow's hosts through its proxy), shared or none.
    #[arg(long, value_name = "gateway|shared|none", value_parser = network)]
    pub network: Option<ganger_engine::Network>,
    /// A path inside the worktree that stays writable under sandbox.read_only; repeatable.
    #[arg(long = "rw", value_name = "PATH")]
    pub rw: Vec<String>,
    /// HOST:PORT a gateway round may reach through the gateway's proxy, besides its model
    /// and sandbox.allow (`*.example.org:443` for every name below); repeatable.
    #[arg(long = "allow", value_name = "HOST:PORT")]
    pub allow: Vec<String>,
}

// What a task's rounds run with: keys and limits (a comment, not a doc comment: see TaskText).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A provider key file, passed to the agent as <PROVIDER>_API_KEY; only the path is kept.
    #[arg(long = "key", value_name = "PROVIDER=FILE")]
    pub keys: Vec<String>,
    /// The wall-clock limit of each round: 90, 90s, 10m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = limit)]
    pub timeout: Option<std::time::Duration>,
    /// Stop a round after this long with no new event and no process activity.
    #[arg(long, value_name = "DURATION", value_parser = limit)]
    pub stall: Option<std::time::Duration>,
}

impl SandboxArgs {
    /// A start's options with these and `run`'s.
    pub fn start_options(self, run: RunArgs) -> ganger_engine::StartOptions {
        ganger_engine::StartOptions {
            sandbox: self.sandbox,
            network: self.network,
            rw: self.rw,
            allow: self.allow,
            keys: run.keys,
            timeout: run.timeout,
            stall: run.stall,
            ..ganger_engine::StartOptions::default()
        }
    }
}

#[derive(Debug, Args)]
pub struct FixArgs {
    /// The task.
    pub slug: String,
    #[command(flatten)]
    pub text: TaskText,
    /// Switch to this model for this round and the ones after it.
    #[arg(short = 'm', long, value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
    /// A provider key file for this round and the ones after it.
    #[arg(long = "key", value_name = "PROVIDER=FILE")]
    pub keys: Vec<String>,
    /// The commander sending the round.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// If a round is running, cancel it and send this one into the same session.
    #[arg(long)]
    pub interrupt: bool,
    /// Run the round in the background and return once it is recorded as running.
    #[arg(long)]
    pub detach: bool,
    /// Queue the round for the scheduler (`ganger serve`) under the task's generation now.
    #[arg(long, conflicts_with = "detach")]
    pub queue: bool,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The task's name (made, with its worktree, when it does not exist yet).
    pub slug: String,
    #[command(flatten)]
    pub text: TaskText,
    /// The task's agent, the default of every role (default: defaults.agent).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The task's model, the default of every role without one of its own.
    #[arg(short = 'm', long, value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
    /// Where every role's rounds run: local, bwrap or docker (default: sandbox.default).
    #[arg(long, value_name = "local|bwrap|docker", value_parser = sandbox_kind)]
    pub sandbox: Option<ganger_engine::SandboxKind>,
    /// The network of a bwrap or docker round: shared (default) or none.
    #[arg(long, value_name = "shared|none", value_parser = network)]
    pub network: Option<ganger_engine::Network>,
    /// The revision the new worktree starts from (default: defaults.base, main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The commander who owns the task.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// The task.
    pub slug: String,
    /// Who you are (default: GANGER_COMMANDER, else the user name); only the owner approves.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RejectArgs {
    /// The task.
    pub slug: String,
    #[command(flatten)]
    pub text: TaskText,
    /// Who you are (default: GANGER_COMMANDER, else the user name); only the owner rejects.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The task; without it, every task.
    pub slug: Option<String>,
    /// In the table, show each pipeline's role tasks (their sessions) under it.
    #[arg(long)]
    pub tree: bool,
    /// Per value of the label KEY: how many tasks are in each state, and the last DONE line.
    #[arg(long, value_name = "KEY", conflicts_with_all = ["slug", "tree"])]
    pub group_by: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The task.
    pub slug: String,
    /// Give up after this long with exit 4: 90, 90s, 10m.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub timeout: Option<std::time::Duration>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The task.
    pub slug: String,
    /// The commander cancelling.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The task.
    pub slug: String,
    /// The round (default: the last).
    #[arg(long, value_name = "N")]
    pub round: Option<u32>,
    /// The raw stream, byte for byte (keys redacted; terminal controls escaped on a terminal).
    #[arg(long)]
    pub raw: bool,
    /// Keep following a running round until it ends.
    #[arg(long)]
    pub follow: bool,
    /// The round's model gateway's requests instead: one JSON line each (upstream, model,
    /// status, bytes both ways, latency, tokens, or why it was refused).
    #[arg(long, conflicts_with = "raw")]
    pub gateway: bool,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Keep printing new entries as they come, until interrupted.
    #[arg(long)]
    pub follow: bool,
    /// The commander whose journal to show (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AckArgs {
    /// The last entry read: it and the entries before it are not shown again.
    #[arg(value_name = "N")]
    pub upto: i64,
    /// The commander acknowledging.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The task.
    pub slug: String,
    /// A diffstat instead of the patch.
    #[arg(long)]
    pub stat: bool,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The tasks (default: every task).
    #[arg(value_name = "SLUG")]
    pub slugs: Vec<String>,
    /// Also remove worktrees with uncommitted changes and branches with unmerged commits.
    #[arg(long)]
    pub force: bool,
    /// Say what would be removed, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The commander cleaning (recorded in the journal).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RewindArgs {
    /// The task.
    pub slug: String,
    /// The round whose end state the task goes back to.
    #[arg(long, value_name = "N")]
    pub to: u32,
    /// The commander rewinding (recorded in the journal).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The task.
    pub slug: String,
    /// One commit on the base with the task's whole change, instead of a merge commit.
    #[arg(long, conflicts_with = "rebase")]
    pub squash: bool,
    /// Replay the task's commits onto the base, then fast-forward the base to them.
    #[arg(long)]
    pub rebase: bool,
    /// On a conflict, have the task's worker resolve it in a fix round, then merge.
    #[arg(long)]
    pub fix: bool,
    /// The commander merging (and sending the resolving round).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AssignArgs {
    /// The task.
    pub slug: String,
    /// The commander to give it to (default: you).
    #[arg(long, value_name = "NAME", value_parser = commander_name)]
    pub to: Option<String>,
    /// Who you are (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TransferArgs {
    /// The task.
    pub slug: String,
    /// The commander who owns it next.
    #[arg(long, value_name = "NAME", required = true, value_parser = commander_name)]
    pub to: String,
    /// Who you are (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct OwnerArgs {
    /// The task.
    pub slug: String,
    /// Who you are (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// The task.
    pub slug: String,
    /// accept (new rounds run), hold (they wait in the queue) or refuse (they are refused).
    #[arg(value_name = "accept|hold|refuse", value_parser = inbound)]
    pub policy: ganger_engine::Inbound,
    /// Who you are (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AllowArgs {
    /// The task.
    pub slug: String,
    /// The commanders.
    #[arg(required = true, value_name = "NAME", value_parser = commander_name)]
    pub names: Vec<String>,
    /// Stop letting them send rounds.
    #[arg(long)]
    pub remove: bool,
    /// Who you are (default: GANGER_COMMANDER, else the user name).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The task.
    pub slug: String,
    /// Who you are (default: GANGER_COMMANDER, else the user name); only the owner attaches.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct AdoptArgs {
    /// The task's name.
    pub slug: String,
    /// The agent whose session it is: opencode, claude, codex, gemini, qwen or command.
    #[arg(long, value_name = "NAME", required = true)]
    pub agent: String,
    /// The agent's session id.
    #[arg(long, value_name = "ID", required = true)]
    pub session: String,
    /// The worktree of this repository the session works in.
    #[arg(long, value_name = "PATH", required = true)]
    pub worktree: PathBuf,
    /// The model of the task's rounds (default: defaults.model, else the agent's own).
    #[arg(short = 'm', long, value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
    /// The commander who owns the task.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// The stream file.
    pub file: PathBuf,
    /// The agent whose stream it is.
    #[arg(long, value_name = "NAME", default_value = "opencode")]
    pub agent: String,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FakeLlmArgs {
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub port: u16,
    /// The script of answers (TOML; docs/fake-llm.md). Default: a built-in script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo's repository instead of removing it at the end.
    #[arg(long)]
    pub keep: bool,
}

#[derive(Debug, Args)]
pub struct HostArgs {
    pub slug: String,
    pub round: u32,
    #[arg(long, value_name = "N")]
    pub until_green: Option<u32>,
    /// A warm host's owner: the pid of the `ganger serve` that started it (passed by serve
    /// only: hidden even from the hidden command's completions).
    #[arg(long, value_name = "PID", hide = true)]
    pub kept_by: Option<u32>,
    /// A round host's claim, handed over by the command that started it (passed by ganger
    /// only: hidden as `--kept-by` is).
    #[arg(long, value_name = "CLAIM", hide = true)]
    pub claim: Option<std::ffi::OsString>,
}

fn duration(text: &str) -> Result<std::time::Duration, String> {
    ganger_engine::config::parse_duration(text)
}

/// A commander's name (`--as`, `--to`): checked, never silently replaced.
pub(crate) fn commander_name(text: &str) -> Result<String, String> {
    ganger_engine::check_commander_name(text).map(str::to_owned)
}

/// A limit of a round (`--timeout`, `--stall`): a duration above zero.
fn limit(text: &str) -> Result<std::time::Duration, String> {
    let limit = duration(text)?;
    if limit.is_zero() {
        return Err(format!(
            "{text:?}: a limit of 0 would stop the round at once"
        ));
    }
    Ok(limit)
}

/// A duration argument (`90`, `90s`, `10m`), for the other argument modules.
pub(crate) fn duration_arg(text: &str) -> Result<std::time::Duration, String> {
    duration(text)
}

fn sandbox_kind(text: &str) -> Result<ganger_engine::SandboxKind, String> {
    text.parse()
}

fn network(text: &str) -> Result<ganger_engine::Network, String> {
    text.parse()
}

fn inbound(text: &str) -> Result<ganger_engine::Inbound, String> {
    text.parse()
}

pub(crate) fn permission(text: &str) -> Result<ganger_agents::Permission, String> {
    text.parse()
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_definitions_hold_together() {
        Cli::command().debug_assert();
    }

    /// Every command's summary, and its subcommands' (`fleet run`), by path.
    fn summaries(command: &clap::Command, path: &str, into: &mut Vec<(String, String)>) {
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let at = format!("{path} {}", sub.get_name());
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            into.push((at.clone(), about));
            summaries(sub, &at, into);
        }
    }

    /// The commands are deferred: what a command's arguments bring in is applied when it runs,
    /// after its own summary, so a doc comment on an `Args` struct it flattens would replace
    /// that summary in its `--help` (and nowhere else).
    #[test]
    fn every_command_keeps_its_own_summary_once_its_arguments_are_made() {
        let listed = Cli::command();
        let mut built = Cli::command();
        built.build();
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for sub in listed.get_subcommands() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            before.push((format!("ganger {}", sub.get_name()), about));
        }
        summaries(&built, "ganger", &mut after);
        for (path, about) in &before {
            let made = after.iter().find(|(p, _)| p == path);
            assert_eq!(made.map(|(_, a)| a), Some(about), "{path}");
            assert!(!about.is_empty(), "{path} has no summary");
        }
        // The subcommands' own summaries, made with their parents.
        let fleet_run = after.iter().find(|(p, _)| p == "ganger fleet run").unwrap();
        assert!(
            fleet_run.1.starts_with("Queue a fleet file"),
            "{}",
            fleet_run.1
        );
    }
}
