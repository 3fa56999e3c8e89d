//! End-to-end: `ganger rewind` and `ganger merge` with the real, pinned agents against the
//! scripted model server, in real git repositories: a rewind whose next round continues from
//! the rewound point (proved by the model's recorded requests) for each agent, and, with
//! Claude Code as the worker (the merge is the subject, and it starts in a fraction of
//! OpenCode's CPU time), a conflict resolved by the worker with `--fix` and the refusals (a
//! dirty main checkout, a last round that failed).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Fault, RecordedRequest, Script, Turn};
use ganger_test_support::{World, agent_toml, opencode_toml};
use serde_json::json;
use std::path::Path;

fn world(script: Script) -> (World, FakeLlm) {
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &opencode_toml(&llm.base_url(), "", "not-a-secret-key", ""),
    );
    (world, llm)
}

/// A world whose tasks run Claude Code against a scripted model answering `script`, given the
/// worktree of task `slug` (Claude's file tool takes absolute paths).
fn claude_world(slug: &str, script: impl FnOnce(&Path) -> Script) -> (World, FakeLlm) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(script(&world.worktree(slug))).unwrap();
    world.write(
        "ganger.toml",
        &agent_toml("claude", &llm.root_url(), "", ""),
    );
    (world, llm)
}

/// Claude Code's shell writing `content` to `name` (its file tool would not overwrite a file
/// it has not read).
fn shell_write(name: &str, content: &str, when: &str) -> Turn {
    Turn::tool(
        "Bash",
        json!({"command": format!("printf '{}' > {name}", content.replace('\n', "\\n"))}),
    )
    .when(when)
}

fn write(path: &str, content: &str, when: &str) -> Turn {
    Turn::tool("write", json!({"filePath": path, "content": content})).when(when)
}

/// The requests that carried a prompt (tools offered): the agent's real work.
fn work(requests: &[RecordedRequest]) -> Vec<&RecordedRequest> {
    requests.iter().filter(|r| r.tools_offered).collect()
}

/// The first work request whose last prompt contains `text`.
fn opening<'a>(requests: &'a [RecordedRequest], text: &str) -> &'a RecordedRequest {
    work(requests)
        .into_iter()
        .find(|r| r.prompts().last().is_some_and(|p| p.contains(text)))
        .unwrap_or_else(|| panic!("no request opened with {text:?}"))
}

/// One line on stderr, exit 2, and that line says `what`.
fn refused(run: &ganger_test_support::Run, what: &str) {
    run.expect_code(2);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.contains(what), "{}", run.stderr);
}

#[test]
fn rewind_takes_the_files_the_rounds_and_the_conversation_back() {
    let script = Script::new()
        .turn(write("a.txt", "a\n", "first file"))
        .text("Done round 1: a.txt.")
        .turn(write("b.txt", "b\n", "second file"))
        .text("Done round 2: b.txt.")
        .turn(write("c.txt", "c\n", "third file"))
        .text("Done round 3. {{history}}");
    let (world, llm) = world(script);
    let first = "Write the first file, a.txt.";
    world
        .ganger(&["start", "t", "--message", first])
        .expect_code(0);
    world
        .ganger(&["fix", "t", "--message", "Write the second file, b.txt."])
        .expect_code(0);
    let worktree = world.worktree("t");
    assert!(worktree.join("b.txt").is_file());

    for (to, what) in [
        ("0", "round 0 is out of range"),
        ("3", "round 3 is out of range"),
    ] {
        refused(&world.ganger(&["rewind", "t", "--to", to]), what);
    }
    assert!(
        worktree.join("b.txt").is_file(),
        "a refusal changes nothing"
    );

    let rewound = world.ganger(&["rewind", "t", "--to", "1", "--json"]);
    rewound.expect_code(0);
    let report = rewound.json();
    assert_eq!(report["schema"], "ganger.rewind/1");
    assert_eq!(report["rewound"], json!([2]));
    assert_eq!(report["removed"], json!(["b.txt"]));
    assert_eq!(report["session"], "forked", "{report:#}");
    let fork = report["session_id"].as_str().unwrap().to_owned();
    assert_eq!(
        std::fs::read_to_string(worktree.join("a.txt")).unwrap(),
        "a\n"
    );
    assert!(!worktree.join("b.txt").exists());
    // Still the worker's uncommitted change against the base, and round 2's work is kept.
    assert_eq!(
        world.git_in(&worktree, &["status", "--porcelain"]),
        "?? a.txt"
    );
    assert_eq!(
        world.git(&["rev-parse", "agent/t"]),
        world.git(&["rev-parse", "main"])
    );
    assert_eq!(world.git(&["show", "refs/ganger/t/rewind-2:b.txt"]), "b");
    let status = world.ganger(&["status", "t", "--json"]).json();
    assert_eq!(
        (status["round"].clone(), status["rewound"].clone()),
        (json!(2), json!(true))
    );
    let human = world.ganger(&["status", "t"]);
    assert!(human.stdout.contains("(rewound)"), "{}", human.stdout);
    refused(
        &world.ganger(&["rewind", "t", "--to", "2"]),
        "round 2 of t was rewound",
    );

    let third = world.ganger(&[
        "fix",
        "t",
        "--message",
        "Write the third file, c.txt.",
        "--json",
    ]);
    third.expect_code(0);
    assert_eq!(third.json()["status"], "done", "{}", third.stdout);
    assert_eq!(third.json()["session"], fork.as_str());
    assert!(worktree.join("c.txt").is_file() && worktree.join("a.txt").is_file());
    assert!(!worktree.join("b.txt").exists());
    // The round after the rewind carried round 1's conversation and nothing of round 2's.
    let requests = llm.requests();
    let request = opening(&requests, "third file");
    assert_eq!(request.prompts(), [first, "Write the third file, c.txt."]);
    let text = request.body.as_ref().unwrap()["messages"].to_string();
    assert!(text.contains(first), "{text}");
    assert!(text.contains("Done round 1: a.txt."), "{text}");
    assert!(!text.contains("second file"), "{text}");
    assert!(!text.contains("Done round 2"), "{text}");
    assert!(text.contains("a.txt") && !text.contains("b.txt"), "{text}");
    // Merged, the rewound round is not part of the task's work.
    world.ganger(&["merge", "t"]).expect_code(0);
    let message = world.git(&["log", "-1", "--format=%B", "agent/t"]);
    assert!(
        message.starts_with("t: the work of task t (rounds 1, 3)"),
        "{message}"
    );
    assert!(!message.contains("round 2"), "{message}");
}

#[test]
fn a_conflict_stops_cleanly_and_fix_has_the_worker_resolve_it() {
    let script = |_: &Path| {
        Script::new()
            .turn(shell_write("shared.txt", "task line\n", "Change shared"))
            .text("Changed shared.txt.")
            .turn(shell_write(
                "shared.txt",
                "main line\ntask line\n",
                "Resolve this conflict",
            ))
            .text("Resolved.")
    };
    let (world, llm) = claude_world("c", script);
    world.write("shared.txt", "first line\n");
    world.git(&["add", "shared.txt"]);
    world.git(&["commit", "-q", "-m", "shared"]);
    world
        .ganger(&["start", "c", "--message", "Change shared.txt."])
        .expect_code(0);
    world.write("shared.txt", "main line\n");
    world.git(&["commit", "-q", "-am", "main changes shared"]);
    let main_before = world.git(&["rev-parse", "main"]);

    let conflict = world.ganger(&["merge", "c", "--json"]);
    conflict.expect_code(1);
    let report = conflict.json();
    assert_eq!(report["schema"], "ganger.merge/1");
    assert_eq!(report["outcome"], "conflict");
    assert_eq!(report["conflicts"], json!(["shared.txt"]));
    // Nothing half merged: main and its files as they were.
    assert_eq!(world.git(&["rev-parse", "main"]), main_before);
    assert_eq!(world.git(&["status", "--porcelain"]), "?? ganger.toml");
    assert_eq!(
        std::fs::read_to_string(world.repo.join("shared.txt")).unwrap(),
        "main line\n"
    );
    let human = world.ganger(&["merge", "c"]);
    human.expect_code(1);
    assert!(human.stdout.contains("  shared.txt\n"), "{}", human.stdout);

    let fixed = world.ganger(&["merge", "c", "--fix", "--json"]);
    fixed.expect_code(0);
    let report = fixed.json();
    assert_eq!(report["outcome"], "merged", "{report:#}");
    assert_eq!(report["fix_round"], 2);
    assert_eq!(report["rounds"], json!([1, 2]));
    // The resolution is a merge of main into the task's branch, on that branch.
    let resolution = report["resolution_commit"].as_str().unwrap();
    assert_eq!(world.git(&["rev-parse", "agent/c"]), resolution);
    assert_eq!(
        world.git(&["rev-parse", &format!("{resolution}^2")]),
        main_before
    );
    assert_eq!(
        std::fs::read_to_string(world.repo.join("shared.txt")).unwrap(),
        "main line\ntask line\n"
    );
    assert_eq!(world.git(&["rev-parse", "main^1"]), main_before);
    assert_eq!(world.git(&["status", "--porcelain"]), "?? ganger.toml");
    // The resolving round went to the worker in its session, naming the file.
    let requests = llm.requests();
    let request = opening(&requests, "Resolve this conflict");
    let sent = request.prompts();
    assert_eq!(sent[0], "Change shared.txt.");
    assert!(sent[1].contains("- shared.txt\n"), "{sent:?}");
    let subject = world.git(&["log", "-1", "--format=%s", "main"]);
    assert_eq!(
        subject,
        "Merge task c (branch agent/c, rounds 1-2) into main"
    );
}

#[test]
fn merge_refuses_a_dirty_main_checkout_and_a_failed_last_round() {
    let script = |worktree: &Path| {
        Script::new()
            .turn(
                Turn::tool(
                    "Write",
                    json!({"file_path": worktree.join("done.txt"), "content": "done\n"}),
                )
                .when("Write done"),
            )
            .text("Wrote done.txt.")
            .turn(Turn::fault(Fault::Http401).when("break it"))
    };
    let (world, _llm) = claude_world("m", script);
    world
        .ganger(&["start", "m", "--message", "Write done.txt."])
        .expect_code(0);
    let main_before = world.git(&["rev-parse", "main"]);
    let branch_before = world.git(&["rev-parse", "agent/m"]);

    world.write("README.md", "my own edit\n");
    refused(
        &world.ganger(&["merge", "m"]),
        "has uncommitted changes ( M README.md)",
    );
    assert_eq!(
        std::fs::read_to_string(world.repo.join("README.md")).unwrap(),
        "my own edit\n"
    );
    assert_eq!(world.git(&["rev-parse", "main"]), main_before);
    assert_eq!(world.git(&["rev-parse", "agent/m"]), branch_before);
    world.git(&["checkout", "--", "README.md"]);

    world
        .ganger(&["fix", "m", "--message", "Now break it."])
        .expect_code(1);
    refused(&world.ganger(&["merge", "m"]), "round 2 of m did not pass");
    assert_eq!(world.git(&["rev-parse", "agent/m"]), branch_before);

    // Back at round 1, which passed: a clean merge, committed with the task and its round.
    world.ganger(&["rewind", "m", "--to", "1"]).expect_code(0);
    let merged = world.ganger(&["merge", "m", "--json"]);
    merged.expect_code(0);
    let report = merged.json();
    assert_eq!(report["outcome"], "merged");
    assert_eq!(report["rounds"], json!([1]));
    let task_commit = report["task_commit"].as_str().unwrap();
    assert_eq!(world.git(&["rev-parse", "agent/m"]), task_commit);
    let message = world.git(&["log", "-1", "--format=%B", task_commit]);
    assert!(
        message.starts_with("m: the work of task m (round 1)"),
        "{message}"
    );
    assert!(
        message.contains("round 1 (start, done): Write done.txt."),
        "{message}"
    );
    assert_eq!(
        world.git(&["log", "-1", "--format=%s", "main"]),
        "Merge task m (branch agent/m, round 1) into main"
    );
    assert_eq!(world.git(&["rev-parse", "main^2"]), task_commit);
    assert_eq!(
        std::fs::read_to_string(world.repo.join("done.txt")).unwrap(),
        "done\n"
    );
}

#[test]
fn rewind_has_claude_fork_its_session_at_the_rewound_round() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let worktree = world.worktree("cl");
    let write = |name: &str, when: &str| {
        let path = worktree.join(name).to_string_lossy().into_owned();
        Turn::tool("Write", json!({"file_path": path, "content": "x\n"})).when(when)
    };
    let script = Script::new()
        .turn(write("a.txt", "first file"))
        .text("Done round 1: a.txt.")
        .turn(write("b.txt", "second file"))
        .text("Done round 2: b.txt.")
        .turn(write("c.txt", "third file"))
        .text("Done round 3.")
        .turn(write("d.txt", "fourth file"))
        .text("Done round 4.")
        .default_answer("side");
    let llm = FakeLlm::start(script).unwrap();
    world.write(
        "ganger.toml",
        &agent_toml("claude", &llm.root_url(), "", ""),
    );
    let first = "Write the first file, a.txt.";
    let started = world.ganger(&[
        "start",
        "cl",
        "--agent",
        "claude",
        "--message",
        first,
        "--json",
    ]);
    started.expect_code(0);
    let session = started.json()["session"].as_str().unwrap().to_owned();
    world
        .ganger(&["fix", "cl", "--message", "Write the second file, b.txt."])
        .expect_code(0);
    let rewound = world.ganger(&["rewind", "cl", "--to", "1", "--json"]);
    rewound.expect_code(0);
    let report = rewound.json();
    assert_eq!(report["session"], "forked", "{report:#}");
    assert_eq!(report["fork_from"]["session"], session.as_str());
    assert!(!worktree.join("b.txt").exists());

    let third = "Write the third file, c.txt.";
    let fixed = world.ganger(&["fix", "cl", "--message", third, "--json"]);
    fixed.expect_code(0);
    assert_eq!(fixed.json()["status"], "done", "{}", fixed.stdout);
    let fork = fixed.json()["session"].as_str().unwrap().to_owned();
    assert_ne!(fork, session);
    assert!(worktree.join("c.txt").is_file() && worktree.join("a.txt").is_file());
    // Round 1's conversation, exactly, and nothing of round 2's.
    let requests = llm.requests();
    let request = opening(&requests, "third file");
    assert_eq!(request.prompts(), [first, third]);
    let text = request.body.as_ref().unwrap()["messages"].to_string();
    assert!(text.contains("Done round 1: a.txt."), "{text}");
    assert!(
        !text.contains("second file") && !text.contains("Done round 2"),
        "{text}"
    );
    // The round after goes on in the fork.
    let fourth = world.ganger(&[
        "fix",
        "cl",
        "--message",
        "Write the fourth file, d.txt.",
        "--json",
    ]);
    fourth.expect_code(0);
    assert_eq!(fourth.json()["session"], fork.as_str());
    let requests = llm.requests();
    let request = opening(&requests, "fourth file");
    assert_eq!(
        request.prompts(),
        [first, third, "Write the fourth file, d.txt."]
    );
}

/// An agent that cannot fork: the round after a rewind starts a new session whose prompt
/// carries the rounds kept, and nothing of the rounds rewound.
fn rewind_summarizes_for(agent: &str) {
    let script = Script::new()
        .turn(Turn::text("Answer alpha-one.").when("alpha question"))
        .turn(Turn::text("Answer beta-two.").when("beta question"))
        .turn(Turn::text("Answer gamma-three.").when("gamma question"))
        .default_answer("side");
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &agent_toml(agent, &llm.root_url(), "timeout = \"150s\"", ""),
    );
    let started = world.ganger(&[
        "start",
        "s",
        "--agent",
        agent,
        "--message",
        "The alpha question.",
        "--json",
    ]);
    started.expect_code(0);
    let session = started.json()["session"].clone();
    world
        .ganger(&["fix", "s", "--message", "The beta question."])
        .expect_code(0);
    let rewound = world.ganger(&["rewind", "s", "--to", "1", "--json"]);
    rewound.expect_code(0);
    assert_eq!(rewound.json()["session"], "new");
    let third = world.ganger(&["fix", "s", "--message", "The gamma question.", "--json"]);
    third.expect_code(0);
    assert_eq!(
        third.json()["answer"],
        "Answer gamma-three.",
        "{}",
        third.stdout
    );
    assert_ne!(third.json()["session"], session);
    let requests = llm.requests();
    let request = opening(&requests, "gamma question");
    let sent = request.prompts();
    let last = sent.last().unwrap();
    assert!(
        last.contains("The alpha question.") && last.contains("Answer alpha-one."),
        "{sent:?}"
    );
    let text = request.body.as_ref().unwrap().to_string();
    assert!(
        !text.contains("beta question") && !text.contains("beta-two"),
        "{text}"
    );
}

#[test]
fn rewind_gives_codex_a_new_session_with_the_rounds_kept() {
    rewind_summarizes_for("codex");
}

#[test]
fn rewind_gives_gemini_a_new_session_with_the_rounds_kept() {
    rewind_summarizes_for("gemini");
}

#[test]
fn rewind_gives_qwen_a_new_session_with_the_rounds_kept() {
    rewind_summarizes_for("qwen");
}
