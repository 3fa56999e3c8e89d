//! A pipeline driven with `--as NAME` sends every role round as that commander (issue 13.19):
//! the planner's next round after a `reject` and the executor's steps after an `approve` were
//! sent as the user's name and refused by the ownership check. The roles are a command agent
//! that answers by its role, so no model is needed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// A worker (Claude's stream format) that answers as the role named by its task, `$1`.
const ROLES: &str = r#"cat >/dev/null
answer() { printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s"}\n' "$1" "$2"; }
case "$1" in
  *.planner) answer '# Plan\n\n1. Write a.txt.\n2. Write b.txt.' planner ;;
  *.critic) answer 'The plan is fine.' critic ;;
  *.executor) echo step >> steps.txt; answer 'DONE: step written' executor ;;
  *) answer 'VERDICT: pass' reviewer ;;
esac"#;

#[test]
fn role_rounds_of_a_pipeline_driven_as_a_commander_are_sent_as_that_commander() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[agents.command]\n\
             argv = [\"sh\", \"-c\", {script}, \"sh\", \"{{title}}\"]\nformat = \"claude\"\n\n\
             [pipeline]\nreviewers = [\"code\"]\n",
            script = serde_json::to_string(ROLES).unwrap()
        ),
    );
    world
        .ganger(&["plan", "p", "--message", "two files", "--as", "alice"])
        .expect_code(0);
    let rejected = world.ganger(&["reject", "p", "--message", "again", "--as", "alice"]);
    rejected.expect_code(0);
    let approved = world.ganger(&["approve", "p", "--as", "alice", "--json"]);
    approved.expect_code(0);
    assert_eq!(approved.json()["stage"], "done", "{}", approved.stdout);
    let steps = std::fs::read_to_string(world.worktree("p").join("steps.txt")).unwrap();
    assert_eq!(steps.lines().count(), 2, "{steps}");
    // Every role round was sent by alice, none by the user the environment names.
    let journal = world.ganger(&["watch", "--as", "alice", "--json"]);
    journal.expect_code(0);
    let rows = rusqlite::Connection::open(world.repo.join(".ganger/state.db"))
        .unwrap()
        .prepare("SELECT DISTINCT commander FROM rounds")
        .unwrap()
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    assert_eq!(rows, ["alice"]);
}
