//! The bubblewrap sandbox as a [`Sandbox`]: the round's command wrapped in `bwrap` with the
//! mounts of [`crate::bwrap_args`]: the host's root read-only, ganger's state, the other
//! worktrees, the homes and the task's key files hidden, the worktree, the agent's home and
//! its installation bound back.

use crate::SandboxError;
use crate::bwrap::{BwrapSpec, installation_dirs, wrap_in_bwrap};
use crate::confinement::{Confinement, Sandbox};
use crate::local::AgentCommand;
use crate::relay::{GatewayDoor, RELAY_SOCKET_IN_SANDBOX};
use ganger_events::{Network, SandboxKind};
use std::path::PathBuf;

/// Inside bubblewrap.
#[derive(Debug, Clone, Copy, Default)]
pub struct BwrapSandbox;

/// bubblewrap's program on `PATH`, or a clear error when it is not installed.
fn program() -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("bwrap"))
                .find(|candidate| {
                    std::fs::metadata(candidate)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                })
        })
        .ok_or_else(|| {
            SandboxError::unusable(
                "--sandbox bwrap needs bubblewrap, which is not installed (apt-get install bubblewrap)",
            )
        })
}

/// `command` run by ganger's own `gateway-relay`, which listens on the gateway's port inside
/// the sandbox and carries each connection to its socket.
fn behind_relay(command: AgentCommand, door: &GatewayDoor) -> Result<AgentCommand, SandboxError> {
    let ganger = std::env::current_exe()
        .map_err(|e| SandboxError::unusable(format!("cannot find ganger's own program: {e}")))?;
    let mut args: Vec<std::ffi::OsString> = vec![
        "gateway-relay".into(),
        door.port.to_string().into(),
        RELAY_SOCKET_IN_SANDBOX.into(),
        "--".into(),
        command.program.into_os_string(),
    ];
    args.extend(command.args);
    Ok(AgentCommand {
        program: ganger,
        args,
        ..command
    })
}

impl Sandbox for BwrapSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Bwrap
    }

    fn isolates(&self) -> bool {
        true
    }

    fn check_available(&self) -> Result<(), SandboxError> {
        program().map(|_| ())
    }

    fn confine(
        &self,
        command: AgentCommand,
        round: &Confinement<'_>,
    ) -> Result<AgentCommand, SandboxError> {
        let bwrap = program()?;
        let mut expose = installation_dirs(&command.program);
        let (command, gateway_socket) = match (&round.gateway, round.network) {
            (Some(door), Network::Gateway) => {
                let relay = behind_relay(command, door)?;
                expose.extend(installation_dirs(&relay.program));
                (relay, Some(door.socket.clone()))
            }
            _ => (command, None),
        };
        let spec = BwrapSpec {
            worktree: round.worktree.to_path_buf(),
            writable: round.writable,
            read_only: round.read_only.clone(),
            rw: round.rw.clone(),
            state: round.home.to_path_buf(),
            hide: (round.hidden)(),
            expose,
            hide_files: round.secret_files.clone(),
            network: round.network,
            gateway_socket,
        };
        Ok(wrap_in_bwrap(command, &spec, &bwrap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;

    #[test]
    fn a_round_is_wrapped_in_bwrap_with_what_the_engine_hides() {
        let dir = tempfile::tempdir().unwrap();
        // Not under /tmp, whose own tmpfs would hide it already.
        let hidden_dir = PathBuf::from("/usr/share");
        let asked = std::cell::Cell::new(false);
        let hidden = || {
            asked.set(true);
            vec![hidden_dir.clone()]
        };
        let image = || Err("not asked".to_owned());
        let round = Confinement {
            worktree: dir.path(),
            writable: true,
            read_only: Vec::new(),
            rw: Vec::new(),
            home: dir.path(),
            network: Network::Shared,
            gateway: None,
            grace: Duration::from_secs(1),
            repo: Path::new("/repo"),
            task: "t",
            round: 1,
            image_program: "agent".into(),
            secret_files: Vec::new(),
            hidden: &hidden,
            image: &image,
        };
        let command = AgentCommand {
            program: "/bin/true".into(),
            args: vec!["x".into()],
            env: Vec::new(),
            cwd: dir.path().to_path_buf(),
            stdin: None,
            token: "t".into(),
            use_cgroup: false,
        };
        match program() {
            Ok(bwrap) => {
                let wrapped = BwrapSandbox.confine(command, &round).unwrap();
                assert_eq!(wrapped.program, bwrap);
                assert!(
                    asked.get(),
                    "bwrap hides what the engine keeps out of sight"
                );
                let args: Vec<String> = wrapped
                    .args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                let hidden = hidden_dir.canonicalize().unwrap();
                assert!(
                    args.windows(2)
                        .any(|w| w[0] == "--tmpfs" && Path::new(&w[1]) == hidden),
                    "{args:?}"
                );
                assert_eq!(&args[args.len() - 3..], ["--", "/bin/true", "x"]);
            }
            Err(missing) => {
                assert!(missing.to_string().contains("needs bubblewrap"));
                assert!(BwrapSandbox.confine(command, &round).is_err());
            }
        }
    }
}
