//! `ganger clean` on real repositories with the stand-in agent: uncommitted work and unmerged
//! commits are kept without `--force` and removed with it, merged tasks lose their worktree
//! and branch, leftover processes and labelled containers go, `--dry-run` changes nothing,
//! and 100 cancelled rounds leave no process and, once cleaned, no worktree.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]
#![allow(
    clippy::print_stdout,
    reason = "the tests print the counts they measured, and a skip says so"
)]

use ganger_test_support::{World, living_pids_with_env, wait_until};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

/// Starts a task whose round is done; returns its report.
fn done_task(world: &World, slug: &str) -> Value {
    let run = world.ganger(&["start", slug, "--message", "hello", "--json"]);
    run.expect_code(0);
    run.json()
}

/// Commits everything in the task's worktree (the fake agent's file), on its branch.
fn commit_in_worktree(world: &World, slug: &str) {
    let worktree = world.worktree(slug);
    world.git_in(&worktree, &["add", "-A"]);
    world.git_in(&worktree, &["commit", "-q", "-m", "the agent's work"]);
}

fn clean(world: &World, args: &[&str]) -> Value {
    let mut all = vec!["clean"];
    all.extend_from_slice(args);
    all.push("--json");
    let run = world.ganger(&all);
    run.expect_code(0);
    run.json()
}

/// The one task of a clean report, by slug.
fn task<'a>(report: &'a Value, slug: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == slug)
        .unwrap_or_else(|| panic!("no {slug} in {report:#}"))
}

/// `kind name` of every entry of a list of removed or kept things.
fn listed(entries: &Value) -> Vec<String> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["kind"].as_str().unwrap(),
                e["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn branch_exists(world: &World, branch: &str) -> bool {
    !world.git(&["branch", "--list", branch]).is_empty()
}

#[test]
fn uncommitted_changes_are_kept_without_force_and_removed_with_it() {
    let world = world();
    done_task(&world, "dirty");
    let worktree = world.worktree("dirty");
    let report = clean(&world, &["dirty"]);
    let dirty = task(&report, "dirty");
    assert_eq!(dirty["removed"], serde_json::json!([]), "{report:#}");
    assert_eq!(
        dirty["kept"][0]["reason"], "1 uncommitted change (--force removes them)",
        "{report:#}"
    );
    assert_eq!(dirty["kept"][1]["reason"], "its worktree is kept");
    assert!(worktree.join("fake.txt").is_file());
    assert!(branch_exists(&world, "agent/dirty"));
    let human = world.ganger(&["clean", "dirty"]);
    human.expect_code(0);
    assert!(
        human.stdout.contains(&format!(
            "  kept worktree {}: 1 uncommitted change (--force removes them)\n",
            worktree.display()
        )),
        "{}",
        human.stdout
    );

    let forced = clean(&world, &["dirty", "--force"]);
    let dirty = task(&forced, "dirty");
    assert_eq!(
        listed(&dirty["removed"]),
        [
            format!("worktree {}", worktree.display()),
            "branch agent/dirty".to_owned()
        ],
        "{forced:#}"
    );
    assert_eq!(
        dirty["removed"][0]["detail"],
        "with 1 uncommitted change, kept in refs/ganger/dirty/cleaned"
    );
    assert!(!worktree.exists());
    assert!(!branch_exists(&world, "agent/dirty"));
    // What --force removed is kept: the worktree's files in a snapshot.
    assert_eq!(
        world.git(&["show", "refs/ganger/dirty/cleaned:fake.txt"]),
        world.git(&["show", "refs/ganger/dirty/round-1:fake.txt"])
    );
    // The record stays: status says the worktree is gone, diff reads the last snapshot.
    let list = world.ganger(&["status", "--json"]).json();
    assert_eq!(list["tasks"][0]["worktree_gone"], true, "{list:#}");
    let diff = world.ganger(&["diff", "dirty", "--stat"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("fake.txt"), "{}", diff.stdout);
}

#[test]
fn unmerged_commits_keep_the_branch_without_force_and_go_with_it() {
    let world = world();
    done_task(&world, "ahead");
    commit_in_worktree(&world, "ahead");
    let report = clean(&world, &["ahead"]);
    let ahead = task(&report, "ahead");
    assert_eq!(
        listed(&ahead["removed"]),
        [format!("worktree {}", world.worktree("ahead").display())],
        "{report:#}"
    );
    assert_eq!(listed(&ahead["kept"]), ["branch agent/ahead"]);
    assert_eq!(
        ahead["kept"][0]["reason"],
        "1 commit not in main (--force deletes them)"
    );
    assert!(!world.worktree("ahead").exists());
    assert!(branch_exists(&world, "agent/ahead"));

    let forced = clean(&world, &["ahead", "--force"]);
    let ahead = task(&forced, "ahead");
    assert_eq!(
        listed(&ahead["removed"]),
        ["branch agent/ahead"],
        "{forced:#}"
    );
    assert_eq!(
        ahead["removed"][0]["detail"],
        "with 1 commit not in main, kept in refs/ganger/ahead/branch"
    );
    assert!(!branch_exists(&world, "agent/ahead"));
    // The unmerged commit stays reachable from the task's refs.
    assert_eq!(
        world.git(&["log", "-1", "--format=%s", "refs/ganger/ahead/branch"]),
        "the agent's work"
    );
}

#[test]
fn a_merged_task_loses_its_worktree_and_branch_and_dry_run_changes_nothing() {
    let world = world();
    done_task(&world, "merged");
    commit_in_worktree(&world, "merged");
    world.git(&["merge", "-q", "--ff-only", "agent/merged"]);
    let worktree = world.worktree("merged");

    let dry = world.ganger(&["clean", "--dry-run"]);
    dry.expect_code(0);
    assert_eq!(
        dry.stdout,
        format!(
            "merged:\n  would remove worktree {}\n  would remove branch agent/merged\ndry run: nothing was changed\n",
            worktree.display()
        )
    );
    assert!(worktree.is_dir());
    assert!(branch_exists(&world, "agent/merged"));

    let run = world.ganger(&["clean"]);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        format!(
            "merged:\n  removed worktree {}\n  removed branch agent/merged\n",
            worktree.display()
        )
    );
    assert!(!worktree.exists());
    assert!(!branch_exists(&world, "agent/merged"));
    assert_eq!(world.worktree_count(), 1, "{}", world.worktrees());
    // A second clean finds nothing left.
    let again = world.ganger(&["clean"]);
    assert_eq!(again.stdout, "1 task with nothing left to clean\n");
}

#[test]
fn an_unknown_slug_exits_2_and_changes_nothing() {
    let world = world();
    done_task(&world, "known");
    let run = world.ganger(&["clean", "known", "nope", "--force"]);
    run.expect_code(2);
    assert!(
        run.stderr.starts_with("error: no task nope\n"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    assert!(world.worktree("known").is_dir());
    world.ganger(&["clean", "Bad Slug"]).expect_code(2);
}

/// Starts `setsid sleep 300` carrying the round marker `token`, as a child the round host
/// missed would; returns the child.
fn marked_sleeper(token: &str) -> std::process::Child {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays a leftover process of a round"
    )]
    Command::new("setsid")
        .args(["sleep", "300"])
        .env("GANGER_ROUND", token)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn processes_left_by_a_finished_round_are_stopped() {
    let world = world();
    let report = done_task(&world, "left");
    let token = report["token"].as_str().unwrap().to_owned();
    let marker = format!("GANGER_ROUND={token}");
    let mut sleeper = marked_sleeper(&token);
    assert!(wait_until(Duration::from_secs(5), || {
        living_pids_with_env(&marker).len() == 1
    }));
    let cleaned = clean(&world, &["left"]);
    let left = task(&cleaned, "left");
    assert_eq!(left["removed"][0]["kind"], "processes", "{cleaned:#}");
    assert_eq!(left["removed"][0]["name"], "round 1");
    assert_eq!(left["removed"][0]["detail"], "1 process");
    let _ = sleeper.wait();
    assert!(living_pids_with_env(&marker).is_empty());
}

/// The command name of a process (`/proc/PID/comm`), empty once it is gone.
fn command_name(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

#[test]
fn a_round_whose_host_was_killed_is_settled_and_its_leftovers_stopped() {
    let world = world();
    let started = world.ganger(&[
        "start",
        "killed",
        "--message",
        "sleep 300",
        "--detach",
        "--json",
    ]);
    started.expect_code(0);
    let host = started.json()["host_pid"].as_i64().unwrap();
    let status = world.ganger(&["status", "killed", "--json"]).json();
    let marker = format!("GANGER_ROUND={}", status["token"].as_str().unwrap());
    // Wait for the agent's `sleep` itself, not a count: on a loaded machine the host and the
    // agent's shell can be counted before the shell has started `sleep`, and a kill then
    // leaves nothing behind to clean.
    assert!(wait_until(Duration::from_secs(30), || {
        living_pids_with_env(&marker)
            .iter()
            .any(|pid| command_name(*pid) == "sleep")
    }));
    Command::new("kill")
        .args(["-KILL", &host.to_string()])
        .status()
        .unwrap();
    // SIGKILL is delivered asynchronously: wait until the host is gone (its agent dies with it,
    // by the parent-death signal), so that its lock is free, leaving the agent's `sleep`. A
    // zombie leader is gone only once its other threads are too: they share its descriptors,
    // and the lock is held until the last of them has exited (seen once under load).
    assert!(wait_until(Duration::from_secs(30), || {
        let stat = std::fs::read_to_string(format!("/proc/{host}/stat")).unwrap_or_default();
        let threads = std::fs::read_dir(format!("/proc/{host}/task")).map_or(0, Iterator::count);
        let gone = stat.is_empty()
            || (stat.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')) && threads <= 1);
        let left: Vec<String> = living_pids_with_env(&marker)
            .into_iter()
            .map(command_name)
            .collect();
        gone && left == ["sleep"]
    }));
    let cleaned = clean(&world, &["killed", "--force"]);
    let killed = task(&cleaned, "killed");
    assert!(killed["skipped"].is_null(), "{cleaned:#}");
    assert!(living_pids_with_env(&marker).is_empty());
    let round = world.ganger(&["status", "killed", "--json"]).json();
    assert_eq!(round["status"], "interrupted", "{round:#}");
    assert!(!world.worktree("killed").exists());
}

#[test]
fn a_task_with_a_running_round_is_skipped() {
    let world = world();
    world
        .ganger(&["start", "busy", "--message", "sleep 60", "--detach"])
        .expect_code(0);
    let report = clean(&world, &["busy", "--force"]);
    assert_eq!(
        task(&report, "busy")["skipped"],
        "round 1 is running (`ganger cancel busy` stops it)"
    );
    assert!(world.worktree("busy").is_dir());
    world.ganger(&["cancel", "busy"]).expect_code(0);
}

/// Whether Docker answers; when it does not, a test that needs it fails under CI and is
/// skipped (saying so) elsewhere.
fn docker_or_skip(name: &str) -> bool {
    let answers = Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if answers {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{name}: Docker is not available, and CI=true requires it"
    );
    println!("skipped: {name}: Docker is not available");
    false
}

fn docker(args: &[&str]) -> String {
    let output = Command::new("docker").args(args).output().unwrap();
    assert!(
        output.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A tiny image made here, without a registry: one empty file, imported from a tar.
fn tiny_image(world: &World) -> &'static str {
    const IMAGE: &str = "ganger-test/empty:1";
    let dir = world.root().join("image");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("empty"), "").unwrap();
    let tar = world.root().join("image.tar");
    let made = Command::new("tar")
        .arg("-cf")
        .arg(&tar)
        .arg("-C")
        .arg(&dir)
        .arg("empty")
        .status()
        .unwrap();
    assert!(made.success());
    docker(&["import", &tar.to_string_lossy(), IMAGE]);
    IMAGE
}

#[test]
fn labelled_containers_and_volumes_of_a_task_are_removed() {
    let name = "labelled_containers_and_volumes_of_a_task_are_removed";
    if !docker_or_skip(name) {
        return;
    }
    let world = world();
    done_task(&world, "boxed");
    let image = tiny_image(&world);
    let repo = std::fs::canonicalize(&world.repo).unwrap();
    let unique = format!(
        "ganger-test-{}-{}",
        std::process::id(),
        world.root().file_name().unwrap().to_string_lossy()
    );
    let labels = [
        "--label".to_owned(),
        "ganger.managed=1".to_owned(),
        "--label".to_owned(),
        format!("ganger.repo={}", repo.display()),
        "--label".to_owned(),
        "ganger.task=boxed".to_owned(),
    ];
    let mut create: Vec<String> = vec!["create".into(), "--name".into(), unique.clone()];
    create.extend(labels.iter().cloned());
    create.extend([image.to_owned(), "/empty".to_owned()]);
    docker(&create.iter().map(String::as_str).collect::<Vec<_>>());
    let mut volume: Vec<String> = vec!["volume".into(), "create".into()];
    volume.extend(labels.iter().cloned());
    volume.push(unique.clone());
    docker(&volume.iter().map(String::as_str).collect::<Vec<_>>());
    // Another repository's container with the same task name is not touched.
    let other = format!("{unique}-other");
    docker(&[
        "create",
        "--name",
        &other,
        "--label",
        "ganger.managed=1",
        "--label",
        "ganger.repo=/elsewhere",
        "--label",
        "ganger.task=boxed",
        image,
        "/empty",
    ]);

    let report = clean(&world, &["boxed"]);
    let boxed = task(&report, "boxed");
    let removed = listed(&boxed["removed"]);
    assert!(
        removed.contains(&format!("container {unique}")),
        "{report:#}"
    );
    assert!(removed.contains(&format!("volume {unique}")), "{report:#}");
    let filter = format!("label=ganger.repo={}", repo.display());
    assert_eq!(docker(&["ps", "-aq", "--filter", &filter]), "");
    assert_eq!(docker(&["volume", "ls", "-q", "--filter", &filter]), "");
    assert_eq!(
        docker(&["ps", "-aq", "--filter", &format!("name={other}")])
            .lines()
            .count(),
        1
    );
    docker(&["rm", "-f", &other]);
}

/// Every live process that carries any ganger round marker of `tokens`.
fn marked(tokens: &BTreeSet<String>) -> usize {
    tokens
        .iter()
        .map(|token| living_pids_with_env(&format!("GANGER_ROUND={token}")).len())
        .sum()
}

#[test]
fn a_hundred_cancelled_rounds_leave_no_process_and_no_worktree_after_clean() {
    const ROUNDS: usize = 100;
    // One at a time: concurrent `git worktree add` in one repository can fail in git itself
    // (it reads another's half-written .git/worktrees entry).
    const THREADS: usize = 1;
    let world = world();
    // The state database is made first: concurrent first opens race to set WAL mode.
    world.ganger(&["init"]).expect_code(0);
    let started = Instant::now();
    let tokens: BTreeSet<String> = std::thread::scope(|scope| {
        let world = &world;
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                scope.spawn(move || {
                    let mut tokens = Vec::new();
                    for n in (thread..ROUNDS).step_by(THREADS) {
                        let slug = format!("c{n}");
                        world
                            .ganger(&["start", &slug, "--message", "sleep 60", "--detach"])
                            .expect_code(0);
                        // Cancelled once its agent runs, so that there is something to stop.
                        let running = world.ganger(&["status", &slug, "--json"]).json();
                        let marker = format!("GANGER_ROUND={}", running["token"].as_str().unwrap());
                        assert!(wait_until(Duration::from_secs(10), || {
                            !living_pids_with_env(&marker).is_empty()
                        }));
                        let cancelled = world.ganger(&["cancel", &slug, "--json"]);
                        cancelled.expect_code(0);
                        let report = cancelled.json();
                        assert_eq!(report["status"], "cancelled", "{report:#}");
                        tokens.push(report["token"].as_str().unwrap().to_owned());
                    }
                    tokens
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(tokens.len(), ROUNDS);
    let processes = marked(&tokens);
    println!(
        "{ROUNDS} rounds started and cancelled in {:.1}s; processes left: {processes}",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(processes, 0);

    // A round cancelled after the fake agent wrote its file keeps its worktree without
    // --force; one cancelled before has nothing to lose, and its worktree goes.
    let first = clean(&world, &[]);
    let tasks = first["tasks"].as_array().unwrap();
    let kept = tasks
        .iter()
        .filter(|t| {
            t["kept"][0]["kind"] == "worktree"
                && t["kept"][0]["reason"]
                    .as_str()
                    .unwrap()
                    .ends_with("uncommitted change (--force removes them)")
        })
        .count();
    let removed = tasks
        .iter()
        .filter(|t| t["removed"][0]["kind"] == "worktree" && t["kept"] == serde_json::json!([]))
        .count();
    println!("clean without --force: {removed} worktrees removed, {kept} kept");
    assert_eq!(kept + removed, ROUNDS, "{first:#}");
    let cleaned = clean(&world, &["--force"]);
    assert_eq!(cleaned["tasks"].as_array().unwrap().len(), ROUNDS);
    let worktrees = world.worktree_count() - 1;
    let branches = world.git(&["branch", "--list", "agent/*"]).lines().count();
    let dirs = std::fs::read_dir(world.root())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("repo-agent-"))
        .count();
    let processes = marked(&tokens);
    println!(
        "after clean --force: worktrees {worktrees}, worktree directories {dirs}, branches {branches}, processes {processes}"
    );
    assert_eq!((worktrees, dirs, branches, processes), (0, 0, 0, 0));
}
