//! Docker for tests: whether a daemon answers (with `CI=true` a missing one fails the test:
//! CI never skips), the worker image of an agent built once per machine and shared by
//! parallel test processes under a file lock, and a command run in a container of an image.

use bollard::query_parameters::{LogsOptions, RemoveContainerOptions};
use futures_util::StreamExt;
use std::path::Path;
use std::process::Command;

/// The lock that makes parallel test processes build an image once.
const BUILD_LOCK: &str = "/tmp/ganger-image-build.lock";

/// Whether a Docker daemon answers. Without one a test prints why it is skipped and returns;
/// under `CI=true` this panics instead, so that CI fails rather than skips.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so in the test output"
)]
pub fn docker_available(test: &str) -> bool {
    match ganger_docker::Docker::connect() {
        Ok(_) => true,
        Err(error) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{test}: Docker is not available under CI=true: {error}")
        }
        Err(_) => {
            eprintln!("skipped: {test}: Docker is not available");
            false
        }
    }
}

/// The worker image of `agent`, built by `ganger image build` (the binary `ganger`) unless it
/// is there, once per machine: other test processes wait on a lock meanwhile. The build uses
/// the real HOME, whose ganger cache holds the agent CLI.
pub fn ensure_worker_image(ganger: &Path, agent: &str) -> String {
    let lock = lock_file(BUILD_LOCK);
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .unwrap_or_else(|e| panic!("flock {BUILD_LOCK}: {e}"));
    let output = Command::new(ganger)
        .args(["image", "build", "--agent", agent, "--json"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let _ = rustix::fs::flock(&lock, rustix::fs::FlockOperation::Unlock);
    assert!(
        output.status.success(),
        "ganger image build --agent {agent} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    report["images"][0]["image"].as_str().unwrap().to_owned()
}

/// Runs `command` in a new container of `image` (no network), removes the container, and
/// returns its exit code and its output (stdout and stderr together).
pub fn run_in_image(image: &str, command: &[&str]) -> (i64, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let docker = bollard::Docker::connect_with_unix(
            &ganger_docker::socket_path(),
            120,
            bollard::API_DEFAULT_VERSION,
        )
        .unwrap()
        .negotiate_version()
        .await
        .unwrap();
        let body = bollard::models::ContainerCreateBody {
            image: Some(image.to_owned()),
            cmd: Some(command.iter().map(|c| c.to_string()).collect()),
            network_disabled: Some(true),
            ..Default::default()
        };
        let id = docker.create_container(None, body).await.unwrap().id;
        docker.start_container(&id, None).await.unwrap();
        let mut code = 0;
        let mut waited = docker.wait_container(&id, None);
        while let Some(item) = waited.next().await {
            match item {
                Ok(response) => code = response.status_code,
                Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => code = c,
                Err(e) => panic!("waiting for {id}: {e}"),
            }
        }
        let options = LogsOptions {
            stdout: true,
            stderr: true,
            ..Default::default()
        };
        let mut text = String::new();
        let mut logs = docker.logs(&id, Some(options));
        while let Some(chunk) = logs.next().await {
            text.push_str(&chunk.unwrap().to_string());
        }
        let remove = RemoveContainerOptions {
            force: true,
            ..Default::default()
        };
        let _ = docker.remove_container(&id, Some(remove)).await;
        (code, text)
    })
}

/// The file `path`, locked exclusively (flock) for as long as it is held: a test that builds
/// an image and removes it at its end holds one, so that no other run of it on this machine
/// uses the image meanwhile. Waits at most `limit`, then panics.
pub fn exclusive_lock(path: &str, limit: std::time::Duration) -> std::fs::File {
    let file = lock_file(path);
    let locked = crate::wait_until(limit, || {
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
    });
    assert!(locked, "{path} stayed locked for {limit:?}");
    file
}

/// The lock file `path`, made if missing.
fn lock_file(path: &str) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}
