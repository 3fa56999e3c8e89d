//! `ganger land`'s arguments: queue tasks to land on their bases, run a lander in the
//! foreground, or show the queue.

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct LandArgs {
    #[command(subcommand)]
    pub action: Option<LandAction>,
    /// The tasks to queue; each lands once its batch's combined checks pass.
    pub slugs: Vec<String>,
    /// Run a lander here until the queue is empty, with a line per step of each batch.
    #[arg(long)]
    pub run: bool,
    /// The most tasks a batch takes (default 8).
    #[arg(long, value_name = "N")]
    pub batch: Option<u32>,
    /// A task sent back (a conflict, a culprit) goes to its worker as a fix round, and is
    /// queued again once that round passes.
    #[arg(long)]
    pub fix: bool,
    /// Queued ahead of tasks of a lower priority (default 0).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub priority: i64,
    /// The commander queueing (the task's owner, or one it allows).
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum LandAction {
    /// The queue, the batches under test with their bisection so far, flaky checks, and
    /// what was sent back and why.
    Status(LandStatusArgs),
}

#[derive(Debug, Args)]
pub struct LandStatusArgs {
    #[arg(from_global)]
    pub json: bool,
}
