//! The labels on everything ganger creates in Docker. `REPO` names the main checkout (its
//! path), so that two repositories on one machine never clean each other's containers.

/// Present on every container, volume and image ganger makes: its value is `"1"`.
pub const MANAGED: &str = "ganger.managed";
/// The main checkout's absolute path.
pub const REPO: &str = "ganger.repo";
/// The task's slug.
pub const TASK: &str = "ganger.task";
/// The round's number within its task.
pub const ROUND: &str = "ganger.round";
/// The round's token (the value of `GANGER_ROUND` in its processes).
pub const TOKEN: &str = "ganger.token";
/// On worker images: the agent, its version and the extra packages.
pub const AGENT: &str = "ganger.agent";
pub const AGENT_VERSION: &str = "ganger.agent-version";
pub const PACKAGES: &str = "ganger.packages";
/// On the fleet worker image: the agents it carries, `NAME@VERSION` comma-separated.
pub const AGENTS: &str = "ganger.agents";
/// On worker images: the Debian release they are made of.
pub const SUITE: &str = "ganger.suite";
