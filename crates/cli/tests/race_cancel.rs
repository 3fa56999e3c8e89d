//! Cancels that land at awkward moments. `--first-green` cancels the other attempts at once,
//! not one after another: two losers whose agents take a second to stop after SIGTERM both
//! get their SIGTERM before either has stopped (the `command` agent, its worktree's name saying
//! what each attempt does; the witnesses are the agents' own lines, outside ganger). A cancel
//! that reaches a round while its detached host starts stops the round, and never the host
//! nor the command (or `ganger serve`) starting it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// The time (ns) on the first line of `what` in attempt `slug`'s witness.
fn at(witness: &std::path::Path, slug: &str, what: &str) -> u128 {
    let text = std::fs::read_to_string(witness.join(format!("{slug}.log"))).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{what} ")))
        .unwrap_or_else(|| panic!("{slug}: no {what} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn first_green_cancels_the_other_attempts_at_once() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let witness = world.root().join("witness");
    std::fs::create_dir_all(&witness).unwrap();
    let w = witness.to_str().unwrap();
    // Attempt 1 answers at once; the others wait, and on SIGTERM take a second to stop.
    world.use_command_agent(
        &format!(
            "cat >/dev/null; n=${{PWD##*/repo-agent-}}; log={w}/$n.log; \
             case \"$n\" in c.1) echo hi > win.txt; echo done;; \
             *) trap 'echo \"term $(date +%s%N)\" >> $log; sleep 1; \
             echo \"end $(date +%s%N)\" >> $log; exit 0' TERM; \
             echo \"start $(date +%s%N)\" >> $log; sleep 60 & wait $!;; esac"
        ),
        "",
        "",
    );
    // The winner passes once both losers' agents run, so that each has an agent to stop.
    let check = format!(
        "case \"$PWD\" in *c.1) for i in $(seq 600); do \
         [ -e {w}/c.2.log ] && [ -e {w}/c.3.log ] && exit 0; sleep 0.05; done; exit 1;; esac"
    );
    let run = world.ganger(&[
        "race",
        "c",
        "--message",
        "work",
        "--attempts",
        "command*3",
        "--check",
        &check,
        "--first-green",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["winner_task"], "c.1", "{report:#}");
    for row in 1..=2 {
        assert_eq!(report["attempts"][row]["status"], "cancelled", "{report:#}");
    }
    // Both got SIGTERM before either had stopped: the cancels ran at once.
    let (term2, end2) = (at(&witness, "c.2", "term"), at(&witness, "c.2", "end"));
    let (term3, end3) = (at(&witness, "c.3", "term"), at(&witness, "c.3", "end"));
    assert!(
        term2 < end3 && term3 < end2,
        "one after another: c.2 term {term2} end {end2}, c.3 term {term3} end {end3}"
    );
}

/// `--first-green` starts its attempts one by one and looks between two starts: an attempt
/// that passed while the others were being started wins at once, and those not started yet
/// never start (each start is held two seconds after spawning its host, debug builds, so
/// attempt 1 has passed before attempt 2 would start). Their rows say `not-started`, and no
/// task of theirs exists.
#[test]
fn first_green_starts_no_attempt_once_one_has_passed() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo hi > win.txt; echo done", "", "");
    let mut race = world.command(&[
        "race",
        "s",
        "--message",
        "work",
        "--attempts",
        "command*3",
        "--check",
        "true",
        "--first-green",
        "--json",
    ]);
    race.env("GANGER_FAULT_PAUSE", "launch-after-spawn:2000");
    let run = race.output().unwrap();
    assert!(run.status.success(), "{run:?}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["winner_task"], "s.1", "{report:#}");
    for (row, number) in [(1, 2), (2, 3)] {
        assert_eq!(
            report["attempts"][row]["status"], "not-started",
            "{report:#}"
        );
        world
            .ganger(&["status", &format!("s.{number}")])
            .expect_code(2);
    }
}

/// A cancel that reaches a detached host while it is still starting (held before it takes
/// its claim over, debug builds) is recorded by the host itself, which watches stop signals
/// from its first step: the round ends `cancelled (ganger cancel)` at once, its agent never
/// started; not a host killed by the SIGTERM whose round the cancel must then settle
/// ("ended before recording it"), the slow way `--first-green`'s cancels took.
#[test]
fn a_cancel_while_the_host_starts_is_recorded_by_the_host() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut start = world.command(&["start", "t", "--message", "work", "--detach"]);
    start.env("GANGER_FAULT_PAUSE", "host-before-takeover:4000");
    let started = start.output().unwrap();
    assert!(started.status.success(), "{started:?}");
    // The host watches from its first step, after its process has read the workspace: the
    // cancel comes once it is well into its held start (a cancel in the process's first
    // milliseconds still finds no watch).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let cancel = world.ganger(&["cancel", "t", "--json"]);
    cancel.expect_code(0);
    let report = cancel.json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(report["reason"], "cancelled (ganger cancel)", "{report:#}");
    assert!(
        !world.worktree("t").join("fake.txt").exists(),
        "the agent ran"
    );
}

/// A cancel that comes after a detached round is recorded but before its host is named in the
/// store (the command that spawned it and the host are both held before they name it, debug
/// builds) signals the host once it is named, never the command: that command was recorded as the round's host until then,
/// and the cancel's SIGTERM killed it (`ganger serve` delivering a race's attempt died so,
/// and the race waited for its delivery for ever).
#[test]
fn a_cancel_before_a_detached_host_is_named_stops_the_round_not_the_command_starting_it() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; sleep 60", "", "");
    let mut start = world.command(&["start", "t", "--message", "work", "--detach"]);
    start
        .env(
            "GANGER_FAULT_PAUSE",
            "launch-after-spawn:4000,host-before-takeover:2000",
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the starting command is held while the test cancels its round"
    )]
    let starting = start.spawn().unwrap();
    // The prompt is written just before the host is spawned: the cancel lands in the hold.
    let prompt = world.repo.join(".ganger/tasks/t/round-1.prompt.md");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !prompt.exists() {
        assert!(std::time::Instant::now() < deadline, "no round recorded");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let cancel = world.ganger(&["cancel", "t", "--json"]);
    cancel.expect_code(0);
    let report = cancel.json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    // The starting command was left to finish: it reports the round started, exit 0.
    let started = starting.wait_with_output().unwrap();
    assert!(started.status.success(), "{started:?}");
}

/// A cancel in a detached host's very first step, before it watches stop signals (held there,
/// debug builds): the host was started with them blocked, so the SIGTERM waits for its watch
/// and the host records the round `cancelled (ganger cancel)` itself, instead of dying of it
/// and leaving the cancel to settle the round the slow way ("ended before recording it").
#[test]
fn a_cancel_before_the_host_watches_signals_waits_for_its_watch() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut start = world.command(&["start", "t", "--message", "work", "--detach"]);
    start.env("GANGER_FAULT_PAUSE", "host-first-step:3000");
    let started = start.output().unwrap();
    assert!(started.status.success(), "{started:?}");
    let cancel = world.ganger(&["cancel", "t", "--json"]);
    cancel.expect_code(0);
    let report = cancel.json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(report["reason"], "cancelled (ganger cancel)", "{report:#}");
    assert!(
        !world.worktree("t").join("fake.txt").exists(),
        "the agent ran"
    );
}
