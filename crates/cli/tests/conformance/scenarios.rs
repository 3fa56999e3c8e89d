//! The scenarios every agent must pass, each a function of the agent's [`Dialect`]: real
//! `ganger`, the real pinned CLI, the scripted model, a real git repository.

use crate::dialect::Dialect;
use ganger_fake_llm::{FakeLlm, Fault, RecordedRequest, Reply, Script, Turn};
use ganger_test_support::{World, agent_toml, living_pids_with_env, wait_until};
use serde_json::Value;
use std::time::{Duration, Instant};

/// Limits of every scenario's rounds: a wall clock well inside the test runner's, and a stall
/// limit short enough that the hang scenarios end quickly.
pub(crate) const LIMITS: &str = "timeout = \"150s\"\nstall = \"12s\"";

/// Prices for agents that report no cost of their own, in dollars per million tokens.
pub(crate) const PRICES: &str = r#"
[prices."gpt-5.5"]
input = 2.0
output = 8.0

[prices.gemini-fake]
input = 2.0
output = 8.0

[prices.qwen-fake]
input = 2.0
output = 8.0
"#;

/// The scenario's `ganger.toml`: the agent pointed at the scripted model with the limits, then
/// `extra`, and `[warm] default` as the dialect says (a cold column stays cold for the agents
/// that are warm by default).
fn scenario_toml(d: Dialect, url: &str, extra: &str) -> String {
    let warm = if d.warm {
        "\n[warm]\ndefault = true\n"
    } else {
        "\n[warm]\ndefault = false\n"
    };
    agent_toml(d.agent, url, LIMITS, &format!("{extra}{warm}"))
}

struct Setup {
    world: World,
    llm: FakeLlm,
}

fn setup(d: Dialect, script: Script) -> Setup {
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write("ganger.toml", &scenario_toml(d, &llm.root_url(), PRICES));
    Setup { world, llm }
}

impl Drop for Setup {
    /// In a warm scenario, every round that ran must have run warm: a round that cannot be
    /// warm runs cold and would pass the scenario just the same. Its stream opens with the
    /// warm host's `turn` line.
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let warm = std::fs::read_to_string(self.world.repo.join("ganger.toml"))
            .is_ok_and(|toml| toml.contains("[warm]\ndefault = true"));
        if !warm {
            return;
        }
        let mut streams = Vec::new();
        round_streams(self.world.root(), &mut streams);
        assert!(!streams.is_empty(), "no round stream was found");
        for stream in streams {
            let text = std::fs::read_to_string(&stream).unwrap_or_default();
            let first = text.lines().next().unwrap_or_default();
            assert!(
                first.contains(r#""ganger":"turn""#),
                "{} did not run warm; its stream begins: {first:.300}",
                stream.display()
            );
        }
    }
}

/// The round streams (`tasks/SLUG/round-N.jsonl`) under `dir`.
fn round_streams(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if !name.starts_with("repo-") {
                round_streams(&path, found);
            }
        } else if name.starts_with("round-") && name.ends_with(".jsonl") {
            found.push(path);
        }
    }
}

fn start(s: &Setup, slug: &str, message: &str, extra: &[&str]) -> Value {
    let mut args = vec!["start", slug, "--message", message, "--json"];
    args.extend_from_slice(extra);
    let run = s.world.ganger(&args);
    let report = run.json();
    assert!(
        report["schema"] == "ganger.round-report/1",
        "{report:#}\nstderr:\n{}",
        run.stderr
    );
    report
}

const FIRST: &str = "Write the first file, round1.txt, then say done.";
const SECOND: &str = "Now the second file, round2.txt.";

fn two_rounds(d: Dialect, world_root: &std::path::Path) -> Script {
    let worktree = world_root.join("repo-agent-t1");
    Script::new()
        .turn(
            d.write(&worktree, "round1.txt", "round 1\n")
                .when("first file"),
        )
        .text("Done round 1. {{history}}")
        .turn(
            d.write(&worktree, "round2.txt", "round 2\n")
                .when("second file"),
        )
        .text("Done round 2. {{history}}")
}

/// A world whose script needs the world's own paths (absolute file paths for the tools).
fn setup_with(d: Dialect, script: impl FnOnce(&std::path::Path) -> Script) -> Setup {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(script(world.root())).unwrap();
    world.write("ganger.toml", &scenario_toml(d, &llm.root_url(), PRICES));
    Setup { world, llm }
}

/// A round writes a file in the task's worktree, not in the main checkout.
pub fn writes_a_file(d: Dialect) {
    let s = setup_with(d, |root| two_rounds(d, root));
    let report = start(&s, "t1", FIRST, &[]);
    assert_eq!(report["status"], "done", "{report:#}");
    let worktree = s.world.worktree("t1");
    assert_eq!(
        std::fs::read_to_string(worktree.join("round1.txt")).unwrap(),
        "round 1\n"
    );
    assert!(!s.world.repo.join("round1.txt").exists());
    assert_eq!(
        report["changed"]["shown"],
        serde_json::json!(["A round1.txt"])
    );
    assert!(report["session"].as_str().is_some_and(|id| !id.is_empty()));
}

/// A fix continues the same session: the model's round-2 request carries round 1.
pub fn fix_continues_the_session(d: Dialect) {
    let s = setup_with(d, |root| two_rounds(d, root));
    let first = start(&s, "t1", FIRST, &[]);
    assert_eq!(first["status"], "done", "{first:#}");
    let fixed = s
        .world
        .ganger(&["fix", "t1", "--message", SECOND, "--json"]);
    let second = fixed.json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    assert!(s.world.worktree("t1").join("round2.txt").is_file());
    let carried = s.llm.requests().iter().any(|r| {
        let p = r.prompts();
        p.iter().any(|t| t.contains("first file")) && p.iter().any(|t| t.contains("second file"))
    });
    assert!(carried, "no request carried both rounds' prompts");
}

/// Read-only: the model tries to write through the file tool and through the shell, and no
/// file appears.
pub fn read_only_writes_nothing(d: Dialect) {
    let s = setup_with(d, |root| {
        let worktree = root.join("repo-agent-ro");
        Script::new()
            .turn(d.write(&worktree, "by-tool.txt", "written\n"))
            .turn(d.shell("echo written > by-shell.txt"))
            .text("I tried.")
            .default_answer("read-only")
    });
    let report = start(
        &s,
        "ro",
        "Try to write files.",
        &["--permission", "read-only"],
    );
    let worktree = s.world.worktree("ro");
    assert!(worktree.is_dir(), "{report:#}");
    assert!(!worktree.join("by-tool.txt").exists(), "{report:#}");
    assert!(!worktree.join("by-shell.txt").exists(), "{report:#}");
    assert!(!s.world.repo.join("by-tool.txt").exists());
    assert!(!s.world.repo.join("by-shell.txt").exists());
    assert_ne!(report["status"], "running");
}

/// A call the agent's own permissions refuse fails a round that may write, naming the tool and
/// the reason, whether the agent stops there (OpenCode) or the model is told and carries on
/// (the others); nothing is written.
pub fn refused_call_fails(d: Dialect) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let outside = d.outside(&world.repo);
    let (call, config) = d.refused_write(&outside, &world.worktree("no"));
    let llm = FakeLlm::start(
        Script::new()
            .turn(call)
            .text("I could not write it.")
            .default_answer("side"),
    )
    .unwrap();
    world.write(
        "ganger.toml",
        &scenario_toml(d, &llm.root_url(), &format!("{PRICES}\n{config}")),
    );
    let s = Setup { world, llm };
    let report = start(&s, "no", "Write refused.txt.", &[]);
    let written = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!written, "{} was written: {report:#}", outside.display());
    assert_eq!(report["status"], "failed", "{report:#}");
    let reason = report["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("a tool call was refused by"),
        "{report:#}"
    );
    let rejections = report["rejections"].as_array().cloned().unwrap_or_default();
    assert!(!rejections.is_empty(), "{report:#}");
    assert!(
        reason.contains(rejections[0].as_str().unwrap()),
        "the reason names the first refused call: {report:#}"
    );
    assert!(
        !s.world.worktree("no").join("refused.txt").exists(),
        "{report:#}"
    );
}

/// In a read-only round a refused call is the guard doing what was asked: the round is
/// judged on the rest (the report lists the refusals), except where the agent stops its run
/// at a refusal (OpenCode, which withholds the writing tools instead, so it has none here).
/// The model tries to write in the worktree, then answers.
pub fn read_only_refusal_is_listed(d: Dialect) {
    let s = setup_with(d, |root| {
        Script::new()
            .turn(d.write(&root.join("repo-agent-ro"), "by-tool.txt", "written\n"))
            .text("The answer, without writing.")
            .default_answer("side")
    });
    let report = start(
        &s,
        "ro",
        "Answer without writing.",
        &["--permission", "read-only"],
    );
    assert!(
        !s.world.worktree("ro").join("by-tool.txt").exists(),
        "{report:#}"
    );
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(
        report["answer"], "The answer, without writing.",
        "{report:#}"
    );
    // Codex's sandbox and Qwen's approval mode refuse the call, and so does ganger for Claude
    // Code and Gemini CLI kept warm, and the report lists it; the others (and OpenCode and
    // Qwen Code kept warm) withhold their writing tools in read-only, so the call is to an
    // unknown tool.
    let listed = report["rejections"].as_array().cloned().unwrap_or_default();
    let refuses = match (d.agent, d.warm) {
        ("codex", _) | ("qwen", false) => true,
        ("opencode" | "qwen", true) => false,
        (_, warm) => warm,
    };
    let events = report["files"]["events"]
        .as_str()
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    assert_eq!(!listed.is_empty(), refuses, "{report:#}\n{events}");
}

fn fails_with(d: Dialect, fault: Turn, needle: &[&str], bound: Duration) {
    let s = setup(d, Script::new().turn(fault).default_answer("side"));
    let clock = Instant::now();
    let (stall, timeout, bound) = match d.silent_retries {
        Some(retries) => (
            retries.as_secs(),
            retries.as_secs() + 30,
            retries + Duration::from_secs(40),
        ),
        None => (12, 150, bound),
    };
    let (stall, timeout) = (format!("{stall}s"), format!("{timeout}s"));
    let report = start(
        &s,
        "bad",
        "Do something.",
        &["--stall", &stall, "--timeout", &timeout],
    );
    let took = clock.elapsed();
    assert_eq!(report["status"], "failed", "{report:#}");
    // The reason itself names the model's failure: not a line of stderr noise, nor only the
    // report's other fields (Qwen 0.24.4's reason was "the result line gave no details").
    let reason = report["reason"].as_str().unwrap_or_default();
    assert!(
        needle.iter().any(|n| reason.contains(n)),
        "none of {needle:?} in the reason: {report:#}"
    );
    assert!(took < bound, "took {took:?}, more than {bound:?}");
}

/// A 401 ends the round as failed, with the model's message where the agent passes it on.
pub fn http_401_fails(d: Dialect) {
    fails_with(
        d,
        Turn::fault(Fault::Http401),
        &["401", "scripted fault http-401"],
        Duration::from_secs(90),
    );
}

/// A persistent 500 ends the round as failed within a bounded time (Codex replaces the
/// message with its own).
pub fn http_500_fails(d: Dialect) {
    fails_with(
        d,
        Turn::fault(Fault::Http500).retry_after_ms(0),
        &["500", "scripted fault http-500", "high demand"],
        Duration::from_secs(120),
    );
}

fn ends_without_progress(s: &Setup) {
    let clock = Instant::now();
    let report = start(s, "stuck", "Do something.", &[]);
    let status = report["status"].as_str().unwrap_or_default().to_owned();
    assert!(
        status == "stalled" || status == "failed",
        "status {status}: {report:#}"
    );
    assert!(clock.elapsed() < Duration::from_secs(140), "{report:#}");
    let token = report["token"].as_str().unwrap_or_default();
    assert!(living_pids_with_env(&format!("GANGER_ROUND={token}")).is_empty());
}

/// A model that never answers is ended by the stall limit.
pub fn hang_is_stalled(d: Dialect) {
    let s = setup(d, Script::new().turn(Turn::fault(Fault::Hang)));
    let clock = Instant::now();
    let report = start(&s, "stuck", "Do something.", &[]);
    assert_eq!(report["status"], "stalled", "{report:#}");
    assert!(clock.elapsed() < Duration::from_secs(140));
}

/// A model address that refuses connections ends the round (by the stall limit where the
/// agent retries forever).
pub fn refused_connection_ends(d: Dialect) {
    // A port free on 127.0.0.2, where no test's server listens (they listen on 127.0.0.1): a
    // port freed on 127.0.0.1 could be any test's next server, this one's own included (seen
    // once: the round reached an empty script and ended `done`).
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let llm = FakeLlm::start(Script::new()).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &scenario_toml(d, &format!("http://127.0.0.2:{closed}"), PRICES),
    );
    ends_without_progress(&Setup { world, llm });
}

/// Cancel stops a running round and leaves no process of it behind.
pub fn cancel_stops_the_round(d: Dialect) {
    let s = setup(d, Script::new().turn(Turn::fault(Fault::Hang)));
    s.world
        .ganger(&[
            "start",
            "c1",
            "--message",
            "Work for a long time.",
            "--detach",
        ])
        .expect_code(0);
    assert!(
        wait_until(Duration::from_secs(60), || !s.llm.requests().is_empty()),
        "the agent never reached the model"
    );
    let running = s.world.ganger(&["status", "c1", "--json"]).json();
    assert_eq!(running["status"], "running", "{running:#}");
    s.world.ganger(&["cancel", "c1"]).expect_code(0);
    let waited = s
        .world
        .ganger(&["wait", "c1", "--timeout", "60s", "--json"]);
    let report = waited.json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    let marker = format!("GANGER_ROUND={}", running["token"].as_str().unwrap());
    assert!(
        wait_until(Duration::from_secs(10), || living_pids_with_env(&marker)
            .is_empty()),
        "processes of the cancelled round survive"
    );
}

/// The usage the model server sent for requests `from..` (the agent's own count of them).
fn sent(d: Dialect, requests: &[RecordedRequest]) -> (u64, u64) {
    requests
        .iter()
        .filter(|r| d.counts_side_requests || r.tools_offered)
        .filter_map(|r| match &r.reply {
            Reply::Answer { usage, .. } => Some((usage.input, usage.output)),
            _ => None,
        })
        .fold((0, 0), |(i, o), (ri, ro)| (i + ri, o + ro))
}

/// Token figures per round match the usage the model server sent, and the cost is the
/// agent's own or computed from the price table. An agent's own cost is the round's alone:
/// both rounds cost the same per token (both agents that price their own price output at five
/// times input), where a session's running cost (Claude Code 2.1.332's `total_cost_usd`) would
/// make round 2 cost about twice as much per token.
pub fn tokens_match_the_model(d: Dialect) {
    let s = setup_with(d, |root| two_rounds(d, root));
    let first = start(&s, "t1", FIRST, &[]);
    assert_eq!(first["status"], "done", "{first:#}");
    let after_first = s.llm.requests().len();
    let second = s
        .world
        .ganger(&["fix", "t1", "--message", SECOND, "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    let requests = s.llm.requests();
    let mut per_token = Vec::new();
    for (report, range) in [
        (&first, &requests[..after_first]),
        (&second, &requests[after_first..]),
    ] {
        let (input, output) = sent(d, range);
        let tokens = &report["tokens"];
        let reported_in =
            tokens["input"].as_u64().unwrap() + tokens["cache_read"].as_u64().unwrap();
        let reported_out =
            tokens["output"].as_u64().unwrap() + tokens["reasoning"].as_u64().unwrap();
        assert_eq!(
            (reported_in, reported_out),
            (input, output),
            "round {}: {report:#}",
            report["round"]
        );
        let cost = report["cost_usd"].as_f64().expect("a cost");
        if !d.own_cost {
            let expected = (input as f64 * 2.0 + output as f64 * 8.0) / 1e6;
            assert!((cost - expected).abs() < 1e-9, "cost {cost} != {expected}");
        } else {
            assert!(cost > 0.0, "{report:#}");
            per_token.push(cost / (input + 5 * output) as f64);
        }
    }
    if let [first_rate, second_rate] = per_token[..] {
        let ratio = second_rate / first_rate;
        assert!(
            (0.9..1.1).contains(&ratio),
            "round 2 costs {ratio:.3} times round 1 per token: not its own cost?\n{first:#}\n{second:#}"
        );
    }
}

/// A check that passes once `fixed.txt` says `answer = 42`; its output (not its command)
/// carries `CHECK-7731`, so that the scripted fix fires only when the output reached the agent.
const ANSWER_CHECK: &str = r#"
[[checks]]
name = "answer"
command = "grep -qs 'answer = 42' fixed.txt || { echo 'fixed.txt does not say answer = 42'; echo CHECK-$((7000+731)); exit 1; }"
"#;

const WRITE_ANSWER: &str = "Write the answer to answer.txt, then say done.";

fn answer_setup(d: Dialect, fixes: bool) -> Setup {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let worktree = world.root().join("repo-agent-green");
    let mut script = Script::new()
        .turn(
            d.write(&worktree, "answer.txt", "answer = 41\n")
                .when("Write the answer"),
        )
        .text("Done: the answer is written.");
    if fixes {
        script = script
            .turn(
                d.write(&worktree, "fixed.txt", "answer = 42\n")
                    .when("CHECK-7731"),
            )
            .text("Fixed: the answer is 42 now.");
    }
    let llm = FakeLlm::start(script.default_answer("I could not find what to change.")).unwrap();
    world.write(
        "ganger.toml",
        &scenario_toml(d, &llm.root_url(), &format!("{PRICES}{ANSWER_CHECK}")),
    );
    Setup { world, llm }
}

/// The first round fails its check; `--until-green` sends the check's output back in the same
/// session and the scripted fix, which fires only on that output, makes it pass.
pub fn checks_fix_loop(d: Dialect) {
    let s = answer_setup(d, true);
    let report = start(&s, "green", WRITE_ANSWER, &["--until-green", "2"]);
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["round"], 2, "{report:#}");
    assert_eq!(report["checks"][0]["state"], "passed", "{report:#}");
    assert_eq!(
        std::fs::read_to_string(s.world.worktree("green").join("fixed.txt")).unwrap(),
        "answer = 42\n"
    );
    let first = s.world.ganger(&["status", "green", "--json"]);
    assert_eq!(first.json()["session"], report["session"]);
    // The fix request carried the check's output and, in the same conversation, round 1.
    let carried = s.llm.requests().iter().any(|r| {
        let p = r.prompts();
        p.iter()
            .any(|t| t.contains("CHECK-7731") && t.contains("fixed.txt does not say"))
            && p.iter().any(|t| t.contains("Write the answer"))
    });
    assert!(
        carried,
        "no request carried the failing output in the same session"
    );
}

/// `--until-green 2` against a model that never fixes it: three rounds, then it says so.
pub fn until_green_gives_up(d: Dialect) {
    let s = answer_setup(d, false);
    let run = s.world.ganger(&[
        "start",
        "green",
        "--message",
        WRITE_ANSWER,
        "--until-green",
        "2",
    ]);
    run.expect_code(1);
    assert!(
        run.stdout.contains(
            "gave up on green: checks still fail after 2 fix rounds (--until-green 2): answer"
        ),
        "{}",
        run.stdout
    );
    let report = s.world.ganger(&["status", "green", "--json"]).json();
    assert_eq!(report["round"], 3, "{report:#}");
    assert_eq!(report["status"], "failed");
    let sent_back = s
        .llm
        .requests()
        .iter()
        .filter(|r| r.prompts().last().is_some_and(|t| t.contains("CHECK-7731")))
        .count();
    assert!(
        sent_back >= 2,
        "the failing output went back {sent_back} times"
    );
}
