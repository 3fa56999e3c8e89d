//! The clap definitions of the fleet commands: `serve`, `fleet run|submit|status`,
//! `broadcast`; what they do is in `commands/fleet.rs`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

// Limits on running rounds, given on the command line. (Not a doc comment: clap would make it
// the about of every command that flattens this, once that command is built, as they are
// deferred: args.rs.)
#[derive(Debug, Args, Clone, Default)]
pub struct LimitArgs {
    /// At most N rounds at once in all.
    #[arg(long = "max", value_name = "N")]
    pub max: Option<u32>,
    /// At most N rounds at once of an agent: NAME=N (repeatable).
    #[arg(long = "max-agent", value_name = "NAME=N")]
    pub max_agent: Vec<String>,
    /// At most N rounds at once on a model: PROVIDER/MODEL=N (repeatable).
    #[arg(long = "max-model", value_name = "MODEL=N")]
    pub max_model: Vec<String>,
    /// The first pause of a model after a rate limit (it doubles each time): 5s, 1m.
    #[arg(long, value_name = "DURATION", value_parser = crate::args::duration_arg)]
    pub backoff: Option<std::time::Duration>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Serve the HTTP API and the dashboard on ADDRESS:PORT (loopback unless tokens are
    /// configured in .ganger/web/tokens.toml; port 0 picks a free one) or unix:PATH too.
    #[arg(long, value_name = "ADDRESS:PORT", value_parser = ganger_web::listen::parse_listen)]
    pub listen: Option<ganger_web::listen::Listen>,
    /// Serve the HTTP API and the dashboard on 127.0.0.1:7878 (as `--listen 127.0.0.1:7878`).
    #[arg(long, conflicts_with = "listen")]
    pub web: bool,
    /// Serve Prometheus metrics at /metrics and a health check at /healthz on ADDRESS:PORT
    /// (give a loopback address, 127.0.0.1:9464, unless a scraper elsewhere must reach it;
    /// port 0 picks a free one). docs/operations.md.
    #[arg(long, value_name = "ADDRESS:PORT")]
    pub metrics: Option<std::net::SocketAddr>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Its name in the store (`ganger workers`); the host's name when not given.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Rounds it runs at once, at most.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub capacity: usize,
    /// A sandbox it runs rounds in: local, bwrap or docker (repeatable; default: those this
    /// machine has). Rounds asking for another are left to other workers.
    #[arg(long = "sandbox", value_name = "KIND", value_delimiter = ',')]
    pub sandboxes: Vec<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Serve Prometheus metrics at /metrics and a health check at /healthz on ADDRESS:PORT
    /// (give a loopback address, 127.0.0.1:9464, unless a scraper elsewhere must reach it;
    /// port 0 picks a free one). docs/operations.md.
    #[arg(long, value_name = "ADDRESS:PORT")]
    pub metrics: Option<std::net::SocketAddr>,
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkersArgs {
    #[arg(from_global)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub action: FleetAction,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum FleetAction {
    /// Queue a fleet file's tasks and run them here until the fleet is drained (resumes when
    /// run again: finished tasks are skipped, interrupted ones continue in their sessions).
    Run {
        /// The fleet file (docs/fleet.md).
        file: PathBuf,
        #[command(flatten)]
        limits: LimitArgs,
        /// The commander who owns the tasks.
        #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
        as_name: Option<String>,
        #[arg(from_global)]
        json: bool,
    },
    /// Queue a fleet file's tasks for `ganger serve` and return.
    Submit {
        /// The fleet file.
        file: PathBuf,
        /// The commander who owns the tasks.
        #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
        as_name: Option<String>,
        #[arg(from_global)]
        json: bool,
    },
    /// Show a fleet's tasks (every queued task without a name) and the paused models.
    Status {
        /// The fleet's name.
        name: Option<String>,
        #[arg(from_global)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct BroadcastArgs {
    #[command(flatten)]
    pub text: crate::args::TaskText,
    /// Only these tasks (comma-separated slugs); default: every task.
    #[arg(long, value_name = "SLUG,...", value_delimiter = ',')]
    pub only: Vec<String>,
    /// The commander sending the rounds.
    #[arg(long = "as", value_name = "NAME", value_parser = crate::args::commander_name)]
    pub as_name: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}
