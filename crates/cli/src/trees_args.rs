//! `ganger trees`'s arguments: the pool of worktrees made ahead of time (docs/trees.md).

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct TreesArgs {
    #[command(subcommand)]
    pub action: Option<TreesAction>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TreesAction {
    /// The ready worktrees, by base commit (the default).
    List,
    /// Check out worktrees for the pool until `[trees] pool` are ready for the base (a start
    /// that takes one runs this in the background).
    Fill {
        /// The branch or commit tasks start from (default: `[defaults] base`).
        #[arg(long, value_name = "BASE")]
        base: Option<String>,
    },
    /// Remove every pooled worktree.
    Drain,
}

// `ganger checkout SLUG [PATH]` (no doc comment: it would replace the command's summary).
#[derive(Debug, Args)]
pub struct CheckoutArgs {
    /// The task.
    pub slug: String,
    /// Where the worktree goes (default: REPO-checkout-SLUG beside the main checkout); nothing
    /// there, or an empty directory.
    pub path: Option<std::path::PathBuf>,
    #[arg(from_global)]
    pub json: bool,
}
