//! Bad input: every mistake gets one clear error line and exit 2, and nothing is created or
//! lost. None of these needs an agent to run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

/// Runs ganger expecting exit 2 with an error line containing `needle`, and nothing made.
#[track_caller]
fn refused(world: &World, args: &[&str], needle: &str) {
    let run = world.ganger(args);
    run.expect_code(2);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{args:?}: {}", run.stderr);
    assert!(
        first.contains(needle),
        "{args:?}: expected {needle:?} in {first:?}"
    );
    assert!(
        run.stderr.lines().count() <= 2,
        "{args:?}: more than an error and a hint:\n{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
}

fn nothing_made(world: &World) {
    assert!(!world.repo.join(".ganger").exists(), "state was made");
    assert_eq!(
        world.git(&["branch", "--list", "agent/*"]),
        "",
        "a branch was made"
    );
    let others: Vec<_> = std::fs::read_dir(world.root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("repo-agent"))
        .collect();
    assert!(others.is_empty(), "worktrees were made: {others:?}");
}

#[test]
fn bad_start_arguments_are_refused_before_anything_is_made() {
    let world = world();
    let big = world.root().join("big.md");
    std::fs::write(&big, "x".repeat(100_001)).unwrap();
    let big = big.to_str().unwrap().to_owned();
    let other = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let foreign = other.root().join("foreign");
    other.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "f",
        foreign.to_str().unwrap(),
    ]);
    let repo = world.repo.to_str().unwrap().to_owned();
    let long = "x".repeat(49);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["start", "Bad", "--message", "x"],
            "invalid slug \"Bad\"",
        ),
        (vec!["start", "../escape", "--message", "x"], "invalid slug"),
        (vec!["start", "a/b", "--message", "x"], "invalid slug"),
        (vec!["start", &long, "--message", "x"], "at most 48"),
        (
            vec!["start", "t", "--message", ""],
            "the task text is empty",
        ),
        (
            vec!["start", "t", "--message", " \n\t"],
            "the task text is empty",
        ),
        (
            vec!["start", "t", "--brief", &big],
            "over the limit of 100000",
        ),
        (
            vec!["start", "t", "--brief", "/nonexistent/brief.md"],
            "cannot read the brief /nonexistent/brief.md",
        ),
        (vec!["start", "t"], "--brief"),
        (
            vec!["start", "t", "--message", "x", "--brief", "f"],
            "cannot be used with",
        ),
        (
            vec!["start", "t", "--message", "x", "--det"],
            "unexpected argument '--det'",
        ),
        (
            vec!["start", "t", "--message", "x", "--agent", "nope"],
            "unknown agent \"nope\"",
        ),
        (
            vec!["start", "t", "--message", "x", "--key", "mock"],
            "PROVIDER=FILE",
        ),
        (
            vec![
                "start",
                "t",
                "--message",
                "x",
                "--key",
                "mock=/nonexistent/key",
            ],
            "cannot read the key file for mock",
        ),
        (
            vec!["start", "t", "--message", "x", "--timeout", "5 minutes"],
            "unknown unit",
        ),
        (
            vec![
                "start",
                "t",
                "--message",
                "x",
                "--worktree",
                foreign.to_str().unwrap(),
            ],
            "not a worktree of this repository",
        ),
        (
            vec!["start", "t", "--message", "x", "--worktree", &repo],
            "is the main checkout",
        ),
    ];
    for (args, needle) in cases {
        refused(&world, &args, needle);
    }
    nothing_made(&world);
}

#[test]
fn commands_on_an_unknown_task_are_refused() {
    let world = world();
    for command in [
        vec!["fix", "nope", "--message", "x"],
        vec!["status", "nope"],
        vec!["wait", "nope"],
        vec!["cancel", "nope"],
        vec!["log", "nope"],
        vec!["diff", "nope"],
    ] {
        refused(&world, &command, "no task nope");
    }
    refused(&world, &["status", "../nope"], "invalid slug");
    nothing_made(&world);
}

#[test]
fn a_second_start_of_a_task_and_state_errors_lose_nothing() {
    let world = world();
    world
        .ganger(&["start", "t", "--message", "first"])
        .expect_code(0);
    refused(
        &world,
        &["start", "t", "--message", "again"],
        "task t exists already",
    );
    refused(
        &world,
        &["log", "t", "--round", "7"],
        "task t has no round 7",
    );
    // The first task is intact.
    let report = world.ganger(&["status", "t", "--json"]).json();
    assert_eq!(
        (report["round"].as_u64(), report["status"].as_str()),
        (Some(1), Some("done"))
    );
}

#[test]
fn a_misspelt_setting_is_an_error_naming_it() {
    let world = world();
    world.write("ganger.toml", "[defaults]\ntimout = \"5m\"\n");
    refused(&world, &["status"], "timout");
}

#[test]
fn outside_a_repository_ganger_says_so() {
    let world = world();
    let outside = world.root().join("plain");
    std::fs::create_dir_all(&outside).unwrap();
    let run = world.ganger(&["--directory", outside.to_str().unwrap(), "status"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("is not inside a git repository"),
        "{}",
        run.stderr
    );
}

#[test]
fn errors_in_json_mode_are_json() {
    let world = world();
    let run = world.ganger(&["status", "nope", "--json"]);
    run.expect_code(2);
    let error = run.json();
    assert_eq!(error["schema"], "ganger.error/1");
    assert_eq!(error["error"], "no task nope");
    assert_eq!(error["exit_code"], 2);
}

#[test]
fn a_missing_agent_program_is_refused_before_anything_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        "[agents.opencode]\ncommand = \"/nonexistent/opencode\"\n",
    );
    refused(
        &world,
        &["start", "t", "--message", "x"],
        "is not an executable",
    );
    nothing_made(&world);
}

#[test]
fn init_supervisor_writes_ganger_from_path_and_never_this_builds_path() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let build = env!("CARGO_BIN_EXE_ganger");
    // The world's ganger is the one on its PATH, as an installed one is: nothing to say.
    let run = world.ganger(&["init", "--supervisor", "claude", "--json"]);
    run.expect_code(0);
    assert_eq!(run.json()["command"], "ganger", "{}", run.stdout);
    assert!(run.json()["path_note"].is_null(), "{}", run.stdout);
    // Without it on PATH, the files meant to be committed still name `ganger`, and the user
    // is told why the supervisor may not find it.
    for (supervisor, file) in [
        ("codex", ".codex/config.toml"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let mut command = world.command(&["init", "--supervisor", supervisor, "--json"]);
        command.env("PATH", "/usr/bin:/bin");
        let run = ganger_test_support::Run::from(command.output().unwrap());
        run.expect_code(0);
        assert_eq!(run.json()["command"], "ganger", "{}", run.stdout);
        let note = run.json()["path_note"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(note.contains("no `ganger` is on PATH"), "{}", run.stdout);
        assert!(run.stderr.contains(&note), "{}", run.stderr);
        let written = std::fs::read_to_string(world.repo.join(file)).unwrap();
        assert!(
            !written.contains(build),
            "{file} names this build:\n{written}"
        );
        assert!(written.contains("\"ganger\""), "{file}:\n{written}");
    }
    for file in [".mcp.json", ".codex/config.toml", ".gemini/settings.json"] {
        let written = std::fs::read_to_string(world.repo.join(file)).unwrap();
        assert!(
            !written.contains(build),
            "{file} names this build:\n{written}"
        );
    }
}

/// `--json` is one global option: it may come before the command as well as after it, and a
/// command without JSON output refuses it (one error, exit 2) instead of ignoring it.
#[test]
fn json_is_one_option_before_or_after_the_command_and_refused_where_there_is_none() {
    let world = world();
    for args in [
        vec!["--json", "status"],
        vec!["status", "--json"],
        vec!["--json", "agents", "list"],
        vec!["agents", "--json", "list"],
        vec!["agents", "list", "--json"],
        vec!["fleet", "--json", "status", "nope"],
    ] {
        let run = world.ganger(&args);
        let document = run.json();
        assert!(
            document["schema"]
                .as_str()
                .is_some_and(|s| s.starts_with("ganger.")),
            "{args:?}: {}",
            run.stdout
        );
    }
    for args in [
        vec!["diff", "t", "--json"],
        vec!["--json", "diff", "t"],
        vec!["attach", "t", "--json"],
        vec!["demo", "--json"],
        vec!["fake-llm", "--json"],
        vec!["mcp", "--json"],
        vec!["completions", "bash", "--json"],
        vec!["man", "--json"],
    ] {
        let run = world.ganger(&args);
        run.expect_code(2);
        let error = run.json();
        assert_eq!(error["schema"], "ganger.error/1", "{args:?}");
        let message = error["error"].as_str().unwrap_or_default();
        assert!(
            message.contains("unexpected argument '--json'"),
            "{args:?}: {message}"
        );
        assert!(!message.contains('\n'), "{args:?}: {message}");
    }
}

/// `ganger agents canary` is a front for the developer tool `ganger-dev`: where there is none
/// (beside ganger, or on PATH), one line says how to get it, exit 2, and nothing runs.
#[test]
fn the_canary_without_the_developer_tool_says_how_to_get_it() {
    let alone = tempfile::tempdir().unwrap();
    let ganger = alone.path().join("ganger");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_ganger"), &ganger).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_ganger"), &ganger).unwrap();
    }
    let world = World::new(&ganger);
    for args in [
        vec!["agents", "canary", "claude"],
        vec!["agents", "canary", "--json"],
    ] {
        let mut command = world.command(&args);
        command.env("PATH", format!("{}:/usr/bin:/bin", alone.path().display()));
        let run = ganger_test_support::Run::from(command.output().unwrap());
        run.expect_code(2);
        let said = if args.contains(&"--json") {
            run.json()["error"].as_str().unwrap_or_default().to_owned()
        } else {
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            run.stderr.trim_start_matches("error: ").to_owned()
        };
        assert!(
            said.contains("ganger-dev") && said.contains("cargo build -p ganger-dev"),
            "{args:?}: {said}"
        );
    }
}
