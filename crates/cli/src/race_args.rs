//! The clap definitions of `ganger race`; what it does is in `commands/race.rs`.

use crate::args::{CheckArgs, RunArgs, SandboxArgs, TaskText, permission};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct RaceArgs {
    /// The race's name (its attempts are the tasks SLUG.1..SLUG.N).
    pub slug: String,
    #[command(flatten)]
    pub text: RaceText,
    /// The attempts: AGENT[:MODEL][*COUNT], comma separated, e.g.
    /// `opencode:provider/model-a*2,claude,codex:gpt-x` (at most 16 attempts).
    #[arg(long, value_name = "SPEC", required_unless_present = "graft")]
    pub attempts: Option<String>,
    /// Send the race's winner one fix round with the passing losers' hunks in files it left
    /// alone and the reviewers' reasons against it, to adopt or reject.
    #[arg(
        long,
        conflicts_with_all = ["attempts", "brief", "message", "first_green", "max", "queue", "detach"]
    )]
    pub graft: bool,
    /// The first attempt that passes its checks wins at once; the others are cancelled.
    #[arg(long)]
    pub first_green: bool,
    /// At most N attempts working at once (default: all); the next starts as one ends.
    #[arg(long, value_name = "N")]
    pub max: Option<u32>,
    /// Queue the attempts (and the judges' rounds) for `ganger serve`, which starts them under
    /// its limits (--max, --max-agent, --max-model), instead of starting them at once.
    #[arg(long)]
    pub queue: bool,
    /// What every attempt may do: write (default) or read-only.
    #[arg(long, value_name = "write|read-only", value_parser = permission)]
    pub permission: Option<ganger_agents::Permission>,
    #[command(flatten)]
    pub place: SandboxArgs,
    /// The revision every attempt's worktree starts from (default: defaults.base, main).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
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
    /// Record the race and drive it in the background; `ganger status SLUG` follows it.
    #[arg(long)]
    pub detach: bool,
    #[arg(from_global)]
    pub json: bool,
}

// The race's brief: as a round's task text, but optional here (`--graft` takes none; the
// engine asks for one otherwise). (Not a doc comment: clap would make it the command's about.)
#[derive(Debug, Args)]
#[group(required = false, multiple = false)]
pub struct RaceText {
    /// A file with the brief every attempt gets.
    #[arg(long, value_name = "FILE")]
    pub brief: Option<PathBuf>,
    /// The brief itself (it may start with a dash).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub message: Option<String>,
}

impl RaceText {
    pub fn task_text(self) -> TaskText {
        TaskText {
            brief: self.brief,
            message: self.message,
        }
    }
}

#[derive(Debug, Args)]
pub struct RaceHostArgs {
    /// The race, driven as its recorded request says.
    pub slug: String,
}
