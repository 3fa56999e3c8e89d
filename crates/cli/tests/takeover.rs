//! A person and ganger handing a session back and forth: `ganger attach` (the agent's own
//! interactive interface on the task's session) and `ganger adopt` (a session started by hand
//! put under ganger). The stand-in `opencode` (test-support's `fake-opencode.sh`) records
//! what its interactive form was given; the real OpenCode shows that an adopted session's
//! next round continues the conversation the person began.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Script};
use ganger_test_support::{Run, World, opencode_program, opencode_toml, wait_until};
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

fn read(world: &World, slug: &str, file: &str) -> String {
    std::fs::read_to_string(world.worktree(slug).join(file)).unwrap_or_default()
}

fn session_of(world: &World, slug: &str) -> String {
    let report = world.ganger(&["status", slug, "--json"]).json();
    report["session"].as_str().unwrap().to_owned()
}

#[test]
fn attach_opens_the_session_for_a_person_and_the_next_round_continues_it() {
    let world = world();
    world
        .ganger(&["start", "a", "--message", "first", "--as", "alice"])
        .expect_code(0);
    let session = session_of(&world, "a");

    // Only the owner takes over.
    let run = world.ganger(&["attach", "a", "--as", "bob"]);
    run.expect_code(2);
    assert!(run.stderr.contains("owned by alice"), "{}", run.stderr);

    // The person types two lines, then quits; meanwhile no round may start.
    let mut attach = world.command(&["attach", "a", "--as", "alice"]);
    attach
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the person at the terminal"
    )]
    let mut attached = attach.spawn().unwrap();
    assert!(wait_until(Duration::from_secs(20), || {
        read(&world, "a", "attach.txt").contains("attached")
    }));
    let refused = world.ganger(&["fix", "a", "--message", "not now", "--as", "alice"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("a person is attached to task a"),
        "{}",
        refused.stderr
    );
    let again = world.ganger(&["attach", "a", "--as", "alice"]);
    again.expect_code(2);
    let mut stdin = attached.stdin.take().unwrap();
    stdin.write_all(b"look at this\nand that\n").unwrap();
    drop(stdin);
    let done = Run::from(attached.wait_with_output().unwrap());
    done.expect_code(0);
    assert_eq!(
        read(&world, "a", "attach.txt"),
        format!("attached {session} mock/scripted\n")
    );

    // Handed back: the next round resumes the same session, after what the person did.
    let next = world.ganger(&["fix", "a", "--message", "second", "--as", "alice", "--json"]);
    next.expect_code(0);
    assert_eq!(next.json()["session"], session.as_str());
    assert_eq!(
        read(&world, "a", "fake.txt"),
        "first\nby hand: look at this\nby hand: and that\nsecond\n"
    );
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    let kinds: Vec<String> = db
        .prepare("SELECT kind FROM journal WHERE kind IN ('attached', 'detached') ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kinds, ["attached", "detached"]);
}

#[test]
fn attach_is_refused_while_a_round_runs_and_before_there_is_a_session() {
    let world = world();
    world
        .ganger(&["start", "busy", "--message", "sleep 60", "--detach"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(20), || {
        read(&world, "busy", "fake.txt").contains("sleep")
    }));
    let run = world.ganger(&["attach", "busy"]);
    run.expect_code(2);
    assert!(run.stderr.contains("is still running"), "{}", run.stderr);
    world.ganger(&["cancel", "busy"]).expect_code(0);
    // A round that failed before naming a session leaves nothing to attach to.
    world
        .ganger(&["start", "mute", "--message", "silent-exit"])
        .expect_code(1);
    let run = world.ganger(&["attach", "mute"]);
    run.expect_code(2);
    assert!(run.stderr.contains("has no session yet"), "{}", run.stderr);
}

#[test]
fn adopt_refuses_what_it_cannot_take_and_creates_nothing() {
    let world = world();
    world.git(&["worktree", "add", "-q", "-b", "hand", "../hand-wt"]);
    let worktree = world.repo.parent().unwrap().join("hand-wt");
    let wt = worktree.to_str().unwrap();
    for (args, error) in [
        (
            vec![
                "adopt",
                "x",
                "--agent",
                "nope",
                "--session",
                "s1",
                "--worktree",
                wt,
            ],
            "unknown agent",
        ),
        (
            vec![
                "adopt",
                "x",
                "--agent",
                "opencode",
                "--session",
                "a b",
                "--worktree",
                wt,
            ],
            "is not a session id",
        ),
        (
            vec![
                "adopt",
                "x",
                "--agent",
                "opencode",
                "--session",
                "s1",
                "--worktree",
                "/tmp",
            ],
            "not a worktree of this repository",
        ),
        (
            vec![
                "adopt",
                "Bad_Slug",
                "--agent",
                "opencode",
                "--session",
                "s1",
                "--worktree",
                wt,
            ],
            "Bad_Slug",
        ),
    ] {
        let run = world.ganger(&args);
        run.expect_code(2);
        assert!(run.stderr.contains(error), "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr
                .lines()
                .filter(|l| l.starts_with("error"))
                .count(),
            1
        );
    }
    let list = world.ganger(&["status", "--json"]);
    assert_eq!(
        list.json()["tasks"],
        serde_json::json!([]),
        "{}",
        list.stdout
    );
}

/// A person runs OpenCode by hand in a worktree; ganger adopts the session and its next round
/// continues that very conversation (the model server sees the person's prompt in it).
#[test]
fn an_adopted_opencode_session_continues_where_the_person_left_it() {
    let llm = FakeLlm::start(Script::new().text("Noted. {{history}}")).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write("ganger.toml", &opencode_toml(&llm.base_url(), "", "k", ""));
    world.git(&["worktree", "add", "-q", "-b", "by-hand", "../by-hand"]);
    let worktree = world.repo.parent().unwrap().join("by-hand");

    // What the person ran, with the configuration ganger.toml gives OpenCode.
    let config = serde_json::json!({
        "model": "mock/scripted",
        "small_model": "mock/scripted",
        "share": "disabled",
        "provider": { "mock": {
            "npm": "@ai-sdk/openai-compatible",
            "options": { "baseURL": llm.base_url(), "apiKey": "k" },
            "models": { "scripted": { "limit": { "context": 128000, "output": 8192 } } },
        }},
    });
    let mut by_hand = std::process::Command::new(opencode_program());
    world.env(&mut by_hand);
    let output = by_hand
        .args(["run", "--format", "json", "remember the word PLUM"])
        .env("OPENCODE_CONFIG_CONTENT", config.to_string())
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        // OpenCode works in $PWD, not in its real working directory.
        .env("PWD", &worktree)
        .current_dir(&worktree)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let session = stdout
        .lines()
        .find_map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).ok()?;
            event["sessionID"].as_str().map(str::to_owned)
        })
        .expect("OpenCode named its session");

    let adopted = world.ganger(&[
        "adopt",
        "plum",
        "--agent",
        "opencode",
        "--session",
        &session,
        "--worktree",
        worktree.to_str().unwrap(),
        "--json",
    ]);
    adopted.expect_code(0);
    assert_eq!(adopted.json()["session"], session.as_str());
    assert_eq!(adopted.json()["branch"], "by-hand");
    let run = world.ganger(&["fix", "plum", "--message", "which word?", "--json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["round"], 1);
    assert_eq!(report["session"], session.as_str());
    let last = llm
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.tools_offered)
        .unwrap();
    let prompts: Vec<String> = last
        .conversation
        .as_ref()
        .unwrap()
        .prompts()
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert!(
        prompts.iter().any(|p| p.contains("remember the word PLUM"))
            && prompts.iter().any(|p| p.contains("which word?")),
        "{prompts:?}"
    );
}

/// A person attached to a task given a model key works with an agent that holds only a
/// placeholder: the key stays at a gateway that lives while they are attached.
#[test]
fn attach_gives_the_interactive_agent_a_placeholder_not_the_key() {
    const SECRET: &str = "sk-attach-secret-4b1f9e27";
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent(
        "",
        "\n[agents.opencode.config.provider.mock.options]\nbaseURL = \"http://127.0.0.1:9/v1\"\n",
    );
    let key_file = world.root().join("mock.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("mock={}", key_file.display());
    world
        .ganger(&["start", "k", "--message", "first", "--key", &key])
        .expect_code(0);
    let mut attach = world.command(&["attach", "k"]);
    attach.stdin(Stdio::piped()).stdout(Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the person at the terminal"
    )]
    let mut attached = attach.spawn().unwrap();
    drop(attached.stdin.take());
    Run::from(attached.wait_with_output().unwrap()).expect_code(0);
    let env = read(&world, "k", "attach-env.txt");
    assert!(env.contains("MOCK_API_KEY=ganger-placeholder-"), "{env}");
    assert!(env.contains("ganger-placeholder-"), "{env}");
    assert!(
        !env.contains(SECRET),
        "the interactive agent holds the key: {env}"
    );
    // Its configuration points the provider at the gateway, not the upstream.
    let config = env
        .lines()
        .find(|l| l.starts_with("OPENCODE_CONFIG_CONTENT="))
        .unwrap_or_default();
    assert!(config.contains("http://127.0.0.1:"), "{config}");
    assert!(!config.contains("127.0.0.1:9/v1"), "{config}");
}
