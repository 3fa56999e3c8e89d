//! Conflict prediction beside races: the attempts of one race are alternatives, so their
//! overlap is never reported as a conflict; a task that conflicts with an attempt is, and once
//! the race's winner is merged its pairs are gone. Real git and the `command` agent, whose
//! model names the attempt (`$1`) and whose prompt's last line is a shell script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use serde_json::Value;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // The judge answers on one line (a command's answer is its last line).
    let script = "[ \"$1\" = judge ] && { cat >/dev/null; echo 'WINNER: A (first)'; exit 0; }; \
                  eval \"$(tail -n 1)\"";
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[agents.command]\n\
             argv = [\"sh\", \"-c\", {}, \"sh\", \"{{model}}\"]\nformat = \"text\"\n\n\
             [roles.judge]\nagent = \"command\"\nmodel = \"judge\"\n",
            serde_json::to_string(script).unwrap()
        ),
    );
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("src/a.txt", &lines);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "src/a.txt", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "thirty lines"]);
    world
}

/// The pairs `ganger status --json` reports, as "task other".
fn pairs(world: &World) -> Vec<String> {
    let status = world.ganger(&["status", "--json"]);
    status.expect_code(0);
    match &status.json()["conflicts"] {
        Value::Array(found) => found
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c["task"].as_str().unwrap(),
                    c["other"].as_str().unwrap()
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_races_attempts_are_no_conflict_to_each_other_and_a_merged_winner_leaves_none() {
    let world = world();
    let race = world.ganger(&[
        "race",
        "r",
        "--message",
        // Attempt 2 takes a second longer: the judge's ties go to the earlier finish, 1.
        "[ \"$1\" = two ] && sleep 1; sed -i \"11s/.*/$1 was here/\" src/a.txt",
        "--attempts",
        "command:one,command:two",
        "--check",
        "true",
        "--json",
    ]);
    race.expect_code(0);
    assert_eq!(race.json()["winner"], 1, "{:#}", race.json());
    assert_eq!(
        pairs(&world),
        Vec::<String>::new(),
        "two attempts of one race edit the same line: alternatives, not a conflict"
    );
    world
        .ganger(&[
            "start",
            "t",
            "--message",
            "sed -i '11s/.*/t was here/' src/a.txt",
        ])
        .expect_code(0);
    assert_eq!(
        pairs(&world),
        ["r.1 t", "r.2 t"],
        "a task against each attempt is"
    );
    world.ganger(&["merge", "r"]).expect_code(0);
    assert_eq!(
        pairs(&world),
        ["r.2 t"],
        "the merged winner's work is the base's: its pairs are gone"
    );
}

/// Each attempt's diff size is its own, against the base: files, lines added and removed (a
/// binary file a file of no lines), and nothing for an attempt that changed nothing.
#[test]
fn each_attempts_diff_size_is_its_own_against_the_base() {
    let world = world();
    let script = "case \"$1\" in \
        one) sed -i '11s/.*/one/' src/a.txt;; \
        two) sed -i '1d;2d' src/a.txt; printf 'a\\nb\\nc\\n' > src/new.txt; \
             printf '\\000\\001' > src/blob.bin;; \
        esac";
    let race = world.ganger(&[
        "race",
        "s",
        "--message",
        script,
        "--attempts",
        "command:one,command:two,command:none",
        "--check",
        "true",
        "--json",
    ]);
    race.expect_code(0);
    let report = race.json();
    let sizes: Vec<(u64, u64, u64)> = report["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let n = |key: &str| a[key].as_u64().unwrap();
            (n("files"), n("added"), n("removed"))
        })
        .collect();
    assert_eq!(sizes, [(1, 1, 1), (3, 3, 2), (0, 0, 0)], "{report:#}");
}
