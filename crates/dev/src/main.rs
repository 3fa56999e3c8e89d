//! `ganger-dev`: ganger's developer tools, apart from the user's `ganger` (as uv keeps
//! `uv-dev`). They need ganger's source tree, cargo and npm, which a user of ganger does not.
//!
//! - `ganger-dev canary`: the conformance suite on each agent's newest release beside the
//!   pinned one (`canary/`, docs/agents/canary.md). `ganger agents canary` runs this.
//! - `ganger-dev move-pins`: the canary, then the pins whose newest release passes every
//!   scenario move (`move_pins.rs`).

mod canary;
mod move_pins;
mod output;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// ganger's developer tools: the canary of the agent CLIs' newest releases, and moving the pins.
#[derive(Debug, Parser)]
#[command(name = "ganger-dev", version, about, long_about = None)]
struct Cli {
    /// Run as if started in DIR (like `git -C`).
    #[arg(short = 'C', long = "directory", value_name = "DIR", global = true)]
    directory: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the conformance suite on each agent's newest release (installed into a scratch
    /// cache) and on the pinned one, and compare them scenario by scenario. Changes nothing
    /// else; needs ganger's source tree (or --suite) and npm.
    Canary(canary::command::CanaryArgs),
    /// Run the canary (or read a report it printed), and move the pins whose newest release
    /// passes every scenario: pinned-agents.txt, the adapter's tested_version, ganger's cache;
    /// then run the conformance suite with them and write docs/agents.md's tables. Commits
    /// nothing.
    #[command(name = "move-pins")]
    MovePins(move_pins::MovePinsArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                output::INVALID
            } else {
                0
            });
        }
    };
    let json = match &cli.command {
        Command::Canary(args) => args.json,
        Command::MovePins(_) => false,
    };
    let here = match cli.directory {
        Some(dir) => Ok(dir),
        None => std::env::current_dir()
            .map_err(|e| ganger_engine::EngineError::invalid(format!("no current directory: {e}"))),
    };
    let outcome = here.and_then(|here| match &cli.command {
        Command::Canary(args) => canary::command::run(&here, args),
        Command::MovePins(args) => move_pins::run(&here, args),
    });
    ExitCode::from(outcome.unwrap_or_else(|error| output::fail(json, &error)))
}
