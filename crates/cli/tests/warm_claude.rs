//! End-to-end: warm rounds with the real, pinned Claude Code kept alive as one long-lived
//! `claude -p --input-format stream-json` process (Claude's own protocol, not ACP), against
//! the scripted model server, driven by the real `ganger` binary: warm and cold rounds share
//! one session (a process started in another session is replaced), and ganger answers Claude's
//! tool questions from the policy (a refusal is logged and nothing is written).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Fault, Script, Turn};
use ganger_test_support::{PgDatabase, World, agent_toml, living_pids_with_env, wait_until};
use serde_json::{Value, json};
use std::time::Duration;

/// A test's repository; its warm agents are stopped when it ends, passed or failed.
struct Warm(World, FakeLlm);

impl Drop for Warm {
    fn drop(&mut self) {
        let _ = self.0.command(&["warm", "stop", "--all"]).output();
    }
}

impl Warm {
    fn new(script: impl FnOnce(&std::path::Path) -> Script, extra: &str) -> Warm {
        let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
        let llm = FakeLlm::start(script(world.root())).unwrap();
        let warm = Warm(world, llm);
        warm.configure(extra);
        warm
    }

    fn configure(&self, extra: &str) {
        // A grace of 2 s: a cancelled round stops waiting for its warm turn sooner.
        let limits = "timeout = \"150s\"\nstall = \"60s\"\ngrace = \"2s\"";
        self.0.write(
            "ganger.toml",
            &agent_toml("claude", &self.1.root_url(), limits, extra),
        );
    }

    fn stream(&self, slug: &str, round: u32) -> String {
        let path = self
            .0
            .root()
            .join(format!("repo/.ganger/tasks/{slug}/round-{round}.jsonl"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The body of the model's last request that carried a conversation, and its prompts.
    fn last_request(&self) -> (Value, Vec<String>) {
        let last = self
            .1
            .requests()
            .into_iter()
            .rfind(|r| r.conversation.is_some())
            .unwrap();
        let prompts = last
            .conversation
            .as_ref()
            .map(|c| c.prompts().into_iter().map(str::to_owned).collect())
            .unwrap_or_default();
        (last.body.unwrap_or_default(), prompts)
    }

    fn warm_agents(&self) -> Vec<Value> {
        let listed = self.0.ganger(&["warm", "list", "--json"]);
        listed.expect_code(0);
        listed.json()["agents"].as_array().unwrap().clone()
    }
}

fn write(worktree: &std::path::Path, file: &str, when: &str) -> Turn {
    Turn::tool(
        "Write",
        json!({"file_path": worktree.join(file).to_string_lossy(), "content": format!("{file}\n")}),
    )
    .when(when)
}

const WARM: &str = "[warm]\ndefault = true\n";

#[test]
fn warm_and_cold_rounds_continue_one_session_and_a_process_in_another_is_replaced() {
    let w = Warm::new(
        |root| {
            let worktree = root.join("repo-agent-w1");
            Script::new()
                .turn(write(&worktree, "one.txt", "first file"))
                .text("Done one. {{history}}")
                .turn(write(&worktree, "two.txt", "second file"))
                .text("Done two. {{history}}")
                .turn(write(&worktree, "three.txt", "third file"))
                .text("Done three. {{history}}")
                .turn(write(&worktree, "four.txt", "fourth file"))
                .text("Done four. {{history}}")
        },
        WARM,
    );
    let world = &w.0;
    let first = world
        .ganger(&["start", "w1", "--message", "write the first file", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    let session = first["session"].as_str().unwrap().to_owned();
    let opening: Value = serde_json::from_str(w.stream("w1", 1).lines().next().unwrap()).unwrap();
    assert_eq!(opening["ganger"], "turn");
    assert_eq!(opening["session"], session.as_str());
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_eq!(agents[0]["session"], session.as_str());
    assert_eq!(agents[0]["agent"], "claude");
    let host = agents[0]["host_pid"].clone();

    let second = world
        .ganger(&["fix", "w1", "--message", "write the second file", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], session.as_str());
    assert_eq!(w.warm_agents()[0]["host_pid"], host, "the same process");

    // A cold round in between: the warm process is no longer at the session's end, so the
    // next warm round gets a new process that resumes the session.
    w.configure("[warm]\ndefault = false\n");
    let third = world
        .ganger(&["fix", "w1", "--message", "write the third file", "--json"])
        .json();
    assert_eq!(third["status"], "done", "{third:#}");
    assert_eq!(third["session"], session.as_str());
    assert!(
        !w.stream("w1", 3).contains(r#""ganger":"turn""#),
        "round 3 ran cold"
    );
    w.configure(WARM);
    let fourth = world
        .ganger(&["fix", "w1", "--message", "write the fourth file", "--json"])
        .json();
    assert_eq!(fourth["status"], "done", "{fourth:#}");
    assert_eq!(fourth["session"], session.as_str());
    assert!(w.stream("w1", 4).contains(r#""ganger":"turn""#));
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_ne!(agents[0]["host_pid"], host, "a new process");
    let (_, prompts) = w.last_request();
    for earlier in ["first", "second", "third", "fourth"] {
        assert!(
            prompts
                .iter()
                .any(|p| p.contains(&format!("write the {earlier} file"))),
            "the model saw {prompts:?}"
        );
    }
    for file in ["one.txt", "two.txt", "three.txt", "four.txt"] {
        assert!(world.worktree("w1").join(file).is_file(), "{file}");
    }
    let old = host.as_i64().unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        !std::path::Path::new(&format!("/proc/{old}")).exists()
    }));
}

#[test]
fn ganger_answers_claudes_tool_questions_refusals_are_logged_and_nothing_is_written() {
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("escaped.txt");
    let outside_text = outside_file.to_string_lossy().into_owned();
    let w = Warm::new(
        |_| {
            Script::new()
                .turn(
                    Turn::tool(
                        "Bash",
                        json!({"command": "git push origin main > pushed.txt", "description": "push"}),
                    )
                    .when("push it"),
                )
                .text("I could not push.")
                .turn(
                    Turn::tool(
                        "Write",
                        json!({"file_path": outside_text, "content": "out\n"}),
                    )
                    .when("write outside"),
                )
                .text("I could not write there.")
        },
        "[warm]\ndefault = true\n\n[permissions]\ndeny = [\"execute:git push*\"]\n",
    );
    let world = &w.0;
    let report = world
        .ganger(&["start", "p1", "--message", "push it", "--json"])
        .json();
    assert_eq!(report["status"], "failed", "{report:#}");
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.contains("refused by ganger") && reason.contains("git push"),
        "{reason}"
    );
    assert!(!world.worktree("p1").join("pushed.txt").exists());
    let log = w.stream("p1", 1);
    let decision: Value = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["ganger"] == "permission")
        .unwrap_or_else(|| panic!("no decision in {log}"));
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["tool"], "Bash");
    assert_eq!(decision["kind"], "execute");
    assert!(
        decision["rule"].as_str().unwrap().contains("[permissions]"),
        "{decision}"
    );
    // The model was told why (Claude gives the refusal as the call's result).
    let told = w.1.requests().iter().any(|r| {
        r.body.as_ref().is_some_and(|b| {
            b.to_string()
                .contains("refused by ganger (deny \\\"execute:git push*\\\"")
        })
    });
    assert!(told, "the model was not told ganger's reason");

    let report = world
        .ganger(&["fix", "p1", "--message", "write outside", "--json"])
        .json();
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

/// The person's side of `ganger attach`, for a test: Claude's interactive form is given each
/// line typed as a headless turn of its own (`claude -p --resume SESSION ... LINE`) in the
/// session; every other call goes to the real Claude Code.
const PERSON: &str = r#"#!/bin/bash
for arg in "$@"; do [ "$arg" = -p ] && exec "$REAL_CLAUDE" "$@"; done
while IFS= read -r line; do
  "$REAL_CLAUDE" -p --output-format json "$@" -- "$line" < /dev/null > /dev/null || exit 1
done
"#;

#[test]
fn attach_stops_the_warm_agent_and_the_next_round_sees_the_persons_turns() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let w = Warm::new(|_| Script::new().default_answer("Noted."), WARM);
    let world = &w.0;
    let person = world.root().join("claude-person");
    std::fs::write(&person, PERSON).unwrap();
    std::fs::set_permissions(&person, std::fs::Permissions::from_mode(0o755)).unwrap();
    let real = ganger_test_support::agent_program("claude");
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    let quoted = |p: &std::path::Path| serde_json::to_string(&p.to_string_lossy()).unwrap();
    assert!(
        toml.contains(&quoted(&real)) && toml.contains("[agents.claude.env]\n"),
        "{toml}"
    );
    world.write(
        "ganger.toml",
        &toml.replace(&quoted(&real), &quoted(&person)).replace(
            "[agents.claude.env]\n",
            &format!("[agents.claude.env]\nREAL_CLAUDE = {}\n", quoted(&real)),
        ),
    );

    let first = world
        .ganger(&["start", "a1", "--message", "the first round", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    assert_eq!(w.warm_agents().len(), 1);

    let mut attach = world.command(&["attach", "a1"]);
    attach
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the person at the terminal"
    )]
    let mut attached = attach.spawn().unwrap();
    let mut stdin = attached.stdin.take().unwrap();
    stdin.write_all(b"a turn typed by hand\n").unwrap();
    drop(stdin);
    let done = ganger_test_support::Run::from(attached.wait_with_output().unwrap());
    done.expect_code(0);
    assert!(
        done.stdout.contains("stopped a1's warm agent"),
        "{}",
        done.stdout
    );
    assert!(w.warm_agents().is_empty());

    let second = world
        .ganger(&["fix", "a1", "--message", "the second round", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    assert!(
        w.stream("a1", 2).contains(r#""ganger":"turn""#),
        "round 2 ran warm"
    );
    let (_, prompts) = w.last_request();
    let position = |text: &str| prompts.iter().position(|p| p.contains(text));
    assert!(
        position("the first round") < position("a turn typed by hand")
            && position("a turn typed by hand") < position("the second round")
            && position("the first round").is_some(),
        "the model saw {prompts:?}"
    );
}

#[test]
fn a_round_on_another_model_gets_an_agent_of_its_own_in_the_same_session() {
    let w = Warm::new(|_| Script::new().default_answer("Noted."), WARM);
    let world = &w.0;
    let first = world
        .ganger(&["start", "m1", "--message", "on the first model", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    let host = w.warm_agents()[0]["host_pid"].clone();
    let second = world
        .ganger(&[
            "fix",
            "m1",
            "--message",
            "on another model",
            "-m",
            "claude-other-model",
            "--json",
        ])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    assert!(
        w.stream("m1", 2).contains(r#""ganger":"turn""#),
        "round 2 ran warm"
    );
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_ne!(agents[0]["host_pid"], host, "a new agent for the new model");
    assert_eq!(agents[0]["model"], "claude-other-model");
    let (body, prompts) = w.last_request();
    assert_eq!(body["model"], "claude-other-model", "{body}");
    assert!(
        prompts.iter().any(|p| p.contains("on the first model")),
        "the model saw {prompts:?}"
    );
}

/// `ganger serve`, killed when the test ends, passed or failed.
struct Serve(std::process::Child);

/// The warm host `host` and every process of its agent (`marker`) have ended, and no warm
/// agent is listed.
fn nothing_left(w: &Warm, host: i64, marker: &str) {
    assert!(
        wait_until(Duration::from_secs(20), || living_pids_with_env(marker)
            .is_empty()
            && !std::path::Path::new(&format!("/proc/{host}")).exists()),
        "left running: {:?}",
        living_pids_with_env(marker)
    );
    assert!(w.warm_agents().is_empty());
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test runs `ganger serve` beside the rounds, to kill it"
)]
fn ganger_serve_owns_the_warm_agents_it_starts_and_they_end_with_it_even_killed() {
    let w = Warm::new(
        |root| {
            let worktree = root.join("repo-agent-s1");
            Script::new()
                .turn(write(&worktree, "one.txt", "first file"))
                .text("Done one. {{history}}")
                .turn(
                    Turn::tool(
                        "Bash",
                        json!({"command": "tail -f /dev/null", "description": "follow nothing"}),
                    )
                    .when("long command"),
                )
                .text("The command finished.")
                .turn(write(&worktree, "three.txt", "after serve"))
                .text("Done three. {{history}}")
        },
        WARM,
    );
    let world = &w.0;
    let mut serve = Serve(
        world
            .command(&["serve"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let serve_pid = serve.0.id();
    // serve's keeper of warm hosts listens on a socket in the state directory's run directory.
    let run = world.root().join("repo/.ganger/run");
    assert!(
        wait_until(Duration::from_secs(60), || {
            std::fs::read_dir(&run).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("k-"))
            })
        }),
        "serve never listened for warm hosts"
    );

    // The round's environment, which serve does not have, is the warm agent's.
    let first = ganger_test_support::Run::from(
        world
            .command(&["start", "s1", "--message", "write the first file", "--json"])
            .env("ROUND_OWN_FOR_TEST", "from-the-round")
            .output()
            .unwrap(),
    )
    .json();
    assert_eq!(first["status"], "done", "{first:#}");
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_eq!(agents[0]["kept_by"], serve_pid, "{agents:#?}");
    let agent_env = std::fs::read(format!("/proc/{}/environ", agents[0]["agent_pid"])).unwrap();
    assert!(
        agent_env
            .split(|b| *b == 0)
            .any(|entry| entry == b"ROUND_OWN_FOR_TEST=from-the-round"),
        "the warm agent has serve's environment, not the round's"
    );
    let host = agents[0]["host_pid"].as_i64().unwrap();
    let marker = format!("GANGER_ROUND={}", agents[0]["token"].as_str().unwrap());
    // The task table shows the warm agent too, with its memory.
    let table = world.ganger(&["status", "--json"]).json();
    assert_eq!(table["tasks"][0]["warm"]["kept_by"], serve_pid, "{table:#}");
    assert_eq!(
        table["tasks"][0]["warm"]["kept_by_command"], "serve",
        "{table:#}"
    );
    assert!(
        table["tasks"][0]["warm"]["memory_bytes"].as_u64().unwrap() > 0,
        "{table:#}"
    );
    assert!(world.ganger(&["status"]).stdout.contains("[warm, "));
    let status = world.ganger(&["status", "s1"]);
    assert!(
        status
            .stdout
            .contains(&format!("kept by ganger serve {serve_pid}")),
        "{}",
        status.stdout
    );

    // A round is mid-turn (its tool's command running) when serve is killed: the warm host
    // and its agent end with serve, the round is interrupted, and nothing is left running.
    world
        .ganger(&["fix", "s1", "--message", "run the long command", "--detach"])
        .expect_code(0);
    let commands = || -> Vec<String> {
        living_pids_with_env(&marker)
            .iter()
            .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default())
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(90), || {
            commands().iter().any(|c| c.contains("tail"))
        }),
        "the long command never ran: {:?}\n{:#}\n{}",
        commands(),
        world.ganger(&["status", "s1", "--json"]).json(),
        std::fs::read_to_string(world.root().join("repo/.ganger/tasks/s1/round-2.jsonl"))
            .unwrap_or_default()
    );
    serve.0.kill().unwrap(); // SIGKILL
    serve.0.wait().unwrap();
    world.ganger(&["wait", "s1"]);
    let report = world.ganger(&["status", "s1", "--json"]).json();
    assert_eq!(report["round"], 2, "{report:#}");
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("SIGTERM"),
        "{report:#}"
    );
    nothing_left(&w, host, &marker);

    // Without serve, the next round starts a warm host of its own, in the same session.
    let third = world
        .ganger(&["fix", "s1", "--message", "after serve", "--json"])
        .json();
    assert_eq!(third["status"], "done", "{third:#}");
    assert_eq!(third["session"], first["session"]);
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert!(agents[0]["kept_by"].is_null(), "{agents:#?}");
    let (_, prompts) = w.last_request();
    assert!(
        prompts.iter().any(|p| p.contains("write the first file")),
        "the model saw {prompts:?}"
    );
    assert!(world.worktree("s1").join("three.txt").is_file());
}

#[test]
fn a_warm_agent_that_died_between_rounds_is_replaced_and_the_round_says_so() {
    let w = Warm::new(
        |root| {
            let worktree = root.join("repo-agent-d1");
            Script::new()
                .turn(write(&worktree, "one.txt", "first file"))
                .text("Done one. {{history}}")
                .turn(write(&worktree, "two.txt", "second file"))
                .text("Done two. {{history}}")
        },
        WARM,
    );
    let world = &w.0;
    let first = world
        .ganger(&["start", "d1", "--message", "write the first file", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    let agents = w.warm_agents();
    let (host, agent) = (
        agents[0]["host_pid"].as_i64().unwrap(),
        agents[0]["agent_pid"].as_i64().unwrap(),
    );
    let killed = std::process::Command::new("kill")
        .args(["-9", &agent.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(
        wait_until(Duration::from_secs(20), || {
            !std::path::Path::new(&format!("/proc/{host}")).exists()
        }),
        "the warm host outlived its agent"
    );

    let second = world
        .ganger(&["fix", "d1", "--message", "write the second file", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    assert!(
        w.stream("d1", 2).contains(r#""ganger":"turn""#),
        "round 2 ran warm"
    );
    let said = std::fs::read_to_string(world.root().join("repo/.ganger/tasks/d1/round-2.err"))
        .unwrap_or_default();
    assert!(
        said.contains("last warm agent failed (the agent exited)"),
        "round 2 said: {said:?}"
    );
    let (_, prompts) = w.last_request();
    assert!(
        prompts.iter().any(|p| p.contains("write the first file")),
        "the model saw {prompts:?}"
    );
    assert_ne!(w.warm_agents()[0]["host_pid"], host);
}

/// Sends `signal` (`STOP`, `CONT`) to process `pid`.
fn signal(pid: i64, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// Task `slug`'s first round done warm, its second sent and hanging at the model (its
/// script's third turn writes `three.txt` when asked for "the third file").
fn mid_turn(slug: &str) -> (Warm, Value) {
    let w = Warm::new(
        |root| {
            let worktree = root.join(format!("repo-agent-{slug}"));
            Script::new()
                .turn(write(&worktree, "one.txt", "first file"))
                .text("Done one. {{history}}")
                .turn(Turn::fault(Fault::Hang).times(1).when("long wait"))
                .turn(write(&worktree, "three.txt", "third file"))
                .text("Done three. {{history}}")
        },
        WARM,
    );
    let world = &w.0;
    let first = world
        .ganger(&["start", slug, "--message", "write the first file", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    world
        .ganger(&["fix", slug, "--message", "a long wait", "--detach"])
        .expect_code(0);
    assert!(
        wait_until(Duration::from_secs(60), || {
            w.1.requests()
                .iter()
                .any(|r| r.prompts().iter().any(|p| p.contains("a long wait")))
        }),
        "round 2 never reached the model"
    );
    (w, first)
}

/// A round that comes while the warm host is still ending the last round's cancelled turn
/// (settled as cancelled before the agent answered the cancel: a fix right after `ganger
/// cancel`) waits for that turn to end and runs warm in the same session, instead of running
/// cold beside it. The warm host is held stopped (SIGSTOP) from before the cancel until the
/// next round has started, so that the cancel is still unanswered then.
#[test]
fn a_round_right_after_a_cancel_waits_for_the_cancelled_turn_and_runs_warm() {
    let (w, first) = mid_turn("c1");
    let world = &w.0;
    let host = w.warm_agents()[0]["host_pid"].as_i64().unwrap();
    signal(host, "STOP");
    world.ganger(&["cancel", "c1"]).expect_code(0);
    let cancelled = world
        .ganger(&["wait", "c1", "--timeout", "60s", "--json"])
        .json();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled:#}");
    world
        .ganger(&["fix", "c1", "--message", "write the third file", "--detach"])
        .expect_code(0);
    // Round 3 has started, and has had the time to choose between warm and cold (it chose
    // cold at once before it waited for the host to be done with the cancelled turn).
    assert!(
        wait_until(Duration::from_secs(60), || {
            world.ganger(&["status", "c1", "--json"]).json()["round"] == 3
        }),
        "round 3 never started"
    );
    std::thread::sleep(Duration::from_secs(1));
    signal(host, "CONT");
    let third = world
        .ganger(&["wait", "c1", "--timeout", "120s", "--json"])
        .json();
    third_ran_warm(&w, "c1", &first, &third);
    assert_eq!(w.warm_agents()[0]["host_pid"], host, "the same warm agent");
    assert!(world.worktree("c1").join("three.txt").is_file());
}

/// Asserts that round 3 of `slug` (its report `third`) is done, in the session of round 1
/// (`first`), and ran in a warm agent; returns what its stderr said.
fn third_ran_warm(w: &Warm, slug: &str, first: &Value, third: &Value) -> String {
    assert_eq!(third["status"], "done", "{third:#}");
    assert_eq!(third["session"], first["session"]);
    let said = std::fs::read_to_string(
        w.0.root()
            .join(format!("repo/.ganger/tasks/{slug}/round-3.err")),
    )
    .unwrap_or_default();
    assert!(
        w.stream(slug, 3).contains(r#""ganger":"turn""#),
        "round 3 ran cold: {said}"
    );
    said
}

/// A round right after a cancel the agent never answered (it is held stopped) waits while its
/// warm host gives up on the turn and stops the agent (a grace each), then starts a new warm
/// agent that takes up the session, instead of running cold: before its host had let the task
/// go, a new host could not claim it and counted as one that failed to start.
#[test]
fn a_round_after_a_cancel_the_agent_never_answered_gets_a_new_warm_agent() {
    let (w, first) = mid_turn("h1");
    let world = &w.0;
    let agents = w.warm_agents();
    let host = agents[0]["host_pid"].clone();
    let agent = agents[0]["agent_pid"].as_i64().unwrap();
    signal(agent, "STOP");
    world.ganger(&["cancel", "h1"]).expect_code(0);
    let cancelled = world
        .ganger(&["wait", "h1", "--timeout", "60s", "--json"])
        .json();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled:#}");
    let third = world
        .ganger(&["fix", "h1", "--message", "write the third file", "--json"])
        .json();
    let said = third_ran_warm(&w, "h1", &first, &third);
    assert!(
        said.contains("last warm agent failed"),
        "round 3 said: {said:?}"
    );
    assert_ne!(w.warm_agents()[0]["host_pid"], host, "a new warm agent");
    assert!(world.worktree("h1").join("three.txt").is_file());
    assert!(!std::path::Path::new(&format!("/proc/{agent}")).exists());
}

/// Issue 38.18: a cancelled round's report said `finish ` with nothing after it: the agent
/// ended its last step without naming a reason.
#[test]
fn a_cancelled_round_shows_no_empty_finish_reason() {
    let (w, _first) = mid_turn("f1");
    let world = &w.0;
    world.ganger(&["cancel", "f1"]).expect_code(0);
    let report = world
        .ganger(&["wait", "f1", "--timeout", "60s", "--json"])
        .json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_ne!(report["finish"], "", "{report:#}");
    let human = world.ganger(&["status", "f1"]).stdout;
    let status = human
        .lines()
        .find(|line| line.starts_with("status:"))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(
        !status.trim_end().ends_with("finish") && !status.contains("finish  "),
        "{status}"
    );
}

/// `ganger worker` keeps the warm agents of the rounds it delivers, as `serve` does (issue
/// 44): a queued round it runs leaves its warm agent kept by the worker, and the agent ends
/// with the worker, even killed.
#[test]
fn a_worker_keeps_the_warm_agents_of_its_rounds_and_they_end_with_it() {
    a_worker_keeps_the_warm_agents_of_its_rounds_and_they_end_with_it_on(None);
}

/// The same with the store on PostgreSQL, where the worker's claim is a lease and its
/// rounds' hosts take theirs over.
#[test]
fn a_worker_keeps_the_warm_agents_of_its_rounds_and_they_end_with_it_on_postgres() {
    let Some(db) = PgDatabase::new() else { return };
    a_worker_keeps_the_warm_agents_of_its_rounds_and_they_end_with_it_on(Some(&db.url));
    // The round was PostgreSQL's: recorded there, done.
    assert_eq!(
        db.count("SELECT count(*) FROM rounds WHERE status = 'done'"),
        1
    );
}

#[expect(
    clippy::disallowed_methods,
    reason = "the worker is ganger itself, run in the background as a user runs it"
)]
fn a_worker_keeps_the_warm_agents_of_its_rounds_and_they_end_with_it_on(store: Option<&str>) {
    let w = Warm::new(
        |root| {
            let worktree = root.join("repo-agent-k1");
            Script::new()
                .turn(write(&worktree, "one.txt", "first file"))
                .text("Done one. {{history}}")
        },
        WARM,
    );
    let world = &w.0;
    if let Some(url) = store {
        // Every command of the world (the worker, `start --queue`, `status`, `warm list`)
        // on the one database: the per-user file, where a URL with its password may live.
        let user = world.home.join(".config/ganger");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(
            user.join("config.toml"),
            format!("[store]\nurl = {url:?}\n"),
        )
        .unwrap();
    }
    let mut worker = Serve(
        world
            .command(&["worker", "--name", "w"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let worker_pid = worker.0.id();
    world
        .ganger(&[
            "start",
            "k1",
            "--message",
            "write the first file",
            "--queue",
        ])
        .expect_code(0);
    let done = || {
        let run = world.ganger(&["status", "k1", "--json"]);
        run.code == 0 && run.json()["status"] == "done"
    };
    assert!(
        wait_until(Duration::from_secs(120), done),
        "{}",
        world.ganger(&["status", "k1", "--json"]).stdout
    );
    let agents = w.warm_agents();
    assert_eq!(agents.len(), 1, "{agents:#?}");
    assert_eq!(agents[0]["kept_by"], worker_pid, "{agents:#?}");
    // Said to be the worker's, not a serve's.
    let status = world.ganger(&["status", "k1"]);
    assert!(
        status
            .stdout
            .contains(&format!("kept by ganger worker {worker_pid}")),
        "{}",
        status.stdout
    );
    let host = agents[0]["host_pid"].as_i64().unwrap();
    let marker = format!("GANGER_ROUND={}", agents[0]["token"].as_str().unwrap());
    worker.0.kill().unwrap(); // SIGKILL
    worker.0.wait().unwrap();
    nothing_left(&w, host, &marker);
}
