//! The local sandbox: the agent runs as the user would run it by hand, in the user's
//! environment and home; the round host's process group, cgroup and marker are all there is.

use crate::SandboxError;
use crate::confinement::{Confinement, Sandbox};
use crate::local::AgentCommand;
use ganger_events::{Network, SandboxKind};

/// No isolation beyond the round's processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalSandbox;

impl Sandbox for LocalSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Local
    }

    fn isolates(&self) -> bool {
        false
    }

    /// The host's network and the whole worktree: nothing of its own to narrow.
    fn check_options(&self, network: Network, rw: &[String]) -> Result<(), SandboxError> {
        if network != Network::Shared {
            return Err(SandboxError::unusable(format!(
                "--network {network} needs a sandbox that has a network of its own: --sandbox bwrap or docker"
            )));
        }
        if !rw.is_empty() {
            return Err(SandboxError::unusable(
                "--rw needs a sandbox (bwrap or docker): locally the whole worktree is writable",
            ));
        }
        Ok(())
    }

    fn confine(
        &self,
        command: AgentCommand,
        _round: &Confinement<'_>,
    ) -> Result<AgentCommand, SandboxError> {
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_sandbox_has_no_network_or_paths_of_its_own_to_narrow() {
        assert!(LocalSandbox.check_options(Network::Shared, &[]).is_ok());
        let none = LocalSandbox.check_options(Network::None, &[]).unwrap_err();
        assert!(
            none.to_string()
                .starts_with("--network none needs a sandbox")
        );
        let rw = LocalSandbox
            .check_options(Network::Shared, &["gen".into()])
            .unwrap_err();
        assert!(rw.to_string().starts_with("--rw needs a sandbox"));
        assert!(!LocalSandbox.isolates());
    }
}
