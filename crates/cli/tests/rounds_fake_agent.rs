//! The round host's behaviour, fast: a stand-in `opencode` script (test-support's
//! `fake-opencode.sh`) plays the agent, so that limits, signals, leftovers and odd streams can
//! be tested in seconds. The real OpenCode is in `e2e_opencode.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, living_pids_with_env, wait_until};
use std::time::{Duration, Instant};

fn world(defaults: &str, extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent(defaults, extra);
    world
}

/// The program `ganger.toml` (its text `toml`) gives as `[agents.opencode] command`: the
/// world's stand-in.
fn opencode_command(toml: &str) -> String {
    toml.lines()
        .skip_while(|line| *line != "[agents.opencode]")
        .find_map(|line| line.strip_prefix("command = "))
        .map(|quoted| serde_json::from_str::<String>(quoted).unwrap())
        .unwrap()
}

fn marker(report: &serde_json::Value) -> String {
    format!("GANGER_ROUND={}", report["token"].as_str().unwrap())
}

#[test]
fn the_agent_works_in_the_worktree_and_the_report_says_what_it_did() {
    let world = world("", "");
    let run = world.ganger(&["start", "quick", "--message", "hello there"]);
    run.expect_code(0);
    // OpenCode works in $PWD: the stand-in's file lands in the worktree.
    assert_eq!(
        std::fs::read_to_string(world.worktree("quick").join("fake.txt")).unwrap(),
        "hello there\n"
    );
    assert!(!world.repo.join("fake.txt").exists());
    for expected in [
        "task: quick, round 1 (start), branch agent/quick",
        "status: done, exit 0, finish stop",
        "events: step_finish 2, step_start 2, text 1, tool_use 1",
        "cost: $0.0020, tokens 200 in / 20 out",
        "  Done: hello there (title quick)",
        "changed in this round: 1 path\n  A fake.txt",
    ] {
        assert!(
            run.stdout.contains(expected),
            "missing {expected:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_round_past_its_wall_clock_limit_is_stopped_as_timed_out() {
    let world = world("", "");
    let started = Instant::now();
    let run = world.ganger(&[
        "start",
        "slow",
        "--message",
        "sleep 60",
        "--timeout",
        "2s",
        "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "timed-out");
    assert_eq!(report["reason"], "stopped at the wall-clock limit of 2s");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(living_pids_with_env(&marker(&report)).is_empty());
}

#[test]
fn a_silent_but_busy_round_is_not_stalled_and_a_silent_idle_one_is() {
    let world = world("", "");
    let busy = world.ganger(&[
        "start",
        "busy",
        "--message",
        "busy 8",
        "--stall",
        "4s",
        "--json",
    ]);
    busy.expect_code(0);
    assert_eq!(busy.json()["status"], "done");
    let idle = world.ganger(&[
        "start",
        "idle",
        "--message",
        "sleep 60",
        "--stall",
        "4s",
        "--json",
    ]);
    idle.expect_code(1);
    let report = idle.json();
    assert_eq!(report["status"], "stalled");
    assert!(
        report["reason"].as_str().unwrap().contains("4s"),
        "{report:#}"
    );
}

#[test]
fn children_the_agent_leaves_behind_are_stopped_with_or_without_a_cgroup() {
    for (slug, cgroup) in [("with-cgroup", "true"), ("without-cgroup", "false")] {
        let world = world("", &format!("[sandbox]\ncgroup = {cgroup}\n"));
        let run = world.ganger(&["start", slug, "--message", "detach-child", "--json"]);
        run.expect_code(0);
        let report = run.json();
        assert_eq!(report["status"], "done");
        assert!(
            living_pids_with_env(&marker(&report)).is_empty(),
            "{slug}: a child survived"
        );
    }
}

#[test]
fn quiet_failures_are_failures_and_odd_lines_are_counted_not_fatal() {
    let world = world("", "");
    let silent = world.ganger(&["start", "silent", "--message", "silent-exit", "--json"]);
    silent.expect_code(1);
    assert_eq!(
        silent.json()["reason"],
        "OpenCode exited 0 without printing any event"
    );

    let odd = world.ganger(&["start", "odd", "--message", "garbage", "--json"]);
    odd.expect_code(0);
    let report = odd.json();
    assert_eq!(report["malformed_lines"], 1);
    assert_eq!(report["unknown_lines"], 1);
    let raw = std::fs::read_to_string(world.repo.join(".ganger/tasks/odd/round-1.jsonl")).unwrap();
    assert!(
        raw.contains("this is not JSON\n"),
        "kept byte for byte: {raw}"
    );

    let failed = world.ganger(&["start", "failing", "--message", "fail", "--json"]);
    failed.expect_code(1);
    let report = failed.json();
    assert_eq!(report["status"], "failed");
    assert!(
        report["reason"].as_str().unwrap().contains("fake failure"),
        "{report:#}"
    );
    assert_eq!(
        report["stderr_tail"],
        serde_json::json!(["Error: fake failure"])
    );
}

#[test]
fn sigint_to_a_foreground_round_cancels_it_and_says_why() {
    let world = world("", "");
    #[expect(
        clippy::disallowed_methods,
        reason = "the test signals a running ganger"
    )]
    let child = world
        .command(&["start", "interrupted", "--message", "sleep 60", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(20), || world
        .worktree("interrupted")
        .join("fake.txt")
        .exists()));
    let pid = child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["status"], "cancelled");
    assert_eq!(report["reason"], "stopped by SIGINT to its host");
    assert!(living_pids_with_env(&marker(&report)).is_empty());
}

#[test]
fn a_detached_round_is_followed_by_status_and_log_until_it_ends() {
    let world = world("", "");
    world
        .ganger(&["start", "bg", "--message", "sleep 3", "--detach"])
        .expect_code(0);
    let running = world.ganger(&["status", "bg", "--json"]).json();
    assert_eq!(running["status"], "running");
    let followed = world.ganger(&["log", "bg", "--follow"]);
    followed.expect_code(0);
    let lines: Vec<&str> = followed.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", followed.stdout);
    assert!(
        lines[5].contains("step_finish: step finished (stop)"),
        "{}",
        followed.stdout
    );
    // log --follow returned because the round ended.
    let done = world.ganger(&["status", "bg", "--json"]).json();
    assert_eq!(done["status"], "done");
    let raw = world.ganger(&["log", "bg", "--raw"]);
    assert_eq!(
        raw.stdout,
        std::fs::read_to_string(world.repo.join(".ganger/tasks/bg/round-1.jsonl")).unwrap()
    );
}

#[test]
fn an_existing_worktree_can_be_given_to_a_task() {
    let world = world("", "");
    let path = world.root().join("mine");
    world.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "mine",
        path.to_str().unwrap(),
    ]);
    let run = world.ganger(&[
        "start",
        "given",
        "--worktree",
        path.to_str().unwrap(),
        "--message",
        "in mine",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["branch"], "mine");
    assert!(path.join("fake.txt").is_file());
    // The round's before-state is a snapshot, since ganger did not make this worktree.
    assert!(report["snapshot_before"].is_string(), "{report:#}");
    world
        .ganger(&["fix", "given", "--message", "again"])
        .expect_code(0);
    assert_eq!(
        std::fs::read_to_string(path.join("fake.txt")).unwrap(),
        "in mine\nagain\n"
    );
}

#[test]
fn init_makes_the_state_directory_keeps_it_out_of_git_and_finds_the_agent() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let run = world.ganger(&["init", "--json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["schema"], "ganger.init/1");
    assert_eq!(
        (
            report["created_state_dir"].as_bool(),
            report["wrote_config"].as_bool()
        ),
        (Some(true), Some(true))
    );
    assert!(world.repo.join(".ganger").is_dir());
    let template = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    assert!(
        template.contains("[defaults]") && template.contains("timeout = \"60m\""),
        "{template}"
    );
    let exclude = std::fs::read_to_string(world.repo.join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|l| l == "/.ganger/"), "{exclude}");
    assert_eq!(world.git(&["status", "--porcelain"]), "?? ganger.toml");
    // A second init leaves the configuration and the exclude line alone.
    world.use_fake_agent("", "");
    let again = world.ganger(&["init", "--json"]).json();
    assert_eq!(again["wrote_config"], false);
    let opencode = &again["agents"][0];
    assert_eq!(
        (opencode["name"].as_str(), opencode["version"].as_str()),
        (Some("opencode"), Some("1.18.33"))
    );
    let exclude = std::fs::read_to_string(world.repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.lines().filter(|l| l.contains("ganger")).count(), 1);
}

/// The stand-in speaks no ACP (it exits at `acp`): kept warm, its warm agent never starts.
#[test]
fn a_warm_agent_that_would_not_start_is_not_waited_for_again() {
    let world = world("", "");
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    assert!(toml.contains("[warm]\ndefault = false\n"), "{toml}");
    world.write(
        "ganger.toml",
        &toml.replace("[warm]\ndefault = false\n", "[warm]\ndefault = true\n"),
    );
    let stderr = |round: u32| {
        std::fs::read_to_string(
            world
                .repo
                .join(format!(".ganger/tasks/w/round-{round}.err")),
        )
        .unwrap()
    };
    world
        .ganger(&["start", "w", "--message", "hello"])
        .expect_code(0);
    assert!(
        stderr(1).contains("so it runs cold: the warm host did not start"),
        "{}",
        stderr(1)
    );
    world
        .ganger(&["fix", "w", "--message", "again"])
        .expect_code(0);
    assert!(
        stderr(2).contains("did not start for round 1 with the same settings"),
        "{}",
        stderr(2)
    );
    // `warm stop` forgets it: the next round tries again.
    world.ganger(&["warm", "stop", "w"]).expect_code(0);
    world
        .ganger(&["fix", "w", "--message", "once more"])
        .expect_code(0);
    assert!(
        stderr(3).contains("so it runs cold: the warm host did not start"),
        "{}",
        stderr(3)
    );
    assert_eq!(
        std::fs::read_to_string(world.worktree("w").join("fake.txt")).unwrap(),
        "hello\nagain\nonce more\n"
    );
}

/// Warm by the agent's own default, an agent that exits at its warm greeting is tried once
/// per repository, not once per task: the next tasks run cold at once, until its program
/// changes or `ganger warm stop`; a task that asks for warm (`--warm`) tries it anyway.
#[test]
fn an_agent_that_does_not_speak_its_warm_protocol_is_tried_once_per_repository() {
    let world = world("", "");
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    world.write(
        "ganger.toml",
        &toml.replace("[warm]\ndefault = false\n", ""),
    );
    let stderr = |slug: &str| {
        std::fs::read_to_string(world.repo.join(format!(".ganger/tasks/{slug}/round-1.err")))
            .unwrap()
    };
    let tried = "so it runs cold: the warm host did not start";
    // The reason is how the greeting failed: the stand-in exits at `acp` before or after
    // ganger's `initialize` reaches it (its stdin closed, or it exited while ganger waited).
    let remembered = "did not speak its warm protocol for task a round 1 (the warm agent";
    let start = |slug: &str, extra: &[&str]| {
        let mut args = vec!["start", slug, "--message", "hello"];
        args.extend_from_slice(extra);
        world.ganger(&args).expect_code(0);
        stderr(slug)
    };
    let first = start("a", &[]);
    assert!(first.contains(tried), "{first}");
    let second = start("b", &[]);
    assert!(second.contains(remembered), "{second}");
    // Asked for, warm is tried whatever was learnt; failing again, it is learnt again.
    let asked = start("c", &["--warm"]);
    assert!(asked.contains(tried), "{asked}");
    let after = start("d", &[]);
    assert!(
        after.contains("did not speak its warm protocol for task c round 1"),
        "{after}"
    );
    // `ganger warm stop` forgets it: the next task tries again, and it is learnt again.
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
    assert!(start("e", &[]).contains(tried));
    assert!(start("f", &[]).contains("did not speak its warm protocol for task e round 1"));
    // A changed program (an upgrade, a fixed wrapper) is tried again.
    let program = opencode_command(&toml);
    let text = std::fs::read_to_string(&program).unwrap();
    std::fs::write(&program, format!("{text}\n# changed\n")).unwrap();
    assert!(start("g", &[]).contains(tried));
    // A warm host that never served leaves no claim file behind.
    let run = world.repo.join(".ganger/run");
    let left: Vec<_> = std::fs::read_dir(&run)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("warm-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    for slug in ["a", "b", "c", "d", "e", "f", "g"] {
        assert_eq!(
            std::fs::read_to_string(world.worktree(slug).join("fake.txt")).unwrap(),
            "hello\n",
            "{slug}"
        );
    }
}

/// An agent killed by a signal at its warm greeting (here its own `kill -KILL`, as the
/// out-of-memory killer would) is not remembered as one that cannot be warm: the next task
/// tries again.
#[test]
fn an_agent_killed_at_its_warm_greeting_is_tried_again_by_the_next_task() {
    let world = world("", "");
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    let program = opencode_command(&toml);
    let killed = world.root().join("killed-at-acp");
    std::fs::write(
        &killed,
        format!("#!/bin/sh\n[ \"$1\" = acp ] && kill -KILL $$\nexec {program:?} \"$@\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&killed, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    world.write(
        "ganger.toml",
        &toml.replace("[warm]\ndefault = false\n", "").replace(
            &format!("command = {}", serde_json::to_string(&program).unwrap()),
            &format!(
                "command = {}",
                serde_json::to_string(&killed.to_string_lossy()).unwrap()
            ),
        ),
    );
    for slug in ["a", "b"] {
        world
            .ganger(&["start", slug, "--message", "hello"])
            .expect_code(0);
        let stderr =
            std::fs::read_to_string(world.repo.join(format!(".ganger/tasks/{slug}/round-1.err")))
                .unwrap();
        assert!(
            stderr.contains("so it runs cold: the warm host did not start"),
            "{slug}: {stderr}"
        );
    }
}

#[test]
fn a_model_the_agents_settings_define_is_not_looked_up_in_its_list() {
    // The stand-in lists mock/scripted and mock/other, not mock/defined: were the list asked,
    // the start would be refused as an unavailable model (exit 3).
    let world = world(
        "",
        "[agents.opencode.config.provider.mock.models.defined]\n\
         limit = { context = 128000, output = 8192 }\n",
    );
    let run = world.ganger(&["start", "own", "--message", "hi", "-m", "mock/defined"]);
    run.expect_code(0);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("model: mock/defined: available"), "{said}");
    let listed = std::fs::read_dir(world.repo.join(".ganger/cache"))
        .map(|dir| {
            dir.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("models-"))
        })
        .unwrap_or(false);
    assert!(!listed, "the model list was asked for");
    // A model the settings do not define is still checked against the list.
    let missing = world.ganger(&["start", "gone", "--message", "hi", "-m", "mock/undefined"]);
    missing.expect_code(3);
}
