//! One trait for the places a round can run ([`Sandbox`]), and what a sandbox is told of the
//! round it confines ([`Confinement`]). A sandbox changes one thing: the command the round
//! host starts (docs/design.md, Sandboxes); the host follows every round the same way. The
//! local and bubblewrap sandboxes are in this crate, Docker's in `ganger-docker`; the engine
//! chooses one by the task's [`SandboxKind`] in one place and asks it everything else.

use crate::SandboxError;
use crate::local::AgentCommand;
use crate::relay::GatewayDoor;
use ganger_events::{Network, SandboxKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a sandbox needs to know of one round (an agent's or a check's command). What is
/// costly to find and only some sandboxes need is asked for when needed.
pub struct Confinement<'a> {
    /// The task's worktree, where the command runs.
    pub worktree: &'a Path,
    /// Whether the command may change the worktree.
    pub writable: bool,
    /// Paths in the worktree mounted read-only over it.
    pub read_only: Vec<PathBuf>,
    /// Paths under read-only ones that stay writable.
    pub rw: Vec<PathBuf>,
    /// The agent's home for the task: its sessions and settings.
    pub home: &'a Path,
    pub network: Network,
    /// The model gateway's socket and port, for a round whose network is `gateway` (without
    /// one, such a round has no way out at all).
    pub gateway: Option<GatewayDoor>,
    /// Between SIGTERM and SIGKILL when the round is stopped.
    pub grace: Duration,
    /// The main checkout, the task and the round: what a sandbox names and labels what it
    /// makes after (a container, the task's volume).
    pub repo: &'a Path,
    pub task: &'a str,
    pub round: u32,
    /// The program as a worker image has it: an installed agent's own name (on the image's
    /// `PATH`), else the command's program as given.
    pub image_program: String,
    /// Files no command of the task may read (its key files).
    pub secret_files: Vec<PathBuf>,
    /// Directories of ganger's and the user's kept out of sight on this host (ganger's
    /// state, the main repository's git, the other worktrees, the user's home); asked by a
    /// sandbox that shares the host's file system.
    pub hidden: &'a dyn Fn() -> Vec<PathBuf>,
    /// The task's worker image, or why there is none; asked by a sandbox that runs one.
    pub image: &'a dyn Fn() -> Result<String, String>,
}

/// A place a round can run.
pub trait Sandbox: Send + Sync {
    /// Its name (`--sandbox`, `ganger.toml`, the task's record).
    fn kind(&self) -> SandboxKind;
    /// Whether the agent runs isolated: a home of its own per task, an environment built
    /// from nothing (no keys of the user's), no git, and its sessions where only the sandbox
    /// sees them. Only then do read-only paths and a network of its own mean something.
    fn isolates(&self) -> bool;
    /// Whether the agent's program is the host's own (not one installed in an image), so
    /// that what is learnt of the program on the host holds inside the sandbox.
    fn runs_host_programs(&self) -> bool {
        true
    }
    /// Whether the agent's processes are the user's who runs ganger (in that user's own
    /// namespaces), so that a FUSE mount the user made (a task's overlay without root) is
    /// open to them; a container engine's daemon is another user, which FUSE keeps out.
    fn runs_as_the_user(&self) -> bool {
        true
    }
    /// Refuses options that make no sense here.
    fn check_options(&self, network: Network, rw: &[String]) -> Result<(), SandboxError> {
        let _ = (network, rw);
        Ok(())
    }
    /// Whether it can run on this machine, or why not.
    fn check_available(&self) -> Result<(), SandboxError> {
        Ok(())
    }
    /// Whether what a round of `agent` needs is there, before the round is recorded;
    /// `image` gives the agent's worker image.
    fn check_ready(
        &self,
        agent: &str,
        image: &dyn Fn() -> Result<String, String>,
    ) -> Result<(), SandboxError> {
        let _ = (agent, image);
        Ok(())
    }
    /// The command as this sandbox runs it.
    fn confine(
        &self,
        command: AgentCommand,
        round: &Confinement<'_>,
    ) -> Result<AgentCommand, SandboxError>;
    /// Why the sandbox itself failed a round, from how its command exited and the last lines
    /// of its stderr (a Docker daemon that went away), when it did; `None`: the agent's
    /// own exit and stream say how the round went.
    fn failure(&self, exit_code: Option<i32>, stderr_tail: &[String]) -> Option<String> {
        let _ = (exit_code, stderr_tail);
        None
    }
    /// After a round, whatever happened to its host's children: what the round left in the
    /// sandbox is removed.
    fn after_round(&self, token: &str) {
        let _ = token;
    }
}
