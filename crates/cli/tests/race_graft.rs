//! `ganger race SLUG --graft`: the winner gets one fix round whose brief carries the passing
//! losers' hunks in files the winner left alone (not their hunks in its own files, nor a
//! failing attempt's) and the reviewers' reasons against it. The `command` agent: an attempt
//! runs its prompt's last line as a script (which does what its worktree's name says); the
//! graft round keeps its brief in the worktree as the witness; the judge always answers A,
//! with a reason.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// A world whose `command` agent runs, for an attempt, the prompt's last line; keeps a graft
/// round's brief in the worktree; and judges A, with a reason.
fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "p=$(cat); case \"$p\" in *'Your role: judge'*) echo 'WINNER: A as A is tidier';; \
         *'Your attempt won race'*) printf '%s' \"$p\" > graft-brief.txt; echo grafted;; \
         *) eval \"$(printf '%s' \"$p\" | tail -n 1)\"; echo done;; esac",
        "",
        "",
    );
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("src/a.txt", &lines);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "src/a.txt", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "thirty lines"]);
    world
}

#[test]
fn graft_sends_the_winner_the_losers_hunks_it_lacks_and_the_reasons_against_it() {
    let world = world();
    // Before the race: nothing to graft onto.
    let none = world.ganger(&["race", "g", "--graft"]);
    assert_ne!(none.code, 0, "{}", none.stderr);
    assert!(none.stderr.contains("no race g"), "{}", none.stderr);
    // 1 edits a line (the smallest diff: it wins the ties); 2 edits the same line and adds
    // a file; 3 adds another file but fails the check.
    let script = "case \"$PWD\" in \
        *g.1) sed -i '11s/.*/one/' src/a.txt;; \
        *g.2) sed -i '11s/.*/two/' src/a.txt; echo 'extra line' > src/extra.txt;; \
        *g.3) echo 'b line' > src/b.txt; touch failed;; esac";
    let race = world.ganger(&[
        "race",
        "g",
        "--message",
        script,
        "--attempts",
        "command*3",
        "--check",
        "test ! -e failed",
        "--json",
    ]);
    race.expect_code(0);
    assert_eq!(race.json()["winner_task"], "g.1", "{:#}", race.json());

    let graft = world.ganger(&["race", "g", "--graft", "--json"]);
    graft.expect_code(0);
    let round = graft.json();
    assert_eq!(
        (round["task"].as_str(), round["round"].as_u64()),
        (Some("g.1"), Some(2)),
        "{round:#}"
    );
    assert_eq!(round["status"], "done", "{round:#}");
    let brief = std::fs::read_to_string(world.worktree("g.1").join("graft-brief.txt")).unwrap();
    // Attempt 2's new file, not its edit of the winner's file, nor failing attempt 3's file.
    assert!(brief.contains("+extra line"), "{brief}");
    assert!(!brief.contains("+two"), "{brief}");
    assert!(!brief.contains("+b line"), "{brief}");
    // The verdict that preferred attempt 2 (2 shown as A), with its reason.
    assert!(
        brief.contains("preferring attempt 2: as A is tidier"),
        "{brief}"
    );
}
