//! The role pipeline with each agent in every role (`pipeline_full.rs` has the fuller
//! pipeline, its planner on OpenCode and the other roles on Claude Code): the real pinned CLI
//! against the scripted model, a plan of one
//! step, a read-only critic whose scripted writes (file tool and shell) leave no file, a
//! reviewer that finds a problem, the fix, a pass. Every role has a model of its own, and the
//! recorded requests show each role's session used only its role's model.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

#[path = "conformance/dialect.rs"]
#[allow(
    dead_code,
    reason = "shared with the conformance suite, which uses all of it"
)]
mod dialect;
use crate::pipeline_common;

use dialect::Dialect;
use ganger_fake_llm::{FakeLlm, Script, Turn};
use ganger_test_support::{World, agent_toml};
use pipeline_common::role_of;
use std::collections::BTreeMap;

const ROLES: &[&str] = &["planner", "critic", "executor", "code"];

fn script(d: Dialect, worktree: &std::path::Path) -> Script {
    Script::new()
        .turn(Turn::text("Plan.\n\n1. Create one.txt\n").when("Write the plan now"))
        .turn(
            d.write(worktree, "by-tool.txt", "written\n")
                .when("Review this version of the plan"),
        )
        .turn(d.shell("echo written > by-shell.txt"))
        .text("CRITIQUE: sound.")
        .turn(d.write(worktree, "one.txt", "one\n").when("Do step 1 of 1"))
        .text("Step 1 done.")
        .turn(Turn::text("VERDICT: fail\none.txt:1: no second file").when("Your role: code"))
        .turn(
            d.write(worktree, "two.txt", "two\n")
                .when("one.txt:1: no second file"),
        )
        .text("Fixed: two.txt.")
        .turn(Turn::text("VERDICT: pass").when("(?s)\\+two.*review round 2"))
        .default_answer("side")
}

fn pipeline(d: Dialect) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let worktree = world.worktree("pipe");
    let llm = FakeLlm::start(script(d, &worktree)).unwrap();
    let base = agent_toml(d.agent, &llm.root_url(), "timeout = \"300s\"", "");
    // `[defaults]` comes first, its model on a line of its own, quoted as JSON would.
    let default_model: String = base
        .lines()
        .find_map(|line| line.strip_prefix("model = "))
        .map(|quoted| serde_json::from_str(quoted).unwrap())
        .unwrap();
    let mut models = BTreeMap::new();
    let mut roles = String::from("\n[pipeline]\nreviewers = [\"code\"]\nreview_rounds = 2\n");
    for role in ROLES {
        let model = format!("{default_model}-{role}");
        roles.push_str(&format!("\n[roles.{role}]\nmodel = \"{model}\"\n"));
        // OpenCode knows the models its provider's configuration lists.
        if let Some(name) = model.strip_prefix("mock/") {
            roles.push_str(&format!(
                "\n[agents.opencode.config.provider.mock.models.{name}.limit]\ncontext = 128000\noutput = 8192\n"
            ));
        }
        models.insert(role.to_string(), model);
    }
    world.write("ganger.toml", &format!("{base}\n{roles}"));

    let planned = world.ganger(&["plan", "pipe", "--message", "Add one.txt.", "--json"]);
    let report = planned.json();
    assert_eq!(
        report["stage"], "awaiting-approval",
        "{report:#}\n{}",
        planned.stderr
    );
    planned.expect_code(0);
    for name in ["by-tool.txt", "by-shell.txt"] {
        assert!(!worktree.join(name).exists(), "{name} in the worktree");
        assert!(
            !world.repo.join(name).exists(),
            "{name} in the main checkout"
        );
    }
    let approved = world.ganger(&["approve", "pipe", "--json"]);
    let report = approved.json();
    assert_eq!(report["stage"], "done", "{report:#}\n{}", approved.stderr);
    approved.expect_code(0);
    assert_eq!(report["reviewers"][0]["verdict"], "pass");
    assert_eq!(report["reviewers"][0]["round"], 2);
    assert_eq!(
        std::fs::read_to_string(worktree.join("one.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("two.txt")).unwrap(),
        "two\n"
    );

    let requests = llm.requests();
    let mut seen = std::collections::BTreeSet::new();
    for request in requests.iter().filter(|r| r.tools_offered) {
        let role = role_of(request);
        let model = &request.conversation.as_ref().unwrap().model;
        // OpenCode's requests name the model without its provider (`mock/`).
        let named = &models[&role];
        assert!(
            named.ends_with(model.as_str()) && model.ends_with(&format!("-{role}")),
            "a request of the {role} went to {model}, not {}",
            models[&role]
        );
        seen.insert(role);
    }
    assert_eq!(seen.len(), ROLES.len(), "{seen:?}");
}

macro_rules! agents {
    ($($agent:ident),* $(,)?) => {$(
        #[test]
        fn $agent() {
            pipeline(dialect::dialect(stringify!($agent)));
        }
    )*};
}

agents!(opencode, claude, codex, gemini, qwen);
