//! End-to-end: warm rounds with the real, pinned OpenCode kept alive over ACP (`opencode
//! acp`), against the scripted model server, driven by the real `ganger` binary. The
//! scenarios of issue 18: warm and cold rounds share one session, ganger decides tool
//! permissions (a refusal is logged and nothing is written), a killed warm host leaves no
//! process and the next round resumes the session, the idle limit stops the agent, and a
//! round cancelled mid-turn leaves the session usable. And issue 38's: a warm host whose
//! record cannot be read is still found, listed and stopped; a killed host's `TMPDIR` goes; a
//! foreground start says its agent stays warm; texts name no Rust type and log no refusal of
//! what OpenCode sends after each allowed edit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Fault, RecordedRequest, Script, Turn};
use ganger_test_support::{World, living_pids_with_env, opencode_toml, wait_until};
use serde_json::{Value, json};
use std::time::Duration;

/// A test's repository; its warm agents are stopped when it ends, passed or failed.
struct Warm(World);

impl std::ops::Deref for Warm {
    type Target = World;
    fn deref(&self) -> &World {
        &self.0
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        let _ = self.0.command(&["warm", "stop", "--all"]).output();
    }
}

fn world(script: Script, extra: &str) -> (Warm, FakeLlm) {
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &opencode_toml(&llm.base_url(), "", "not-a-secret-key", extra),
    );
    (Warm(world), llm)
}

/// The last request whose prompts include `text`.
fn request_with(llm: &FakeLlm, text: &str) -> RecordedRequest {
    llm.requests()
        .into_iter()
        .rfind(|r| r.tools_offered && r.prompts().iter().any(|p| p.contains(text)))
        .unwrap_or_else(|| panic!("no request carried {text:?}"))
}

fn warm_agents(world: &World) -> Vec<Value> {
    let listed = world.ganger(&["warm", "list", "--json"]);
    listed.expect_code(0);
    let document = listed.json();
    assert_eq!(document["schema"], "ganger.warm/1");
    document["agents"].as_array().unwrap().clone()
}

fn pid_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
    })
}

fn write_turn(file: &str, when: &str) -> Turn {
    Turn::tool(
        "write",
        json!({"filePath": file, "content": format!("{file}\n")}),
    )
    .when(when)
}

#[test]
fn warm_and_cold_rounds_continue_one_session() {
    let script = Script::new()
        .turn(write_turn("one.txt", "first file"))
        .text("Done one. {{history}}")
        .turn(write_turn("two.txt", "second file"))
        .text("Done two. {{history}}")
        .turn(write_turn("three.txt", "third file"))
        .text("Done three. {{history}}")
        .turn(write_turn("four.txt", "fourth file"))
        .text("Done four. {{history}}");
    let warm = "[warm]\ndefault = true\n";
    let (world, llm) = world(script, warm);

    let first = world.ganger(&["start", "w1", "--message", "write the first file", "--json"]);
    first.expect_code(0);
    let report = first.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["changed"]["shown"], json!(["A one.txt"]));
    let session = report["session"].as_str().unwrap().to_owned();
    assert!(session.starts_with("ses_"), "{session}");
    let stream =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/w1/round-1.jsonl")).unwrap();
    let opening: Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
    assert_eq!(opening["ganger"], "turn", "{stream}");
    assert_eq!(opening["session"], session.as_str());

    let agents = warm_agents(&world);
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_eq!(agents[0]["slug"], "w1");
    assert_eq!(agents[0]["session"], session.as_str());
    assert!(
        agents[0]["memory_bytes"].as_u64().unwrap() > 20_000_000,
        "{agents:#?}"
    );
    let host = agents[0]["host_pid"].as_i64().unwrap();
    let status = world.ganger(&["status", "w1", "--json"]).json();
    assert_eq!(
        status["warm"]["host_pid"].as_i64(),
        Some(host),
        "{status:#}"
    );
    assert!(status["warm"]["memory_bytes"].as_u64().unwrap() > 20_000_000);

    let second = world.ganger(&["fix", "w1", "--message", "write the second file", "--json"]);
    second.expect_code(0);
    let report = second.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["session"], session.as_str());
    assert_eq!(report["changed"]["shown"], json!(["A two.txt"]));
    assert_eq!(
        warm_agents(&world)[0]["host_pid"],
        host,
        "the same warm agent"
    );

    // A cold round in between continues the same session, and so does the warm one after it.
    world.write(
        "ganger.toml",
        &opencode_toml(
            &llm.base_url(),
            "",
            "not-a-secret-key",
            "[warm]\ndefault = false\n",
        ),
    );
    let third = world.ganger(&["fix", "w1", "--message", "write the third file", "--json"]);
    third.expect_code(0);
    assert_eq!(third.json()["session"], session.as_str());
    let cold_stream =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/w1/round-3.jsonl")).unwrap();
    assert!(
        cold_stream.contains(r#""type":"step_start""#),
        "{cold_stream}"
    );
    world.write(
        "ganger.toml",
        &opencode_toml(&llm.base_url(), "", "not-a-secret-key", warm),
    );
    let fourth = world.ganger(&["fix", "w1", "--message", "write the fourth file", "--json"]);
    fourth.expect_code(0);
    assert_eq!(fourth.json()["status"], "done");
    assert_eq!(fourth.json()["session"], session.as_str());
    let seen = request_with(&llm, "write the fourth file").prompts();
    for earlier in ["first", "second", "third"] {
        assert!(
            seen.iter()
                .any(|p| p.contains(&format!("write the {earlier} file"))),
            "the model saw {seen:?}"
        );
    }
    for file in ["one.txt", "two.txt", "three.txt", "four.txt"] {
        assert!(world.worktree("w1").join(file).is_file(), "{file}");
    }

    // A prompt that starts with '/' would name an agent command over ACP: it runs cold.
    world.ganger(&[
        "fix",
        "w1",
        "--message",
        "/not-a-command say hello",
        "--json",
    ]);
    let stream =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/w1/round-5.jsonl")).unwrap();
    assert!(stream.contains(r#""type":"step_start""#), "{stream}");
    let err =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/w1/round-5.err")).unwrap();
    assert!(
        err.contains("runs cold") && err.contains("starts with '/'"),
        "{err}"
    );

    // Issue 38.18: OpenCode asks the client to write each edit it was allowed
    // (`fs/write_text_file`, whatever the client said it serves); refused, it logged a stack
    // trace of the refusal.
    let log = std::fs::read_to_string(world.root().join("repo/.ganger/tasks/w1/warm.log")).unwrap();
    assert!(
        !log.contains("RequestError") && !log.contains("does not serve"),
        "{log}"
    );

    world.ganger(&["warm", "stop", "w1"]).expect_code(0);
    assert!(warm_agents(&world).is_empty());
    assert!(
        world
            .ganger(&["status", "w1", "--json"])
            .json()
            .get("warm")
            .is_none()
    );
    assert!(wait_until(Duration::from_secs(10), || !pid_alive(host)));
}

#[test]
fn ganger_refuses_what_the_policy_denies_logs_it_and_nothing_is_written() {
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("escaped.txt");
    let script = Script::new()
        .turn(
            Turn::tool(
                "bash",
                json!({"command": "git push origin main > pushed.txt", "description": "push"}),
            )
            .when("push it"),
        )
        .text("I could not push.")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": outside_file.to_string_lossy(), "content": "out\n"}),
            )
            .when("write outside"),
        )
        .text("I could not write there.");
    let extra = "[warm]\ndefault = true\n\n[permissions]\ndeny = [\"execute:git push*\"]\n";
    let (world, _llm) = world(script, extra);

    let pushed = world.ganger(&["start", "p1", "--message", "push it", "--json"]);
    let report = pushed.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.contains("refused") && reason.contains("git push"),
        "{reason}"
    );
    assert!(!world.worktree("p1").join("pushed.txt").exists());
    let log =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/p1/round-1.jsonl")).unwrap();
    let decision: Value = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["ganger"] == "permission")
        .unwrap_or_else(|| panic!("no decision in {log}"));
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["kind"], "execute");
    assert!(
        decision["input"].to_string().contains("git push"),
        "{decision}"
    );
    assert!(
        decision["rule"].as_str().unwrap().contains("[permissions]"),
        "{decision}"
    );

    let escaped = world.ganger(&["fix", "p1", "--message", "write outside", "--json"]);
    let report = escaped.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .contains("outside the worktree"),
        "{report:#}"
    );
    assert!(!outside_file.exists());
}

#[test]
fn a_killed_warm_host_leaves_nothing_running_and_the_next_round_resumes_the_session() {
    let script = Script::new()
        .turn(
            Turn::tool(
                "bash",
                json!({"command": "sleep 300", "description": "wait a long time"}),
            )
            .when("long command"),
        )
        .text("The command finished.")
        .turn(write_turn("after.txt", "after the crash"))
        .text("Resumed. {{history}}");
    let (world, llm) = world(script, "");
    world
        .ganger(&[
            "start",
            "k1",
            "--warm",
            "--message",
            "run the long command",
            "--detach",
        ])
        .expect_code(0);
    let mut warm = Vec::new();
    assert!(wait_until(Duration::from_secs(120), || {
        warm = warm_agents(&world);
        !warm.is_empty()
    }));
    let host = warm[0]["host_pid"].as_i64().unwrap();
    let marker = format!("GANGER_ROUND={}", warm[0]["token"].as_str().unwrap());
    assert!(wait_until(Duration::from_secs(90), || {
        living_pids_with_env(&marker).iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with("sleep"))
        })
    }));
    let session = world.ganger(&["status", "k1", "--json"]).json()["session"]
        .as_str()
        .map(str::to_owned);

    let killed = std::process::Command::new("kill")
        .args(["-9", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    world.ganger(&["wait", "k1"]);
    let report = world.ganger(&["status", "k1", "--json"]).json();
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert!(
        wait_until(Duration::from_secs(10), || living_pids_with_env(&marker)
            .is_empty()),
        "left running: {:?}",
        living_pids_with_env(&marker)
            .iter()
            .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default())
            .collect::<Vec<_>>()
    );

    let resumed = world.ganger(&["fix", "k1", "--message", "after the crash", "--json"]);
    resumed.expect_code(0);
    let report = resumed.json();
    assert_eq!(report["status"], "done", "{report:#}");
    if let Some(session) = session {
        assert_eq!(report["session"], session.as_str());
    }
    let seen = request_with(&llm, "after the crash").prompts();
    assert!(
        seen.iter().any(|p| p.contains("run the long command")),
        "the model saw {seen:?}"
    );
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
}

/// The first line of a round's stream: a warm round's opens with the warm host's `turn`.
fn opening(world: &World, slug: &str) -> Value {
    let path = world
        .root()
        .join(format!("repo/.ganger/tasks/{slug}/round-1.jsonl"));
    let stream = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(stream.lines().next().unwrap()).unwrap()
}

#[test]
fn opencode_is_warm_unless_told_otherwise() {
    let (world, _llm) = world(Script::new().default_answer("Hello."), "");
    for (slug, flag) in [("d1", None), ("d2", Some("--cold")), ("d3", Some("--warm"))] {
        let mut args = vec!["start", slug, "--message", "say hello", "--json"];
        args.extend(flag);
        let report = world.ganger(&args).json();
        assert_eq!(report["status"], "done", "{report:#}");
    }
    assert_eq!(opening(&world, "d1")["ganger"], "turn");
    assert_ne!(opening(&world, "d2")["ganger"], "turn");
    assert_eq!(opening(&world, "d3")["ganger"], "turn");
    let slugs: Vec<Value> = warm_agents(&world)
        .iter()
        .map(|agent| agent["slug"].clone())
        .collect();
    assert_eq!(slugs, [json!("d1"), json!("d3")]);

    world.write(
        "ganger.toml",
        &std::fs::read_to_string(world.repo.join("ganger.toml"))
            .unwrap()
            .replace(
                "[agents.opencode]",
                "[warm]\ndefault = false\n\n[agents.opencode]",
            ),
    );
    let report = world
        .ganger(&["start", "d4", "--message", "say hello", "--json"])
        .json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_ne!(opening(&world, "d4")["ganger"], "turn");
}

#[test]
fn the_idle_limit_stops_the_warm_agent() {
    let (world, _llm) = world(
        Script::new().text("Hello."),
        "[warm]\ndefault = true\nidle = \"3s\"\n",
    );
    world
        .ganger(&["start", "i1", "--message", "say hello", "--json"])
        .expect_code(0);
    let agents = warm_agents(&world);
    assert_eq!(agents.len(), 1);
    let (host, agent) = (
        agents[0]["host_pid"].as_i64().unwrap(),
        agents[0]["agent_pid"].as_i64().unwrap(),
    );
    assert!(wait_until(Duration::from_secs(30), || warm_agents(&world).is_empty()));
    // The host leaves the list first, then stops its agent with SIGTERM and, after the round
    // grace (10 s), SIGKILL: an OpenCode slow to end on a loaded machine takes all of it.
    assert!(wait_until(Duration::from_secs(30), || !pid_alive(host)
        && !pid_alive(agent)));
    let log = std::fs::read_to_string(world.root().join("repo/.ganger/tasks/i1/warm.log")).unwrap();
    assert!(log.contains("idle for 3s"), "{log}");
}

#[test]
fn a_round_cancelled_mid_turn_leaves_the_session_usable() {
    let script = Script::new()
        .turn(Turn::fault(Fault::Hang).when("hang now").times(1))
        .turn(Turn::text("Back again. {{history}}").when("after the cancel"));
    let (world, llm) = world(script, "[warm]\ndefault = true\n");
    world
        .ganger(&["start", "c1", "--message", "hang now", "--detach"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(120), || {
        llm.requests()
            .iter()
            .any(|r| r.tools_offered && r.prompts().iter().any(|p| p.contains("hang now")))
    }));
    let host = warm_agents(&world)[0]["host_pid"].as_i64().unwrap();
    world.ganger(&["cancel", "c1"]).expect_code(0);
    world.ganger(&["wait", "c1"]);
    let report = world.ganger(&["status", "c1", "--json"]).json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    let session = report["session"].as_str().unwrap().to_owned();

    let next = world.ganger(&["fix", "c1", "--message", "after the cancel", "--json"]);
    next.expect_code(0);
    let report = next.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["session"], session.as_str());
    assert!(
        report["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("Back again"),
        "{report:#}"
    );
    assert_eq!(
        warm_agents(&world)[0]["host_pid"],
        host,
        "the same warm agent served the round after the cancel"
    );
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
}

#[test]
fn a_new_warm_agent_past_the_cap_stops_the_least_recently_used_idle_one() {
    let (world, _llm) = world(
        Script::new().text("Hello.").repeat(true),
        "[warm]\ndefault = true\nmax = 1\n",
    );
    world
        .ganger(&["start", "e1", "--message", "say hello"])
        .expect_code(0);
    let first = warm_agents(&world);
    assert_eq!(first.len(), 1);
    let first_host = first[0]["host_pid"].as_i64().unwrap();
    world
        .ganger(&["start", "e2", "--message", "say hello too"])
        .expect_code(0);
    let now = warm_agents(&world);
    assert_eq!(now.len(), 1, "{now:#?}");
    assert_eq!(now[0]["slug"], "e2");
    assert!(wait_until(Duration::from_secs(10), || !pid_alive(
        first_host
    )));
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
}

#[test]
fn a_repository_never_stops_another_repositorys_warm_agent_of_the_same_slug() {
    let (first, _llm) = world(
        Script::new().text("Hello.").repeat(true),
        "[warm]\ndefault = true\n",
    );
    let (second, _llm2) = world(
        Script::new().text("Hello.").repeat(true),
        "[warm]\ndefault = true\n",
    );
    first
        .ganger(&["start", "same", "--message", "say hello"])
        .expect_code(0);
    let agent = warm_agents(&first)[0]["agent_pid"].as_i64().unwrap();
    // The second repository's new warm agent looks for orphans of its own repository.
    second
        .ganger(&["start", "same", "--message", "say hello"])
        .expect_code(0);
    assert_eq!(warm_agents(&second).len(), 1);
    assert!(pid_alive(agent), "the first repository's agent was stopped");
    assert_eq!(warm_agents(&first).len(), 1);
}

/// OpenCode's ACP reports a turn's tokens only at its end: the warm host reads them from
/// OpenCode's records while the turn runs, so a budget stops the round at the step that
/// reaches it, as cold.
#[test]
fn a_budget_reached_by_an_early_step_stops_the_warm_round_mid_turn() {
    let bash =
        |command: &str| Turn::tool("bash", json!({"command": command, "description": "run it"}));
    let script = Script::new()
        .turn(bash("true"))
        .turn(bash("sleep 60"))
        .text("Done.");
    let (world, _llm) = world(script, "");
    let started = std::time::Instant::now();
    let report = world
        .ganger(&[
            "start",
            "b1",
            "--message",
            "run the commands",
            "--budget-tokens",
            "1000",
            "--json",
        ])
        .json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .contains("budget of 1000 tokens for task b1 reached"),
        "{report:#}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "not stopped mid-turn: {:?}",
        started.elapsed()
    );
    assert_eq!(
        opening(&world, "b1")["ganger"],
        "turn",
        "the round ran warm"
    );
    let refused = world.ganger(&["fix", "b1", "--message", "more"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("has spent its budget"),
        "{}",
        refused.stderr
    );
}

/// Issue 38.15: a warm host whose record (`warm.json`) cannot be read is found through its
/// claim: `warm list` shows it and `warm stop` stops it, and the task's next round stops it
/// (it holds the session) and runs cold at once, saying why, instead of waiting for the old
/// host's idle limit and then naming another cause.
#[test]
fn a_warm_host_whose_record_cannot_be_read_is_listed_stopped_and_run_past() {
    let (world, _llm) = world(
        Script::new().text("Hello.").repeat(true),
        "[warm]\ndefault = true\nidle = \"120s\"\n",
    );
    for slug in ["u1", "u2"] {
        world
            .ganger(&["start", slug, "--message", "say hello"])
            .expect_code(0);
    }
    let before = warm_agents(&world);
    let host = |slug: &str| {
        before
            .iter()
            .find(|agent| agent["slug"] == slug)
            .unwrap_or_else(|| panic!("no warm agent of {slug}: {before:#?}"))["host_pid"]
            .as_i64()
            .unwrap()
    };
    let (host1, host2) = (host("u1"), host("u2"));
    for slug in ["u1", "u2"] {
        world.write(&format!(".ganger/tasks/{slug}/warm.json"), "{ not json");
    }

    let listed = warm_agents(&world);
    assert_eq!(listed.len(), 2, "{listed:#?}");
    for agent in &listed {
        let slug = agent["slug"].as_str().unwrap();
        assert_eq!(agent["host_pid"], host(slug), "{agent:#}");
        assert!(
            agent["unreadable"]
                .as_str()
                .is_some_and(|why| why.contains("warm.json")),
            "{agent:#}"
        );
    }
    let text = world.ganger(&["warm", "list"]);
    assert!(
        text.stdout.contains("u1") && text.stdout.contains("cannot be read"),
        "{}",
        text.stdout
    );

    let stopped = world.ganger(&["warm", "stop", "u1", "--json"]);
    stopped.expect_code(0);
    assert_eq!(stopped.json()["stopped"], json!(["u1"]));
    assert!(wait_until(Duration::from_secs(15), || !pid_alive(host1)));

    let started = std::time::Instant::now();
    let fix = world.ganger(&["fix", "u2", "--message", "say hello again", "--json"]);
    fix.expect_code(0);
    assert_eq!(fix.json()["status"], "done", "{}", fix.stdout);
    assert!(
        started.elapsed() < Duration::from_secs(90),
        "the round waited {:?}",
        started.elapsed()
    );
    let said =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/u2/round-2.err")).unwrap();
    assert!(
        said.contains("runs cold") && said.contains("warm.json"),
        "{said}"
    );
    let stream =
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/u2/round-2.jsonl")).unwrap();
    assert!(
        stream.contains(r#""type":"step_start""#),
        "ran warm: {stream}"
    );
    assert!(wait_until(Duration::from_secs(15), || !pid_alive(host2)));
}

/// The private temporary directories (`TMPDIR`, `ganger-r*` in the world's temporary
/// directory) of the world's agents.
fn agent_tmp_dirs(world: &World) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(world.tmp())
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("ganger-r"))
        .map(|entry| entry.path())
        .collect();
    dirs.sort();
    dirs
}

/// Starts warm task `slug` and returns its warm host's pid and its agent's `TMPDIR`.
fn warm_start(world: &World, slug: &str) -> (i64, std::path::PathBuf) {
    world
        .ganger(&["start", slug, "--message", "say hello"])
        .expect_code(0);
    let agent = warm_agents(world)
        .into_iter()
        .find(|agent| agent["slug"] == slug)
        .unwrap();
    let environ = std::fs::read(format!(
        "/proc/{}/environ",
        agent["agent_pid"].as_i64().unwrap()
    ))
    .unwrap();
    let tmp = environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(b"TMPDIR="))
        .map(|path| std::path::PathBuf::from(String::from_utf8_lossy(path).into_owned()))
        .unwrap();
    assert!(tmp.is_dir(), "{}", tmp.display());
    (agent["host_pid"].as_i64().unwrap(), tmp)
}

/// Kills `pid` with SIGKILL and waits until every thread of it has ended: a leader killed
/// shows as a zombie while its other threads still exit, holding its files and their locks.
fn kill_outright(pid: i64) {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(wait_until(Duration::from_secs(10), || {
        let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
        threads == 0 || (threads == 1 && !pid_alive(pid))
    }));
}

/// Issue 38.16: a warm host killed outright (SIGKILL) left its agent's private `TMPDIR` (5.4 MB
/// with OpenCode) for good. `clean --dry-run` names it, the next start, `clean` and the
/// reaper (`status`) remove it; a live host's is never touched.
#[test]
fn the_temporary_directory_of_a_killed_warm_host_goes_and_a_live_ones_stays() {
    let (world, _llm) = world(
        Script::new().text("Hello.").repeat(true),
        "[warm]\ndefault = true\n",
    );
    let (host1, tmp1) = warm_start(&world, "t1");
    world.ganger(&["status"]).expect_code(0);
    world.ganger(&["clean", "--dry-run"]).expect_code(0);
    assert!(tmp1.is_dir(), "a live warm host's TMPDIR was removed");

    kill_outright(host1);
    assert!(tmp1.is_dir(), "nothing left to remove");
    let dry = world.ganger(&["clean", "--dry-run", "--json"]);
    dry.expect_code(0);
    let named = dry.json()["temporary_dirs"].clone();
    assert_eq!(named, json!([tmp1.to_string_lossy()]), "{}", dry.stdout);
    assert!(tmp1.is_dir(), "a dry run removed it");
    let (host2, tmp2) = warm_start(&world, "t2");
    assert!(!tmp1.exists(), "the next start left {}", tmp1.display());
    assert!(tmp2.is_dir());

    kill_outright(host2);
    let clean = world.ganger(&["clean", "t2", "--json"]);
    clean.expect_code(0);
    assert_eq!(
        clean.json()["temporary_dirs"],
        json!([tmp2.to_string_lossy()]),
        "{}",
        clean.stdout
    );
    assert!(!tmp2.exists(), "clean left {}", tmp2.display());

    let (host3, tmp3) = warm_start(&world, "t3");
    kill_outright(host3);
    world.ganger(&["status"]).expect_code(0);
    assert!(!tmp3.exists(), "the reaper left {}", tmp3.display());
    assert_eq!(agent_tmp_dirs(&world), Vec::<std::path::PathBuf>::new());
}

/// Issue 38.17: `[warm] memory` has a default, a quarter of the machine's memory, and a
/// foreground `start` says once that its agent stays warm and how to stop it (it left a
/// 570 MB process behind without a word).
#[test]
fn a_foreground_start_says_its_agent_stays_warm_and_memory_has_a_default_cap() {
    let (world, _llm) = world(Script::new().text("Hello.").repeat(true), "");
    let start = world.ganger(&["start", "s1", "--message", "say hello"]);
    start.expect_code(0);
    assert!(
        start.stderr.contains("stays warm") && start.stderr.contains("ganger warm stop s1"),
        "{}",
        start.stderr
    );
    assert_eq!(
        start.stderr.matches("stays warm").count(),
        1,
        "{}",
        start.stderr
    );
    let fix = world.ganger(&["fix", "s1", "--message", "say hello again"]);
    fix.expect_code(0);
    assert!(
        !fix.stderr.contains("stays warm"),
        "said again: {}",
        fix.stderr
    );
    let json = world.ganger(&["start", "s2", "--message", "say hello", "--json"]);
    json.expect_code(0);
    assert!(!json.stderr.contains("stays warm"), "{}", json.stderr);

    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total_kb: u64 = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap();
    let listed = world.ganger(&["warm", "list", "--json"]).json();
    assert_eq!(
        listed["memory_limit_bytes"],
        total_kb * 1024 / 4,
        "{listed:#}"
    );
    let text = world.ganger(&["warm", "list"]).stdout;
    assert!(text.contains("[warm] memory"), "{text}");
}

/// Issue 38.18: a warm round stopped by its host's end named a Rust type in its reason
/// ("WarmAgent: the warm host stopped: ...").
#[test]
fn a_warm_round_whose_host_was_stopped_says_why_in_words() {
    let script = Script::new()
        .turn(Turn::fault(Fault::Hang).when("hang now").times(1))
        .text("Back.");
    let (world, llm) = world(script, "[warm]\ndefault = true\n");
    world
        .ganger(&["start", "h1", "--message", "hang now", "--detach"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(120), || {
        llm.requests()
            .iter()
            .any(|r| r.tools_offered && r.prompts().iter().any(|p| p.contains("hang now")))
    }));
    let host = warm_agents(&world)[0]["host_pid"].as_i64().unwrap();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &host.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    world.ganger(&["wait", "h1"]);
    let report = world.ganger(&["status", "h1", "--json"]).json();
    assert_eq!(report["status"], "interrupted", "{report:#}");
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.contains("the warm host stopped: it was sent SIGTERM"),
        "{reason}"
    );
    assert!(!reason.contains("WarmAgent"), "{reason}");
}
