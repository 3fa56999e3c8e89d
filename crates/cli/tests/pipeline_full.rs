//! End-to-end: the role pipeline with real, pinned agents against the scripted model, driven by
//! the real `ganger` binary in a real git repository: the planner on OpenCode (with a reasoning
//! effort, which OpenCode takes), every other role on Claude Code (the tasks' agent; the
//! cheapest to start, so that the pipeline, not the agents' start-up, is what these tests
//! spend). Every role has a model of its own, so the model server's recorded requests show
//! which role sent each one; the scripted answers fire only on the prompts the pipeline must
//! send (the critic's findings reach the planner, a reviewer's findings reach the executor),
//! so a pipeline that drops a hand-off fails the test. `pipeline_agents.rs` runs a shorter
//! pipeline with each agent alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::pipeline_common;

use ganger_fake_llm::{FakeLlm, RecordedRequest, Script, Turn};
use ganger_test_support::{World, agent_toml, opencode_agent_toml};
use pipeline_common::role_of;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The model of each role as `ganger.toml` names it, and as its requests name it: all
/// different, so a request names its role by its model. The planner's is OpenCode's (provider
/// `mock`, which its requests leave out).
const MODELS: &[(&str, &str, &str)] = &[
    ("planner", "mock/strong-planner", "strong-planner"),
    ("critic", "claude-fake-critic", "claude-fake-critic"),
    ("executor", "claude-fake-executor", "claude-fake-executor"),
    ("code", "claude-fake-code", "claude-fake-code"),
    ("tests", "claude-fake-tests", "claude-fake-tests"),
];

/// The tools that write or run commands, by both agents' names for them: no read-only role
/// may be offered one.
const WRITING_TOOLS: &[&str] = &[
    "write",
    "edit",
    "bash",
    "patch",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Bash",
];

/// Claude Code's file tool, writing `content` to `name` in `worktree` (it takes an absolute
/// path).
fn write(worktree: &Path, name: &str, content: &str) -> Turn {
    Turn::tool(
        "Write",
        json!({"file_path": worktree.join(name), "content": content}),
    )
}

/// Claude Code's shell tool. A file the session wrote in an earlier round is written again
/// through it: Claude's file tool refuses to overwrite a file it has not read in this process.
fn shell(command: &str) -> Turn {
    Turn::tool("Bash", json!({"command": command}))
}

/// The planner's instructions come from the repository; the others are built in.
const PLANNER_PROMPT: &str = "PLANNER-FROM-REPO: write numbered steps and nothing else.\n";

/// The first line of each built-in role's instructions, as the binary ships them.
const BUILT_IN: &[(&str, &str)] = &[
    ("critic", "You are the critic of a plan"),
    ("executor", "You are the executor."),
    ("code", "You review the code of a change."),
    ("tests", "You review the tests of a change."),
];

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `ganger.toml`: Claude Code against the scripted model at `root_url` (the tasks' agent),
/// OpenCode against it too for the planner, every role's model, the reviewers.
fn config(root_url: &str, reviewers: &[&str], review_rounds: u32) -> String {
    let mut models = String::from("scripted = { limit = { context = 128000, output = 8192 } }");
    let mut roles = String::new();
    for (role, model, _) in MODELS {
        roles.push_str(&format!("\n[roles.{role}]\nmodel = {}\n", quoted(model)));
        if *role == "planner" {
            let name = model.trim_start_matches("mock/");
            models.push_str(&format!(
                ", {name} = {{ limit = {{ context = 128000, output = 8192 }} }}"
            ));
            roles.push_str(
                "agent = \"opencode\"\nprompt = \"roles/planner.md\"\neffort = \"high\"\n",
            );
        }
    }
    let reviewers: Vec<String> = reviewers.iter().map(|r| quoted(r)).collect();
    format!(
        "{claude}\n[pipeline]\nreviewers = [{reviewers}]\nreview_rounds = {review_rounds}\n\
         backoff = \"1s\"\n{roles}\n{opencode}",
        claude = agent_toml("claude", root_url, "", ""),
        reviewers = reviewers.join(", "),
        opencode = opencode_agent_toml(&format!("{root_url}/v1"), "not-a-secret-key", &models),
    )
}

/// A world for the pipeline of task `slug`, whose model answers `script` (given the task's
/// worktree, where Claude Code's file tool writes).
fn world(
    slug: &str,
    script: impl FnOnce(&Path) -> Script,
    reviewers: &[&str],
    review_rounds: u32,
) -> (World, FakeLlm) {
    world_with(slug, script, reviewers, review_rounds, "")
}

/// A world whose `ganger.toml` has `extra` appended.
fn world_with(
    slug: &str,
    script: impl FnOnce(&Path) -> Script,
    reviewers: &[&str],
    review_rounds: u32,
    extra: &str,
) -> (World, FakeLlm) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(script(&world.worktree(slug))).unwrap();
    world.write(
        "ganger.toml",
        &format!(
            "{}\n{extra}\n",
            config(&llm.root_url(), reviewers, review_rounds)
        ),
    );
    world.write("roles/planner.md", PLANNER_PROMPT);
    (world, llm)
}

/// The requests that did the agents' work (tools offered), each with the role its session
/// belongs to (the role named in the session's first prompt).
fn work_by_role(requests: &[RecordedRequest]) -> Vec<(String, &RecordedRequest)> {
    requests
        .iter()
        .filter(|r| r.tools_offered)
        .map(|r| (role_of(r), r))
        .collect()
}

fn verdicts(report: &Value) -> BTreeMap<String, (String, u64)> {
    report["reviewers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["reviewer"].as_str().unwrap().to_owned(),
                (
                    v["verdict"].as_str().unwrap().to_owned(),
                    v["round"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

fn full_pipeline_script(worktree: &Path) -> Script {
    Script::new()
        // The planner's first version.
        .turn(
            Turn::text("Plan v1.\n\n1. Create one.txt\n2. Create two.txt\n")
                .when("PLANNER-FROM-REPO"),
        )
        // The critic (read-only) tries to write through the file tool and the shell.
        .turn(write(worktree, "by-tool.txt", "written\n").when("Review this version of the plan"))
        .turn(shell("echo written > by-shell.txt"))
        .text("CRITIQUE-V1: step 2 does not say what two.txt holds.")
        // The rejection reaches the planner with the person's notes and the critique.
        .turn(
            Turn::text(
                "Plan v2.\n\n1. Create one.txt holding one\n2. Create two.txt holding two\n",
            )
            .when("(?s)NOTES-MARK.*CRITIQUE-V1"),
        )
        .turn(Turn::text("CRITIQUE-V2: sound.").when("plan, version 2"))
        // The executor, one round per step.
        .turn(write(worktree, "one.txt", "one\n").when("Do step 1 of 2"))
        .text("Step 1 done: one.txt holds one.")
        .turn(write(worktree, "two.txt", "too\n").when("Do step 2 of 2"))
        .text("Step 2 done: two.txt written.")
        // Review round 1: the code reviewer finds a problem in the diff it was given.
        .turn(
            Turn::text("VERDICT: fail\ntwo.txt:1: it says too, the plan says two")
                .when("(?s)Your role: code.*\\+too"),
        )
        // The finding reaches the executor, which fixes it.
        .turn(shell("echo two > two.txt").when("two.txt:1: it says too"))
        .text("Fixed: two.txt holds two.")
        // Review round 2: it passes (the fix is in the diff it gets).
        .turn(Turn::text("VERDICT: pass").when("(?s)\\+two.*review round 2"))
}

#[test]
fn a_full_pipeline_plans_is_rejected_once_executes_and_passes_review() {
    // One reviewer (two reviewers' verdicts are in the next test).
    let (world, llm) = world("pipe", full_pipeline_script, &["code"], 3);
    let brief = "Add one.txt and two.txt.";

    // plan: the planner, then the critic; the pipeline waits for a decision.
    let planned = world.ganger(&["plan", "pipe", "--message", brief, "--json"]);
    planned.expect_code(0);
    let report = planned.json();
    assert_eq!(report["schema"], "ganger.pipeline/1");
    assert_eq!(report["stage"], "awaiting-approval", "{report:#}");
    assert_eq!(report["plan"]["version"], 1);
    assert_eq!(report["plan"]["steps_total"], 2);
    let plans = world.repo.join(".ganger/plans");
    let v1 = std::fs::read_to_string(plans.join("pipe.v1.md")).unwrap();
    assert!(
        v1.contains("Plan v1.") && v1.contains("## Critique"),
        "{v1}"
    );
    // The critic's write attempts left no file, in the worktree or the main checkout.
    let worktree = world.worktree("pipe");
    for name in ["by-tool.txt", "by-shell.txt"] {
        assert!(!worktree.join(name).exists(), "{name} in the worktree");
        assert!(
            !world.repo.join(name).exists(),
            "{name} in the main checkout"
        );
    }
    let critic = world.ganger(&["status", "pipe.critic", "--json"]).json();
    assert_eq!(critic["permission"], "read-only", "{critic:#}");
    // Claude Code kept warm is offered its writing tools, and ganger refuses each call of a
    // read-only round (docs/warm.md); the round is judged on its answer.
    let refused: Vec<&str> = critic["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(refused.len(), 2, "{critic:#}");
    assert!(
        refused[0].starts_with("Write: refused by ganger (a read-only round may not edit)")
            && refused[1]
                .starts_with("Bash: refused by ganger (a read-only round may not execute)"),
        "{refused:?}"
    );
    assert_eq!(critic["status"], "done", "{critic:#}");

    // reject, with notes: the planner writes version 2, the critic reviews it.
    let rejected = world.ganger(&[
        "reject",
        "pipe",
        "--message",
        "NOTES-MARK: say what each file holds.",
        "--json",
    ]);
    rejected.expect_code(0);
    let report = rejected.json();
    assert_eq!(report["stage"], "awaiting-approval", "{report:#}");
    assert_eq!(report["plan"]["version"], 2);
    let current = std::fs::read_to_string(plans.join("pipe.md")).unwrap();
    assert!(
        current.contains("Plan v2.") && current.contains("CRITIQUE-V2"),
        "{current}"
    );
    // Version 1 is kept as it was.
    assert_eq!(
        std::fs::read_to_string(plans.join("pipe.v1.md")).unwrap(),
        v1
    );

    // Nothing is merged before the pipeline is done.
    let early = world.ganger(&["merge", "pipe"]);
    early.expect_code(2);
    assert!(
        early.stderr.contains(
            "the pipeline of pipe is at stage awaiting-approval; only a pipeline whose reviewers all passed is merged"
        ),
        "{}",
        early.stderr
    );

    // approve: two steps, a review that fails, the fix, a review where all pass.
    let approved = world.ganger(&["approve", "pipe", "--json"]);
    approved.expect_code(0);
    let report = approved.json();
    assert_eq!(report["stage"], "done", "{report:#}");
    assert_eq!(report["plan"]["steps_done"], 2);
    assert_eq!(report["review_round"], 2);
    let given = verdicts(&report);
    assert_eq!(given["code"], ("pass".to_owned(), 2));
    assert_eq!(given.len(), 1);
    assert_eq!(
        std::fs::read_to_string(worktree.join("one.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("two.txt")).unwrap(),
        "two\n"
    );

    // Each role: its own session, its own model, its own instructions.
    let requests = llm.requests();
    let by_role = work_by_role(&requests);
    let expected: BTreeMap<&str, &str> = MODELS.iter().map(|(r, _, m)| (*r, *m)).collect();
    for (role, request) in &by_role {
        let model = &request.conversation.as_ref().unwrap().model;
        assert_eq!(
            model,
            expected[role.as_str()],
            "a request of the {role} went to {model}"
        );
    }
    for role in ["planner", "critic", "executor", "code"] {
        let first = by_role
            .iter()
            .find(|(r, _)| r == role)
            .unwrap_or_else(|| panic!("no request of the {role}"))
            .1
            .conversation
            .as_ref()
            .unwrap()
            .prompts()[0]
            .to_owned();
        if role == "planner" {
            assert!(first.contains("PLANNER-FROM-REPO"), "{first}");
        } else {
            assert!(!first.contains("PLANNER-FROM-REPO"), "{role}: {first}");
        }
        for (other, instructions) in BUILT_IN {
            assert_eq!(
                first.contains(instructions),
                *other == role,
                "the {role}'s first prompt and the {other}'s instructions: {first}"
            );
        }
    }

    // The planner's effort reached its model, and only its model.
    for (role, request) in &by_role {
        let effort = request.body.as_ref().unwrap().get("reasoning_effort");
        if role == "planner" {
            assert_eq!(effort, Some(&json!("high")), "the planner's request");
        } else {
            assert_eq!(effort, None, "a request of the {role}");
        }
    }
    // The read-only planner on OpenCode was offered no tool that writes or runs commands
    // (Claude Code's read-only roles, kept warm, are refused each call instead: above).
    for (role, request) in &by_role {
        let tools = &request.conversation.as_ref().unwrap().tools;
        if role == "planner" {
            for writing in WRITING_TOOLS {
                assert!(
                    !tools.iter().any(|t| t == *writing),
                    "the {role} was offered {writing}: {tools:?}"
                );
            }
        }
    }
    // Each hand-off carries the previous role's last answer.
    let first_prompt = |role: &str| {
        by_role
            .iter()
            .find(|(r, _)| r == role)
            .unwrap()
            .1
            .conversation
            .as_ref()
            .unwrap()
            .prompts()[0]
            .to_owned()
    };
    assert!(first_prompt("executor").contains("CRITIQUE-V2"));
    assert!(first_prompt("code").contains("Step 2 done: two.txt written."));

    // status shows the pipeline, and the tree shows each role's session under the task.
    let status = world.ganger(&["status", "pipe", "--json"]).json();
    assert_eq!(status["stage"], "done");
    assert_eq!(status["roles"].as_array().unwrap().len(), 4, "{status:#}");
    let human = world.ganger(&["status", "pipe"]);
    human.expect_code(0);
    assert!(human.stdout.contains("stage done"), "{}", human.stdout);
    assert!(
        human.stdout.contains("code: pass (round 2)"),
        "{}",
        human.stdout
    );
    let tree = world.ganger(&["status", "--tree", "--json"]).json();
    let rows = tree["tasks"].as_array().unwrap();
    assert_eq!(rows[0]["slug"], "pipe");
    let children: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r["role"].as_str().unwrap(), r["parent"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [
            ("planner", "pipe"),
            ("critic", "pipe"),
            ("executor", "pipe"),
            ("code", "pipe"),
        ]
    );
    let sessions: std::collections::BTreeSet<&str> = rows[1..]
        .iter()
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 4, "one session per role: {tree:#}");
    let human_tree = world.ganger(&["status", "--tree"]);
    assert!(
        human_tree.stdout.contains("└ executor"),
        "{}",
        human_tree.stdout
    );

    // Done: the pipeline's task merges, on its executor's rounds, into main.
    let merged = world.ganger(&["merge", "pipe", "--json"]);
    merged.expect_code(0);
    let report = merged.json();
    assert_eq!(report["outcome"], "merged", "{report:#}");
    assert_eq!(report["task"], "pipe");
    assert_eq!(
        std::fs::read_to_string(world.repo.join("two.txt")).unwrap(),
        "two\n"
    );
    let log = world.git(&["log", "-2", "--format=%s"]);
    assert!(
        log.contains("Merge task pipe (branch agent/pipe, rounds 1-3) into main")
            && log.contains("pipe: the work of task pipe (rounds 1-3, by pipe.executor)"),
        "{log}"
    );
}

#[test]
fn a_reviewer_answer_that_does_not_parse_counts_as_a_fail() {
    let script = |worktree: &Path| {
        Script::new()
            .turn(Turn::text("1. Create one.txt\n").when("PLANNER-FROM-REPO"))
            .turn(Turn::text("Sound.").when("Review this version of the plan"))
            .turn(write(worktree, "one.txt", "one\n").when("Do step 1 of 1"))
            .text("Done.")
            .turn(Turn::text("Looks good to me, VERDICT: pass").when("Your role: code"))
            .turn(Turn::text("VERDICT: pass").when("Your role: tests"))
    };
    let (world, _llm) = world("loose", script, &["code", "tests"], 1);
    world
        .ganger(&["plan", "loose", "--message", "Add one.txt."])
        .expect_code(0);
    let approved = world.ganger(&["approve", "loose", "--json"]);
    approved.expect_code(1);
    let report = approved.json();
    assert_eq!(report["stage"], "failed", "{report:#}");
    assert_eq!(report["plan"]["steps_done"], 1);
    assert_eq!(verdicts(&report)["code"], ("fail".to_owned(), 1));
    assert_eq!(verdicts(&report)["tests"], ("pass".to_owned(), 1));
    let findings = report["reviewers"][0]["findings"][0].as_str().unwrap();
    assert!(findings.contains("did not parse"), "{findings}");
    assert!(
        report["reason"]
            .as_str()
            .unwrap()
            .starts_with("code still fail"),
        "{report:#}"
    );
}

/// How many requests of the executor opened step 1.
fn step_one_requests(llm: &FakeLlm) -> usize {
    llm.requests()
        .iter()
        .filter(|r| {
            r.tools_offered
                && r.conversation
                    .as_ref()
                    .and_then(|c| c.new_prompt())
                    .is_some_and(|p| p.contains("Do step 1 of 1"))
        })
        .count()
}

#[test]
fn a_pipeline_cancelled_then_killed_mid_step_goes_on_when_approved_again() {
    let script = |worktree: &Path| {
        Script::new()
            .turn(Turn::text("1. Create one.txt\n").when("PLANNER-FROM-REPO"))
            .turn(Turn::text("Sound.").when("Review this version of the plan"))
            // The executor's first two attempts hang: one is cancelled, one's command killed.
            .turn(
                Turn::fault(ganger_fake_llm::Fault::Hang)
                    .times(2)
                    .when("Do step 1 of 1"),
            )
            .turn(write(worktree, "one.txt", "one\n").when("Do step 1 of 1"))
            .text("Done.")
            .turn(Turn::text("VERDICT: pass").when("Your role: code"))
    };
    let (world, llm) = world("stopped", script, &["code"], 1);
    world
        .ganger(&["plan", "stopped", "--message", "Add one.txt."])
        .expect_code(0);
    #[expect(
        clippy::disallowed_methods,
        reason = "the approve must be running to be stopped mid-step"
    )]
    let approve = || world.command(&["approve", "stopped"]).spawn().unwrap();
    let limit = std::time::Duration::from_secs(120);

    // `cancel` on the pipeline's task stops its running role's round, and the pipeline.
    let first = approve();
    assert!(
        ganger_test_support::wait_until(limit, || step_one_requests(&llm) >= 1),
        "the executor's first request never came"
    );
    let cancelled = world.ganger(&["cancel", "stopped", "--json"]);
    assert_eq!(
        cancelled.json()["task"],
        "stopped.executor",
        "{}",
        cancelled.stdout
    );
    assert_eq!(cancelled.json()["status"], "cancelled");
    let output = first.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let status = world.ganger(&["status", "stopped", "--json"]).json();
    assert_eq!(status["stage"], "failed", "{status:#}");
    assert!(
        status["reason"].as_str().unwrap().contains("cancelled"),
        "{status:#}"
    );

    // A killed approve leaves the pipeline "executing"; the next approve settles the dead
    // round and does the step again.
    let mut second = approve();
    assert!(
        ganger_test_support::wait_until(limit, || step_one_requests(&llm) >= 2),
        "the executor's second request never came"
    );
    second.kill().unwrap();
    second.wait().unwrap();
    let again = world.ganger(&["approve", "stopped", "--json"]);
    let report = again.json();
    assert_eq!(report["stage"], "done", "{report:#}\n{}", again.stderr);
    again.expect_code(0);
    assert_eq!(report["plan"]["steps_done"], 1);
    let executor = world
        .ganger(&["status", "stopped.executor", "--json"])
        .json();
    assert_eq!(executor["round"], 3, "{executor:#}");
    assert_eq!(executor["status"], "done");
    assert_eq!(
        std::fs::read_to_string(world.worktree("stopped").join("one.txt")).unwrap(),
        "one\n"
    );
}

#[test]
fn a_step_that_fails_its_checks_gets_a_fix_round_with_their_output() {
    let script = |worktree: &Path| {
        Script::new()
            .turn(Turn::text("1. Create one.txt holding one\n").when("PLANNER-FROM-REPO"))
            .turn(Turn::text("Sound.").when("Review this version of the plan"))
            .turn(write(worktree, "one.txt", "uno\n").when("Do step 1 of 1"))
            .text("Done.")
            // Fires only if the failing check's output reached the executor.
            .turn(shell("echo one > one.txt").when("CHECK-SAYS one.txt holds uno"))
            .text("Fixed.")
            .turn(Turn::text("VERDICT: pass").when("Your role: code"))
    };
    let checks = r#"
[[checks]]
name = "holds-one"
command = "echo CHECK-SAYS one.txt holds $(cat one.txt); grep -qx one one.txt"
"#;
    let (world, _llm) = world_with("checked", script, &["code"], 1, checks);
    world
        .ganger(&["plan", "checked", "--message", "Add one.txt."])
        .expect_code(0);
    let approved = world.ganger(&["approve", "checked", "--json"]);
    let report = approved.json();
    assert_eq!(report["stage"], "done", "{report:#}\n{}", approved.stderr);
    approved.expect_code(0);
    let first = world
        .ganger(&["status", "checked.executor", "--json"])
        .json();
    assert_eq!(first["round"], 2, "{first:#}");
    assert_eq!(
        std::fs::read_to_string(world.worktree("checked").join("one.txt")).unwrap(),
        "one\n"
    );
    // The read-only roles ran no check; the executor's rounds did.
    let planner = world
        .ganger(&["status", "checked.planner", "--json"])
        .json();
    assert_eq!(
        planner["checks"].as_array().map_or(0, Vec::len),
        0,
        "{planner:#}"
    );
    assert!(
        first["checks"].to_string().contains("holds-one"),
        "{first:#}"
    );
}
