//! The scenarios of the warm columns only (issue 18): what being kept warm adds to a task's
//! life. A round cancelled mid-turn leaves the session usable, and a cold fix after warm rounds
//! continues it; a warm host killed with SIGKILL mid-turn leaves no agent process, its round
//! interrupted, and the next round continues the session; the idle limit stops a warm agent; a
//! command a `[permissions]` rule denies is refused, logged and not run. (A write outside the
//! worktree, refused and not written, is each warm column's `refused_call_fails`.)

use crate::dialect::Dialect;
use crate::scenarios::{LIMITS, PRICES};
use ganger_fake_llm::{FakeLlm, Fault, Script, Turn};
use ganger_test_support::{World, agent_toml, living_pids_with_env, wait_until};
use serde_json::Value;
use std::time::Duration;

/// A world whose agent is warm by default, with `warm` after `[warm] default` (more of its
/// settings, then other tables).
fn warm_world(
    d: Dialect,
    warm: &str,
    script: impl FnOnce(&std::path::Path) -> Script,
) -> (World, FakeLlm) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(script(world.root()).default_answer("side")).unwrap();
    let extra = format!("{PRICES}\n[warm]\ndefault = true\n{warm}");
    world.write(
        "ganger.toml",
        &agent_toml(d.agent, &llm.root_url(), LIMITS, &extra),
    );
    (world, llm)
}

fn report(world: &World, args: &[&str]) -> Value {
    let run = world.ganger(args);
    let report = run.json();
    assert_eq!(
        report["schema"], "ganger.round-report/1",
        "{report:#}\nstderr:\n{}",
        run.stderr
    );
    report
}

fn stream(world: &World, slug: &str, round: u32) -> String {
    std::fs::read_to_string(
        world
            .repo
            .join(format!(".ganger/tasks/{slug}/round-{round}.jsonl")),
    )
    .unwrap_or_default()
}

fn ran_warm(world: &World, slug: &str, round: u32) -> bool {
    stream(world, slug, round)
        .lines()
        .next()
        .is_some_and(|first| first.contains(r#""ganger":"turn""#))
}

fn warm_agents(world: &World) -> Vec<Value> {
    let listed = world.ganger(&["warm", "list", "--json"]);
    listed.expect_code(0);
    listed.json()["agents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Waits until the model has received the prompt containing `needle`.
fn reached(llm: &FakeLlm, needle: &str) -> bool {
    wait_until(Duration::from_secs(90), || {
        llm.requests()
            .iter()
            .any(|r| r.prompts().iter().any(|p| p.contains(needle)))
    })
}

/// Round 1 warm; round 2 warm, cancelled while the model has not answered; round 3 warm in
/// the same session; round 4 cold (`[warm] default = false`), in the same session, the model's request
/// carrying round 1's and round 3's prompts. Nothing of round 2 is left running.
pub fn cancelled_mid_turn_then_cold_the_session_goes_on(d: Dialect) {
    let (world, llm) = warm_world(d, "", |root| {
        let worktree = root.join("repo-agent-w1");
        Script::new()
            .turn(d.write(&worktree, "one.txt", "one\n").when("first file"))
            .text("Done one. {{history}}")
            .turn(Turn::fault(Fault::Hang).times(1).when("long wait"))
            .turn(
                d.write(&worktree, "three.txt", "three\n")
                    .when("third file"),
            )
            .text("Done three. {{history}}")
            .turn(d.write(&worktree, "four.txt", "four\n").when("fourth file"))
            .text("Done four. {{history}}")
    });
    let first = report(
        &world,
        &[
            "start",
            "w1",
            "--message",
            "Write the first file.",
            "--json",
        ],
    );
    assert_eq!(first["status"], "done", "{first:#}");
    let session = first["session"].clone();
    world
        .ganger(&["fix", "w1", "--message", "Now a long wait.", "--detach"])
        .expect_code(0);
    assert!(
        reached(&llm, "long wait"),
        "round 2 never reached the model"
    );
    let running = report(&world, &["status", "w1", "--json"]);
    assert_eq!(running["status"], "running", "{running:#}");
    world.ganger(&["cancel", "w1"]).expect_code(0);
    let cancelled = report(&world, &["wait", "w1", "--timeout", "60s", "--json"]);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled:#}");
    // The round's own processes (the agent's are the warm host's) are gone.
    let marker = format!("GANGER_ROUND={}", running["token"].as_str().unwrap());
    assert!(
        wait_until(Duration::from_secs(10), || living_pids_with_env(&marker)
            .is_empty()),
        "processes of the cancelled round survive"
    );

    let third = report(
        &world,
        &["fix", "w1", "--message", "Write the third file.", "--json"],
    );
    assert_eq!(third["status"], "done", "{third:#}");
    assert_eq!(third["session"], session, "{third:#}");
    assert!(
        ran_warm(&world, "w1", 3),
        "round 3 ran cold: {}",
        std::fs::read_to_string(world.repo.join(".ganger/tasks/w1/round-3.err"))
            .unwrap_or_default()
    );
    assert!(world.worktree("w1").join("three.txt").is_file());

    // Cold by the configuration (a task started without `--warm` follows `[warm] default`).
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    world.write(
        "ganger.toml",
        &toml.replace("[warm]\ndefault = true", "[warm]\ndefault = false"),
    );
    let fourth = report(
        &world,
        &["fix", "w1", "--message", "Write the fourth file.", "--json"],
    );
    assert_eq!(
        fourth["status"],
        "done",
        "{fourth:#}\n{}",
        std::fs::read_to_string(world.repo.join(".ganger/tasks/w1/round-4.err"))
            .unwrap_or_default()
    );
    assert_eq!(fourth["session"], session, "{fourth:#}");
    assert!(!ran_warm(&world, "w1", 4), "round 4 ran warm");
    assert!(world.worktree("w1").join("four.txt").is_file());
    let carried = llm.requests().iter().any(|r| {
        let p = r.prompts();
        ["first file", "third file", "fourth file"]
            .iter()
            .all(|needle| p.iter().any(|t| t.contains(needle)))
    });
    assert!(carried, "no request of round 4 carried rounds 1 and 3");
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
}

/// A warm host killed with SIGKILL while its turn waits on the model: the round is
/// interrupted, no process of the warm agent is left, and the next round continues the
/// session. Then the idle limit (`[warm] idle = "3s"`) stops a task's warm agent by itself.
pub fn killed_host_leaves_nothing_and_idle_agents_stop(d: Dialect) {
    let (world, llm) = warm_world(d, "idle = \"3s\"\n", |root| {
        Script::new()
            .turn(
                d.write(&root.join("repo-agent-k1"), "one.txt", "one\n")
                    .when("first file"),
            )
            .text("Done one. {{history}}")
            .turn(Turn::fault(Fault::Hang).times(1).when("long wait"))
            .turn(
                d.write(&root.join("repo-agent-k1"), "after.txt", "after\n")
                    .when("after the crash"),
            )
            .text("Resumed. {{history}}")
            .turn(Turn::text("Hello.").when("say hello"))
    });
    let first = report(
        &world,
        &[
            "start",
            "k1",
            "--message",
            "Write the first file.",
            "--json",
        ],
    );
    assert_eq!(first["status"], "done", "{first:#}");
    world
        .ganger(&["fix", "k1", "--message", "Now a long wait.", "--detach"])
        .expect_code(0);
    assert!(
        reached(&llm, "long wait"),
        "round 2 never reached the model"
    );
    let agents = warm_agents(&world);
    assert_eq!(agents.len(), 1, "{agents:#?}");
    let host = agents[0]["host_pid"].as_i64().unwrap();
    let marker = format!("GANGER_ROUND={}", agents[0]["token"].as_str().unwrap());
    assert!(!living_pids_with_env(&marker).is_empty());
    let killed = std::process::Command::new("kill")
        .args(["-9", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let interrupted = report(&world, &["wait", "k1", "--timeout", "60s", "--json"]);
    assert_eq!(interrupted["status"], "interrupted", "{interrupted:#}");
    assert!(
        wait_until(Duration::from_secs(15), || living_pids_with_env(&marker)
            .is_empty()),
        "the killed host's agent left: {:?}",
        living_pids_with_env(&marker)
            .iter()
            .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default())
            .collect::<Vec<_>>()
    );

    let resumed = report(
        &world,
        &[
            "fix",
            "k1",
            "--message",
            "Write it after the crash.",
            "--json",
        ],
    );
    assert_eq!(resumed["status"], "done", "{resumed:#}");
    assert_eq!(resumed["session"], first["session"], "{resumed:#}");
    assert!(world.worktree("k1").join("after.txt").is_file());
    let carried = llm.requests().iter().any(|r| {
        let p = r.prompts();
        p.iter().any(|t| t.contains("first file"))
            && p.iter().any(|t| t.contains("after the crash"))
    });
    assert!(carried, "the round after the crash did not carry round 1");

    // A task's warm agent idle for `[warm] idle` stops by itself.
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
    let hello = report(
        &world,
        &["start", "i1", "--message", "Just say hello.", "--json"],
    );
    assert_eq!(hello["status"], "done", "{hello:#}");
    assert!(ran_warm(&world, "i1", 1), "the round ran cold");
    let agents = warm_agents(&world);
    assert_eq!(agents.len(), 1, "{agents:#?}");
    let agent = agents[0]["agent_pid"].as_i64().unwrap();
    assert!(
        wait_until(Duration::from_secs(30), || warm_agents(&world).is_empty()
            && !std::path::Path::new(&format!("/proc/{agent}")).exists()),
        "the idle warm agent was not stopped"
    );
}

/// A command a `[permissions]` rule denies: ganger refuses it when the agent asks, the
/// decision is in the round's log with the tool, its arguments and the rule, nothing ran,
/// and the round fails naming it.
pub fn a_denied_command_is_refused_logged_and_not_run(d: Dialect) {
    let (world, _llm) = warm_world(
        d,
        "\n[permissions]\ndeny = [\"execute:git push*\"]\n",
        |_| {
            Script::new()
                .turn(d.shell("git push origin main > pushed.txt").when("push it"))
                .text("I could not push.")
        },
    );
    let refused = report(
        &world,
        &["start", "p1", "--message", "Now push it.", "--json"],
    );
    assert_eq!(
        refused["status"],
        "failed",
        "{refused:#}\n{}",
        stream(&world, "p1", 1)
    );
    let reason = refused["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("refused") && reason.contains("git push"),
        "{refused:#}"
    );
    assert!(!world.worktree("p1").join("pushed.txt").exists());
    let decision = stream(&world, "p1", 1)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["ganger"] == "permission" && line["decision"] == "deny")
        .unwrap_or_else(|| panic!("no refusal in the log: {}", stream(&world, "p1", 1)));
    assert_eq!(decision["kind"], "execute", "{decision}");
    // The command is in the call's input, or (Gemini CLI, which sends none) its title.
    assert!(
        decision["input"].to_string().contains("git push")
            || decision["tool"].to_string().contains("git push"),
        "{decision}"
    );
    assert!(
        decision["rule"].as_str().unwrap().contains("[permissions]"),
        "{decision}"
    );
    world.ganger(&["warm", "stop", "--all"]).expect_code(0);
}
