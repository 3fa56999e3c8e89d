//! The scheduler end to end: a 20-task fleet with dependencies, two agents and a model limit
//! of 3, checked from witnesses outside ganger (the fake model server's in-flight counts and
//! request log, files the workers write); a rate limit that pauses its model and continues
//! the task; bad fleet files refused before anything is queued; `ganger serve` with
//! `start --queue`, `fix --queue` and `broadcast`, and a second `serve` refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::fleet_world;

use fleet_world::FleetWorld;
use ganger_fake_llm::{Fault, Script, Turn};
use ganger_test_support::wait_until;
use std::time::Duration;

/// Task `n` of the 20: its agent, model and dependencies.
fn twenty_task_fleet() -> (String, Vec<(String, Vec<String>)>) {
    let mut text = String::from(
        "name = \"twenty\"\n[limits]\nglobal = 5\nmodels = { \"mock/scripted\" = 3 }\n\n",
    );
    let mut tasks = Vec::new();
    for n in 1..=20 {
        let slug = format!("t{n:02}");
        let agent = if n % 2 == 0 { "opencode" } else { "command" };
        // Every fourth task on another model, so the model limit is not the only one.
        let model = if n % 4 == 0 {
            "mock/other"
        } else {
            "mock/scripted"
        };
        let after: Vec<String> = match n {
            1..=4 => Vec::new(),
            9 => vec!["t01".into(), "t05".into(), "t07".into()],
            _ => vec![format!("t{:02}", n - 4)],
        };
        let team = if n % 2 == 0 { "even" } else { "odd" };
        text.push_str(&format!(
            "[[task]]\nslug = \"{slug}\"\nmessage = \"task {slug}\"\nagent = \"{agent}\"\nmodel = \"{model}\"\nafter = {after:?}\nlabels = {{ team = \"{team}\" }}\n\n"
        ));
        tasks.push((slug, after));
    }
    (text, tasks)
}

#[test]
fn twenty_tasks_run_in_dependency_order_within_the_limits() {
    let fw = FleetWorld::new(Script::new(), 400);
    let (text, tasks) = twenty_task_fleet();
    let file = fw.fleet_file("twenty", &text);
    let run = fw
        .world
        .ganger(&["fleet", "run", file.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    // The model server saw one request per task, never more than 3 at once on the limited
    // model (and did see it busy: a limit that is never reached proves nothing).
    let per_task = fw.requests_per_task();
    assert_eq!(per_task.len(), 20, "{per_task:?}");
    assert!(per_task.values().all(|n| *n == 1), "{per_task:?}");
    let in_flight = fw.llm.in_flight();
    let limited = in_flight["mock/scripted"];
    assert!(limited.max <= 3, "{in_flight:?}");
    assert!(limited.max >= 2, "{in_flight:?}");
    assert_eq!(limited.total, 15, "{in_flight:?}");
    assert_eq!(limited.now, 0, "{in_flight:?}");
    let total_max: usize = in_flight.values().map(|c| c.max).sum();
    assert!(total_max <= 5 + 3, "{in_flight:?}");

    // Every task's worker started after its dependencies' workers had finished.
    for (slug, after) in &tasks {
        let runs = fw.runs(slug);
        assert_eq!(runs.len(), 1, "{slug}: {runs:?}");
        for dep in after {
            let dep_runs = fw.runs(dep);
            assert!(
                runs[0].0 > dep_runs[0].1,
                "{slug} started before {dep} ended: {runs:?} {dep_runs:?}"
            );
        }
    }
    // Ganger's own view agrees, and a second run of the file finds everything finished.
    let status = fw
        .world
        .ganger(&["fleet", "status", "twenty", "--json"])
        .json();
    let tasks_status = status["tasks"].as_array().unwrap();
    assert_eq!(tasks_status.len(), 20);
    assert!(
        tasks_status.iter().all(|t| t["last_status"] == "done"),
        "{status:#}"
    );
    // Each worker's DONE: line is in the fleet's table (the command agent's answers; the
    // stand-in opencode answers in its own words).
    for task in tasks_status {
        let slug = task["slug"].as_str().unwrap();
        let n: u32 = slug[1..].parse().unwrap();
        if n % 2 == 1 {
            assert_eq!(task["done"], format!("DONE: {slug} finished"), "{task:#}");
        }
    }
    // The file's labels reached the tasks.
    let groups = fw
        .world
        .ganger(&["status", "--group-by", "team", "--json"])
        .json();
    let counts: Vec<(String, u64)> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["value"].as_str().unwrap_or("-").to_owned(),
                g["tasks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![("even".into(), 10), ("odd".into(), 10)],
        "{groups:#}"
    );
    let again = fw.world.ganger(&["fleet", "run", file.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again
            .stdout
            .contains("0 to start, 0 to continue, 20 finished already"),
        "{}",
        again.stdout
    );
    assert_eq!(fw.llm.requests().len(), 20);
}

#[test]
fn a_rate_limit_pauses_the_model_and_the_task_continues_in_its_session() {
    // The first model request gets a 429; the others are answered.
    let fw = FleetWorld::new(Script::new().turn(Turn::fault(Fault::Http429).times(1)), 0);
    let file = fw.fleet_file(
        "limited",
        "[limits]\nmodels = { \"mock/scripted\" = 1 }\n\
         [[task]]\nslug = \"a\"\nmessage = \"task a\"\n\
         [[task]]\nslug = \"b\"\nmessage = \"task b\"\n\
         [[task]]\nslug = \"c\"\nmessage = \"task c\"\n",
    );
    let run = fw.world.ganger(&[
        "fleet",
        "run",
        file.to_str().unwrap(),
        "--backoff",
        "1500ms",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("paused mock/scripted for"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("requeued a: rate limited"),
        "{}",
        run.stdout
    );

    // From the server's side: the 429, then nothing on the model for the whole pause, then
    // one more request for a (its continue round) and one each for b and c.
    let requests = fw.llm.requests();
    let tasks: Vec<&str> = requests.iter().filter_map(|r| r.task()).collect();
    assert_eq!(tasks.len(), 4, "{tasks:?}");
    assert_eq!(tasks[0], "a");
    let limited_at = requests[0].received_at_ms;
    let next_at = requests[1].received_at_ms;
    assert!(
        next_at >= limited_at + 1500,
        "a request came {} ms after the 429, inside the pause",
        next_at - limited_at
    );
    assert_eq!(tasks.iter().filter(|t| **t == "a").count(), 2, "{tasks:?}");
    // The task continued in its session: its second round resumed the first's session.
    let a = fw.world.ganger(&["status", "a", "--json"]).json();
    assert_eq!(a["status"], "done", "{a:#}");
    assert_eq!(a["round"], 2, "{a:#}");
    let status = fw
        .world
        .ganger(&["fleet", "status", "limited", "--json"])
        .json();
    assert!(
        status["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["last_status"] == "done"),
        "{status:#}"
    );
}

#[test]
fn bad_fleet_files_are_refused_before_anything_is_queued() {
    let fw = FleetWorld::new(Script::new(), 0);
    let cases = [
        (
            "cycle",
            "[[task]]\nslug = \"a\"\nmessage = \"x\"\nafter = [\"c\"]\n\
             [[task]]\nslug = \"b\"\nmessage = \"x\"\nafter = [\"a\"]\n\
             [[task]]\nslug = \"c\"\nmessage = \"x\"\nafter = [\"b\"]\n",
            "a -> c -> b -> a",
        ),
        (
            "unknown",
            "[[task]]\nslug = \"a\"\nmessage = \"x\"\nafter = [\"nope\"]\n",
            "after nope",
        ),
        (
            "agent",
            "[[task]]\nslug = \"a\"\nmessage = \"x\"\nagent = \"nobody\"\n",
            "unknown agent",
        ),
        (
            "zero",
            "[limits]\nglobal = 0\n[[task]]\nslug = \"a\"\nmessage = \"x\"\n",
            "limit of 0",
        ),
    ];
    for (name, text, expected) in cases {
        let file = fw.fleet_file(name, text);
        for verb in ["run", "submit"] {
            let run = fw.world.ganger(&["fleet", verb, file.to_str().unwrap()]);
            assert_eq!(run.code, 2, "{name} {verb}: {}\n{}", run.stdout, run.stderr);
            assert!(run.stderr.contains(expected), "{name}: {}", run.stderr);
            assert!(run.stderr.trim().lines().count() <= 2, "{}", run.stderr);
        }
    }
    assert!(!fw.world.repo.join(".ganger").exists());
    assert!(fw.llm.requests().is_empty());
}

#[test]
fn serve_delivers_queued_starts_fixes_and_broadcasts_and_is_alone() {
    let fw = FleetWorld::new(Script::new(), 0);
    let world = &fw.world;
    world
        .ganger(&["start", "a", "--message", "task a", "--queue"])
        .expect_code(0);
    world
        .ganger(&[
            "start",
            "b",
            "--message",
            "task b",
            "--queue",
            "--agent",
            "opencode",
        ])
        .expect_code(0);
    // Bad input: one line, exit 2, nothing queued.
    let twice = world.ganger(&["start", "a", "--message", "again", "--queue"]);
    assert_eq!(twice.code, 2, "{}", twice.stderr);
    let no_task = world.ganger(&["fix", "zz", "--message", "x", "--queue"]);
    assert_eq!(no_task.code, 2, "{}", no_task.stderr);

    let mut serve = world.command(&["serve", "--json"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the daemon in the background"
    )]
    let mut serve = serve
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = |slug: &str, rounds: u64| {
        let status = world.ganger(&["status", slug, "--json"]);
        status.code == 0
            && status.json()["status"] == "done"
            && status.json()["round"].as_u64() == Some(rounds)
    };
    assert!(wait_until(Duration::from_secs(60), || done("a", 1) && done("b", 1)));
    let second = world.ganger(&["serve"]);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains(&format!("pid {}", serve.id())),
        "{}",
        second.stderr
    );

    world
        .ganger(&["fix", "a", "--message", "again", "--queue"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(60), || done("a", 2)));
    let sent = world.ganger(&["broadcast", "--message", "everyone", "--json"]);
    assert_eq!(sent.code, 0, "{}", sent.stderr);
    assert_eq!(sent.json()["items"].as_array().unwrap().len(), 2);
    assert!(wait_until(Duration::from_secs(60), || done("a", 3) && done("b", 2)));
    let only = world.ganger(&["broadcast", "--message", "just b", "--only", "b"]);
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert!(wait_until(Duration::from_secs(60), || done("b", 3)));
    assert_eq!(fw.requests_per_task()["a"], 3);
    assert_eq!(fw.requests_per_task()["b"], 3);
    // `fleet run` while serve runs: the daemon delivers, the command follows to the end.
    let file = fw.fleet_file(
        "beside",
        "[[task]]\nslug = \"c\"\nmessage = \"task c\"\n[[task]]\nslug = \"d\"\nmessage = \"task d\"\nafter = [\"c\"]\n",
    );
    let run = world.ganger(&["fleet", "run", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("following the fleet"), "{}", run.stdout);
    assert_eq!(fw.requests_per_task()["d"], 1);
    serve.kill().unwrap();
    let output = serve.wait_with_output().unwrap();
    let events = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        events.matches("\"event\":\"started\"").count(),
        8,
        "{events}"
    );
}

#[test]
fn a_queued_fix_is_refused_at_delivery_after_a_transfer_and_a_held_task_waits() {
    let fw = FleetWorld::new(Script::new(), 0);
    let world = &fw.world;
    for slug in ["a", "b"] {
        world
            .ganger(&["start", slug, "--message", "first", "--as", "alice"])
            .expect_code(0);
    }
    // Queued by alice under generation 1; then the task goes to bob (generation 2).
    world
        .ganger(&[
            "fix",
            "a",
            "--message",
            "queued",
            "--queue",
            "--as",
            "alice",
        ])
        .expect_code(0);
    world
        .ganger(&["transfer", "a", "--to", "bob", "--as", "alice"])
        .expect_code(0);
    // Someone who is not admitted cannot even queue.
    let mallory = world.ganger(&["fix", "b", "--message", "x", "--queue", "--as", "mallory"]);
    assert_eq!(mallory.code, 2, "{}", mallory.stderr);
    assert!(
        mallory.stderr.contains("owned by alice"),
        "{}",
        mallory.stderr
    );
    // Nor broadcast to a task it does not own: exit 2 naming the owner, nothing queued.
    let broadcast = world.ganger(&[
        "broadcast",
        "--message",
        "x",
        "--only",
        "b,a",
        "--as",
        "alice",
    ]);
    assert_eq!(broadcast.code, 2, "{}", broadcast.stderr);
    assert!(
        broadcast.stderr.contains("owned by bob"),
        "{}",
        broadcast.stderr
    );
    world
        .ganger(&["policy", "b", "hold", "--as", "alice"])
        .expect_code(0);
    world
        .ganger(&["fix", "b", "--message", "held", "--queue", "--as", "alice"])
        .expect_code(0);

    let mut serve = world.command(&["serve"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the daemon in the background"
    )]
    let mut serve = serve
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let item = |slug: &str| -> serde_json::Value {
        let status = world.ganger(&["fleet", "status", "--json"]).json();
        status["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == slug)
            .cloned()
            .unwrap()
    };
    assert!(wait_until(Duration::from_secs(30), || item("a")["queue"] == "stale"));
    let reason = item("a")["reason"].as_str().unwrap().to_owned();
    assert!(
        reason.contains("generation 1") && reason.contains("bob"),
        "{reason}"
    );
    // Alice hears of it in her journal.
    let journal = world.ganger(&["watch", "--as", "alice", "--json"]).json();
    let stale: Vec<&serde_json::Value> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "queue-stale")
        .collect();
    assert_eq!(stale.len(), 1, "{journal:#}");
    assert!(
        stale[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("a queued fix was not delivered: "),
        "{journal:#}"
    );
    // Held: still queued a while later; released: delivered.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(item("b")["queue"], "queued");
    world
        .ganger(&["policy", "b", "accept", "--as", "alice"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(30), || item("b")["queue"] == "ended"));
    serve.kill().unwrap();
    serve.wait().unwrap();
    // Bob's worker never got alice's queued round: a made one request (its first round).
    let requests = fw.requests_per_task();
    assert_eq!((requests["a"], requests["b"]), (1, 2), "{requests:?}");
    let a = world.ganger(&["status", "a", "--json"]).json();
    assert_eq!(a["round"], 1, "{a:#}");
}

#[test]
fn running_a_fleet_again_continues_an_interrupted_task_in_its_session() {
    // Each model request is held 3 s, long enough to kill a round in the middle.
    let fw = FleetWorld::new(Script::new(), 3000);
    let world = &fw.world;
    let file = fw.fleet_file(
        "again",
        "[[task]]\nslug = \"r1\"\nmessage = \"task r1\"\n\
         [[task]]\nslug = \"r2\"\nmessage = \"task r2\"\nafter = [\"r1\"]\n",
    );
    let mut run = world.command(&["fleet", "run", file.to_str().unwrap()]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test kills the scheduler in the middle of the fleet"
    )]
    let mut run = run
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(30), || fw
        .runs("r1")
        .is_empty()
        && std::fs::read_to_string(fw.witness.join("r1.log"))
            .is_ok_and(|t| t.contains("start"))));
    // The scheduler and the round's host die; the agent dies with its host.
    run.kill().unwrap();
    run.wait().unwrap();
    let report = world.ganger(&["status", "r1", "--json"]).json();
    let host = report["host_pid"].as_i64().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(wait_until(Duration::from_secs(10), || {
        world.ganger(&["status", "r1", "--json"]).json()["status"] == "interrupted"
    }));

    let again = world.ganger(&["fleet", "run", file.to_str().unwrap()]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("1 to continue"), "{}", again.stdout);
    let r1 = world.ganger(&["status", "r1", "--json"]).json();
    assert_eq!(
        (r1["status"].as_str(), r1["round"].as_u64()),
        (Some("done"), Some(2)),
        "{r1:#}"
    );
    // Round 2 is the "continue" fix the second run queued; the killed round named no
    // session (this worker has none), so the brief goes with it, never "continue" alone
    // (issue 13.16). The model server saw r1 twice (the killed round's request and the
    // continued one) and r2 once, after r1 was done.
    let prompt = world.repo.join(".ganger/tasks/r1/round-2.prompt.md");
    let prompt = std::fs::read_to_string(prompt).unwrap();
    assert!(
        prompt.contains("> task r1") && prompt.ends_with("continue"),
        "{prompt}"
    );
    assert_eq!(fw.requests_per_task()["r1"], 2);
    assert!(fw.runs("r2")[0].0 > fw.runs("r1")[0].1);
    let r2 = world.ganger(&["status", "r2", "--json"]).json();
    assert_eq!(r2["status"], "done", "{r2:#}");
    assert_eq!(fw.requests_per_task()["r2"], 1);
}
