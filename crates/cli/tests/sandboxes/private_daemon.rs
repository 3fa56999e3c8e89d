//! A Docker daemon that stops in the middle of a round (issue 15, item 4). The test runs a
//! daemon of its own (its own data root, exec root and socket, no bridge, no iptables), so
//! that killing it touches nothing else on the machine, loads the command agent's worker
//! image into it, starts a round there and kills the daemon while the container runs. The
//! round ends failed, naming Docker; nothing panics, no command says "bad input", the task's
//! record stays, and once a daemon answers again `clean` removes the container left behind.

use ganger_test_support::{World, wait_until};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A dockerd of the test's own, stopped (and its containers' shims with it) when dropped.
struct Daemon {
    root: tempfile::TempDir,
    child: Option<Child>,
}

impl Daemon {
    fn socket(&self) -> String {
        format!("unix://{}", self.root.path().join("docker.sock").display())
    }

    fn start(root: tempfile::TempDir) -> Daemon {
        Daemon::launch(root)
    }

    /// The daemon again, on the same data: the containerd the killed one left running goes
    /// first (a new one takes over the containers' shims), or the new daemon hangs on it.
    fn restart(mut self) -> Daemon {
        self.kill();
        let containerd = format!(
            "containerd --config {}",
            self.root.path().join("exec").display()
        );
        let _ = Command::new("pkill")
            .args(["-KILL", "-f", &containerd])
            .status();
        // A killed containerd may linger as a zombie of this process (pid files are checked
        // with signal 0): its pid file goes, so the new daemon starts its own.
        let _ = std::fs::remove_file(self.root.path().join("exec/containerd/containerd.pid"));
        let root = std::mem::replace(
            &mut self.root,
            tempfile::Builder::new()
                .prefix("gd-gone")
                .tempdir()
                .unwrap(),
        );
        drop(self);
        Daemon::launch(root)
    }

    fn launch(root: tempfile::TempDir) -> Daemon {
        let dir = root.path();
        #[expect(
            clippy::disallowed_methods,
            reason = "the test's own Docker daemon, not an agent"
        )]
        let child = Command::new("dockerd")
            .arg("--data-root")
            .arg(dir.join("data"))
            .arg("--exec-root")
            .arg(dir.join("exec"))
            .arg("--pidfile")
            .arg(dir.join("docker.pid"))
            .arg("--host")
            .arg(format!("unix://{}", dir.join("docker.sock").display()))
            .args(["--bridge", "none", "--iptables=false", "--ip6tables=false"])
            .args(["--ip-masq=false"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("dockerd.log")).unwrap())
            .spawn()
            .unwrap();
        let daemon = Daemon {
            root,
            child: Some(child),
        };
        let socket = daemon.socket();
        assert!(
            wait_until(Duration::from_secs(60), || docker(&socket, &["info"]).0),
            "the test's dockerd never answered: {}",
            std::fs::read_to_string(daemon.root.path().join("dockerd.log")).unwrap_or_default()
        );
        daemon
    }

    /// Kills the daemon outright (its containers live on, under their shims).
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Daemon {
    /// Stops the daemon as a person would (SIGTERM: it stops its containers and unmounts),
    /// then whatever of it is left: its containerd and shims, and its mounts.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let stopped = wait_until(Duration::from_secs(20), || {
                child.try_wait().is_ok_and(|status| status.is_some())
            });
            if !stopped {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let root = self.root.path().to_string_lossy().into_owned();
        let _ = Command::new("pkill").args(["-KILL", "-f", &root]).status();
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut under: Vec<&str> = mounts
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1))
            .filter(|point| point.starts_with(&root))
            .collect();
        // Deepest first.
        under.sort_by_key(|point| std::cmp::Reverse(point.len()));
        for point in under {
            let _ = Command::new("umount").args(["-l", point]).status();
        }
    }
}

fn docker(socket: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new("docker")
        .env("DOCKER_HOST", socket)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Copies `image` from the machine's daemon into the test's.
fn load(image: &str, socket: &str) {
    let save = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "docker save {image} | DOCKER_HOST={socket} docker load"
        ))
        .output()
        .unwrap();
    assert!(
        save.status.success(),
        "{}",
        String::from_utf8_lossy(&save.stderr)
    );
}

pub fn a_daemon_that_stops_mid_round_is_named_and_loses_nothing() {
    let test = "docker::a_daemon_that_stops_mid_round_is_named_and_loses_nothing";
    if !crate::engines::available("docker", test) {
        return;
    }
    let image =
        ganger_test_support::ensure_worker_image(env!("CARGO_BIN_EXE_ganger").as_ref(), "command");
    let root = tempfile::Builder::new()
        .prefix("gd")
        .tempdir_in("/tmp")
        .unwrap();
    let mut daemon = Daemon::start(root);
    let socket = daemon.socket();
    load(&image, &socket);

    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        "[defaults]\nagent = \"command\"\n\n[sandbox]\ndefault = \"docker\"\n\n\
         [agents.command]\nargv = [\"/bin/sh\", \"-c\", \"cat >/dev/null; sleep 120\"]\nformat = \"text\"\n",
    );
    let ganger = |args: &[&str]| {
        let mut command = world.command(args);
        command.env("DOCKER_HOST", &socket);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    ganger(&["start", "d", "--message", "hi", "--detach"]).expect_code(0);
    assert!(
        wait_until(Duration::from_secs(60), || {
            !docker(&socket, &["ps", "-q"]).1.trim().is_empty()
        }),
        "the round's container never ran"
    );
    daemon.kill();
    let waited = ganger(&["wait", "d", "--timeout", "60", "--json"]);
    assert!(!waited.stderr.contains("panicked"), "{}", waited.stderr);
    assert_eq!(waited.code, 1, "{}\n{}", waited.stdout, waited.stderr);
    let report = waited.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert!(
        report["reason"]
            .as_str()
            .is_some_and(|r| r.contains("Docker")),
        "the cause is not named: {report:#}"
    );
    // With the daemon gone, looking at the task still works; a fix is an environment
    // failure, not bad input.
    ganger(&["status", "d"]).expect_code(0);
    let fix = ganger(&["fix", "d", "--message", "again"]);
    assert!(!fix.stderr.contains("panicked"), "{}", fix.stderr);
    assert_eq!(fix.code, 70, "{}\n{}", fix.stdout, fix.stderr);
    // The daemon back: the container it left behind goes with clean; the record stays.
    let daemon = daemon.restart();
    let cleaned = ganger(&["clean", "d", "--force", "--json"]);
    cleaned.expect_code(0);
    assert_eq!(
        docker(
            &daemon.socket(),
            &["ps", "-aq", "--filter", "label=ganger.task=d"]
        )
        .1
        .trim(),
        "",
        "{}",
        cleaned.stdout
    );
    let report = ganger(&["status", "d", "--json"]).json();
    assert_eq!(report["status"], "failed");
}
