//! ganger's test world: a temporary git repository with one commit on `main`, a private HOME
//! and XDG directories (so neither the user's git configuration nor their agent sessions can
//! change what a test sees, and tests never touch them), the `ganger` binary run inside it,
//! the pinned agent CLIs, and checks on the processes a round leaves behind.
//!
//! Tests that need an agent CLI fail, loudly and with the command that installs it, when it is
//! missing: they never skip.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support fails the test loudly on what it did not expect"
)]

mod agents;
mod docker;
mod netns;
mod pg_cluster;
mod postgres;
mod processes;
mod tls_front;
mod trees;
mod world;
mod world_user;

pub use agents::{
    FAKE_OPENCODE, agent_program, agent_toml, opencode_agent_toml, opencode_program, opencode_toml,
    opencode_version, write_fake_opencode,
};
pub use docker::{docker_available, ensure_worker_image, exclusive_lock, run_in_image};
pub use netns::{TestHost, TestHosts};
pub use pg_cluster::PrivateCluster;
pub use postgres::{PgDatabase, PgTlsRoots, SERVER_ENV as PG_SERVER_ENV};
pub use processes::{living_pids_with_env, silent_server, wait_until};
pub use tls_front::TestCa;
pub use trees::{TREES_ENV, trees_are_on};
pub use world::{Run, World};
pub use world_user::UNPRIVILEGED;
