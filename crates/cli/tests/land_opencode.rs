//! `ganger land --fix` with the real, pinned OpenCode against the scripted model (issue 41):
//! a task that conflicts with its base is sent back, its worker resolves the conflict in a fix
//! round told the file and the lines of its hunk, and the task lands.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Script, Turn};
use ganger_test_support::{World, opencode_toml};
use serde_json::json;

#[test]
fn a_conflicting_task_goes_back_to_opencode_which_resolves_it_and_it_lands() {
    let script = Script::new()
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "notes.txt", "content": "x's notes\n"}),
            )
            .when("Write your notes"),
        )
        .text("Wrote notes.txt.")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "notes.txt", "content": "main's notes\nx's notes\n"}),
            )
            .when("conflict markers"),
        )
        .text("Resolved the conflict in notes.txt: both notes are kept.");
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &opencode_toml(
            &llm.base_url(),
            "",
            "not-a-secret-key",
            "\n[[checks]]\nname = \"no-markers\"\ncommand = \"! grep -rq '^<<<<<<< ' --exclude-dir=.git .\"\n",
        ),
    );
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "ignore ganger.toml"]);
    world
        .ganger(&["start", "x", "--message", "Write your notes to notes.txt."])
        .expect_code(0);
    world.write("notes.txt", "main's notes\n");
    world.git(&["add", "notes.txt"]);
    world.git(&["commit", "-q", "-m", "main: notes"]);
    let head = world.git(&["rev-parse", "main"]);
    world.ganger(&["land", "x", "--fix"]).expect_code(0);
    let run = world.ganger(&["land", "--run", "--json"]);
    run.expect_code(0);
    let report = run.json();
    let batches = report["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 2, "{report:#}");
    assert_eq!(batches[0]["returned"][0]["reason"], "conflict");
    assert_eq!(batches[0]["returned"][0]["files"], json!(["notes.txt"]));
    assert_eq!(
        batches[0]["fix_rounds"],
        json!([{ "task": "x", "round": 2, "passed": true, "requeued": true }]),
        "{report:#}"
    );
    assert_eq!(batches[1]["landed"], json!(["x"]), "{report:#}");
    // The worker was told the file and the lines of its hunk.
    let told = llm
        .requests()
        .iter()
        .filter_map(|r| r.prompts().last().cloned())
        .find(|p| p.contains("conflict markers"))
        .expect("a fix round's prompt");
    assert!(told.contains("- notes.txt (lines 1-5)"), "{told}");
    assert_eq!(
        std::fs::read_to_string(world.repo.join("notes.txt")).unwrap(),
        "main's notes\nx's notes\n"
    );
    let first_parents = world.git(&["rev-list", "--first-parent", &format!("{head}..main")]);
    assert_eq!(first_parents.lines().count(), 1, "one batch landed");
}
