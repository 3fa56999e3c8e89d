//! ganger's client of the Docker Engine API: a blocking face over bollard (an async crate),
//! so that the round host and the commands stay plain threads. One [`Docker`] holds its own
//! single-threaded Tokio runtime and a connection to the daemon's Unix socket, with the API
//! version negotiated down to what the daemon speaks (Debian's docker.io 20.10 speaks 1.41).
//!
//! [`DockerSandbox`] is the docker sandbox of the [`ganger_sandbox::Sandbox`] trait: a round's
//! container, described from the round and run by `ganger docker-round`
//! ([`run_docker_round`]), which the round host follows like any agent.
//!
//! Every container and volume ganger makes carries the labels in [`labels`], so that `ganger
//! clean` and the reaper find what a task or a dead round host left without any other record.

mod cleanup;
mod client;
mod container;
mod error;
mod image;
pub mod labels;
mod round_sandbox;
mod round_shim;
mod round_spec;
mod upload;

pub use cleanup::{LabelFilter, ManagedContainer};
pub use client::{Docker, socket_path};
pub use container::RoundContainer;
pub use error::DockerError;
pub use image::{BuildContext, ImageInfo};
pub use round_sandbox::DockerSandbox;
pub use round_shim::{docker_failure, run_docker_round};
pub use round_spec::DockerSettings;
