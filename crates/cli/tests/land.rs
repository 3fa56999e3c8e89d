//! `ganger land` (issue 41): a merge queue that never breaks the base, with real git and the
//! `command` agent, whose prompt is a shell script it runs in its worktree. The repository's
//! check (`sh check.sh`) sources `api.sh` into every `mods/*.sh`; a good task adds a mod, a
//! culprit changes `api.sh` or `check.sh` in a way that passes alone and breaks the others.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::land_world::times_landed;
use ganger_test_support::{PgDatabase, World, wait_until};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CHECK: &str = "set -e\n. ./api.sh\nfor f in mods/*.sh; do\n  [ -e \"$f\" ] || continue\n  \
                     sh -c \". ./api.sh; . ./$f\" >/dev/null || { echo \"FAIL: $f\"; exit 1; }\n\
                     done\necho ok\n";

/// A world whose tasks run shell prompts, checked by `sh check.sh` (and by `extra`, a check
/// command run before it, when given).
fn world(extra: &str) -> World {
    world_of("eval \"$(cat)\"", extra)
}

/// The same world with `agent` as the command agent's script.
fn world_of(agent: &str, extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let command = if extra.is_empty() {
        "sh check.sh".to_owned()
    } else {
        format!("{extra}; sh check.sh")
    };
    world.use_command_agent(
        agent,
        "",
        &format!(
            "\n[[checks]]\nname = \"tests\"\ncommand = {}\n",
            serde_json::to_string(&command).unwrap()
        ),
    );
    world.write("api.sh", "greet() { echo \"hello $1\"; }\n");
    world.write("check.sh", CHECK);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "api.sh", "check.sh", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "an api and its check"]);
    world
}

/// A good task: a mod that uses the api.
fn good(world: &World, slug: &str) {
    let script = format!("mkdir -p mods; echo 'greet {slug}' > mods/{slug}.sh");
    start(world, slug, &script);
}

fn start(world: &World, slug: &str, script: &str) {
    world
        .ganger(&["start", slug, "--message", script])
        .expect_code(0);
}

fn land(world: &World, args: &[&str]) -> Value {
    let mut all = vec!["land"];
    all.extend(args);
    all.push("--json");
    let run = world.ganger(&all);
    run.expect_code(0);
    run.json()
}

/// Each commit of `main` since `since`, oldest first.
fn commits_since(world: &World, since: &str) -> Vec<String> {
    let listed = world.git(&["rev-list", "--reverse", &format!("{since}..main")]);
    listed.lines().map(str::to_owned).collect()
}

/// The check run on `commit` checked out in a worktree of its own: passes or not.
fn check_passes_at(world: &World, commit: &str) -> bool {
    let dir = world.root().join(format!("at-{commit}"));
    world.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        dir.to_str().unwrap(),
        commit,
    ]);
    let passed = Command::new("sh")
        .arg("check.sh")
        .current_dir(&dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    world.git(&["worktree", "remove", "--force", dir.to_str().unwrap()]);
    passed
}

#[test]
fn a_batch_of_eight_lands_five_at_once_finds_two_culprits_and_a_conflict_its_worker_fixes() {
    let world = world_of(FIXING_AGENT, "");
    let start_head = world.git(&["rev-parse", "main"]);
    // In queue order: g1 g2 c1 g3 x g4 c2 g5.
    good(&world, "g1");
    good(&world, "g2");
    // c1 renames the api's function: alone, nothing uses it; after g1 and g2, their mods fail.
    start(&world, "c1", "echo 'salute() { echo \"hi $1\"; }' > api.sh");
    good(&world, "g3");
    // x changes the README that main changes too.
    start(&world, "x", "echo 'x was here' >> README.md");
    good(&world, "g4");
    // c2 allows one mod at most: alone, none; after g1..g4, four.
    start(
        &world,
        "c2",
        "printf 'n=$(ls mods 2>/dev/null | wc -l)\\n[ \"$n\" -le 1 ] || { echo \"too many mods: $n\"; exit 1; }\\n' \
         > limit.sh; printf '. ./limit.sh\\n' >> check.sh",
    );
    good(&world, "g5");
    world.write("README.md", "# test repository\nmain's own line\n");
    world.git(&["commit", "-q", "-am", "main: a line"]);
    let head = world.git(&["rev-parse", "main"]);
    let slugs = ["g1", "g2", "c1", "g3", "x", "g4", "c2", "g5"];
    // Queued one by one, so that the queue's order is theirs.
    for slug in slugs {
        // The conflicting task goes back to its worker (`--fix`); the culprits just go back.
        let fix = if slug == "x" { "--fix" } else { "--priority=0" };
        let queued = land(&world, &[slug, fix]);
        assert_eq!(queued["schema"], "ganger.land/1");
        assert_eq!(queued["queued"][0]["task"], slug);
    }
    let run = world.ganger(&["land", "--run", "--batch", "8", "--json"]);
    run.expect_code(0);
    let report = run.json();
    let batches = report["batches"].as_array().unwrap();
    // The first batch, then x's, once its worker resolved its conflict.
    assert_eq!(batches.len(), 2, "{report:#}");
    let batch = &batches[0];
    assert_eq!(batch["outcome"], "landed", "{batch:#}");
    assert_eq!(
        batch["landed"],
        serde_json::json!(["g1", "g2", "g3", "g4", "g5"])
    );
    let returned: Vec<(&str, &str)> = batch["returned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["task"].as_str().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        returned,
        [("x", "conflict"), ("c1", "culprit"), ("c2", "culprit")]
    );
    assert_eq!(
        batch["returned"][0]["files"],
        serde_json::json!(["README.md"])
    );
    assert!(
        batch["returned"][2]["checks"][0]["tail"]
            .as_str()
            .unwrap()
            .contains("too many mods: 4"),
        "{batch:#}"
    );
    // At most 2·⌈log2 8⌉+1 check runs, printed.
    let runs = batch["check_runs"].as_u64().unwrap();
    assert!(runs <= 7, "{runs} check runs: {batch:#}");
    assert!(
        run.stderr.contains(&format!("{runs} check runs")),
        "{}",
        run.stderr
    );
    // x went back to its worker, which resolved the conflict; x landed in the next batch.
    assert_eq!(
        batch["fix_rounds"],
        serde_json::json!([{ "task": "x", "round": 2, "passed": true, "requeued": true }])
    );
    assert_eq!(batches[1]["landed"], serde_json::json!(["x"]), "{report:#}");
    // One commit on the base per batch, the tasks its parents, each once.
    let landed = commits_since(&world, &head);
    let merges = world.git(&["rev-list", "--first-parent", &format!("{head}..main")]);
    assert_eq!(merges.lines().count(), 2);
    for slug in ["g1", "g2", "g3", "g4", "g5", "x"] {
        let tip = world.git(&["rev-parse", &format!("agent/{slug}")]);
        assert_eq!(times_landed(&world, &head, &tip), 1, "{slug}");
    }
    for slug in ["c1", "c2"] {
        let tip = world.git(&["rev-parse", &format!("agent/{slug}")]);
        assert!(
            !world
                .git(&["branch", "--contains", &tip, "main"])
                .contains("main")
        );
    }
    // The checks pass at every commit the base has now, each checked out.
    for commit in commits_since(&world, &start_head) {
        assert!(check_passes_at(&world, &commit), "checks fail at {commit}");
    }
    assert!(!landed.is_empty());
    // `land status` tells what was sent back and why; the journal has every step.
    let status = world.ganger(&["land", "status", "--json"]);
    status.expect_code(0);
    let status = status.json();
    assert_eq!(status["schema"], "ganger.land-status/1");
    assert_eq!(status["queue"], serde_json::json!([]));
    let back: Vec<&str> = status["returned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(back, ["c1", "x", "c2"]);
    let human = world.ganger(&["land", "status"]);
    assert!(
        human.stdout.contains("sent back: x (conflict)"),
        "{}",
        human.stdout
    );
    let journal = world.ganger(&["watch", "--json"]);
    let kinds = journal.stdout.clone();
    for kind in ["land-queued", "land-step", "land-returned", "landed"] {
        assert!(kinds.contains(kind), "{kind} not in {kinds}");
    }
}

#[test]
fn a_flaky_check_is_run_again_recorded_flaky_and_its_batch_lands() {
    // In the lander's scratch worktree only, the check fails the first time it runs.
    let world = world(
        "case \"$PWD\" in */.ganger/land/*) [ -e \"$TMPDIR/flaked\" ] || \
         { touch \"$TMPDIR/flaked\"; echo flaked; exit 1; };; esac",
    );
    good(&world, "f1");
    good(&world, "f2");
    land(&world, &["f1", "f2"]);
    let report = land(&world, &["--run"]);
    let batch = &report["batches"][0];
    assert_eq!(batch["outcome"], "landed", "{batch:#}");
    assert_eq!(batch["landed"], serde_json::json!(["f1", "f2"]));
    assert_eq!(batch["flaky"], serde_json::json!(["tests"]));
    assert_eq!(batch["check_runs"], 1);
    assert_eq!(batch["retries"], 1);
    let status = land(&world, &["status"]);
    assert_eq!(status["flaky"], serde_json::json!(["tests"]));
}

#[test]
fn bad_input_is_refused_with_nothing_queued() {
    let world = world("");
    good(&world, "ok");
    // A task whose check failed.
    world
        .ganger(&["start", "red", "--message", "echo 'broken(' > api.sh"])
        .expect_code(1);
    let refusals: [(&[&str], &str); 6] = [
        (
            &["land", "ok", "red"],
            "round 1 of red did not pass its checks",
        ),
        (&["land", "ok", "nosuch"], "no task nosuch"),
        (
            &["land", "ok", "--as", "mallory"],
            "mallory may not land task ok",
        ),
        (
            &["land", "ok", "--batch", "0"],
            "--batch must be at least 1",
        ),
        (&["land"], "ganger land needs tasks to queue, or --run"),
        (&["land", "ok", "ok"], "task ok is named twice"),
    ];
    for (args, message) in refusals {
        let run = world.ganger(args);
        run.expect_code(2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
    // The base checked out with uncommitted changes.
    world.write("README.md", "changed\n");
    let run = world.ganger(&["land", "ok"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("checked out in")
            && run
                .stderr
                .contains("with uncommitted changes ( M README.md); nothing was queued"),
        "{}",
        run.stderr
    );
    world.git(&["checkout", "README.md"]);
    // A base that is no longer a branch.
    world.git(&["branch", "side"]);
    world
        .ganger(&[
            "start",
            "gone",
            "--base",
            "side",
            "--message",
            "echo a > a.txt",
        ])
        .expect_code(0);
    world.git(&["branch", "-D", "side"]);
    let run = world.ganger(&["land", "gone"]);
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("the base side of task gone is not a local branch"),
        "{}",
        run.stderr
    );
    let status = land(&world, &["status"]);
    assert_eq!(status["queue"], serde_json::json!([]), "nothing was queued");
    let idle = world.ganger(&["land", "--run"]);
    idle.expect_code(0);
    assert_eq!(idle.stdout, "nothing to land: the queue is empty\n");
    // Queued once; a second time is refused.
    land(&world, &["ok"]);
    let again = world.ganger(&["land", "ok"]);
    again.expect_code(2);
    assert!(
        again.stderr.contains("queued to land already"),
        "{}",
        again.stderr
    );
}

/// Starts `ganger land --run` in the background with `env`.
fn spawn_lander(world: &World, env: &[(&str, &str)], store: Option<&str>) -> Child {
    spawn_lander_of(world, env, store, "2")
}

/// [`spawn_lander`] with batches of `batch`.
fn spawn_lander_of(world: &World, env: &[(&str, &str)], store: Option<&str>, batch: &str) -> Child {
    let mut args = Vec::new();
    if let Some(url) = store {
        args.extend(["--store", url]);
    }
    args.extend(["land", "--run", "--batch", batch]);
    let mut command = world.command(&args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the test kills the lander, or runs two at once"
    )]
    command.spawn().unwrap()
}

fn kill9(child: &mut Child) {
    let killed = Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = child.wait();
}

/// Three good tasks queued; the base's head before.
fn three_queued(world: &World) -> String {
    for slug in ["k1", "k2", "k3"] {
        good(world, slug);
    }
    let head = world.git(&["rev-parse", "main"]);
    for slug in ["k1", "k2", "k3"] {
        land(world, &[slug]);
    }
    head
}

/// After a killed lander: a new one lands the rest, and each task is on the base once, at
/// batch boundaries whose checks pass.
fn the_rest_lands_exactly_once(world: &World, head: &str) {
    let report = land(world, &["--run", "--batch", "2"]);
    assert!(
        report["batches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["outcome"] == "landed"),
        "{report:#}"
    );
    for slug in ["k1", "k2", "k3"] {
        let tip = world.git(&["rev-parse", &format!("agent/{slug}")]);
        assert_eq!(times_landed(world, head, &tip), 1, "{slug}");
    }
    for commit in world
        .git(&["rev-list", "--first-parent", &format!("{head}..main")])
        .lines()
    {
        let subject = world.git(&["log", "-1", "--format=%s", commit]);
        assert!(subject.starts_with("Land batch "), "{subject}");
        assert!(check_passes_at(world, commit));
    }
    let status = land(world, &["status"]);
    assert_eq!(status["queue"], serde_json::json!([]));
    assert_eq!(status["testing"], serde_json::json!([]));
}

#[test]
fn a_lander_killed_during_its_checks_leaves_the_base_alone_and_the_next_lands_it_once() {
    let world = world(
        "case \"$PWD\" in */.ganger/land/*) touch \"$TMPDIR/in-check\"; \
         while [ -e \"$TMPDIR/hold\" ]; do sleep 0.05; done;; esac",
    );
    let head = three_queued(&world);
    std::fs::write(world.tmp().join("hold"), "").unwrap();
    let mut lander = spawn_lander(&world, &[], None);
    assert!(wait_until(Duration::from_secs(30), || world
        .tmp()
        .join("in-check")
        .exists()));
    kill9(&mut lander);
    std::fs::remove_file(world.tmp().join("hold")).unwrap();
    assert_eq!(
        world.git(&["rev-parse", "main"]),
        head,
        "the base did not move"
    );
    let status = land(&world, &["status"]);
    assert_eq!(status["testing"][0]["state"], "testing", "{status:#}");
    the_rest_lands_exactly_once(&world, &head);
}

#[test]
fn a_lander_killed_between_the_ref_update_and_the_record_is_settled_as_landed_once() {
    let world = world("");
    let head = three_queued(&world);
    let mut lander = spawn_lander(
        &world,
        &[("GANGER_FAULT_PAUSE", "land-after-ref-update:60000")],
        None,
    );
    assert!(wait_until(Duration::from_secs(60), || world
        .git(&["rev-parse", "main"])
        != head));
    kill9(&mut lander);
    // The base is at the batch's commit; the store still says landing.
    let moved = world.git(&["rev-parse", "main"]);
    assert!(
        world
            .git(&["log", "-1", "--format=%s", &moved])
            .starts_with("Land batch 1 ")
    );
    let status = land(&world, &["status"]);
    assert_eq!(status["testing"][0]["state"], "landing", "{status:#}");
    assert_eq!(status["testing"][0]["tip"], moved.as_str());
    the_rest_lands_exactly_once(&world, &head);
    let first = world.git(&["rev-list", "--first-parent", &format!("{head}..main")]);
    assert_eq!(first.lines().count(), 2, "two batches: {first}");
}

#[test]
fn a_lander_killed_between_the_record_and_the_ref_update_lands_nothing_twice() {
    let world = world("");
    let head = three_queued(&world);
    let mut lander = spawn_lander(
        &world,
        &[("GANGER_FAULT_PAUSE", "land-before-ref-update:60000")],
        None,
    );
    assert!(wait_until(Duration::from_secs(60), || {
        let status = world.ganger(&["land", "status", "--json"]).json();
        status["testing"][0]["state"] == "landing"
    }));
    kill9(&mut lander);
    assert_eq!(
        world.git(&["rev-parse", "main"]),
        head,
        "the base did not move"
    );
    the_rest_lands_exactly_once(&world, &head);
}

#[test]
fn two_landers_on_one_postgresql_store_never_land_on_one_base_at_once() {
    let Some(db) = PgDatabase::new() else {
        return;
    };
    // Each check run holds a directory for a while: two at once would fail one.
    let world = world(
        "case \"$PWD\" in */.ganger/land/*) mkdir \"$TMPDIR/one-at-a-time\" || exit 1; \
         sleep 0.3; rmdir \"$TMPDIR/one-at-a-time\";; esac",
    );
    let slugs = ["p1", "p2", "p3", "p4", "p5", "p6"];
    for slug in slugs {
        let script = format!("mkdir -p mods; echo 'greet {slug}' > mods/{slug}.sh");
        world
            .ganger(&["--store", &db.url, "start", slug, "--message", &script])
            .expect_code(0);
    }
    let head = world.git(&["rev-parse", "main"]);
    for slug in slugs {
        world
            .ganger(&["--store", &db.url, "land", slug])
            .expect_code(0);
    }
    let landers: Vec<Child> = (0..2)
        .map(|_| spawn_lander(&world, &[], Some(&db.url)))
        .collect();
    for lander in landers {
        let output = lander.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    for slug in slugs {
        let tip = world.git(&["rev-parse", &format!("agent/{slug}")]);
        assert_eq!(times_landed(&world, &head, &tip), 1, "{slug}");
    }
    // No two batches of one base were ever open at once.
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for row in db
        .client()
        .query(
            "SELECT started_at, ended_at FROM land_batches WHERE base = 'main' ORDER BY started_at",
            &[],
        )
        .unwrap()
    {
        spans.push((row.get(0), row.get::<_, Option<i64>>(1).unwrap()));
    }
    assert_eq!(spans.len(), 3, "{spans:?}");
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "batches overlap: {spans:?}");
    }
}

#[test]
fn a_queued_task_the_base_has_already_is_recorded_landed_without_a_second_commit() {
    let world = world("");
    good(&world, "done1");
    good(&world, "todo");
    land(&world, &["done1", "todo"]);
    // Someone merged done1 by hand meanwhile.
    world.git(&["merge", "-q", "--no-ff", "--no-edit", "agent/done1"]);
    let head = world.git(&["rev-parse", "main"]);
    let report = land(&world, &["--run"]);
    let batch = &report["batches"][0];
    assert_eq!(batch["outcome"], "landed", "{batch:#}");
    assert_eq!(batch["landed"], serde_json::json!(["done1", "todo"]));
    let done1 = world.git(&["rev-parse", "agent/done1"]);
    let todo = world.git(&["rev-parse", "agent/todo"]);
    assert_eq!(times_landed(&world, &head, &done1), 0, "not landed twice");
    assert_eq!(times_landed(&world, &head, &todo), 1);
    assert_eq!(land(&world, &["status"])["queue"], serde_json::json!([]));
}

/// A worker that follows ganger land's fix rounds: it resolves conflict markers by keeping
/// both sides, and gives the api back its function when the mods fail; any other prompt's
/// last line is its script.
const FIXING_AGENT: &str = "p=$(cat); case \"$p\" in \
    *'conflict markers'*) for f in $(git diff --name-only --diff-filter=U); do \
        sed -i '/^<<<<<<< /d;/^=======$/d;/^>>>>>>> /d' \"$f\"; done;; \
    *'FAIL: mods/'*) echo 'greet() { echo \"hello $1\"; }' >> api.sh;; \
    *) eval \"$(printf '%s\\n' \"$p\" | tail -n 1)\";; esac";

#[test]
fn with_fix_a_conflicting_task_and_a_culprit_are_fixed_by_their_workers_and_land() {
    let world = world_of(FIXING_AGENT, "");
    let start_head = world.git(&["rev-parse", "main"]);
    good(&world, "g1");
    good(&world, "g2");
    start(&world, "c1", "echo 'salute() { echo \"hi $1\"; }' > api.sh");
    start(&world, "x", "echo 'x was here' >> README.md");
    world.write("README.md", "# test repository\nmain's own line\n");
    world.git(&["commit", "-q", "-am", "main: a line"]);
    for slug in ["g1", "g2", "c1", "x"] {
        land(&world, &[slug, "--fix"]);
    }
    let run = world.ganger(&["land", "--run", "--json"]);
    run.expect_code(0);
    let report = run.json();
    let batches = report["batches"].as_array().unwrap();
    assert_eq!(batches[0]["landed"], serde_json::json!(["g1", "g2"]));
    let fixed: Vec<(&str, bool, bool)> = batches[0]["fix_rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["task"].as_str().unwrap(),
                f["passed"].as_bool().unwrap(),
                f["requeued"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(fixed, [("x", true, true), ("c1", true, true)], "{report:#}");
    // The fixed two land in the next batch, or in one each when the second fix round was
    // still running as the lander took the first one back (the two rounds race).
    let mut later: Vec<&str> = Vec::new();
    for batch in &batches[1..] {
        assert_eq!(batch["outcome"], "landed", "{report:#}");
        later.extend(
            batch["landed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap()),
        );
    }
    later.sort_unstable();
    assert_eq!(later, ["c1", "x"], "{report:#}");
    assert!(batches.len() <= 3, "{report:#}");
    let readme = std::fs::read_to_string(world.repo.join("README.md")).unwrap();
    assert!(
        readme.contains("main's own line") && readme.contains("x was here"),
        "{readme}"
    );
    for commit in commits_since(&world, &start_head) {
        assert!(check_passes_at(&world, &commit), "checks fail at {commit}");
    }
    for slug in ["g1", "g2", "c1", "x"] {
        let tip = world.git(&["rev-parse", &format!("agent/{slug}")]);
        assert_eq!(times_landed(&world, &start_head, &tip), 1, "{slug}");
    }
}

#[test]
fn land_status_shows_the_batch_under_test_and_its_bisection_so_far() {
    // The lander's third check (the batch's, its retry, then the bisection's first) waits while
    // `hold` exists.
    let world = world(
        "case \"$PWD\" in */.ganger/land/*) n=$(cat \"$TMPDIR/runs\" 2>/dev/null || echo 0); \
         n=$((n + 1)); echo $n > \"$TMPDIR/runs\"; \
         if [ $n -eq 3 ]; then while [ -e \"$TMPDIR/hold\" ]; do sleep 0.05; done; fi;; esac",
    );
    good(&world, "s1");
    good(&world, "s2");
    start(
        &world,
        "bad",
        "echo 'salute() { echo \"hi $1\"; }' > api.sh",
    );
    land(&world, &["s1", "s2", "bad"]);
    std::fs::write(world.tmp().join("hold"), "").unwrap();
    let lander = spawn_lander_of(&world, &[], None, "3");
    let runs = world.tmp().join("runs");
    assert!(wait_until(Duration::from_secs(30), || {
        std::fs::read_to_string(&runs).is_ok_and(|n| n.trim() == "3")
    }));
    let status = land(&world, &["status"]);
    let testing = &status["testing"][0];
    assert_eq!(testing["state"], "testing", "{status:#}");
    assert_eq!(
        testing["progress"]["probes"],
        serde_json::json!([{ "tasks": ["s1", "s2", "bad"], "green": false, "failed": ["tests"], "flaky": [] }]),
        "{status:#}"
    );
    let queue: Vec<(&str, &str)> = status["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["task"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        queue,
        [("s1", "testing"), ("s2", "testing"), ("bad", "testing")]
    );
    let human = world.ganger(&["land", "status"]);
    assert!(
        human.stdout.contains("): testing, 1 check run\n"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("  s1 + s2 + bad: red\n"),
        "{}",
        human.stdout
    );
    std::fs::remove_file(world.tmp().join("hold")).unwrap();
    let output = lander.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
