//! The docker sandbox as a [`Sandbox`]: a round runs in a container of its own, started by
//! `ganger docker-round` ([`crate::run_docker_round`]), the process the round host follows.
//! Its image is the task's worker image, which must be built beforehand: Docker would try to
//! pull a missing one from a registry.

use crate::client::Docker;
use crate::round_spec::{DockerSettings, SPEC_ENV, container_name, env_dir, shim_spec};
use ganger_sandbox::{AgentCommand, Confinement, Sandbox, SandboxError, SandboxKind};
use std::ffi::OsString;

/// In a container of its own, through the Docker Engine API.
#[derive(Debug, Clone, Default)]
pub struct DockerSandbox {
    pub settings: DockerSettings,
}

/// A failure to reach Docker, as `--sandbox docker` reports it.
/// Docker does not answer: the environment failed, its cause kept.
fn unreachable(error: crate::DockerError) -> SandboxError {
    SandboxError::Unavailable {
        message: "--sandbox docker: Docker does not answer".into(),
        source: Some(Box::new(error)),
    }
}

impl Sandbox for DockerSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Docker
    }

    /// The shim's own line when Docker failed the round (exit 125).
    fn failure(&self, exit_code: Option<i32>, stderr_tail: &[String]) -> Option<String> {
        crate::docker_failure(exit_code, stderr_tail)
    }

    fn runs_as_the_user(&self) -> bool {
        false
    }

    fn isolates(&self) -> bool {
        true
    }

    /// The agent is the worker image's.
    fn runs_host_programs(&self) -> bool {
        false
    }

    fn check_available(&self) -> Result<(), SandboxError> {
        Docker::connect().map(|_| ()).map_err(unreachable)
    }

    /// The worker image is built.
    fn check_ready(
        &self,
        agent: &str,
        image: &dyn Fn() -> Result<String, String>,
    ) -> Result<(), SandboxError> {
        let image = image().map_err(SandboxError::unusable)?;
        let docker = Docker::connect().map_err(unreachable)?;
        match docker.image(&image) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(SandboxError::Unusable {
                message: format!("the worker image {image} is not built"),
                hint: Some(format!(
                    "`ganger image build --agent {agent}` builds it offline"
                )),
            }),
            Err(e) => Err(unreachable(e)),
        }
    }

    /// `ganger docker-round` with the container's description and the agent's variables in
    /// its environment.
    fn confine(
        &self,
        command: AgentCommand,
        round: &Confinement<'_>,
    ) -> Result<AgentCommand, SandboxError> {
        let image = (round.image)().map_err(SandboxError::unusable)?;
        let spec = shim_spec(&self.settings, round, image, &command)?;
        let json = serde_json::to_string(&spec)
            .map_err(|e| SandboxError::unusable(format!("the container's description: {e}")))?;
        let ganger = std::env::current_exe().map_err(|e| {
            SandboxError::unusable(format!("cannot find ganger's own program: {e}"))
        })?;
        let mut env: Vec<(OsString, OsString)> = command
            .env
            .iter()
            .filter(|(key, _)| spec.secret_names.iter().any(|name| key == name.as_str()))
            .cloned()
            .collect();
        if let Some(path) = std::env::var_os("PATH") {
            env.push(("PATH".into(), path));
        }
        if let Some(host) = std::env::var_os("DOCKER_HOST") {
            env.push(("DOCKER_HOST".into(), host));
        }
        env.push((SPEC_ENV.into(), json.into()));
        Ok(AgentCommand {
            program: ganger,
            args: vec!["docker-round".into()],
            env,
            cwd: command.cwd,
            stdin: command.stdin,
            token: command.token,
            // The container's processes are not in a cgroup of ours: the round marker in their
            // environment finds them.
            use_cgroup: false,
        })
    }

    /// When the round's shim did not finish (its variables' directory is still there), its
    /// container and that directory are removed.
    fn after_round(&self, token: &str) {
        let dir = env_dir(token);
        if !dir.exists() {
            return;
        }
        let _ = std::fs::remove_dir_all(&dir);
        if let Ok(docker) = Docker::connect() {
            let _ = docker.remove_container(&container_name(token));
        }
    }
}
