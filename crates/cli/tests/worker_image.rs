//! The fleet worker image (`ganger image build --worker`) runs a round of a fleet: the image
//! is built from this ganger, a fleet of one task on a git remote (`git daemon` on loopback)
//! is queued on the private PostgreSQL cluster, and the worker runs in a container with host
//! networking, in the image's own worker directory with the project's `ganger.toml` mounted in
//! it, the store's URL without a password and the password in a pgpass file mounted read-only. Seen from outside: the store says the round ended `done`
//! under the container's worker, and the remote has the task's branch and the round's
//! snapshot with the witness the agent wrote only inside a container (`/.dockerenv`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::postgres_tls::parts;
use crate::remote_fleet::{
    all_done_after, ganger, git_at, serve_git, shown_on_remote, submit_one, tasks,
    world_with_remote,
};
use ganger_test_support::{PgDatabase, docker_available, exclusive_lock, wait_until};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Held for the whole test: the image it builds is removed at its end, so no other run of it
/// (in any checkout of this machine) may build or use that image meanwhile.
const LOCK: &str = "/tmp/ganger-worker-image-test.lock";
/// The label on the test's containers.
const LABEL: &str = "ganger.test=worker-image";

/// `command` run to its end, ended (and the test failed) after `limit`: whether it
/// succeeded, its stdout and its stderr.
#[expect(
    clippy::disallowed_methods,
    reason = "ganger and the docker CLI run as an operator runs them, with a deadline"
)]
fn bounded(mut command: Command, limit: Duration) -> (bool, String, String) {
    let (out, err) = (
        tempfile::NamedTempFile::new().unwrap(),
        tempfile::NamedTempFile::new().unwrap(),
    );
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(err.reopen().unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read =
        |file: &tempfile::NamedTempFile| std::fs::read_to_string(file.path()).unwrap_or_default();
    (status.success(), read(&out), read(&err))
}

/// `docker ARGS`, ended after `limit`: whether it succeeded, and its output (both streams).
fn docker(args: &[&str], limit: Duration) -> (bool, String) {
    let mut command = Command::new("docker");
    command.args(args);
    let (ok, out, err) = bounded(command, limit);
    (ok, out + &err)
}

/// The worker's container and the image it runs: both removed when dropped, whatever the
/// test's end.
struct Container {
    name: String,
    image: String,
}

impl Container {
    fn logs(&self) -> String {
        docker(&["logs", &self.name], Duration::from_secs(60)).1
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.name], Duration::from_secs(60));
        let _ = docker(&["image", "rm", &self.image], Duration::from_secs(60));
    }
}

#[test]
fn the_worker_image_runs_a_round_of_a_fleet_on_the_private_cluster() {
    if !docker_available("the_worker_image_runs_a_round_of_a_fleet_on_the_private_cluster") {
        return;
    }
    let Some(db) = PgDatabase::new() else { return };
    let _lock = exclusive_lock(LOCK, Duration::from_secs(600));
    // A run killed outright (a test runner's time limit) left its container: it goes now, as
    // no other run holds the lock.
    let (_, leftovers) = docker(
        &[
            "ps",
            "--all",
            "--quiet",
            "--filter",
            &format!("label={LABEL}"),
        ],
        Duration::from_secs(60),
    );
    for id in leftovers.split_whitespace() {
        docker(&["rm", "--force", id], Duration::from_secs(60));
    }
    let (world, served, bare) = world_with_remote(
        "cat > prompt.txt; test -f /.dockerenv && echo container > witness.txt; \
         echo line >> work.txt; echo 'DONE: ok'",
    );
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    submit_one(&world, &db.url, &url, "t1", "leave a witness");

    // The first build on a machine makes the base with git by mmdebstrap: minutes.
    let mut build = Command::new(world.ganger_path());
    build
        .args(["image", "build", "--worker", "--agent", "command", "--json"])
        .current_dir(&world.repo);
    let (built, stdout, stderr) = bounded(build, Duration::from_secs(900));
    assert!(built, "ganger image build --worker failed: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let image = report["images"][0]["image"].as_str().unwrap().to_owned();
    assert!(image.starts_with("ganger-worker:"), "{report:#}");

    // The store's URL holds no password: the worker reads it from a pgpass file.
    let (user, password, port, name) = parts(&db.url);
    let store = format!("postgres://{user}@127.0.0.1:{port}/{name}");
    let pgpass = world.root().join("pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{port}:{name}:{user}:{password}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();

    let config = world.repo.join("ganger.toml");
    let container = Container {
        name: format!("ganger-worker-test-{}", std::process::id()),
        image: image.clone(),
    };
    let (started, output) = docker(
        &[
            "run",
            "--detach",
            "--name",
            &container.name,
            "--label",
            LABEL,
            "--network",
            "host",
            "--volume",
            &format!("{}:/run/secrets/pgpass:ro", pgpass.display()),
            // The worker's configuration, which names the agents it offers (`command` here).
            "--volume",
            &format!("{}:/srv/ganger/ganger.toml:ro", config.display()),
            "--env",
            "PGPASSFILE=/run/secrets/pgpass",
            "--env",
            &format!("GANGER_STORE={store}"),
            &image,
            "--name",
            "in-docker",
            "--capacity",
            "1",
        ],
        Duration::from_secs(120),
    );
    assert!(started, "docker run failed: {output}");

    assert!(
        wait_until(Duration::from_secs(180), || all_done_after(
            &world, &db.url, 1
        )),
        "{:#?}\n{}",
        tasks(&world, &db.url),
        container.logs()
    );
    // The store: the round ran in the container's worker, in the image's worker directory.
    let status = ganger(&world, Some(&db.url), &["status", "t1", "--json"]).json();
    let worktree = status["worktree"].as_str().unwrap_or_default();
    assert!(
        Path::new(worktree).starts_with("/srv/ganger"),
        "t1's worktree is not the container's: {status:#}"
    );
    let workers = ganger(&world, Some(&db.url), &["workers", "--json"]).json();
    assert!(workers.to_string().contains("\"in-docker\""), "{workers:#}");
    // The remote: the task's branch, and the round's snapshot with the witness the agent
    // wrote inside the container.
    let witness = shown_on_remote(&bare, "refs/ganger/t1/round-1:witness.txt");
    assert_eq!(
        witness.as_deref(),
        Some("container"),
        "{}",
        container.logs()
    );
    assert!(git_at(&bare, &["rev-parse", "refs/heads/agent/t1"]).is_some());
    // No password in the container's configuration.
    let (_, inspected) = docker(&["inspect", &container.name], Duration::from_secs(60));
    assert!(
        !inspected.contains(&password),
        "the password is in docker inspect"
    );
}
