//! Ownership, inbound policy and `fix --interrupt`, with the stand-in `opencode`
//! (test-support's `fake-opencode.sh`, which appends its prompt's first line to `fake.txt` in
//! its worktree: the witness of which rounds really ran).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{Run, World, wait_until};
use std::time::Duration;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

fn lines(world: &World, slug: &str) -> Vec<String> {
    std::fs::read_to_string(world.worktree(slug).join("fake.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn only_the_owner_commands_a_task_and_a_transfer_hands_it_on() {
    let world = world();
    world
        .ganger(&["start", "t", "--message", "from alice", "--as", "alice"])
        .expect_code(0);
    // Bob neither owns it nor is allowed: every command is refused, naming the owner, and
    // nothing runs.
    for args in [
        vec!["fix", "t", "--message", "from bob", "--as", "bob"],
        vec!["cancel", "t", "--as", "bob"],
        vec!["merge", "t", "--as", "bob"],
        vec!["rewind", "t", "--to", "1", "--as", "bob"],
        vec!["transfer", "t", "--to", "bob", "--as", "bob"],
        vec!["release", "t", "--as", "bob"],
        vec!["policy", "t", "refuse", "--as", "bob"],
        vec!["allow", "t", "bob", "--as", "bob"],
        vec!["assign", "t", "--as", "bob"],
        vec!["attach", "t", "--as", "bob"],
        vec!["plan", "t", "--message", "a plan", "--as", "bob"],
        vec!["approve", "t", "--as", "bob"],
        vec!["reject", "t", "--message", "no", "--as", "bob"],
    ] {
        let run = world.ganger(&args);
        run.expect_code(2);
        assert!(
            run.stderr.contains("bob may not") && run.stderr.contains("owned by alice"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(lines(&world, "t"), ["from alice"]);

    let moved = world.ganger(&["transfer", "t", "--to", "bob", "--as", "alice", "--json"]);
    moved.expect_code(0);
    let report = moved.json();
    assert_eq!(report["owner"], "bob");
    assert_eq!(report["generation"], 2);
    assert_eq!(report["change"], "transferred");
    let refused = world.ganger(&["fix", "t", "--message", "alice again", "--as", "alice"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("owned by bob"),
        "{}",
        refused.stderr
    );
    world
        .ganger(&["fix", "t", "--message", "from bob", "--as", "bob"])
        .expect_code(0);

    // Released, nobody may send it rounds until someone takes it.
    world
        .ganger(&["release", "t", "--as", "bob"])
        .expect_code(0);
    let orphan = world.ganger(&["fix", "t", "--message", "bob again", "--as", "bob"]);
    orphan.expect_code(2);
    assert!(
        orphan.stderr.contains("nobody owns it"),
        "{}",
        orphan.stderr
    );
    let taken = world.ganger(&["assign", "t", "--as", "carol", "--json"]);
    taken.expect_code(0);
    assert_eq!(taken.json()["owner"], "carol");
    assert_eq!(taken.json()["generation"], 4);
    world
        .ganger(&["fix", "t", "--message", "from carol", "--as", "carol"])
        .expect_code(0);
    assert_eq!(lines(&world, "t"), ["from alice", "from bob", "from carol"]);

    // The journal has each change, by whom, from whom, to whom.
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    let changes: Vec<(String, String, String)> = db
        .prepare("SELECT kind, commander, detail FROM journal WHERE kind IN ('transferred', 'released', 'assigned') ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let changes: Vec<(String, String, String, String)> = changes
        .into_iter()
        .map(|(kind, by, detail)| {
            let detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
            let name = |k: &str| detail[k].as_str().unwrap().to_owned();
            (kind, by, name("from"), name("to"))
        })
        .collect();
    let expected = [
        ("transferred", "alice", "alice", "bob"),
        ("released", "bob", "bob", ""),
        ("assigned", "carol", "", "carol"),
    ];
    assert_eq!(
        changes,
        expected.map(|(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
    );
}

#[test]
fn policy_refuse_and_hold_stop_new_rounds_and_allow_lets_others_in() {
    let world = world();
    world
        .ganger(&["start", "p", "--message", "one", "--as", "alice"])
        .expect_code(0);
    world
        .ganger(&["allow", "p", "dave", "--as", "alice"])
        .expect_code(0);
    world
        .ganger(&["fix", "p", "--message", "from dave", "--as", "dave"])
        .expect_code(0);
    // Allowed to send rounds is not owning: dave may not cancel, merge or hand it on.
    let run = world.ganger(&["transfer", "p", "--to", "dave", "--as", "dave"]);
    run.expect_code(2);
    assert!(run.stderr.contains("owned by alice"), "{}", run.stderr);

    world
        .ganger(&["policy", "p", "refuse", "--as", "alice"])
        .expect_code(0);
    for who in ["alice", "dave"] {
        let run = world.ganger(&["fix", "p", "--message", "refused", "--as", who]);
        run.expect_code(2);
        assert!(
            run.stderr.contains("task p refuses new rounds"),
            "{}",
            run.stderr
        );
    }
    // Hold: a round sent now waits in the queue (nothing runs) until the policy is accept
    // and a scheduler delivers it (tests/fleet.rs follows one through `ganger serve`).
    world
        .ganger(&["policy", "p", "hold", "--as", "alice"])
        .expect_code(0);
    let held = world.ganger(&["fix", "p", "--message", "held", "--as", "dave", "--detach"]);
    held.expect_code(0);
    assert!(
        held.stdout
            .starts_with("task p holds new rounds: the round waits in the queue"),
        "{}",
        held.stdout
    );
    let status = world.ganger(&["fleet", "status", "--json"]).json();
    assert_eq!(status["tasks"][0]["queue"], "queued", "{status:#}");
    // Its `ganger.queued/1` is the one the MCP server and the API answer: held, it says.
    let held = world.ganger(&["fix", "p", "--message", "held", "--as", "dave", "--json"]);
    held.expect_code(0);
    assert_eq!(held.json()["held"], true, "{}", held.stdout);
    let looped = world.ganger(&[
        "fix",
        "p",
        "--message",
        "x",
        "--until-green",
        "2",
        "--as",
        "alice",
    ]);
    looped.expect_code(2);
    assert!(
        looped.stderr.contains("holds new rounds"),
        "{}",
        looped.stderr
    );
    assert_eq!(lines(&world, "p"), ["one", "from dave"]);
    world
        .ganger(&["policy", "p", "accept", "--as", "alice"])
        .expect_code(0);
    world
        .ganger(&["allow", "p", "dave", "--remove", "--as", "alice"])
        .expect_code(0);
    let gone = world.ganger(&["fix", "p", "--message", "dave again", "--as", "dave"]);
    gone.expect_code(2);
    world
        .ganger(&["fix", "p", "--message", "two", "--as", "alice"])
        .expect_code(0);
    assert_eq!(lines(&world, "p"), ["one", "from dave", "two"]);

    let bad = world.ganger(&["policy", "p", "maybe", "--as", "alice"]);
    bad.expect_code(2);
    assert!(
        bad.stderr.contains("accept, hold, refuse"),
        "{}",
        bad.stderr
    );
}

#[test]
fn interrupt_cancels_the_running_round_and_continues_the_session() {
    let world = world();
    world
        .ganger(&["start", "i", "--message", "sleep 60", "--detach"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(30), || {
        lines(&world, "i").len() == 1
    }));
    let plain = world.ganger(&["fix", "i", "--message", "no"]);
    plain.expect_code(2);
    assert!(plain.stderr.contains("still running"), "{}", plain.stderr);
    let run = world.ganger(&["fix", "i", "--message", "instead", "--interrupt", "--json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["round"], 2);
    assert_eq!(report["status"], "done");
    let first = world.ganger(&["status", "i", "--json"]).json();
    assert_eq!(first["round"], 2);
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    let rows: Vec<(u32, String, Option<String>, Option<String>)> = db
        .prepare("SELECT number, status, session_before, session FROM rounds ORDER BY number")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows[0].1, "cancelled");
    assert_eq!(rows[1].1, "done");
    // The second round resumed the first one's session.
    assert!(rows[0].3.is_some());
    assert_eq!(rows[1].2, rows[0].3);
    assert_eq!(lines(&world, "i"), ["sleep 60", "instead"]);
}

/// A round sent by the owner is refused when the task changes hands before it starts: the
/// generation it was sent under is checked again as the round begins.
#[test]
fn a_round_sent_before_a_transfer_is_refused_at_delivery() {
    let world = world();
    world
        .ganger(&["start", "g", "--message", "one", "--as", "alice"])
        .expect_code(0);
    let mut late = world.command(&["fix", "g", "--message", "late", "--as", "alice"]);
    late.env("GANGER_FAULT_PAUSE", "before-begin-round:1500")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs ganger in the background while it transfers the task"
    )]
    let late = late.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    world
        .ganger(&["transfer", "g", "--to", "bob", "--as", "alice"])
        .expect_code(0);
    let late = Run::from(late.wait_with_output().unwrap());
    late.expect_code(2);
    assert_eq!(
        late.stderr.lines().next().unwrap(),
        "error: the round for g was sent under generation 1, but the task's ownership changed \
         since (generation 2, owner bob)"
    );
    // Nothing reached the worker; bob's own round does.
    world
        .ganger(&["fix", "g", "--message", "bob's", "--as", "bob"])
        .expect_code(0);
    assert_eq!(lines(&world, "g"), ["one", "bob's"]);
}

/// Two commanders hand a task back and forth while both keep sending it rounds. Replaying
/// the journal (ownership changes and round starts, in the order the store committed them)
/// shows that every round that started was sent by the owner of that moment, and the
/// worker's own file shows that exactly those rounds ran.
#[test]
fn racing_transfers_never_deliver_a_round_to_a_commander_who_lost_the_task() {
    let world = world();
    world
        .ganger(&["start", "race", "--message", "alice 0", "--as", "alice"])
        .expect_code(0);
    let world = std::sync::Arc::new(world);
    // In every step four commands run at once: each commander sends a round and, from
    // another process, tries to hand the task to the other one (only the owner of that moment
    // can), a little later each step, so that a round may be sent by an owner who loses the
    // task before it starts.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let mut threads = Vec::new();
    for (me, other, moves) in [
        ("alice", "bob", false),
        ("alice", "bob", true),
        ("bob", "alice", false),
        ("bob", "alice", true),
    ] {
        let (world, barrier) = (
            std::sync::Arc::clone(&world),
            std::sync::Arc::clone(&barrier),
        );
        threads.push(std::thread::spawn(move || {
            let mut outcomes = Vec::new();
            for i in 1..=16u64 {
                barrier.wait();
                if moves {
                    std::thread::sleep(Duration::from_millis(i * 37 % 120));
                    let moved = world.ganger(&["transfer", "race", "--to", other, "--as", me]);
                    outcomes.push(("transfer".into(), moved.code, moved.stderr.clone()));
                } else {
                    let message = format!("{me} {i}");
                    let mut fix =
                        world.command(&["fix", "race", "--message", &message, "--as", me]);
                    // Widens the window between fix's own ownership check and the round's
                    // start, where a transfer may land (debug builds only).
                    fix.env(
                        "GANGER_FAULT_PAUSE",
                        format!("before-begin-round:{}", i * 23 % 90),
                    );
                    let fix = Run::from(fix.output().unwrap());
                    outcomes.push((message, fix.code, fix.stderr.clone()));
                }
            }
            outcomes
        }));
    }
    let outcomes: Vec<(String, i32, String)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let mut sent_and_ran = vec!["alice 0".to_owned()];
    for (what, code, stderr) in &outcomes {
        match code {
            0 if what != "transfer" => sent_and_ran.push(what.clone()),
            0 => {}
            2 => assert!(
                stderr.contains("may not")
                    || stderr.contains("still running")
                    || stderr.contains("ownership changed since"),
                "{what}: {stderr}"
            ),
            other => panic!("{what}: exit {other}: {stderr}"),
        }
    }
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    let journal: Vec<(String, Option<String>, String)> = db
        .prepare("SELECT kind, commander, detail FROM journal ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut owner = "alice".to_owned();
    let (mut started, mut transfers) = (0, 0);
    for (kind, commander, detail) in &journal {
        match kind.as_str() {
            "transferred" => {
                let detail: serde_json::Value = serde_json::from_str(detail).unwrap();
                assert_eq!(detail["from"], owner.as_str());
                owner = detail["to"].as_str().unwrap().to_owned();
                transfers += 1;
            }
            "round-started" => {
                assert_eq!(commander.as_deref(), Some(owner.as_str()));
                started += 1;
            }
            _ => {}
        }
    }
    assert!(transfers >= 2, "the test must move the task: {outcomes:?}");
    let stale = outcomes
        .iter()
        .filter(|(_, _, e)| e.contains("ownership changed since"))
        .count();
    eprintln!("{started} rounds started, {transfers} transfers, {stale} rounds refused as stale");
    // What the worker did is what ganger said it started, round for round.
    let mut ran = lines(&world, "race");
    let mut sent = sent_and_ran.clone();
    ran.sort();
    sent.sort();
    assert_eq!(ran, sent);
    assert_eq!(started, ran.len());
    // And the rounds' own commanders name the sender of each prompt.
    let rounds: Vec<String> = db
        .prepare("SELECT commander FROM rounds ORDER BY number")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let file = lines(&world, "race");
    for (commander, line) in rounds.iter().zip(&file) {
        assert!(line.starts_with(commander.as_str()), "{commander}: {line}");
    }
}
