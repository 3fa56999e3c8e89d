//! A fleet that names a git remote (issue 19): workers on other hosts get the repository from
//! it (a bare repository served by `git daemon` on loopback), run each round in their own
//! clone, and push the task's branch and snapshot refs back; a task whose next round goes to
//! another worker continues there with the work of its earlier rounds (the agent never
//! commits: its work travels as the last round's snapshot), and with a summary of its earlier
//! rounds where the agent's session stayed behind. Each worker here is a directory
//! of its own, as another host would be; they share a PostgreSQL store
//! (`GANGER_TEST_POSTGRES`). A remote is refused without a shared store, or with a password.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Script};
use ganger_test_support::{
    PgDatabase, PrivateCluster, TestHost, TestHosts, World, agent_toml, silent_server, wait_until,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// A background process killed when dropped, with its output in a file.
pub(crate) struct Background {
    child: Child,
    log: PathBuf,
}

impl Background {
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The slugs whose round this worker started, from its event lines.
    fn started(&self) -> BTreeSet<String> {
        self.log_text()
            .lines()
            .filter_map(|line| line.strip_prefix("started ")?.split(' ').next())
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `git daemon` serving `base` on a free port of loopback and of `also`, pushes allowed.
#[expect(
    clippy::disallowed_methods,
    reason = "git daemon is the remote's server, run in the background"
)]
pub(crate) fn serve_git(world: &World, base: &Path, also: &[&str]) -> (Background, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = world.root().join("git-daemon.log");
    // git-daemon itself, not `git daemon`, which would leave it behind when killed; run in
    // the world's directory, so that the world's end stops it whatever happens.
    let exec_path = git_at(world.root(), &["--exec-path"]).unwrap();
    let child = std::process::Command::new(Path::new(&exec_path).join("git-daemon"))
        .current_dir(world.root())
        .args([
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
            &format!("--base-path={}", base.display()),
        ])
        .args(also.iter().map(|address| format!("--listen={address}")))
        .arg(base)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let daemon = Background { child, log };
    let url = format!("git://127.0.0.1:{port}/app.git");
    assert!(
        wait_until(Duration::from_secs(20), || {
            let mut command = std::process::Command::new("git");
            command.args(["ls-remote", &url]);
            command.output().is_ok_and(|o| o.status.success())
        }),
        "git daemon did not answer: {}",
        daemon.log_text()
    );
    (daemon, port)
}

/// `ganger worker` run in `host` (a directory standing for another machine).
pub(crate) fn worker(world: &World, store: &str, host: &Path, name: &str) -> Background {
    worker_at_home(world, store, host, name, None)
}

/// [`worker`] with a home of its own (`HOME`), as another machine's user has.
#[expect(
    clippy::disallowed_methods,
    reason = "the worker is ganger itself, run in the background as a user runs it"
)]
fn worker_at_home(
    world: &World,
    store: &str,
    host: &Path,
    name: &str,
    home: Option<&Path>,
) -> Background {
    let log = world.root().join(format!("worker-{name}.log"));
    let host_text = host.to_string_lossy().into_owned();
    let mut command = world.command(&["-C", &host_text, "worker", "--name", name]);
    command.env("GANGER_STORE", store);
    if let Some(home) = home {
        // The whole home: OpenCode keeps its database under XDG_DATA_HOME.
        command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"));
    }
    let child = command
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Background { child, log }
}

pub(crate) fn ganger(
    world: &World,
    store: Option<&str>,
    args: &[&str],
) -> ganger_test_support::Run {
    let mut command = world.command(args);
    if let Some(url) = store {
        command.env("GANGER_STORE", url);
    }
    ganger_test_support::Run::from(command.output().unwrap())
}

pub(crate) fn tasks(world: &World, store: &str) -> Vec<Value> {
    ganger(world, Some(store), &["fleet", "status", "f", "--json"]).json()["tasks"]
        .as_array()
        .unwrap()
        .clone()
}

/// Whether every task of fleet `f` had `rounds` rounds, the last one `done`.
pub(crate) fn all_done_after(world: &World, store: &str, rounds: u64) -> bool {
    tasks(world, store)
        .iter()
        .all(|t| t["rounds"] == rounds && t["last_status"] == "done")
}

/// `git` in `dir`, its output trimmed; `None` when it fails.
pub(crate) fn git_at(dir: &Path, args: &[&str]) -> Option<String> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// `git show SPEC` on the remote `bare`, once it is there (a round's push follows its end
/// by up to a pass of its worker); `None` when it did not come within 30 s.
pub(crate) fn shown_on_remote(bare: &Path, spec: &str) -> Option<String> {
    let mut shown = None;
    wait_until(Duration::from_secs(30), || {
        shown = git_at(bare, &["show", spec]);
        shown.is_some()
    });
    shown
}

/// Submits fleet `f` of one task, `slug` asked `message`, on the remote at `url`.
pub(crate) fn submit_one(world: &World, store: &str, url: &str, slug: &str, message: &str) {
    let file = world.root().join("f.toml");
    std::fs::write(
        &file,
        format!("remote = \"{url}\"\n[[task]]\nslug = \"{slug}\"\nmessage = \"{message}\"\n"),
    )
    .unwrap();
    ganger(
        world,
        Some(store),
        &["fleet", "submit", &file.to_string_lossy()],
    )
    .expect_code(0);
}

/// Submits fleet `f` on the remote at `url`: a task per slug, each asked "do SLUG".
pub(crate) fn submit_fleet(world: &World, store: &str, url: &str, slugs: &[&str]) {
    let mut text = format!("remote = \"{url}\"\n");
    for slug in slugs {
        text.push_str(&format!(
            "[[task]]\nslug = \"{slug}\"\nmessage = \"do {slug}\"\n"
        ));
    }
    let file = world.root().join("f.toml");
    std::fs::write(&file, text).unwrap();
    ganger(
        world,
        Some(store),
        &["fleet", "submit", &file.to_string_lossy()],
    )
    .expect_code(0);
}

/// A host: a directory of its own with the agents' configuration a worker there offers.
pub(crate) fn host(world: &World, name: &str) -> PathBuf {
    let dir = world.root().join(format!("host-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    world.git_in(&dir, &["init", "-q"]);
    std::fs::copy(world.repo.join("ganger.toml"), dir.join("ganger.toml")).unwrap();
    dir
}

#[test]
fn a_task_moved_to_a_worker_on_another_host_continues_with_its_work_from_the_remote() {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    // Each round keeps the prompt it was given in prompt.txt, adds a line to work.txt, and
    // commits nothing, as agents do here.
    let (world, served, bare) =
        world_with_remote("cat > prompt.txt; echo line >> work.txt; echo 'DONE: ok'");
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    let slugs = ["t1", "t2", "t3"];
    submit_fleet(&world, store, &url, &slugs);
    let (host_a, host_b) = (host(&world, "a"), host(&world, "b"));

    // Host a runs every first round, then goes away.
    let a = worker(&world, store, &host_a, "a");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 1
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    for slug in slugs {
        let snapshot = format!("refs/ganger/{slug}/round-1:work.txt");
        let shown = shown_on_remote(&bare, &snapshot);
        assert_eq!(shown.as_deref(), Some("line"), "{slug}: {}", a.log_text());
        assert!(git_at(&bare, &["rev-parse", &format!("refs/heads/agent/{slug}")]).is_some());
    }
    assert_eq!(a.started(), slugs.iter().map(|s| (*s).to_owned()).collect());
    drop(a);

    // Host b takes every second round: the worktree is made there from the remote, with
    // round 1's work, and round 2 adds to it.
    for slug in slugs {
        ganger(
            &world,
            Some(store),
            &["fix", slug, "--queue", "--message", "once more"],
        )
        .expect_code(0);
    }
    let b = worker(&world, store, &host_b, "b");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 2
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        b.log_text()
    );
    for slug in slugs {
        let snapshot = format!("refs/ganger/{slug}/round-2:work.txt");
        let shown = shown_on_remote(&bare, &snapshot);
        assert_eq!(
            shown.as_deref(),
            Some(
                "line
line"
            ),
            "{slug}: {}",
            b.log_text()
        );
        // The agent's session stayed on host a: the round says so, and begins with what the
        // earlier round was asked (read from the store) and answered.
        let prompt = git_at(
            &bare,
            &["show", &format!("refs/ganger/{slug}/round-2:prompt.txt")],
        )
        .unwrap();
        for part in [
            "ran on another host",
            &format!("> do {slug}"),
            "> DONE: ok",
            "once more",
        ] {
            assert!(prompt.contains(part), "{part:?} not in {prompt}");
        }
        let status = ganger(&world, Some(store), &["status", slug, "--json"]).json();
        let worktree = status["worktree"].as_str().unwrap_or_default();
        assert!(
            Path::new(worktree).starts_with(&host_b),
            "{slug}'s worktree is not on host b: {status:#}"
        );
    }
    assert_eq!(b.started(), slugs.iter().map(|s| (*s).to_owned()).collect());
    drop(b);

    // Back in the checkout the fleet was submitted from, which has none of the tasks'
    // worktrees: the diff and the merge come from the remote.
    let diff = ganger(&world, Some(store), &["diff", "t1"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("+line\n+line"), "{}", diff.stdout);
    ganger(&world, Some(store), &["merge", "t1"]).expect_code(0);
    assert_eq!(
        git_at(&world.repo, &["show", "main:work.txt"]).as_deref(),
        Some("line\nline")
    );
    assert_eq!(
        git_at(&world.repo, &["status", "--porcelain"]).as_deref(),
        Some("")
    );
}

/// From the checkout the fleet was submitted from, which has no worktree of the task (its
/// worktree is on host a): `fix` without `--queue` goes to host a's worker through the queue
/// and is followed here to its end, its report the one host a shows; with `--detach` it is
/// queued and `log --follow` here follows the round live; `wait` and `log` print here what
/// they print on host a; `rewind` brings the task here and says so.
#[test]
fn fix_wait_and_log_from_a_host_without_the_worktree_act_where_the_worktree_is() {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let (world, served, _bare) =
        world_with_remote("cat > prompt.txt; echo line >> work.txt; sleep 2; echo 'DONE: ok'");
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    submit_one(&world, store, &url, "t1", "do t1");
    let host_a = host(&world, "a");
    let a = worker(&world, store, &host_a, "a");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 1
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    let on_a = |args: &[&str]| {
        let mut all = vec!["-C", host_a.to_str().unwrap()];
        all.extend_from_slice(args);
        ganger(&world, Some(store), &all)
    };
    // Here: a fix goes to host a and is followed to its end.
    let fixed = ganger(
        &world,
        Some(store),
        &["fix", "t1", "--message", "once more"],
    );
    fixed.expect_code(0);
    assert!(
        fixed.stderr.contains("t1's worktree is on another host"),
        "{}",
        fixed.stderr
    );
    // The report a round run here prints, for round 2, done.
    assert!(
        fixed.stdout.contains("task: t1, round 2 (fix)") && fixed.stdout.contains("status: done"),
        "{}",
        fixed.stdout
    );
    let report = ganger(&world, Some(store), &["status", "t1", "--json"]).json();
    assert_eq!(
        (&report["round"], &report["status"]),
        (&2.into(), &"done".into()),
        "{report:#}"
    );
    let there = on_a(&["status", "t1", "--json"]).json();
    for key in [
        "round",
        "status",
        "answer",
        "worktree",
        "changed",
        "snapshot_after",
    ] {
        assert_eq!(report[key], there[key], "{key}: {report:#}\n{there:#}");
    }
    assert!(
        Path::new(report["worktree"].as_str().unwrap()).starts_with(&host_a),
        "{report:#}"
    );
    // What can take no queue is refused, with nothing queued.
    let refused = ganger(
        &world,
        Some(store),
        &["fix", "t1", "--message", "x", "--until-green", "2"],
    );
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("is on another host"),
        "{}",
        refused.stderr
    );
    // Detached: queued; `log --follow` here follows the round as it runs there.
    let detached = ganger(
        &world,
        Some(store),
        &["fix", "t1", "--message", "third", "--detach", "--json"],
    );
    detached.expect_code(0);
    assert!(
        wait_until(Duration::from_secs(60), || {
            let status = ganger(&world, Some(store), &["status", "t1", "--json"]).json();
            status["round"] == 3
        }),
        "{}",
        a.log_text()
    );
    let followed = ganger(&world, Some(store), &["log", "t1", "--follow"]);
    followed.expect_code(0);
    // `wait` and `log` here print what they print on host a.
    let waited = ganger(&world, Some(store), &["wait", "t1", "--json"]);
    waited.expect_code(0);
    let waited_there = on_a(&["wait", "t1", "--json"]);
    // All of it, `files` too: they name where the round's host keeps them (its worker's
    // clone of the remote, on host a), found from the task's worktree.
    assert_eq!(waited.json(), waited_there.json());
    assert_eq!(waited.json()["round"], 3);
    let files = &waited.json()["files"];
    assert_eq!(files["here"], true, "{files:#}");
    assert!(
        Path::new(files["answer"].as_str().unwrap()).starts_with(&host_a),
        "{files:#}"
    );
    let logged_there = on_a(&["log", "t1"]);
    logged_there.expect_code(0);
    assert_eq!(followed.stdout, logged_there.stdout);
    assert!(followed.stdout.contains("DONE: ok"), "{}", followed.stdout);
    assert_eq!(
        ganger(&world, Some(store), &["log", "t1", "--round", "2"]).stdout,
        on_a(&["log", "t1", "--round", "2"]).stdout
    );
    // `rewind` here brings the task here first (its work from the remote, as `merge` does),
    // then takes it back to round 2, and says so.
    let rewound = ganger(&world, Some(store), &["rewind", "t1", "--to", "2"]);
    rewound.expect_code(0);
    assert!(
        rewound.stdout.contains("its worktree was on another host"),
        "{}",
        rewound.stdout
    );
    let status = ganger(&world, Some(store), &["status", "t1", "--json"]).json();
    let here = PathBuf::from(status["worktree"].as_str().unwrap());
    assert!(!here.starts_with(&host_a), "{status:#}");
    assert_eq!(
        std::fs::read_to_string(here.join("work.txt")).unwrap(),
        "line\nline\n"
    );
    let journal = ganger(
        &world,
        Some(store),
        &["rewind", "t1", "--to", "1", "--json"],
    )
    .json();
    assert_eq!(journal["moved_from"], Value::Null, "{journal:#}");
    assert_eq!(
        std::fs::read_to_string(here.join("work.txt")).unwrap(),
        "line\n"
    );
}

#[test]
fn a_claude_task_moved_to_another_host_continues_its_conversation_there() {
    moved_task_continues_its_conversation("claude");
}

#[test]
fn a_qwen_task_moved_to_another_host_continues_its_conversation_there() {
    moved_task_continues_its_conversation("qwen");
}

#[test]
fn a_codex_task_moved_to_another_host_continues_its_conversation_there() {
    moved_task_continues_its_conversation("codex");
}

#[test]
fn a_gemini_task_moved_to_another_host_continues_its_conversation_there() {
    moved_task_continues_its_conversation("gemini");
}

#[test]
fn an_opencode_task_moved_to_another_host_continues_its_conversation_there() {
    moved_task_continues_its_conversation("opencode");
}

/// A task of `agent` runs round 1 on host a and round 2 on host b, each host its own home.
fn moved_task_continues_its_conversation(agent: &str) {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let llm = FakeLlm::start(Script::new().default_answer("Noted.")).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write("ganger.toml", &agent_toml(agent, &llm.root_url(), "", ""));
    let (world, served, _bare) = serving(world);
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    submit_one(&world, store, &url, "c1", "THE BRIEF of c1");
    // Two hosts: each its own directory and its own home, where the agent keeps its sessions.
    let on_host = |name: &str| {
        let dir = host(&world, name);
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let worker = worker_at_home(&world, store, &dir, name, Some(&home));
        (dir, home, worker)
    };
    let (dir_a, _home_a, a) = on_host("a");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 1
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    drop(a);
    let on_a = ganger(&world, Some(store), &["status", "c1", "--json"]).json()["worktree"]
        .as_str()
        .unwrap()
        .to_owned();
    ganger(
        &world,
        Some(store),
        &["fix", "c1", "--queue", "--message", "continue"],
    )
    .expect_code(0);
    let (dir_b, _home_b, b) = on_host("b");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 2
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        b.log_text()
    );
    // Round 2 ran on host b, in the same conversation: the model was sent round 1's prompt
    // and round 2's as two turns of one session, not a summary of round 1 in a new one.
    let status = ganger(&world, Some(store), &["status", "c1", "--json"]).json();
    assert!(
        Path::new(status["worktree"].as_str().unwrap()).starts_with(&dir_b),
        "{status:#}"
    );
    let last = llm
        .requests()
        .into_iter()
        .rfind(|r| r.tools_offered)
        .unwrap();
    // Gemini sends its session's context as the first user turn.
    let sent: Vec<String> = last
        .prompts()
        .into_iter()
        .filter(|p| !p.starts_with("<session_context>"))
        .collect();
    assert_eq!(
        sent.first().map(String::as_str),
        Some("THE BRIEF of c1"),
        "{sent:?}"
    );
    assert_eq!(
        sent.last().map(String::as_str),
        Some("continue"),
        "{sent:?}"
    );
    assert!(!sent.iter().any(|p| p.contains("another host")), "{sent:?}");
    // The conversation names the worktree it goes on in, not the one it left.
    let body = serde_json::to_string(&last.body).unwrap();
    assert!(
        !body.contains(&on_a),
        "{on_a} is still in round 2's request"
    );
    // The session file is on host b now (in its home, or in the agent's own home under b's
    // checkout), under the worktree b has.
    let session = status["session"].as_str().unwrap().to_owned();
    let found = |home: &Path| {
        walk(home)
            .into_iter()
            // Named by the id (Gemini's by its first 8 characters), not a shell snapshot.
            .filter(|p| {
                p.file_name().is_some_and(|name| {
                    let name = name.to_string_lossy();
                    name.ends_with(&format!("{session}.jsonl"))
                        || name.ends_with(&format!("-{}.jsonl", &session[..8]))
                }) && !p.to_string_lossy().contains("/shell_snapshots/")
            })
            .count()
    };
    let everywhere: Vec<_> = walk(world.root())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&session[..8]))
        .collect();
    // OpenCode keeps it in its database: a row there.
    let in_database = |home: &Path| {
        let db = home.join(".local/share/opencode/opencode.db");
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|db| {
                db.query_row(
                    "SELECT count(*) FROM session WHERE id = ?1",
                    [&session],
                    |row| row.get::<_, i64>(0),
                )
            })
            .unwrap_or(0) as usize
    };
    let found = |dir: &Path| found(dir) + in_database(&dir.join("home"));
    assert_eq!(
        (found(&dir_a) > 0, found(&dir_b) > 0),
        (true, true),
        "{status:#}\n{everywhere:#?}"
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Sends `signal` (`-STOP`) to `pid` alone.
fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn a_round_is_on_the_remote_once_it_ended_though_its_worker_never_looked_again() {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let (world, served, bare) =
        world_with_remote("sleep 2; cat > prompt.txt; echo line >> work.txt; echo 'DONE: ok'");
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    submit_one(&world, store, &url, "t1", "do t1");
    let (host_a, host_b) = (host(&world, "a"), host(&world, "b"));
    let a = worker(&world, store, &host_a, "a");
    assert!(
        wait_until(Duration::from_secs(60), || tasks(&world, store)
            .iter()
            .all(|t| t["last_status"] == "running")),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    // The worker stops for good while its round runs on (a worker killed, upgraded or
    // wedged): nobody looks at the round after its host recorded its end.
    signal(a.child.id(), "-STOP");
    assert!(
        wait_until(Duration::from_secs(60), || all_done_after(&world, store, 1)),
        "{:#?}",
        tasks(&world, store)
    );
    // Recorded done: its work is on the remote already, not on a host nobody reaches.
    assert_eq!(
        git_at(&bare, &["show", "refs/ganger/t1/round-1:work.txt"]).as_deref(),
        Some("line")
    );
    assert!(git_at(&bare, &["rev-parse", "refs/heads/agent/t1"]).is_some());
    drop(a);
    // The next round, on another host, goes on from that work, and loses no round's.
    ganger(
        &world,
        Some(store),
        &["fix", "t1", "--queue", "--message", "once more"],
    )
    .expect_code(0);
    let b = worker(&world, store, &host_b, "b");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 2
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        b.log_text()
    );
    assert_eq!(
        shown_on_remote(&bare, "refs/ganger/t1/round-2:work.txt").as_deref(),
        Some("line\nline")
    );
    let prompt = git_at(&bare, &["show", "refs/ganger/t1/round-2:prompt.txt"]).unwrap();
    assert!(
        prompt.contains("ran on another host") && !prompt.contains("went away"),
        "{prompt}"
    );
}

/// `ganger worker --metrics` counts a finished round whose work its fleet's remote refuses
/// for now (a pre-receive hook, as a full disk or a protected branch would) as a push
/// pending: 1 while the remote refuses it and the worker tries again, 0 once the remote takes
/// it and the round's item ends, its work there.
#[test]
fn a_round_whose_push_the_remote_refuses_is_a_push_pending_until_it_goes() {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let (world, served, bare) = world_with_remote("echo line >> work.txt; echo 'DONE: ok'");
    let refuse = world.root().join("refuse-pushes");
    std::fs::write(&refuse, "").unwrap();
    let hook = bare.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nif test -e '{}'; then echo 'refused for now' >&2; exit 1; fi\n",
            refuse.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    submit_one(&world, store, &url, "t1", "do t1");
    let host_a = host(&world, "a");
    let a = worker_with_metrics(&world, store, &host_a, "a");
    let mut base = None;
    assert!(
        wait_until(Duration::from_secs(60), || {
            base = a.log_text().lines().find_map(|line| {
                let (_, at) = line.split_once("metrics at ")?;
                Some(at.trim().to_owned())
            });
            base.is_some()
        }),
        "{}",
        a.log_text()
    );
    let metrics = base.unwrap();
    // A scrape whose store figures took too long (a loaded machine) leaves them out: not yet.
    let pending = || {
        crate::metrics::samples(&crate::metrics::get(&metrics).1)
            .get("ganger_pushes_pending")
            .copied()
    };
    assert!(
        wait_until(Duration::from_secs(120), || pending() == Some(1.0)),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    let task = &tasks(&world, store)[0];
    assert_eq!(task["last_status"], "done", "{task:#}");
    assert_eq!(task["queue"], "delivered", "{task:#}");
    assert!(git_at(&bare, &["rev-parse", "refs/heads/agent/t1"]).is_none());

    std::fs::remove_file(&refuse).unwrap();
    assert!(
        wait_until(
            Duration::from_secs(120),
            || tasks(&world, store)[0]["queue"] == "ended"
        ),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    assert!(
        wait_until(Duration::from_secs(30), || pending() == Some(0.0)),
        "{:?}",
        pending()
    );
    assert_eq!(
        git_at(&bare, &["show", "refs/ganger/t1/round-1:work.txt"]).as_deref(),
        Some("line")
    );
}

/// `ganger worker --metrics 127.0.0.1:0` run in `host`, both its streams in its log.
#[expect(
    clippy::disallowed_methods,
    reason = "the worker is ganger itself, run in the background as a user runs it"
)]
fn worker_with_metrics(world: &World, store: &str, host: &Path, name: &str) -> Background {
    let log = world.root().join(format!("worker-{name}.log"));
    let host_text = host.to_string_lossy().into_owned();
    let mut command = world.command(&[
        "-C",
        &host_text,
        "worker",
        "--name",
        name,
        "--metrics",
        "127.0.0.1:0",
    ]);
    command.env("GANGER_STORE", store);
    let file = std::fs::File::create(&log).unwrap();
    let child = command
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    Background { child, log }
}

#[test]
fn a_fleet_remote_is_refused_without_a_shared_store_or_with_a_password() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let file = world.root().join("f.toml");
    let fleet = |remote: &str| {
        std::fs::write(
            &file,
            format!("remote = \"{remote}\"\n[[task]]\nslug = \"t1\"\nmessage = \"do it\"\n"),
        )
        .unwrap();
        ganger(&world, None, &["fleet", "submit", &file.to_string_lossy()])
    };
    let secret = "hunter2-not-to-be-seen";
    let run = fleet(&format!("https://me:{secret}@git.example.invalid/app.git"));
    run.expect_code(2);
    assert!(run.stderr.contains("password"), "{}", run.stderr);
    assert!(!run.stderr.contains(secret) && !run.stdout.contains(secret));
    let run = fleet("/srv/git/app.git");
    run.expect_code(2);
    assert!(run.stderr.contains("store"), "{}", run.stderr);
    // With a store every worker shares: a token as the URL's user name (GitHub's documented
    // form), an encoded colon, a token in the query, and git's remote helpers are refused as
    // bad input, before git is asked anything, the token echoed nowhere.
    if let Some(db) = PgDatabase::new() {
        let with_store = |remote: &str| {
            std::fs::write(
                &file,
                format!("remote = \"{remote}\"\n[[task]]\nslug = \"t1\"\nmessage = \"do it\"\n"),
            )
            .unwrap();
            ganger(
                &world,
                Some(&db.url),
                &["fleet", "submit", &file.to_string_lossy()],
            )
        };
        let touched = world.root().join("touched-by-ext");
        for remote in [
            format!("https://ghp_{secret}@git.example.invalid/app.git"),
            format!("https://user%3A{secret}@git.example.invalid/app.git"),
            format!("https://git.example.invalid/app.git?access_token={secret}"),
            format!("ext::sh -c touch% {}", touched.display()),
            "fd::17".to_owned(),
            "foo::bar".to_owned(),
        ] {
            let run = with_store(&remote);
            run.expect_code(2);
            assert!(!run.stderr.contains(secret) && !run.stdout.contains(secret));
        }
        assert!(!touched.exists(), "git ran ext::'s command");
        let status = ganger(&world, Some(&db.url), &["fleet", "status", "--json"]);
        assert!(!status.stdout.contains("\"t1\""), "{}", status.stdout);
    }
    // Nothing was queued by either.
    let status = ganger(&world, None, &["fleet", "status", "--json"]);
    assert!(
        !status.stdout.contains("\"t1\""),
        "{}{}",
        status.stdout,
        status.stderr
    );
}

#[test]
fn a_fleet_remote_that_accepts_and_never_answers_is_refused_with_its_cause() {
    let Some(db) = PgDatabase::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let port = silent_server(std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    let remote = format!("git://127.0.0.1:{port}/app.git");
    let file = world.root().join("silent.toml");
    std::fs::write(
        &file,
        format!("remote = \"{remote}\"\n[[task]]\nslug = \"t1\"\nmessage = \"do it\"\n"),
    )
    .unwrap();
    let mut command = world.command(&["fleet", "submit", &file.to_string_lossy()]);
    command
        .env("GANGER_STORE", &db.url)
        .env("GANGER_REMOTE_SILENCE", "2");
    let (run, took) = ganger_test_support::Run::within(command, Duration::from_secs(60));
    assert_eq!(run.code, 70, "after {took:?}: {}{}", run.stdout, run.stderr);
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert!(
        run.stderr.contains(&remote) && run.stderr.contains("silent"),
        "{}",
        run.stderr
    );
}

/// A worker in a clone of the world's repository (so that it can run a local start too), its
/// remote's silence limit `silence` seconds.
#[expect(
    clippy::disallowed_methods,
    reason = "the worker is ganger itself, run in the background as a user runs it"
)]
fn worker_in_clone(world: &World, store: &str, name: &str, silence: &str) -> Background {
    let dir = world.root().join(format!("clone-{name}"));
    world.git_in(
        world.root(),
        &[
            "clone",
            "-q",
            &world.repo.to_string_lossy(),
            &dir.to_string_lossy(),
        ],
    );
    let log = world.root().join(format!("worker-{name}.log"));
    let dir_text = dir.to_string_lossy();
    let mut command =
        world.command(&["-C", &dir_text, "worker", "--name", name, "--capacity", "1"]);
    command
        .env("GANGER_STORE", store)
        .env("GANGER_REMOTE_SILENCE", silence);
    let child = command
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Background { child, log }
}

#[test]
fn a_remote_gone_silent_mid_fleet_ends_the_round_with_its_cause_and_holds_no_other_delivery() {
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let (world, served, _bare) =
        world_with_remote("sleep 3; cat > prompt.txt; echo line >> work.txt; echo 'DONE: ok'");
    let (daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    // Two rounds on the remote, one at a time: t2 is delivered (its clone fetched) only
    // once the remote is silent.
    submit_fleet(&world, store, &url, &["t1", "t2"]);
    let worker = worker_in_clone(&world, store, "w", "2");
    assert!(
        wait_until(Duration::from_secs(60), || tasks(&world, store)
            .iter()
            .any(|t| t["last_status"] == "running")),
        "{:#?}\n{}",
        tasks(&world, store),
        worker.log_text()
    );
    // The remote goes silent while the round runs: its daemon stops, and the port still
    // accepts connections that never get an answer.
    drop(daemon);
    silent_server(std::net::TcpListener::bind(("127.0.0.1", port)).unwrap());
    // A local start queued meanwhile is delivered by the same worker, after t2 whose fetch
    // meets the silent remote: the remote's work is on its own lane, off the loop that
    // delivers everything else.
    ganger(
        &world,
        Some(store),
        &["start", "local1", "--queue", "--message", "local work"],
    )
    .expect_code(0);
    // The round's host gives its push up within its patience and records the round, naming
    // the silent remote, instead of holding it running with its lease renewed.
    let ended = |slug: &str| {
        let status = ganger(&world, Some(store), &["status", slug, "--json"]);
        (status.code == 0 && status.json()["status"] != "running").then(|| status.json())
    };
    let mut t1 = None;
    assert!(
        wait_until(Duration::from_secs(120), || {
            t1 = ended("t1");
            t1.is_some()
        }),
        "t1 still running:\n{}",
        worker.log_text()
    );
    let t1 = t1.unwrap();
    assert_eq!(t1["status"], "done", "{t1:#}");
    let reason = t1["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("not on the remote") && reason.contains("silent"),
        "{t1:#}"
    );
    let mut local = None;
    assert!(
        wait_until(Duration::from_secs(60), || {
            local = ended("local1");
            local.is_some()
        }),
        "the local start was not delivered:\n{}",
        worker.log_text()
    );
    assert_eq!(local.unwrap()["status"], "done", "{}", worker.log_text());
}

/// A world whose agent runs `script`, its configuration committed, and a bare clone of it in
/// `served/app.git` to serve as the remote.
pub(crate) fn world_with_remote(script: &str) -> (World, PathBuf, PathBuf) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(script, "", "");
    serving(world)
}

/// `world` with its configuration committed, and a bare clone of it in `served/app.git`.
pub(crate) fn serving(world: World) -> (World, PathBuf, PathBuf) {
    world.git(&["add", "ganger.toml"]);
    world.git(&["commit", "-q", "-m", "ganger's configuration"]);
    let served = world.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let bare = served.join("app.git");
    world.git_in(
        world.root(),
        &[
            "clone",
            "-q",
            "--bare",
            &world.repo.to_string_lossy(),
            &bare.to_string_lossy(),
        ],
    );
    (world, served, bare)
}

/// `ganger worker` in `host`'s namespace, working in `dir`, its output (both streams) kept.
#[expect(
    clippy::disallowed_methods,
    reason = "the worker is ganger itself, run in the background on a test host"
)]
fn worker_on(world: &World, host: &TestHost, store: &str, dir: &Path, name: &str) -> Background {
    let log = world.root().join(format!("worker-{name}.log"));
    let mut command = host.command(world.ganger_path());
    command.args([
        "-C",
        &dir.to_string_lossy(),
        "worker",
        "--name",
        name,
        "--capacity",
        "2",
    ]);
    world.env(&mut command);
    command.env("GANGER_STORE", store);
    let file = std::fs::File::create(&log).unwrap();
    let child = command
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    Background { child, log }
}

/// Per task, the status of each of its rounds, in order, from the store itself.
fn rounds_by_task(store: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut client = postgres::Client::connect(store, postgres::NoTls).unwrap();
    let mut by_task = std::collections::BTreeMap::<String, Vec<String>>::new();
    for row in client
        .query(
            "SELECT t.slug, r.status FROM rounds r JOIN tasks t ON t.id = r.task_id \
             ORDER BY t.slug, r.number",
            &[],
        )
        .unwrap()
    {
        by_task.entry(row.get(0)).or_default().push(row.get(1));
    }
    by_task
}

#[test]
fn a_fleet_drains_across_three_hosts_through_a_death_and_a_cut_link_each_round_once() {
    let Some(hosts) = TestHosts::new(3) else {
        return;
    };
    let Some(cluster) = PrivateCluster::start("ganger_hosts") else {
        return;
    };
    cluster.listen_also(&[&hosts.service], &hosts.network);
    // The database as every host reaches it, cut connections noticed within seconds.
    let store = format!(
        "{}?tcp_user_timeout=5&connect_timeout=5",
        cluster
            .url
            .replace("@127.0.0.1:", &format!("@{}:", hosts.service))
    );
    let (world, served, bare) =
        world_with_remote("cat > prompt.txt; sleep 2; echo line >> work.txt; echo 'DONE: ok'");
    let (_daemon, port) = serve_git(&world, &served, &[&hosts.service]);
    let remote = format!("git://{}:{port}/app.git", hosts.service);
    let slugs: Vec<String> = (1..=30).map(|i| format!("t{i:02}")).collect();
    let mut text = format!("remote = \"{remote}\"\n");
    for slug in &slugs {
        text.push_str(&format!(
            "[[task]]\nslug = \"{slug}\"\nmessage = \"do {slug}\"\n"
        ));
    }
    let file = world.root().join("f.toml");
    std::fs::write(&file, text).unwrap();
    ganger(
        &world,
        Some(&store),
        &["fleet", "submit", &file.to_string_lossy()],
    )
    .expect_code(0);
    let dirs: Vec<PathBuf> = ["1", "2", "3"].iter().map(|n| host(&world, n)).collect();
    eprintln!("hosts' world: {}", world.root().display());
    let mut workers: Vec<Background> = (0..3)
        .map(|i| {
            worker_on(
                &world,
                hosts.host(i),
                &store,
                &dirs[i],
                &format!("w{}", i + 1),
            )
        })
        .collect();
    assert!(
        wait_until(Duration::from_secs(120), || workers[0].started().len() >= 2
            && !workers[1].started().is_empty()),
        "{}\n{}",
        workers[0].log_text(),
        workers[1].log_text()
    );
    // Host 1 dies mid-round: its worker, round hosts and agents, at once.
    hosts.host(0).kill_all();
    // Host 2 is cut off for longer than a lease lasts, then comes back.
    hosts.host(1).cut();
    std::thread::sleep(Duration::from_secs(16));
    hosts.host(1).restore();
    assert!(
        wait_until(Duration::from_secs(300), || all_done_after_any(
            &world, &store
        )),
        "{:#?}\n{}\n{}",
        tasks(&world, &store),
        workers[1].log_text(),
        workers[2].log_text()
    );
    // Every task's work is done exactly once: one `done` round, the rounds before it cut
    // short where a host died or was cut off, none after.
    let by_task = rounds_by_task(&cluster.url);
    assert_eq!(by_task.len(), 30, "{by_task:#?}");
    let mut moved = 0;
    for (slug, statuses) in &by_task {
        assert_eq!(
            statuses.last().map(String::as_str),
            Some("done"),
            "{slug}: {statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| *s == "done").count(),
            1,
            "{slug}: {statuses:?}"
        );
        // In git, the done round's work once: the lost rounds' work is not there twice.
        let done = statuses.len();
        let snapshot = format!("refs/ganger/{slug}/round-{done}");
        let shown = shown_on_remote(&bare, &format!("{snapshot}:work.txt"));
        assert_eq!(shown.as_deref(), Some("line"), "{slug}: {statuses:?}");
        let prompt = git_at(&bare, &["show", &format!("{snapshot}:prompt.txt")]).unwrap();
        if done > 1 {
            // It continued on another host, with the story so far.
            assert!(prompt.contains("ran on another host"), "{slug}: {prompt}");
            assert!(prompt.contains(&format!("> do {slug}")), "{slug}: {prompt}");
            moved += 1;
        }
    }
    assert!(moved >= 2, "no task moved between hosts: {by_task:#?}");
    // The host that was cut off found its claim gone and stopped (exit 70); its agents were
    // stopped by their round hosts, whose writes the store refused.
    assert!(
        wait_until(Duration::from_secs(60), || workers[1]
            .child
            .try_wait()
            .unwrap()
            .is_some()),
        "{}",
        workers[1].log_text()
    );
    assert_eq!(
        workers[1].child.try_wait().unwrap().and_then(|s| s.code()),
        Some(70),
        "{}",
        workers[1].log_text()
    );
    assert!(
        workers[1].log_text().contains("ran out"),
        "{}",
        workers[1].log_text()
    );
    // No agent is left in any namespace.
    let agents_left = || {
        hosts
            .all()
            .iter()
            .flat_map(TestHost::processes)
            .filter(|(_, line)| line.contains("prompt.txt") || line.starts_with("sleep"))
            .collect::<Vec<_>>()
    };
    assert!(
        wait_until(Duration::from_secs(30), || agents_left().is_empty()),
        "{:?}",
        agents_left()
    );
    drop(workers.pop());
}

/// Whether every task of fleet `f` has ended `done`, after however many rounds.
fn all_done_after_any(world: &World, store: &str) -> bool {
    tasks(world, store)
        .iter()
        .all(|t| t["last_status"] == "done" && t["queue"] == "ended")
}
