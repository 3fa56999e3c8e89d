//! End-to-end: the real, pinned OpenCode against the scripted model server, driven by the
//! real `ganger` binary in real git repositories. Each test is one scenario of the issue's
//! list; together they cover the supervisor loop as a user meets it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Fault, RecordedRequest, Script, Turn};
use ganger_test_support::{World, living_pids_with_env, opencode_toml, wait_until};
use serde_json::{Value, json};
use std::time::Duration;

fn world(script: Script, defaults: &str, extra: &str) -> (World, FakeLlm) {
    world_with_key(script, defaults, "not-a-secret-key", extra)
}

fn world_with_key(script: Script, defaults: &str, api_key: &str, extra: &str) -> (World, FakeLlm) {
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &opencode_toml(&llm.base_url(), defaults, api_key, extra),
    );
    (world, llm)
}

/// The requests that carried a prompt (tools offered): the agent's real work.
fn work(requests: &[RecordedRequest]) -> Vec<&RecordedRequest> {
    requests.iter().filter(|r| r.tools_offered).collect()
}

fn two_rounds() -> Script {
    Script::new()
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "round1.txt", "content": "round 1\n"}),
            )
            .when("first file"),
        )
        .text("Done round 1. {{history}}")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "round2.txt", "content": "round 2\n"}),
            )
            .when("second file"),
        )
        .text("Done round 2. {{history}}")
}

#[test]
fn start_and_fix_work_in_the_worktree_in_one_session() {
    let (world, llm) = world(two_rounds(), "", "");
    let first =
        "Write the first file, round1.txt.\n  Keep \"quotes\" and a leading -dash as they are.";
    let started = world.ganger(&["start", "t1", "--message", first, "--json"]);
    started.expect_code(0);
    let report = started.json();
    assert_eq!(report["schema"], "ganger.round-report/1");
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["round"], 1);
    assert_eq!(report["changed"]["shown"], json!(["A round1.txt"]));
    let session = report["session"].as_str().unwrap().to_owned();
    assert!(session.starts_with("ses_"), "{session}");

    // The file is in the task's worktree, not in the main checkout.
    let worktree = world.worktree("t1");
    assert_eq!(
        std::fs::read_to_string(worktree.join("round1.txt")).unwrap(),
        "round 1\n"
    );
    assert!(!world.repo.join("round1.txt").exists());
    assert_eq!(
        world.git_in(&worktree, &["branch", "--show-current"]),
        "agent/t1"
    );
    // The worker never commits: the branch is still at main, the work is in ganger's snapshot.
    assert_eq!(
        world.git(&["rev-parse", "agent/t1"]),
        world.git(&["rev-parse", "main"])
    );
    assert_eq!(
        world.git(&["show", "refs/ganger/t1/round-1:round1.txt"]),
        "round 1"
    );

    // The prompt reached the model exactly as written, and was kept exactly as sent.
    let requests = llm.requests();
    assert_eq!(work(&requests)[0].prompts(), [first]);
    let kept =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/t1/round-1.prompt.md")).unwrap();
    assert_eq!(kept, first);

    let fixed = world.ganger(&[
        "fix",
        "t1",
        "--message",
        "Now the second file, round2.txt.",
        "--json",
    ]);
    fixed.expect_code(0);
    let report = fixed.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["session"], session.as_str());
    assert_eq!(report["changed"]["shown"], json!(["A round2.txt"]));
    assert_eq!(
        report["worktree_changes"]["shown"],
        json!(["A round1.txt", "A round2.txt"])
    );
    // Round 2's first request carried round 1's conversation.
    let requests = llm.requests();
    let round2 = work(&requests)
        .into_iter()
        .find(|r| r.prompts().len() == 2)
        .expect("a request with both prompts");
    assert_eq!(
        round2.prompts(),
        [first, "Now the second file, round2.txt."]
    );
    assert!(
        report["answer"]
            .as_str()
            .unwrap()
            .contains("2 tool results"),
        "{report:#}"
    );

    // status shows the same round, and the table lists the task.
    let status = world.ganger(&["status", "t1", "--json"]);
    status.expect_code(0);
    assert_eq!(status.json()["round"], 2);
    assert_eq!(status.json()["session"], session.as_str());
    let table = world.ganger(&["status", "--json"]).json();
    assert_eq!(table["schema"], "ganger.task-list/1");
    assert_eq!(table["tasks"][0]["slug"], "t1");
    assert_eq!(table["tasks"][0]["rounds"], 2);
    assert_eq!(table["tasks"][0]["last_status"], "done");
    let human = world.ganger(&["status"]);
    assert!(human.stdout.contains(&session), "{}", human.stdout);
    // wait on a finished round reports it at once, with the round's exit code.
    world.ganger(&["wait", "t1"]).expect_code(0);
    let diff = world.ganger(&["diff", "t1", "--stat"]);
    assert!(
        diff.stdout.contains("round1.txt") && diff.stdout.contains("round2.txt"),
        "{}",
        diff.stdout
    );
    let log = world.ganger(&["log", "t1", "--round", "1"]);
    assert!(log.stdout.contains("tool write"), "{}", log.stdout);
    // OpenCode leaves a 5.5 MB native library in its TMPDIR at every run; each round's agent
    // (and the warm agent, once stopped) had a private one, and it went with it.
    let warm_tmp = std::fs::read_dir(world.tmp()).unwrap().count();
    world.ganger(&["warm", "stop", "t1"]).expect_code(0);
    assert!(
        warm_tmp <= 1,
        "{warm_tmp} private TMPDIRs before the warm agent stopped"
    );
    let left: Vec<_> = std::fs::read_dir(world.tmp())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    // The tests send traffic to loopback only: OpenCode's background install of its plugin
    // package from the npm registry (into the world's new config directory) found npm offline
    // and left no download cache behind.
    assert!(
        !world.home.join(".npm").exists(),
        "OpenCode reached the npm registry"
    );
}

#[test]
fn detach_then_wait_and_a_wait_that_times_out() {
    let script = Script::new()
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "later.txt", "content": "later\n"}),
            )
            .when("quick"),
        )
        .text("Done quickly.")
        .turn(Turn::fault(Fault::Hang).when("hang"));
    let (world, llm) = world(script, "", "");
    let started = world.ganger(&[
        "start",
        "t2",
        "--message",
        "quick work please",
        "--detach",
        "--json",
    ]);
    started.expect_code(0);
    let detached = started.json();
    assert_eq!(detached["schema"], "ganger.detached/1");
    assert_eq!(detached["status"], "running");
    let waited = world.ganger(&["wait", "t2", "--json"]);
    waited.expect_code(0);
    assert_eq!(waited.json()["status"], "done");
    assert!(world.worktree("t2").join("later.txt").is_file());

    // A round that never ends: wait gives up at its limit with exit 4, and says so.
    world
        .ganger(&["fix", "t2", "--message", "now hang", "--detach"])
        .expect_code(0);
    llm.wait_for_requests(3, Duration::from_secs(60)).unwrap();
    let timed_out = world.ganger(&["wait", "t2", "--timeout", "1s", "--json"]);
    timed_out.expect_code(4);
    assert_eq!(timed_out.json()["schema"], "ganger.still-running/1");
    let running = world.ganger(&["status", "t2", "--json"]).json();
    assert_eq!(running["status"], "running");
    let token = running["token"].as_str().unwrap().to_owned();

    // cancel stops it and records it; nothing of the round is left running.
    let cancelled = world.ganger(&["cancel", "t2", "--json"]);
    cancelled.expect_code(0);
    assert_eq!(cancelled.json()["status"], "cancelled");
    assert!(living_pids_with_env(&format!("GANGER_ROUND={token}")).is_empty());
    world.ganger(&["wait", "t2"]).expect_code(1);
    let refused = world.ganger(&["cancel", "t2"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("no round of t2 is running"),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_killed_host_leaves_nothing_running_and_the_fix_resumes_the_session() {
    killed_host(&[]);
}

/// The same with the agent started for the round, not kept warm.
#[test]
fn a_killed_host_of_a_cold_round_leaves_nothing_running_and_the_fix_resumes_the_session() {
    killed_host(&["--cold"]);
}

/// The round's host is killed (kill -9) while the agent runs a tool's command: the round is
/// interrupted, the command does not outlive it, and the next round resumes the session. By
/// default OpenCode is kept warm: the host is then the round's, and its warm agent is told to
/// stop the turn.
fn killed_host(mode: &[&str]) {
    // Round 1 starts a long tool command (in its own session, as OpenCode runs them).
    let script = Script::new()
        .turn(
            Turn::tool(
                "bash",
                json!({"command": "sleep 300", "description": "wait a long time"}),
            )
            .when("long command"),
        )
        .text("The command finished.")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "after.txt", "content": "after\n"}),
            )
            .when("after the crash"),
        )
        .text("Resumed. {{history}}");
    let (world, llm) = world(script, "", "");
    let mut start = vec![
        "start",
        "t3",
        "--message",
        "run the long command",
        "--detach",
    ];
    start.extend(mode);
    world.ganger(&start).expect_code(0);
    let running = world.ganger(&["status", "t3", "--json"]).json();
    let host = running["host_pid"].as_i64().unwrap() as i32;
    let marker = format!("GANGER_ROUND={}", running["token"].as_str().unwrap());
    // The tool's `sleep`, run by the agent (a warm agent's processes are not the round's).
    let world_marker = format!("HOME={}", world.home.display());
    let sleeping = || {
        living_pids_with_env(&world_marker).into_iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with("sleep"))
        })
    };
    // Wait until the tool's `sleep` runs: the agent and its child are up.
    assert!(wait_until(Duration::from_secs(90), sleeping));
    let session = llm
        .requests()
        .iter()
        .find_map(|r| r.header("x-session-id").map(str::to_owned))
        .unwrap();

    let killed = std::process::Command::new("kill")
        .args(["-9", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // A look once the host is dead finds it so, stops what is left of its round, and says
    // so. The host is dead once its last thread is: its main thread shows as a zombie while
    // the others may still be exiting and holding its files, the round's lock among them, so
    // looks go on until one no longer sees the round running.
    let mut report = Value::Null;
    assert!(
        wait_until(Duration::from_secs(10), || {
            let after = world.ganger(&["status", "t3", "--json"]);
            after.expect_code(0);
            report = after.json();
            report["status"] != "running"
        }),
        "{report:#}"
    );
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("died"),
        "{report:#}"
    );
    assert!(
        wait_until(Duration::from_secs(5), || living_pids_with_env(&marker)
            .is_empty()),
        "processes of the round survived: {:?}",
        living_pids_with_env(&marker)
    );
    assert!(
        wait_until(Duration::from_secs(20), || !sleeping()),
        "the tool's command outlived its round"
    );
    assert_eq!(report["session"], session.as_str());

    let fixed = world.ganger(&[
        "fix",
        "t3",
        "--message",
        "carry on after the crash",
        "--json",
    ]);
    fixed.expect_code(0);
    let report = fixed.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["session"], session.as_str());
    let last = llm.requests();
    let resumed = work(&last).into_iter().last().unwrap();
    assert_eq!(
        resumed.prompts(),
        ["run the long command", "carry on after the crash"]
    );
}

#[test]
fn of_two_concurrent_fixes_exactly_one_starts() {
    let script = Script::new()
        .turn(Turn::tool("write", json!({"filePath": "a.txt", "content": "a\n"})).when("begin"))
        .text("Begun.")
        .turn(Turn::fault(Fault::Hang));
    let (world, llm) = world(script, "", "");
    world
        .ganger(&["start", "t4", "--message", "begin"])
        .expect_code(0);
    #[expect(
        clippy::disallowed_methods,
        reason = "two ganger commands must race, so both are started before either is waited for"
    )]
    let spawn = || {
        world
            .command(&["fix", "t4", "--message", "race", "--detach"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let outputs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let codes: Vec<i32> = outputs.iter().map(|o| o.status.code().unwrap()).collect();
    assert!(
        codes.contains(&0) && codes.contains(&2),
        "{codes:?} {outputs:?}"
    );
    let loser = outputs.iter().find(|o| o.status.code() == Some(2)).unwrap();
    let message = String::from_utf8_lossy(&loser.stderr);
    assert!(
        message.contains("round 2 of t4 is still running"),
        "{message}"
    );
    assert_eq!(world.ganger(&["status", "t4", "--json"]).json()["round"], 2);
    llm.wait_for_requests(3, Duration::from_secs(60)).unwrap();
    world.ganger(&["cancel", "t4"]).expect_code(0);
}

#[test]
fn an_unavailable_model_exits_3_naming_the_closest_and_creates_nothing() {
    let (world, llm) = world(two_rounds(), "", "");
    let run = world.ganger(&[
        "start",
        "t5",
        "--message",
        "first file",
        "-m",
        "mock/scripte",
    ]);
    run.expect_code(3);
    assert!(
        run.stderr.contains("mock/scripte is not available"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("mock/scripted"), "{}", run.stderr);
    assert!(!world.worktree("t5").exists());
    assert_eq!(world.git(&["branch", "--list", "agent/t5"]), "");
    assert_eq!(
        world.ganger(&["status", "--json"]).json()["tasks"],
        json!([])
    );
    assert!(llm.requests().is_empty());
}

#[test]
fn a_model_answering_500_is_a_failure_with_its_cause() {
    let script = Script::new().turn(Turn::fault(Fault::Http500).retry_after_ms(0));
    let (world, _llm) = world(script, "", "");
    // Kept warm (OpenCode's default) no process ends, so there is no exit code; cold,
    // OpenCode exits 1.
    for (slug, mode, exit_code) in [("t6", None, Value::Null), ("t6c", Some("--cold"), json!(1))] {
        let mut args = vec!["start", slug, "--message", "anything", "--json"];
        args.extend(mode);
        let run = world.ganger(&args);
        run.expect_code(1);
        let report = run.json();
        assert_eq!(report["status"], "failed");
        let reason = report["reason"].as_str().unwrap();
        assert!(reason.contains("500"), "{reason}");
        assert_eq!(report["exit_code"], exit_code, "{report:#}");
    }
}

#[test]
fn a_hanging_model_is_ended_by_the_stall_limit() {
    let script = Script::new().turn(Turn::fault(Fault::Hang));
    let (world, _llm) = world(script, "", "");
    let run = world.ganger(&[
        "start",
        "t7",
        "--message",
        "anything",
        "--stall",
        "12s",
        "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "stalled", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("12s"),
        "{report:#}"
    );
    let marker = format!("GANGER_ROUND={}", report["token"].as_str().unwrap());
    assert!(living_pids_with_env(&marker).is_empty());
}

#[test]
fn a_permission_set_to_ask_is_a_failure_not_a_success() {
    let script = Script::new()
        .turn(Turn::tool(
            "write",
            json!({"filePath": "x.txt", "content": "x\n"}),
        ))
        .text("Done.");
    let (world, _llm) = world(
        script,
        "",
        "[agents.opencode.config.permission]\nedit = \"ask\"\n",
    );
    // Cold: OpenCode's own question ends its run. (Kept warm, the question comes to ganger,
    // which answers it from the round's policy: docs/warm.md.)
    let run = world.ganger(&["start", "t8", "--message", "write x", "--cold", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("ask"),
        "{report:#}"
    );
    assert!(!world.worktree("t8").join("x.txt").exists());
}

/// With the gateway off (`[gateway] enabled = false`) the agent holds the key itself: it
/// reaches the model, and is removed from everything ganger writes. (With the gateway, the
/// default, the agent never holds it: gateway_agents.rs.)
#[test]
fn a_key_reaches_the_model_and_nothing_ganger_writes() {
    let secret = "sk-test-4f1c2b9e-0d3a-4e5b-9c7d-ganger";
    // The model makes the agent print its whole environment, key included.
    let script = Script::new()
        .turn(Turn::tool(
            "bash",
            json!({"command": "env; env >&2", "description": "print the environment"}),
        ))
        .text("Printed it.");
    let (world, llm) = world_with_key(
        script,
        "",
        "{env:MOCK_API_KEY}",
        "\n[gateway]\nenabled = false\n",
    );
    let key_file = world.root().join("mock.key");
    std::fs::write(&key_file, format!("{secret}\n")).unwrap();
    let key_arg = format!("mock={}", key_file.display());
    let run = world.ganger(&[
        "start",
        "t9",
        "--message",
        "show env",
        "--key",
        &key_arg,
        "--json",
    ]);
    run.expect_code(0);
    let requests = llm.requests();
    assert!(
        requests
            .iter()
            .filter(|r| r.tools_offered)
            .all(|r| r.header("authorization") == Some(&format!("Bearer {secret}"))),
        "the key did not reach the model"
    );
    // The agent did print it (the tool's output went back to the model)...
    let raw = std::fs::read_to_string(world.repo.join(".ganger/tasks/t9/round-1.jsonl")).unwrap();
    assert!(
        requests.iter().any(|r| r
            .body
            .as_ref()
            .is_some_and(|b| b.to_string().contains(&format!("MOCK_API_KEY={secret}")))),
        "{raw}"
    );
    // ...but nothing ganger wrote or printed holds it.
    for (path, bytes) in world.everything_written() {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(secret), "the key is in {}", path.display());
    }
    assert!(raw.contains("MOCK_API_KEY=[redacted:mock]"), "{raw}");
    for output in [
        run.stdout.clone(),
        world.ganger(&["status", "t9", "--json"]).stdout,
        world.ganger(&["status"]).stdout,
        world.ganger(&["log", "t9", "--raw"]).stdout,
        world.ganger(&["log", "t9", "--json"]).stdout,
    ] {
        assert!(!output.contains(secret));
    }
    // Only the key file's path is kept.
    let task = world.ganger(&["status", "t9", "--json"]).json();
    assert_eq!(task["status"], "done");
    let _: Value = task;
}

/// OpenCode adds `"$schema"` to a project's `opencode.json` that lacks it when it starts: that
/// is its own edit, not the task's work, and neither a round's changes nor the diff show it;
/// the agent's own edit of the file stays the task's.
fn opencodes_own_edit_is_not_the_tasks_work(extra: &str) {
    // OpenCode edits only a file read in the session: the agent reads it, then edits it.
    let script = two_rounds()
        .turn(Turn::tool("read", json!({"filePath": "opencode.json"})).when("third"))
        .turn(Turn::tool(
            "edit",
            json!({"filePath": "opencode.json", "oldString": "\"autoupdate\": false",
                   "newString": "\"autoupdate\": false,\n  \"share\": \"disabled\""}),
        ))
        .text("Done round 3.");
    let (world, _llm) = world(script, "", extra);
    let project = "{\n  \"autoupdate\": false\n}\n";
    world.write("opencode.json", project);
    world.git(&["add", "opencode.json"]);
    world.git(&["commit", "-q", "-m", "the project's OpenCode settings"]);
    let started = world.ganger(&[
        "start",
        "oc",
        "--message",
        "Write the first file.",
        "--json",
    ]);
    started.expect_code(0);
    assert_eq!(started.json()["changed"]["shown"], json!(["A round1.txt"]));
    let fixed = world.ganger(&["fix", "oc", "--message", "The second file.", "--json"]);
    fixed.expect_code(0);
    assert_eq!(fixed.json()["changed"]["shown"], json!(["A round2.txt"]));
    assert_eq!(
        fixed.json()["worktree_changes"]["shown"],
        json!(["A round1.txt", "A round2.txt"])
    );
    let worktree = world.worktree("oc");
    assert_eq!(
        std::fs::read_to_string(worktree.join("opencode.json")).unwrap(),
        project
    );
    let diff = world.ganger(&["diff", "oc", "--stat"]);
    assert!(!diff.stdout.contains("opencode.json"), "{}", diff.stdout);
    // The agent's own edit of the file is the task's work, without OpenCode's line.
    let third = world.ganger(&["fix", "oc", "--message", "The third change.", "--json"]);
    third.expect_code(0);
    assert_eq!(third.json()["changed"]["shown"], json!(["M opencode.json"]));
    assert_eq!(
        std::fs::read_to_string(worktree.join("opencode.json")).unwrap(),
        "{\n  \"autoupdate\": false,\n  \"share\": \"disabled\"\n}\n"
    );
    world.ganger(&["warm", "stop", "oc"]);
}

#[test]
fn opencodes_own_schema_line_is_not_the_tasks_work_warm() {
    opencodes_own_edit_is_not_the_tasks_work("");
}

#[test]
fn opencodes_own_schema_line_is_not_the_tasks_work_cold() {
    opencodes_own_edit_is_not_the_tasks_work("[warm]\ndefault = false\n");
}
