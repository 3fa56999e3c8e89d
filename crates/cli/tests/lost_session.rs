//! A round whose host was killed before the agent printed an event (issue 13.16): the round is
//! interrupted with no session in its stream, and the next round must not start a new session
//! that has never seen the brief. The session is found where the agent allows (named up front
//! by the command agent's `{session}` and by Claude's `--session-id`; saved under the round's
//! title by OpenCode), and otherwise the next prompt carries the earlier ones.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Fault, RecordedRequest, Script, Turn};
use ganger_test_support::{World, agent_toml, opencode_toml, wait_until};
use std::time::Duration;

/// Starts round 1 of `slug` detached, waits for `ready`, and kills its host with SIGKILL.
fn start_and_kill_host(world: &World, slug: &str, brief: &str, ready: impl FnMut() -> bool) {
    let started = world.ganger(&["start", slug, "--message", brief, "--detach", "--json"]);
    started.expect_code(0);
    let host = started.json()["host_pid"].as_i64().unwrap();
    assert!(
        wait_until(Duration::from_secs(60), ready),
        "the agent never got as far as expected"
    );
    let killed = std::process::Command::new("kill")
        .args(["-9", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = world.ganger(&["status", slug, "--json"]);
    assert!(
        wait_until(Duration::from_secs(10), || world
            .ganger(&["status", slug, "--json"])
            .json()["status"]
            == "interrupted"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_command_agent_without_sessions_gets_the_earlier_prompts_with_the_next_one() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let prompt = world.root().join("prompt.txt");
    let hold = world.root().join("hold");
    std::fs::write(&hold, "").unwrap();
    world.use_command_agent(
        &format!(
            "cat > {p}; while [ -e {h} ]; do sleep 0.05; done; echo 'DONE: ok'",
            p = prompt.display(),
            h = hold.display()
        ),
        "",
        "",
    );
    start_and_kill_host(&world, "c", "THE BRIEF: write the parser", || {
        std::fs::read_to_string(&prompt).is_ok_and(|p| p.contains("THE BRIEF"))
    });
    std::fs::remove_file(&hold).unwrap();
    world
        .ganger(&["fix", "c", "--message", "continue"])
        .expect_code(0);
    let sent = std::fs::read_to_string(&prompt).unwrap();
    assert!(sent.contains("THE BRIEF: write the parser"), "{sent}");
    assert!(sent.ends_with("continue"), "{sent}");
    // The prompt file of round 2 is what was sent.
    let kept =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/c/round-2.prompt.md")).unwrap();
    assert_eq!(kept, sent);
}

#[test]
fn a_session_named_up_front_is_continued_after_the_host_was_killed() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let sessions = world.root().join("sessions.txt");
    let hold = world.root().join("hold");
    std::fs::write(&hold, "").unwrap();
    let script = format!(
        "cat >/dev/null; echo \"$1\" >> {s}; while [ -e {h} ]; do sleep 0.05; done; echo 'DONE: ok'",
        s = sessions.display(),
        h = hold.display()
    );
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[agents.command]\n\
             argv = [\"sh\", \"-c\", {script}, \"sh\", \"{{session}}\"]\nformat = \"text\"\n",
            script = serde_json::to_string(&script).unwrap()
        ),
    );
    start_and_kill_host(&world, "n", "the brief", || {
        std::fs::read_to_string(&sessions).is_ok_and(|s| !s.is_empty())
    });
    std::fs::remove_file(&hold).unwrap();
    world
        .ganger(&["fix", "n", "--message", "continue"])
        .expect_code(0);
    let named: Vec<String> = std::fs::read_to_string(&sessions)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert_eq!(
        named[0], named[1],
        "round 2 did not continue round 1's session"
    );
}

/// A model that holds its first answer until the host is killed, then answers.
fn held_first_answer() -> Script {
    Script::new()
        .turn(Turn::fault(Fault::Hang).times(1))
        .text("Round done. {{history}}")
        .repeat(true)
}

fn work(llm: &FakeLlm) -> Vec<RecordedRequest> {
    llm.requests()
        .into_iter()
        .filter(|r| r.tools_offered)
        .collect()
}

#[test]
fn opencode_finds_the_session_it_saved_under_the_tasks_title() {
    let llm = FakeLlm::start(held_first_answer()).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &opencode_toml(&llm.base_url(), "", "not-a-secret-key", ""),
    );
    start_and_kill_host(&world, "o", "THE BRIEF of o", || !work(&llm).is_empty());
    let fixed = world.ganger(&["fix", "o", "--message", "continue", "--json"]);
    fixed.expect_code(0);
    let report = fixed.json();
    assert!(
        report["session"].as_str().unwrap().starts_with("ses_"),
        "{report:#}"
    );
    let last = work(&llm).pop().unwrap();
    assert_eq!(
        last.prompts(),
        ["THE BRIEF of o", "continue"],
        "round 2 did not continue the saved session"
    );
}

#[test]
fn claude_continues_the_session_it_named_up_front() {
    let llm = FakeLlm::start(held_first_answer()).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &agent_toml("claude", &llm.root_url(), "", ""),
    );
    // Claude writes its transcript a moment after it asks the model: the kill comes once it
    // has (a kill before that leaves a name with nothing saved, and the next round starts a
    // new session told the earlier prompts, as for any lost session).
    start_and_kill_host(&world, "k", "THE BRIEF of k", || {
        !work(&llm).is_empty() && {
            std::thread::sleep(Duration::from_millis(1500));
            true
        }
    });
    let fixed = world.ganger(&["fix", "k", "--message", "continue", "--json"]);
    fixed.expect_code(0);
    let report = fixed.json();
    let last = work(&llm).pop().unwrap();
    let sent = last.prompts();
    // Kept warm (Claude's default), the killed round's turn was interrupted rather than its
    // process killed: Claude then notes "[Request interrupted by user]" in the session, and
    // sends the brief, that note and the next prompt as one user message.
    let said = sent.join("\n");
    assert!(
        said.matches("THE BRIEF of k").count() == 1
            && said.ends_with("continue")
            && said.find("THE BRIEF of k") < said.find("continue"),
        "round 2 did not continue the named session: {sent:?}\n{report:#}"
    );
}
