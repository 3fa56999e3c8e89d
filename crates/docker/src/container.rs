//! One round's container, run to its end: created with its mounts, limits and labels,
//! attached and waited for before it starts (so that neither output nor exit is missed), its
//! stdin fed as it comes (a prompt, or a warm agent's conversation) and closed at its end,
//! its stdout and stderr copied out as they come. The daemon removes it
//! once it has exited (`AutoRemove`, as `docker run --rm`), so the round does not wait for
//! the removal of its filesystem; a container that never started is removed here. SIGTERM
//! or SIGINT to the caller stop the container (SIGTERM, the grace period, SIGKILL).

use crate::client::Docker;
use crate::error::DockerError;
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, KillContainerOptionsBuilder,
    RemoveContainerOptions, WaitContainerOptions, WaitContainerOptionsBuilder,
};
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How long after a container's output closed its exit may take to reach the wait sent before
/// it started, before ganger asks again.
const EXIT_SEEN_WITHIN: Duration = Duration::from_secs(3);

/// How long the removal of an ended container of the same name, which the daemon is already
/// doing, may take before a round's next container is made anyway.
const REMOVAL_WITHIN: Duration = Duration::from_secs(30);

/// Everything about a round's container. Nothing secret: the keys reach the container
/// through a file on a memory-backed mount, never through this configuration (Docker keeps
/// a container's environment on disk).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundContainer {
    /// The container's name (`ganger-TOKEN`).
    pub name: String,
    pub image: String,
    /// The command, program first.
    pub cmd: Vec<String>,
    /// `KEY=VALUE`, none of them secret.
    pub env: Vec<String>,
    pub working_dir: String,
    /// `uid:gid`, when not the image's default.
    pub user: Option<String>,
    pub labels: HashMap<String, String>,
    /// `SOURCE:TARGET[:ro]`, SOURCE a host path or a volume name.
    pub binds: Vec<String>,
    /// Memory-backed mounts: target and options (`size=512m`).
    pub tmpfs: HashMap<String, String>,
    /// `host`, `none`, or a network's name.
    pub network_mode: String,
    /// Limits: bytes of memory, billionths of CPUs, processes.
    pub memory: Option<i64>,
    pub nano_cpus: Option<i64>,
    pub pids: Option<i64>,
    /// Whether the container's own filesystem is read-only (only the mounts are writable).
    pub read_only_root: bool,
    /// Whether stdin is attached (and closed once the input is written).
    pub stdin: bool,
}

impl RoundContainer {
    fn body(&self) -> ContainerCreateBody {
        ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(self.cmd.clone()),
            env: Some(self.env.clone()),
            working_dir: Some(self.working_dir.clone()),
            user: self.user.clone(),
            labels: Some(self.labels.clone()),
            attach_stdin: Some(self.stdin),
            open_stdin: Some(self.stdin),
            stdin_once: Some(self.stdin),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            host_config: Some(HostConfig {
                binds: Some(self.binds.clone()),
                tmpfs: Some(self.tmpfs.clone()),
                network_mode: Some(self.network_mode.clone()),
                memory: self.memory,
                nano_cpus: self.nano_cpus,
                pids_limit: self.pids,
                readonly_rootfs: Some(self.read_only_root),
                // docker-init as PID 1: it forwards signals and reaps what the agent leaves.
                init: Some(true),
                security_opt: Some(vec!["no-new-privileges".into()]),
                auto_remove: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

impl Docker {
    /// Runs `spec` to its end, copying its output to `stdout` and `stderr`; returns its exit
    /// status (128 + N when signal N ended it).
    pub fn run_round(
        &self,
        spec: &RoundContainer,
        input: Option<Box<dyn Read + Send>>,
        stdout: &mut (dyn Write + Send),
        stderr: &mut (dyn Write + Send),
        grace: Duration,
    ) -> Result<i64, DockerError> {
        let ran = self.block_on(self.run_async(spec, input, stdout, stderr, grace));
        if ran.is_err() {
            // Created but perhaps never started: AutoRemove does not cover that.
            let _ = self.remove_container(&spec.name);
        }
        ran
    }

    async fn run_async(
        &self,
        spec: &RoundContainer,
        input: Option<Box<dyn Read + Send>>,
        stdout: &mut (dyn Write + Send),
        stderr: &mut (dyn Write + Send),
        grace: Duration,
    ) -> Result<i64, DockerError> {
        let io = |e: std::io::Error| DockerError::Io {
            path: "signals".into(),
            reason: e.to_string(),
        };
        let signals = Signals {
            term: signal(SignalKind::terminate()).map_err(io)?,
            int: signal(SignalKind::interrupt()).map_err(io)?,
        };
        self.create(spec).await?;
        let attach = AttachContainerOptionsBuilder::default()
            .stream(true)
            .stdin(spec.stdin)
            .stdout(true)
            .stderr(true)
            .build();
        let attached = self.api.attach_container(&spec.name, Some(attach)).await?;
        // Waiting starts before the container does: with AutoRemove, a wait that begins after
        // a quick exit could find the container already gone, and a `next-exit` wait sent
        // after the exit waits for an exit that never comes (a round then ran to its wall
        // clock). bollard's request goes out only when polled: the wait is a task of its own,
        // which the runtime runs while this one waits for the start.
        let wait = WaitContainerOptionsBuilder::default()
            .condition("next-exit")
            .build();
        let (api, name) = (self.api.clone(), spec.name.clone());
        let first = tokio::spawn(async move { api.wait_container(&name, Some(wait)).next().await });
        tokio::task::yield_now().await;
        self.api.start_container(&spec.name, None).await?;
        let feeding = feed(attached.input, input.map(read_in_chunks));
        let copied = Copied { stdout, stderr };
        self.relay(&spec.name, attached.output, feeding, copied, signals, grace)
            .await;
        self.exit_status(&spec.name, first).await
    }

    /// Creates the round's container. The name is the round's, and the round runs one
    /// container at a time: one that has it already is this round's agent or an earlier
    /// check, ended, which the daemon is still removing (AutoRemove is not done when the wait
    /// for its exit returns). It is removed now (or, when the daemon is removing it already,
    /// waited for until it is gone), and this one made.
    async fn create(&self, spec: &RoundContainer) -> Result<(), DockerError> {
        let create = || {
            CreateContainerOptionsBuilder::default()
                .name(&spec.name)
                .build()
        };
        if let Err(error) = self.api.create_container(Some(create()), spec.body()).await {
            let error = DockerError::from(error);
            if !error.is_conflict() {
                return Err(error);
            }
            self.make_room(&spec.name).await?;
            self.api
                .create_container(Some(create()), spec.body())
                .await?;
        }
        Ok(())
    }

    /// Copies the container's output out as it comes, while its stdin is fed, until the
    /// output closes; SIGTERM or SIGINT to this process stop the container.
    async fn relay(
        &self,
        name: &str,
        mut output: impl Stream<Item = Result<LogOutput, bollard::errors::Error>> + Unpin,
        feeding: impl Future<Output = ()>,
        copied: Copied<'_>,
        mut signals: Signals,
        grace: Duration,
    ) {
        tokio::pin!(feeding);
        let mut stopped = false;
        loop {
            tokio::select! {
                item = output.next() => match item {
                    Some(Ok(LogOutput::StdErr { message })) => {
                        let _ = copied.stderr.write_all(&message);
                        let _ = copied.stderr.flush();
                    }
                    Some(Ok(log)) => {
                        let _ = copied.stdout.write_all(&log.into_bytes());
                        let _ = copied.stdout.flush();
                    }
                    Some(Err(_)) | None => break,
                },
                _ = signals.term.recv(), if !stopped => {
                    stopped = true;
                    self.stop(name, grace).await;
                }
                _ = signals.int.recv(), if !stopped => {
                    stopped = true;
                    self.stop(name, grace).await;
                }
                () = &mut feeding => {}
            }
        }
    }

    /// The exit status, once the output closed: the container has exited or is exiting.
    /// Should the wait sent before it started still have missed the exit, a `not-running`
    /// wait answers at once for a container that stopped (and waits for one that closed its
    /// output but runs on).
    async fn exit_status(&self, name: &str, mut first: Waiting) -> Result<i64, DockerError> {
        let waited = match tokio::time::timeout(EXIT_SEEN_WITHIN, &mut first).await {
            Ok(Ok(waited)) => waited,
            Ok(Err(_)) | Err(_) => {
                first.abort();
                let stopped = WaitContainerOptionsBuilder::default()
                    .condition("not-running")
                    .build();
                self.api.wait_container(name, Some(stopped)).next().await
            }
        };
        match waited {
            Some(Ok(response)) => Ok(response.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(other)) => Err(other.into()),
            None => Err(DockerError::Api(format!("no exit status for {name}"))),
        }
    }

    /// Removes the ended container that holds `name`. When the daemon answers that its
    /// removal is already in progress (`AutoRemove` after the exit; HTTP 409 again), waits
    /// until it is gone, at most [`REMOVAL_WITHIN`].
    async fn make_room(&self, name: &str) -> Result<(), DockerError> {
        let force = RemoveContainerOptions {
            force: true,
            v: false,
            link: false,
        };
        let Err(error) = self.api.remove_container(name, Some(force)).await else {
            return Ok(());
        };
        let error = DockerError::from(error);
        if !error.is_conflict() {
            return crate::cleanup::absent_is_fine(error);
        }
        let removed = WaitContainerOptionsBuilder::default()
            .condition("removed")
            .build();
        // Whatever the wait answers (removed, an exit status, or not found as it is gone
        // already), the name is free or the next create says why not.
        let mut waits = self.api.wait_container(name, Some(removed));
        let _ = tokio::time::timeout(REMOVAL_WITHIN, waits.next()).await;
        Ok(())
    }

    /// SIGTERM to the container, up to `grace` for it to end, then SIGKILL.
    async fn stop(&self, name: &str, grace: Duration) {
        let kill = |sig: &str| KillContainerOptionsBuilder::default().signal(sig).build();
        let _ = self.api.kill_container(name, Some(kill("SIGTERM"))).await;
        let waited = tokio::time::timeout(grace, self.exit_code(name)).await;
        if waited.is_err() {
            let _ = self.api.kill_container(name, Some(kill("SIGKILL"))).await;
        }
    }

    async fn exit_code(&self, name: &str) -> Result<i64, DockerError> {
        let mut waits = self.api.wait_container(name, None::<WaitContainerOptions>);
        match waits.next().await {
            Some(Ok(response)) => Ok(response.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(other)) => Err(other.into()),
            None => Err(DockerError::Api(format!("no exit status for {name}"))),
        }
    }

    /// A named volume whose data is the host directory `device` (so ganger can write the
    /// agent's settings into it before a round), made once and labelled.
    pub fn ensure_bind_volume(
        &self,
        name: &str,
        device: &std::path::Path,
        labels: HashMap<String, String>,
    ) -> Result<(), DockerError> {
        let options = HashMap::from([
            ("type".to_owned(), "none".to_owned()),
            ("o".to_owned(), "bind".to_owned()),
            ("device".to_owned(), device.to_string_lossy().into_owned()),
        ]);
        let request = bollard::models::VolumeCreateRequest {
            name: Some(name.to_owned()),
            driver: Some("local".into()),
            driver_opts: Some(options),
            labels: Some(labels),
            ..Default::default()
        };
        self.block_on(self.api.create_volume(request))?;
        Ok(())
    }
}

/// The wait for the container's exit sent before it started.
type Waiting = tokio::task::JoinHandle<
    Option<Result<bollard::models::ContainerWaitResponse, bollard::errors::Error>>,
>;

/// The signals that stop a round's container.
struct Signals {
    term: Signal,
    int: Signal,
}

/// Where the container's output is copied.
struct Copied<'a> {
    stdout: &'a mut (dyn Write + Send),
    stderr: &'a mut (dyn Write + Send),
}

/// Feeds the input's `chunks` to the container's stdin as it comes, closes it at its end, and then keeps
/// the write half until the round ends (dropping it could end the attachment).
async fn feed(
    mut writer: impl tokio::io::AsyncWrite + Unpin,
    chunks: Option<tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>>,
) {
    if let Some(mut chunks) = chunks {
        while let Some(chunk) = chunks.recv().await {
            if writer.write_all(&chunk).await.is_err() || writer.flush().await.is_err() {
                break;
            }
        }
    }
    let _ = writer.shutdown().await;
    std::future::pending::<()>().await;
}

/// Reads `input` on a thread of its own (a blocking read: a pipe, the process's stdin) into
/// a channel, a chunk as soon as it comes, until its end.
fn read_in_chunks(
    mut input: Box<dyn Read + Send>,
) -> tokio::sync::mpsc::UnboundedReceiver<Vec<u8>> {
    let (sender, chunks) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 << 10];
        loop {
            match input.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => {
                    if sender.send(buffer[..read].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    chunks
}
