//! Evidence for fleets, fast: budgets stopping a round as it streams and refusing the next,
//! `DONE:` lines from the answer to the report, the table, the journal and `status
//! --group-by`, labels, and the commander's journal with `watch`, `ack` and `watch --follow`.
//! The agents are the stand-in `opencode` of test-support and, where the test needs an answer
//! or usage of its own, a small OpenCode-shaped script written here.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, living_pids_with_env, wait_until};
use serde_json::Value;
use std::io::BufRead;
use std::time::{Duration, Instant};

/// An OpenCode-shaped agent: `spend N` reports N input tokens without a cost, then works
/// (sleeps) for a long time; anything else answers with a paragraph whose last line is
/// `DONE: <the prompt's first line>`, without a cost either (10 tokens); `linger ...` then
/// stays two seconds before it exits.
const SCRIPTED_AGENT: &str = r#"#!/usr/bin/env bash
set -u
case "${1:-}" in
  --version) echo 1.18.33; exit 0 ;;
  models) printf 'mock/scripted\n'; exit 0 ;;
esac
session=""
while [ $# -gt 0 ]; do
  case "$1" in
    --session) session=$2; shift 2 ;;
    *) shift ;;
  esac
done
prompt=$(cat)
[ -n "$session" ] || session="ses_script${RANDOM}${RANDOM}"
first=${prompt%%$'\n'*}
event() { printf '{"type":"%s","timestamp":1,"sessionID":"%s","part":%s}\n' "$1" "$session" "$2"; }
usage() { event step_finish "{\"type\":\"step-finish\",\"reason\":\"$1\",\"tokens\":{\"input\":$2,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}}"; }
event step_start '{"type":"step-start"}'
case "$first" in
  "spend "*) usage tool-calls "${first#spend }"; event step_start '{"type":"step-start"}'; sleep 60 ;;
esac
event text "{\"type\":\"text\",\"text\":\"Worked on it.\\n\\nDONE: ${first}\\n\"}"
usage stop 10
case "$first" in
  linger*) sleep 2 ;;
esac
"#;

fn world(extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", extra);
    world
}

/// A world whose agent is [`SCRIPTED_AGENT`], cold (it speaks no ACP).
fn scripted_world(extra: &str) -> World {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let program = world.root().join("scripted-agent");
    std::fs::write(&program, SCRIPTED_AGENT).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nmodel = \"mock/scripted\"\n\n[warm]\ndefault = false\n\n\
             [agents.opencode]\ncommand = {}\n{extra}\n",
            serde_json::to_string(&program.to_string_lossy()).unwrap()
        ),
    );
    world
}

fn marker(report: &Value) -> String {
    format!("GANGER_ROUND={}", report["token"].as_str().unwrap())
}

/// The kinds of the entries of a `watch --json` page, with their tasks.
fn kinds(page: &Value) -> Vec<(String, String)> {
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["task"].as_str().unwrap_or("-").to_owned(),
                e["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_token_budget_stops_the_round_as_it_streams_and_the_next_fix_is_refused() {
    let world = world("");
    let started = Instant::now();
    // The stand-in reports 110 tokens, then sleeps for a minute.
    let run = world.ganger(&[
        "start",
        "capped",
        "--message",
        "sleep 60",
        "--budget-tokens",
        "100",
        "--as",
        "boss",
        "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not stopped mid-stream"
    );
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(
        report["reason"],
        "stopped: budget of 100 tokens for task capped reached (spent 110)"
    );
    assert!(living_pids_with_env(&marker(&report)).is_empty());
    assert_eq!(
        report["budget"],
        serde_json::json!({"task": {"usd": null, "tokens": 100, "spent_usd": 0.001,
                                    "spent_tokens": 110}, "fleet": null})
    );
    let human = world.ganger(&["status", "capped"]);
    assert!(
        human.stdout.contains("\nbudget: 110 of 100 tokens\n"),
        "{}",
        human.stdout
    );

    let refused = world.ganger(&["fix", "capped", "--message", "go on", "--as", "boss"]);
    refused.expect_code(2);
    assert_eq!(
        refused.stderr.lines().next().unwrap(),
        "error: task capped has spent its budget: budget of 100 tokens for task capped reached (spent 110)"
    );
    // Nothing was started: still one round.
    let table = world.ganger(&["status", "--json"]).json();
    assert_eq!(table["tasks"][0]["rounds"], 1);
    assert!(
        !world
            .repo
            .join(".ganger/tasks/capped/round-2.prompt.md")
            .exists()
    );

    let journal = world.ganger(&["watch", "--as", "boss", "--json"]).json();
    let hit = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "budget-hit")
        .unwrap_or_else(|| panic!("no budget-hit entry in {journal:#}"));
    assert_eq!(hit["task"], "capped");
    assert_eq!(
        hit["summary"],
        "round 1 stopped: budget of 100 tokens for task capped reached (spent 110)"
    );
}

#[test]
fn a_fleets_budget_counts_its_other_tasks_stops_the_round_that_reaches_it_and_refuses_the_next() {
    let world = world("");
    for slug in ["a", "b"] {
        world
            .ganger(&["start", slug, "--message", "hello"])
            .expect_code(0);
    }
    // What the scheduler does through the store: a fleet's budget, and its tasks.
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    db.execute_batch(
        "INSERT INTO budgets (fleet, usd, tokens) VALUES ('nightly', NULL, 500);
         INSERT INTO fleet_tasks (task_id, fleet) SELECT id, 'nightly' FROM tasks;",
    )
    .unwrap();
    drop(db);
    // A round of the stand-in spends 110 tokens a step, two steps: 440 so far, 550 once b's
    // next round reported its first step.
    let run = world.ganger(&["fix", "b", "--message", "sleep 60", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(
        report["reason"],
        "stopped: budget of 500 tokens for fleet nightly reached (spent 550)"
    );
    assert_eq!(
        report["budget"],
        serde_json::json!({"task": null, "fleet": {"fleet": "nightly", "usd": null,
            "tokens": 500, "spent_usd": 0.005, "spent_tokens": 550}})
    );
    let refused = world.ganger(&["fix", "a", "--message", "more"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.starts_with(
            "error: task a has spent its budget: budget of 500 tokens for fleet nightly reached (spent 550)"
        ),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_dollar_budget_counts_the_price_table_when_the_agent_reports_no_cost() {
    // $1,000 per million input tokens: the 600 tokens of `spend 600` cost $0.60.
    let world = scripted_world("[prices.\"mock/scripted\"]\ninput = 1000.0\noutput = 0.0\n");
    let started = Instant::now();
    let run = world.ganger(&[
        "start",
        "priced",
        "--message",
        "spend 600",
        "--budget-usd",
        "0.5",
        "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not stopped mid-stream"
    );
    assert_eq!(report["status"], "cancelled", "{report:#}");
    assert_eq!(
        report["reason"],
        "stopped: budget of $0.5000 for task priced reached (spent $0.6000)"
    );
    assert_eq!(report["cost_usd"], 0.6);
    let refused = world.ganger(&["fix", "priced", "--message", "more", "--json"]);
    refused.expect_code(2);
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("has spent its budget"),
        "{}",
        refused.stdout
    );
    // A budget not reached lets the round finish.
    let free = world.ganger(&["start", "free", "--message", "fine", "--budget-usd", "5"]);
    free.expect_code(0);
}

#[test]
fn a_round_whose_last_event_reaches_the_budget_ends_as_it_would_have() {
    let world = scripted_world("");
    let run = world.ganger(&[
        "start",
        "last",
        "--message",
        "linger over budget",
        "--budget-tokens",
        "5",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["done"], "DONE: linger over budget");
    let refused = world.ganger(&["fix", "last", "--message", "more"]);
    refused.expect_code(2);
    assert!(
        refused
            .stderr
            .contains("budget of 5 tokens for task last reached (spent 10)"),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_done_line_reaches_the_report_the_table_and_the_journal() {
    let world = scripted_world("");
    let run = world.ganger(&["start", "parser", "--message", "parser fixed", "--json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["done"], "DONE: parser fixed", "{report:#}");
    assert_eq!(report["budget"], Value::Null);
    let human = world.ganger(&["status", "parser"]);
    human.expect_code(0);
    assert!(
        human.stdout.contains("\nDONE: parser fixed\n"),
        "{}",
        human.stdout
    );
    let table = world.ganger(&["status", "--json"]).json();
    assert_eq!(table["tasks"][0]["done"], "DONE: parser fixed");
    let text = world.ganger(&["status"]);
    assert!(
        text.stdout
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("  DONE: parser fixed"),
        "{}",
        text.stdout
    );
    let journal = world.ganger(&["watch", "--json"]).json();
    let finished = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "round-finished")
        .unwrap();
    assert_eq!(finished["done"], "DONE: parser fixed");
    let watched = world.ganger(&["watch"]);
    assert!(
        watched
            .stdout
            .contains("parser: round 1 done\n  DONE: parser fixed\n"),
        "{}",
        watched.stdout
    );
}

#[test]
fn status_group_by_counts_states_and_shows_each_groups_last_done_line() {
    let world = scripted_world("");
    for (slug, label, text) in [
        ("one", "team=red", "first red"),
        ("two", "team=red", "second red"),
        ("three", "team=blue", "only blue"),
    ] {
        world
            .ganger(&[
                "start",
                slug,
                "--message",
                text,
                "--label",
                label,
                "--label",
                "size=s",
            ])
            .expect_code(0);
    }
    world
        .ganger(&["start", "bare", "--message", "no label"])
        .expect_code(0);
    let groups = world
        .ganger(&["status", "--group-by", "team", "--json"])
        .json();
    assert_eq!(
        groups,
        serde_json::json!({
            "schema": "ganger.task-groups/1",
            "key": "team",
            "groups": [
                {"value": "blue", "tasks": 1, "states": {"done": 1},
                 "done": "DONE: only blue", "done_task": "three"},
                {"value": "red", "tasks": 2, "states": {"done": 2},
                 "done": "DONE: second red", "done_task": "two"},
                {"value": null, "tasks": 1, "states": {"done": 1},
                 "done": "DONE: no label", "done_task": "bare"},
            ]
        })
    );
    let text = world.ganger(&["status", "--group-by", "team"]);
    text.expect_code(0);
    assert_eq!(
        text.stdout,
        "team=blue: 1 task (done 1)\n  last DONE: only blue  (three)\n\
         team=red: 2 tasks (done 2)\n  last DONE: second red  (two)\n\
         (no team): 1 task (done 1)\n  last DONE: no label  (bare)\n"
    );
    // Bad labels are refused before anything is made.
    for bad in ["team", "Team=x", "team="] {
        let run = world.ganger(&["start", "bad", "--message", "x", "--label", bad]);
        run.expect_code(2);
        assert!(!world.worktree("bad").exists());
    }
    world
        .ganger(&["status", "--group-by", "Bad Key"])
        .expect_code(2);
}

#[test]
fn watch_shows_what_follows_the_cursor_and_ack_moves_it() {
    let world = world("[[checks]]\nname = \"never\"\ncommand = \"exit 1\"\n");
    world
        .ganger(&["start", "mine", "--message", "hello", "--as", "boss"])
        .expect_code(1);
    world
        .ganger(&["start", "theirs", "--message", "hello", "--as", "other"])
        .expect_code(1);
    let page = world.ganger(&["watch", "--as", "boss", "--json"]).json();
    assert_eq!(page["schema"], "ganger.journal/1");
    assert_eq!(page["cursor"], 0);
    // Only boss's task; its checks failed; both tasks' work changes fake.txt, but only
    // `theirs` saw `mine` when its round ended.
    assert_eq!(
        kinds(&page),
        [
            ("mine".to_owned(), "task-created".to_owned()),
            ("mine".to_owned(), "round-finished".to_owned()),
            ("mine".to_owned(), "checks-failed".to_owned()),
        ]
    );
    let other = world.ganger(&["watch", "--as", "other", "--json"]).json();
    assert_eq!(
        kinds(&other).last().unwrap(),
        &("theirs".to_owned(), "overlap".to_owned())
    );
    let last = page["entries"].as_array().unwrap().last().unwrap()["id"]
        .as_i64()
        .unwrap();
    let text = world.ganger(&["watch", "--as", "boss"]);
    assert!(
        text.stdout
            .contains("mine: round 1 checks failed: never (exit 1)\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .ends_with(&format!("acknowledge with: ganger ack {last}\n"))
    );

    let acked = world.ganger(&["ack", &last.to_string(), "--as", "boss", "--json"]);
    acked.expect_code(0);
    assert_eq!(
        acked.json(),
        serde_json::json!({"schema": "ganger.ack/1", "commander": "boss", "cursor": last})
    );
    let after = world.ganger(&["watch", "--as", "boss", "--json"]).json();
    assert_eq!(after["entries"], serde_json::json!([]));
    assert_eq!(after["cursor"], last);
    assert_eq!(
        world.ganger(&["watch", "--as", "boss"]).stdout,
        format!("nothing new for boss (acknowledged up to entry {last})\n")
    );
    // The cursor never goes back, and an entry that does not exist is refused.
    world.ganger(&["ack", "1", "--as", "boss"]).expect_code(0);
    assert_eq!(
        world.ganger(&["watch", "--as", "boss", "--json"]).json()["cursor"],
        last
    );
    let refused = world.ganger(&["ack", "9999", "--as", "boss"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.starts_with("error: no journal entry 9999"),
        "{}",
        refused.stderr
    );

    // --follow prints what comes next, as it comes.
    #[expect(
        clippy::disallowed_methods,
        reason = "watch --follow runs until it is stopped, while the test works"
    )]
    let mut follow = world
        .command(&["watch", "--follow", "--as", "boss", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = follow.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    world
        .ganger(&["fix", "mine", "--message", "again", "--as", "boss"])
        .expect_code(1);
    let mut seen = Vec::new();
    let found = wait_until(Duration::from_secs(20), || {
        while let Ok(line) = rx.try_recv() {
            let entry: Value = serde_json::from_str(&line).unwrap();
            seen.push((
                entry["round"].clone(),
                entry["kind"].as_str().unwrap().to_owned(),
            ));
        }
        seen.iter().any(|(_, kind)| kind == "conflict")
    });
    let _ = follow.kill();
    let _ = follow.wait();
    assert!(found, "seen: {seen:?}");
    assert_eq!(
        seen,
        [
            (serde_json::json!(2), "round-finished".to_owned()),
            (serde_json::json!(2), "checks-failed".to_owned()),
            // `theirs` changes fake.txt too, and its round ended before this one.
            (serde_json::json!(2), "overlap".to_owned()),
            // On the same line: a conflict, predicted at this round's end (docs/land.md).
            (serde_json::json!(2), "conflict".to_owned()),
        ]
    );

    // A transfer is in the journals of both sides; the task's entries go with it.
    world
        .ganger(&["transfer", "mine", "--to", "other", "--as", "boss"])
        .expect_code(0);
    let boss = world.ganger(&["watch", "--as", "boss"]);
    assert!(
        boss.stdout
            .contains("mine: transferred from boss to other\n"),
        "{}",
        boss.stdout
    );
    let other = world.ganger(&["watch", "--as", "other", "--json"]).json();
    let other_kinds = kinds(&other);
    assert!(other_kinds.contains(&("mine".to_owned(), "transferred".to_owned())));
    assert!(other_kinds.contains(&("mine".to_owned(), "checks-failed".to_owned())));
}

#[test]
fn bad_budgets_are_refused_before_anything_is_made() {
    let world = world("");
    for args in [
        ["--budget-usd", "0"],
        ["--budget-usd=-1", "--detach"],
        ["--budget-usd", "NaN"],
        ["--budget-tokens", "0"],
        ["--budget-tokens", "many"],
    ] {
        let mut all = vec!["start", "nope", "--message", "x"];
        all.extend(args);
        let run = world.ganger(&all);
        run.expect_code(2);
        assert!(
            run.stderr.contains("--budget-") && run.stderr.lines().count() <= 2,
            "{args:?}: {}",
            run.stderr
        );
        assert!(!world.worktree("nope").exists(), "{args:?}");
    }
    assert!(!world.repo.join(".ganger").exists());
}
