//! End-to-end races with real, pinned agents against the scripted model, driven by the real
//! `ganger` binary in a real git repository: OpenCode (two providers, each a model server of
//! its own) and Claude Code race on one brief, and a judge on OpenCode reviews the survivors.
//! Each attempt has a server of its own because attempts run at once and a server's script is
//! one sequence; the judge's server answers by what its prompt shows, so a judge shown the
//! sides the wrong way round answers the other way.
//!
//! The repository's check is `answer.txt` exists and does not say BROKEN.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{AnsweredBy, FakeLlm, Fault, Script, Turn};
use ganger_test_support::{World, agent_toml, opencode_agent_toml};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const KEY: &str = "not-a-secret-key";
const MODELS: &str = "scripted = { limit = { context = 128000, output = 8192 } }";
/// A check every attempt runs, from `ganger.toml`.
const CHECK: &str = "[[checks]]\nname = \"answer\"\ncommand = \"test -f answer.txt && ! grep -q BROKEN answer.txt\"\n";

/// The servers of a race: attempt 1 (OpenCode, provider `mock`), attempt 2 (OpenCode,
/// provider `mockb`), attempt 3 (Claude Code), and the judge (OpenCode, provider `mockj`).
struct Race {
    world: World,
    one: FakeLlm,
    two: FakeLlm,
    three: FakeLlm,
    judge: FakeLlm,
    claude_model: String,
}

/// The scripts of one race, each given the world (Claude Code writes absolute paths).
struct Scripts {
    one: Script,
    two: Script,
    three: Script,
    judge: Script,
}

fn provider(name: &str, url: &str) -> String {
    format!(
        "\n[agents.opencode.config.provider.{name}]\nnpm = \"@ai-sdk/openai-compatible\"\n\
         options = {{ baseURL = {url}, apiKey = {key} }}\nmodels = {{ {MODELS} }}\n",
        url = serde_json::to_string(&format!("{url}/v1")).unwrap(),
        key = serde_json::to_string(KEY).unwrap(),
    )
}

fn race_world(scripts: impl FnOnce(&World) -> Scripts) -> Race {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let scripts = scripts(&world);
    let one = FakeLlm::start(scripts.one).unwrap();
    let two = FakeLlm::start(scripts.two).unwrap();
    let three = FakeLlm::start(scripts.three).unwrap();
    let judge = FakeLlm::start(scripts.judge).unwrap();
    let claude = agent_toml("claude", &three.root_url(), "", "");
    // Claude Code's table, without the `[defaults]` its helper writes first.
    let (claude_defaults, claude_agent) = claude.split_once("\n\n").unwrap();
    let claude_model: String = claude_defaults
        .lines()
        .find_map(|line| line.strip_prefix("model = "))
        .map(|quoted| serde_json::from_str(quoted).unwrap())
        .unwrap();
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"opencode\"\nmodel = \"mock/scripted\"\ntimeout = \"300s\"\n\n\
             [warm]\ndefault = false\n\n[roles.judge]\nagent = \"opencode\"\nmodel = \"mockj/scripted\"\n\n\
             {CHECK}\n{opencode}{b}{j}\n{claude_agent}\n",
            opencode = opencode_agent_toml(&format!("{}/v1", one.root_url()), KEY, MODELS),
            b = provider("mockb", &two.root_url()),
            j = provider("mockj", &judge.root_url()),
        ),
    );
    opencode_database_made(&world);
    Race {
        world,
        one,
        two,
        three,
        judge,
        claude_model,
    }
}

/// Has OpenCode make its database in the world's home before the race: OpenCode 1.18.33
/// started twice at once on a home without one fails one of the two at start (`database is
/// locked`, while making it; upstream anomalyco/opencode#33320), which a person's home, where
/// OpenCode has run before, does not see.
fn opencode_database_made(world: &World) {
    let mut command = std::process::Command::new(ganger_test_support::opencode_program());
    command.args(["session", "list"]).current_dir(&world.repo);
    world.env(&mut command);
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Race {
    fn spec(&self, attempts: &[u32]) -> String {
        attempts
            .iter()
            .map(|n| match n {
                1 => "opencode:mock/scripted".to_owned(),
                2 => "opencode:mockb/scripted".to_owned(),
                _ => format!("claude:{}", self.claude_model),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    fn race_args(&self, attempts: &[u32], more: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = ["race", "r", "--message", "Write the answer to answer.txt."]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push("--attempts".into());
        args.push(self.spec(attempts));
        args.extend(more.iter().map(|s| s.to_string()));
        args.push("--json".into());
        args
    }

    fn race(&self, attempts: &[u32], more: &[&str]) -> ganger_test_support::Run {
        let args = self.race_args(attempts, more);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.world.ganger(&args)
    }
}

/// OpenCode writing `content` to `answer.txt`, then saying it is done.
fn opencode_answer(content: &str) -> Script {
    Script::new()
        .turn(Turn::tool(
            "write",
            json!({"filePath": "answer.txt", "content": content}),
        ))
        .text("Wrote answer.txt.")
        .default_answer("side")
}

/// Claude Code writing `content` to `answer.txt` in the worktree of attempt `number`.
fn claude_answer(world: &World, number: u32, content: &str) -> Script {
    let path = world.worktree(&format!("r.{number}")).join("answer.txt");
    Script::new()
        .turn(Turn::tool(
            "Write",
            json!({"file_path": path, "content": content}),
        ))
        .text("Wrote answer.txt.")
        .default_answer("side")
}

fn big() -> String {
    (1..=30).map(|n| format!("line {n}\n")).collect()
}

/// A judge that prefers the attempt whose diff adds `+42`, on whichever side it is shown.
fn judge_preferring_42() -> Script {
    Script::new()
        .turn(
            Turn::text("WINNER: A\nA answers with 42 and nothing more.")
                .when(r"(?s)## Attempt A.*\+42\n.*## Attempt B"),
        )
        .turn(
            Turn::text("WINNER: B\nB answers with 42 and nothing more.")
                .when(r"(?s)## Attempt B.*\+42\n"),
        )
        .repeat(true)
        .default_answer("side")
}

fn rows(report: &Value) -> Vec<Value> {
    report["attempts"].as_array().unwrap().clone()
}

/// An attempt's row as (status, passed, wins-losses-ties, files, added, removed).
fn row(report: &Value, number: usize) -> (String, bool, String, u64, u64, u64) {
    let row = &rows(report)[number - 1];
    (
        row["status"].as_str().unwrap().to_owned(),
        row["passed"].as_bool().unwrap(),
        format!("{}-{}-{}", row["wins"], row["losses"], row["ties"]),
        row["files"].as_u64().unwrap(),
        row["added"].as_u64().unwrap(),
        row["removed"].as_u64().unwrap(),
    )
}

fn judge_prompts(judge: &FakeLlm) -> Vec<String> {
    judge
        .requests()
        .iter()
        .filter(|r| r.tools_offered)
        .filter_map(|r| {
            r.prompts()
                .into_iter()
                .find(|p| p.contains("# Your role: judge"))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn checks_filter_then_the_reviewer_picks_the_small_diff_on_both_sides() {
    let race = race_world(|world| Scripts {
        one: opencode_answer("BROKEN\n"),
        two: opencode_answer(&big()),
        three: claude_answer(world, 3, "42\n"),
        judge: judge_preferring_42(),
    });
    let run = race.race(&[1, 2, 3], &[]);
    let report = run.json();

    run.expect_code(0);
    assert_eq!(report["schema"], "ganger.race/1");
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(report["winner_task"], "r.3", "{report:#}");
    assert_eq!(report["rule"], "tournament", "{report:#}");
    // A round whose checks fail has failed.
    assert_eq!(
        row(&report, 1),
        ("failed".into(), false, "0-0-0".into(), 1, 1, 0),
        "{report:#}"
    );
    assert_eq!(
        row(&report, 2),
        ("done".into(), true, "0-1-0".into(), 1, 30, 0)
    );
    assert_eq!(
        row(&report, 3),
        ("done".into(), true, "1-0-0".into(), 1, 1, 0)
    );
    let rows = rows(&report);
    assert_eq!(rows[0]["reason"], "checks failed: answer (exit 1)");
    assert_eq!(
        rows[0]["checks"],
        json!([{"name": "answer", "passed": false}])
    );
    assert_eq!(
        (rows[0]["agent"].as_str(), rows[2]["agent"].as_str()),
        (Some("opencode"), Some("claude"))
    );
    // Each pair judged twice, sides swapped, and the same attempt chosen both times.
    let verdicts: Vec<(u64, u64, String, u64)> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["a"].as_u64().unwrap(),
                v["b"].as_u64().unwrap(),
                v["side"].as_str().unwrap().to_owned(),
                v["winner"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts, vec![(2, 3, "B".into(), 3), (3, 2, "A".into(), 3)]);
    assert_eq!(judge_prompts(&race.judge).len(), 2);
    // The human table says the same, and `status` shows it again.
    let table = race.world.ganger(&["status", "r"]);
    table.expect_code(0);
    for line in [
        "race: r, won",
        "checks failed: answer (exit 1)",
        "winner: r.3",
        "rule: the most pairwise reviews won",
    ] {
        assert!(table.stdout.contains(line), "{line:?} in\n{}", table.stdout);
    }
    let attempt_three = table.stdout.lines().find(|l| l.starts_with("3 ")).unwrap();
    for cell in ["r.3", "claude", "done", "pass", "1-0-0", "+1/-0"] {
        assert!(attempt_three.contains(cell), "{cell} in {attempt_three}");
    }
    // One journal line for the race's end; `merge r` merges the winner.
    let journal = race.world.ganger(&["watch", "--json"]).json();
    let ended: Vec<&Value> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "race-ended")
        .collect();
    assert_eq!(ended.len(), 1, "{journal:#}");
    race.world.ganger(&["merge", "r"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(race.world.repo.join("answer.txt")).unwrap(),
        "42\n"
    );
}

#[test]
fn a_reviewer_that_always_answers_a_makes_ties_and_the_smaller_diff_wins() {
    let race = race_world(|world| Scripts {
        one: opencode_answer(&big()),
        two: Script::new(),
        three: claude_answer(world, 2, "42\n"),
        judge: Script::new()
            .turn(Turn::text("WINNER: A\nA looks fine."))
            .repeat(true)
            .default_answer("side"),
    });
    // Attempt 1 on OpenCode (big), attempt 2 on Claude Code (small).
    let run = race.race(&[1, 3], &[]);
    let report = run.json();
    run.expect_code(0);
    assert_eq!(report["winner_task"], "r.2", "{report:#}");
    assert_eq!(report["rule"], "smaller-diff");
    assert_eq!(
        row(&report, 1),
        ("done".into(), true, "0-0-1".into(), 1, 30, 0)
    );
    assert_eq!(
        row(&report, 2),
        ("done".into(), true, "0-0-1".into(), 1, 1, 0)
    );
    let sides: Vec<&str> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["side"].as_str().unwrap())
        .collect();
    assert_eq!(sides, ["A", "A"]);
}

#[test]
fn a_race_nobody_passes_says_why_each_attempt_failed_and_exits_1() {
    let race = race_world(|world| Scripts {
        one: opencode_answer("BROKEN\n"),
        two: Script::new(),
        three: claude_answer(world, 2, "BROKEN too\n"),
        judge: Script::new(),
    });
    let run = race.race(&[1, 3], &[]);
    let report = run.json();
    run.expect_code(1);
    assert_eq!(report["status"], "failed", "{report:#}");
    assert_eq!(report["winner"], Value::Null);
    assert_eq!(report["rule"], "no-survivor");
    for row in rows(&report) {
        assert_eq!(row["reason"], "checks failed: answer (exit 1)", "{row:#}");
    }
    assert!(race.judge.requests().is_empty(), "nobody was judged");
    let table = race.world.ganger(&["status", "r"]);
    assert!(
        table
            .stdout
            .contains("no winner: no attempt passed its checks")
    );
}

/// A check that passes once `server` holds a request in flight (at most 60 s): an attempt
/// with it passes only after the attempt on `server` has reached its model.
fn passes_once_in_flight_at(server: &FakeLlm) -> String {
    format!(
        "for i in $(seq 600); do curl -sf {}/_fake/in-flight | grep -q '\"now\":1' && exit 0; \
         sleep 0.1; done; exit 1",
        server.root_url()
    )
}

#[test]
fn first_green_cancels_the_others_and_their_model_hears_no_more_from_them() {
    let race = race_world(|_| Scripts {
        one: opencode_answer("42\n"),
        // Attempt 2's model never answers: it is still working when attempt 1 passes.
        two: Script::new().fault(Fault::Hang).default_answer("side"),
        three: Script::new(),
        judge: Script::new(),
    });
    // Attempt 1 passes only once attempt 2 has reached its model, however long each
    // OpenCode takes to start: the cancel comes after attempt 2's first request.
    let check = passes_once_in_flight_at(&race.two);
    let run = race.race(&[1, 2], &["--first-green", "--check", &check]);
    let report = run.json();
    run.expect_code(0);
    assert_eq!(report["winner_task"], "r.1", "{report:#}");
    assert_eq!(report["rule"], "first-green");
    assert_eq!(rows(&report)[1]["status"], "cancelled", "{report:#}");
    assert!(
        rows(&report)[1]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("cancelled")),
        "{report:#}"
    );
    assert!(
        race.judge.requests().is_empty(),
        "--first-green judges nothing"
    );
    let heard = race.two.requests().len();
    assert!(heard > 0, "attempt 2 never reached its model");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        race.two.requests().len(),
        heard,
        "attempt 2 still sent requests after it was cancelled"
    );
    assert!(race.two.in_flight().values().all(|f| f.now == 0));
}

#[test]
fn first_green_cancelling_an_attempt_before_its_first_request_leaves_its_model_unheard() {
    let race = race_world(|_| Scripts {
        one: Script::new(),
        two: Script::new().fault(Fault::Hang).default_answer("side"),
        three: Script::new(),
        judge: Script::new(),
    });
    // Attempt 1 is a command that writes the answer at once: it passes while attempt 2's
    // OpenCode is still starting, and the race cancels attempt 2 before it has asked its
    // model anything (perhaps before its host watches for signals).
    let toml = std::fs::read_to_string(race.world.repo.join("ganger.toml")).unwrap();
    race.world.write(
        "ganger.toml",
        &format!(
            "{toml}\n[agents.command]\n\
             argv = [\"sh\", \"-c\", \"echo 42 > answer.txt; echo done\"]\n\
             format = \"text\"\n"
        ),
    );
    let run = race.world.ganger(&[
        "race",
        "r",
        "--message",
        "Write the answer to answer.txt.",
        "--attempts",
        "command:now,opencode:mockb/scripted",
        "--first-green",
        "--json",
    ]);
    let report = run.json();
    run.expect_code(0);
    assert_eq!(report["winner_task"], "r.1", "{report:#}");
    assert_eq!(rows(&report)[1]["status"], "cancelled", "{report:#}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        race.two.requests().is_empty(),
        "attempt 2, cancelled before it asked, asked its model afterwards"
    );
    assert_eq!(race.world.left_running(), Vec::<i32>::new());
}

#[test]
fn a_race_killed_mid_way_resumes_without_starting_or_judging_anything_twice() {
    let slow = |content: &str| {
        Script::new()
            .turn(Turn::tool(
                "bash",
                json!({"command": "sleep 4", "description": "think"}),
            ))
            .turn(Turn::tool(
                "write",
                json!({"filePath": "answer.txt", "content": content}),
            ))
            .text("Wrote answer.txt.")
            .default_answer("side")
    };
    let race = race_world(|world| Scripts {
        one: slow(&big()),
        two: Script::new(),
        three: claude_answer(world, 2, "42\n"),
        judge: judge_preferring_42(),
    });
    let args = race.race_args(&[1, 3], &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the race's driver in the background to kill it"
    )]
    let mut driver = race
        .world
        .command(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL) once both attempts are recorded and attempt 1 is still working.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let tasks = race.world.ganger(&["status", "--json"]).json();
        let count = tasks["tasks"].as_array().map_or(0, Vec::len);
        if count >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the attempts never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver.kill().unwrap();
    driver.wait().unwrap();
    assert!(
        !race.world.repo.join("answer.txt").exists(),
        "nothing merged yet"
    );

    let resumed = race.race(&[1, 3], &[]);
    let report = resumed.json();
    resumed.expect_code(0);
    assert_eq!(report["winner_task"], "r.2", "{report:#}");
    // Once more: the race has ended, and says so with the same winner.
    let again = race.race(&[1, 3], &[]);
    again.expect_code(0);
    assert_eq!(again.json()["winner_task"], "r.2");
    assert_eq!(again.json()["verdicts"], report["verdicts"]);
    // Every attempt ran one round, each model heard one brief, each judgement was asked once.
    for number in 1..=2 {
        let status = race
            .world
            .ganger(&["status", &format!("r.{number}"), "--json"])
            .json();
        assert_eq!(status["round"], 1, "r.{number}: {status:#}");
    }
    // An attempt started twice would have found its script used up.
    for (server, name, turns) in [(&race.one, "opencode", 3), (&race.three, "claude", 2)] {
        let work: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.tools_offered)
            .collect();
        assert!(
            work.iter()
                .all(|r| matches!(r.answered_by, AnsweredBy::Turn { .. })),
            "{name}: {:?}",
            work.iter().map(|r| &r.answered_by).collect::<Vec<_>>()
        );
        assert_eq!(work.len(), turns, "{name}");
    }
    let judged = race
        .judge
        .requests()
        .into_iter()
        .filter(|r| r.tools_offered)
        .count();
    assert_eq!((judge_prompts(&race.judge).len(), judged), (2, 2));
    let journal = race.world.ganger(&["watch", "--json"]).json();
    let ended = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "race-ended")
        .count();
    assert_eq!(ended, 1);
}

/// An MCP commander (Claude Code, through `ganger mcp` as `init --supervisor claude`
/// registers it) races two OpenCode attempts with the `race` tool, reads `race_status`, and
/// merges the winner with `merge` on the race's slug.
#[test]
fn an_mcp_commander_races_through_the_race_tool_and_merges_the_winner() {
    let race = race_world(|_| Scripts {
        one: opencode_answer(&big()),
        two: opencode_answer("42\n"),
        three: Script::new(),
        judge: judge_preferring_42(),
    });
    let world = &race.world;
    world
        .ganger(&["init", "--supervisor", "claude"])
        .expect_code(0);
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "ganger and its supervisor"]);
    let tool = |name: &str| format!("mcp__ganger__{name}");
    let commander = FakeLlm::start(
        Script::new()
            .turn(
                Turn::tool(
                    tool("race"),
                    json!({"slug": "r", "brief": "Write the answer to answer.txt.",
                           "attempts": race.spec(&[1, 2])}),
                )
                .when("(?i)supervise"),
            )
            .tool(tool("race_status"), json!({"slug": "r"}))
            .tool(tool("merge"), json!({"slug": "r"}))
            .text("Merged the race's winner.")
            .default_answer("side"),
    )
    .unwrap();
    let mut claude = crate::e2e_mcp_commander::claude_commander(
        world,
        &commander.root_url(),
        "Please supervise this: race the brief, then merge the winner.",
    );
    let out = claude.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "claude: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // The commander's model saw the race's report twice (the race, then its status) and the
    // merge; the race is the commander's, and the winner's work is on main.
    let (calls, results) = crate::e2e_mcp_commander::calls_and_results(&commander.requests());
    assert_eq!(
        calls,
        ["race", "race_status", "merge"].map(tool),
        "{results:#?}"
    );
    assert_eq!(results.len(), 3, "{results:#?}");
    for (index, needle) in [(0, "r.2"), (1, "tournament"), (2, "merged")] {
        assert!(
            results[index].contains(needle),
            "{index}: {}",
            results[index]
        );
    }
    let report = world.ganger(&["status", "r", "--json"]).json();
    assert_eq!(report["winner_task"], "r.2", "{report:#}");
    assert_eq!(report["owner"], "claude-code");
    assert_eq!(world.git(&["show", "main:answer.txt"]), "42");
}

/// Killed while a judge is at work: the judge's model never answers its first request, the
/// driver is killed with SIGKILL then, and the same command again settles the judge's round,
/// asks that judge again, and decides once: the verdicts are the ones the judge gave, each
/// attempt ran one round, and one `race-ended` entry is journaled.
#[test]
fn a_race_killed_while_judging_asks_the_judge_again_and_decides_once() {
    let race = race_world(|world| Scripts {
        one: opencode_answer(&big()),
        two: Script::new(),
        three: claude_answer(world, 2, "42\n"),
        judge: Script::new()
            .turn(Turn::fault(Fault::Hang).times(1))
            .turn(
                Turn::text("WINNER: A\nA answers with 42 and nothing more.")
                    .when(r"(?s)## Attempt A.*\+42\n.*## Attempt B"),
            )
            .turn(
                Turn::text("WINNER: B\nB answers with 42 and nothing more.")
                    .when(r"(?s)## Attempt B.*\+42\n"),
            )
            .repeat(true)
            .default_answer("side"),
    });
    let args = race.race_args(&[1, 3], &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the race's driver in the background to kill it"
    )]
    let mut driver = race
        .world
        .command(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first judgement's request is in flight (and never answered): kill the driver.
    let deadline = Instant::now() + Duration::from_secs(120);
    while race.judge.requests().iter().all(|r| !r.tools_offered) {
        assert!(Instant::now() < deadline, "no judge was asked");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver.kill().unwrap();
    driver.wait().unwrap();
    let resumed = race.race(&[1, 3], &[]);
    let report = resumed.json();
    resumed.expect_code(0);
    assert_eq!(report["winner_task"], "r.2", "{report:#}");
    assert_eq!(report["rule"], "tournament", "{report:#}");
    let sides: Vec<&str> = report["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["side"].as_str().unwrap())
        .collect();
    assert_eq!(sides, ["B", "A"], "{report:#}");
    for number in 1..=2 {
        let status = race
            .world
            .ganger(&["status", &format!("r.{number}"), "--json"])
            .json();
        assert_eq!(status["round"], 1, "r.{number}: {status:#}");
    }
    // The killed judgement was asked again in its task, a second round.
    let judge = race.world.ganger(&["status", "r.j1v2", "--json"]).json();
    assert_eq!(judge["round"], 2, "{judge:#}");
    let journal = race.world.ganger(&["watch", "--json"]).json();
    let ended = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "race-ended")
        .count();
    assert_eq!(ended, 1);
}
