//! The clap definitions of `ganger race`; what it does is in `commands/race.rs`.

use crate::args::{CheckArgs, TaskText, limit, network, permission, sandbox_kind};
use clap::Args;

#[derive(Debug, Args)]
pub struct RaceArgs {
    /// The race's name (its attempts are the tasks SLUG.1..SLUG.N).
    pub slug: String,
    #[command(flatten)]
    pub text: TaskText,
    /// The attempts: AGENT[:MODEL][*COUNT], comma separated, e.g.
    /// `opencode:provider/model-a*2,claude,codex:gpt-x` (at most 16 attempts).
    #[arg(long, value_name = "SPEC")]
    pub attempts: String,
    /// The first attempt that passes its checks wins at once; the others are cancelled.
    #[arg(long)]
    pub first_green: bool,
    /// What every attempt may do: write (default) or read-only.
    #[arg(long, value_name = "write|read-only", value_parser = permission)]
    pub permission: Option<ganger_agents::Permission>,
    /// Where every attempt's rounds run: local, bwrap or docker (default: sandbox.default).
    #[arg(long, value_name = "local|bwrap|docker", value_parser = sandbox_kind)]
    pub sandbox: Option<ganger_engine::SandboxKind>,
    /// The network of a bwrap or docker round: shared (default) or none.
    #[arg(long, value_name = "shared|none", value_parser = network)]
    pub network: Option<ganger_engine::Network>,
    /// A path inside the worktree that stays writable under sandbox.read_only; repeatable.
    #[arg(long = "rw", value_name = "PATH")]
    pub rw: Vec<String>,
    /// The revision every attempt's worktree starts from (default: defaults.base, main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// A provider key file, passed to the agents as <PROVIDER>_API_KEY; only the path is kept.
    #[arg(long = "key", value_name = "PROVIDER=FILE")]
    pub keys: Vec<String>,
    /// The wall-clock limit of each round: 90, 90s, 10m, 2h.
    #[arg(long, value_name = "DURATION", value_parser = limit)]
    pub timeout: Option<std::time::Duration>,
    /// Stop a round after this long with no new event and no process activity.
    #[arg(long, value_name = "DURATION", value_parser = limit)]
    pub stall: Option<std::time::Duration>,
    /// The commander who owns the race and its attempts.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    /// Stop the race's rounds once they cost this much in all (US dollars), judges included.
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Stop the race's rounds once they used this many tokens in all.
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,
    #[command(flatten)]
    pub checks: CheckArgs,
    #[arg(from_global)]
    pub json: bool,
}
