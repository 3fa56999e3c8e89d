//! The HTTP API of `ganger serve --listen`, end to end: a real server on a real store in a
//! real git repository, rounds run by the `command` agent (a shell script as the agent).
//! Every endpoint is asked, every action done and refused as the CLI would refuse it, the
//! event streams dropped and resumed with `Last-Event-ID`, and the auth rules broken one by
//! one (no token, a read-only token, a foreign origin, a rebinding host, a non-loopback bind
//! without configured tokens).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use web_world::{ALICE, BOB, Served, VERA, spawn_serve, write_tokens};

const LONG: Duration = Duration::from_secs(60);

/// A world whose agent writes `file.txt`, prints a few lines and a `DONE:` line.
fn quick_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "echo \"prompt: $(cat)\"; echo one; echo two > file.txt; echo 'DONE: wrote file'",
        "",
        "",
    );
    world
}

#[test]
fn every_read_endpoint_answers_for_a_task_started_through_the_api() {
    let served = Served::start(quick_world());
    let started = served.post(
        "/api/tasks",
        &json!({"slug": "one", "message": "write the file", "labels": ["team=red"],
                "checks": ["test -f file.txt"]}),
    );
    assert_eq!(started.status, 200, "{}", started.body);
    let started = started.json();
    assert_eq!(started["schema"], "ganger.detached/1");
    assert_eq!(
        (started["task"].clone(), started["round"].clone()),
        (json!("one"), json!(1))
    );
    let task = served.wait_round_end("one", LONG);
    assert_eq!(task["task"]["status"], "done", "{task}");
    assert_eq!(task["task"]["done"], "DONE: wrote file");
    assert_eq!(task["task"]["labels"], json!({"team": "red"}));
    assert_eq!(task["rounds"].as_array().unwrap().len(), 1);

    // The table, filtered every way.
    let all = served.get("/api/tasks").json();
    assert_eq!(all["schema"], "ganger.web-tasks/1");
    assert_eq!(all["tasks"][0]["slug"], "one");
    let owner = all["tasks"][0]["owner"].as_str().unwrap().to_owned();
    for (query, count) in [
        ("status=done", 1),
        ("status=running", 0),
        ("label=team=red", 1),
        ("label=team=blue", 0),
        (&format!("owner={owner}") as &str, 1),
        ("owner=someone-else", 0),
        ("fleet=nofleet", 0),
    ] {
        let got = served.get(&format!("/api/tasks?{query}")).json();
        assert_eq!(
            got["tasks"].as_array().unwrap().len(),
            count,
            "{query}: {got}"
        );
    }
    let bad = served.get("/api/tasks?label=nokey");
    assert_eq!(
        (bad.status, bad.json()["kind"].clone()),
        (400, json!("invalid"))
    );

    // The last round's report, its checks, the rounds, one round with its prompt.
    let report = served.get("/api/tasks/one/report").json();
    assert_eq!(report["schema"], "ganger.round-report/1");
    assert_eq!(report["done"], "DONE: wrote file");
    let checks = served.get("/api/tasks/one/checks").json();
    assert_eq!(checks["checks"][0]["command"], "test -f file.txt");
    assert_eq!(checks["checks"][0]["state"], "passed", "{checks}");
    let rounds = served.get("/api/tasks/one/rounds").json();
    assert_eq!(rounds["rounds"][0]["round"], 1);
    let round = served.get("/api/tasks/one/rounds/1").json();
    assert!(
        round["prompt"].as_str().unwrap().contains("write the file"),
        "{round}"
    );
    assert_eq!(round["report"]["status"], "done");

    // The round's events through the adapter, from the start and from an offset.
    let events = served.get("/api/tasks/one/rounds/1/events").json();
    let texts: Vec<&str> = events["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["events"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["prompt: write the file", "one", "DONE: wrote file"]);
    let after_first = events["lines"][0]["offset"].as_u64().unwrap();
    let rest = served
        .get(&format!(
            "/api/tasks/one/rounds/1/events?after={after_first}"
        ))
        .json();
    assert_eq!(rest["lines"].as_array().unwrap().len(), 2, "{rest}");
    assert_eq!(rest["running"], false);

    // Diffs: the task's and the round's.
    for path in ["/api/tasks/one/diff", "/api/tasks/one/rounds/1/diff"] {
        let diff = served.get(path);
        assert_eq!(diff.status, 200, "{path}: {}", diff.body);
        assert!(diff.content_type.starts_with("text/x-diff"), "{path}");
        assert!(
            diff.body.contains("+++ b/file.txt\n@@ -0,0 +1 @@\n+two\n"),
            "{path}: {}",
            diff.body
        );
    }

    // The journal: the task made, its round started and finished, in order.
    let journal = served.get("/api/journal").json();
    let kinds: Vec<&str> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.starts_with(&["task-created", "round-started"]),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"round-finished"), "{kinds:?}");
    let later = served.get("/api/journal?after=1&limit=1").json();
    assert_eq!(later["entries"][0]["id"], 2);
    assert_eq!(later["entries"].as_array().unwrap().len(), 1);

    // Every round as a point in time, for plots.
    let history = served.get("/api/rounds").json();
    assert_eq!(history["schema"], "ganger.web-rounds/1");
    assert_eq!(history["rounds"].as_array().unwrap().len(), 1);
    let point = &history["rounds"][0];
    assert_eq!(
        (
            &point["task"],
            &point["round"],
            &point["status"],
            &point["agent"]
        ),
        (&json!("one"), &json!(1), &json!("done"), &json!("command"))
    );
    assert!(point["ended_at"].as_i64().unwrap() >= point["started_at"].as_i64().unwrap());
    assert_eq!(history["task_budgets"], json!({}));

    // Fleets and the queue (none here), who am I, and the description.
    assert_eq!(served.get("/api/fleets").json()["fleets"], json!([]));
    let queue = served.get("/api/queue").json();
    assert_eq!(queue["schema"], "ganger.fleet-status/1");
    let fleet = served.get("/api/fleets/none");
    assert_eq!(
        (fleet.status, fleet.json()["error"].clone()),
        (404, json!("no fleet none"))
    );
    assert_eq!(fleet.json()["kind"], "not-found");
    let me = served.get("/api/whoami").json();
    assert_eq!(me, json!({"commander": owner, "access": "write"}));
    let openapi = served.request("GET", "/api/openapi.json", None, None, &[]);
    assert_eq!(openapi.status, 200);
    let paths = openapi.json()["paths"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect::<Vec<_>>();
    for path in [
        "/api/tasks",
        "/api/tasks/{slug}",
        "/api/tasks/{slug}/report",
        "/api/tasks/{slug}/checks",
        "/api/tasks/{slug}/diff",
        "/api/tasks/{slug}/rounds",
        "/api/tasks/{slug}/rounds/{round}",
        "/api/tasks/{slug}/rounds/{round}/events",
        "/api/tasks/{slug}/rounds/{round}/diff",
        "/api/journal",
        "/api/rounds",
        "/api/fleets",
        "/api/fleets/{name}",
        "/api/queue",
        "/api/whoami",
        "/api/tasks/{slug}/fix",
        "/api/tasks/{slug}/cancel",
        "/api/tasks/{slug}/approve",
        "/api/tasks/{slug}/reject",
        "/api/tasks/{slug}/merge",
        "/api/tasks/{slug}/transfer",
        "/api/events",
        "/api/tasks/{slug}/events",
    ] {
        assert!(
            paths.iter().any(|p| p == path),
            "{path} missing from {paths:?}"
        );
    }
}

#[test]
fn unknown_tasks_are_404_and_bad_input_is_the_clis_error_with_nothing_made() {
    let served = Served::start(quick_world());
    for (method, path) in [
        ("GET", "/api/tasks/nope"),
        ("GET", "/api/tasks/nope/report"),
        ("GET", "/api/tasks/nope/rounds"),
        ("GET", "/api/tasks/nope/rounds/1"),
        ("GET", "/api/tasks/nope/diff"),
        ("GET", "/api/tasks/nope/events"),
        ("POST", "/api/tasks/nope/cancel"),
        ("POST", "/api/tasks/nope/approve"),
        ("POST", "/api/tasks/nope/merge"),
    ] {
        let reply = served.request(method, path, Some(&served.token), None, &[]);
        assert_eq!(reply.status, 404, "{method} {path}: {}", reply.body);
        let error = reply.json();
        assert_eq!(error["schema"], "ganger.error/1");
        assert_eq!(error["error"], "no task nope", "{method} {path}");
    }
    let fix = served.post("/api/tasks/nope/fix", &json!({"message": "x"}));
    assert_eq!(fix.status, 404);

    // A bad slug, an empty brief, an unknown field, a missing field: the CLI's kind and
    // message, and no task made.
    let cli = served
        .world
        .ganger(&["start", "../up", "--message", "x", "--json"]);
    let cli_error: Value = serde_json::from_str(&cli.stdout)
        .unwrap_or_else(|_| serde_json::from_str(&cli.stderr).unwrap());
    let bad_slug = served.post("/api/tasks", &json!({"slug": "../up", "message": "x"}));
    assert_eq!(bad_slug.status, 400);
    let api_error = bad_slug.json();
    assert_eq!(
        (&api_error["kind"], &api_error["error"]),
        (&cli_error["kind"], &cli_error["error"])
    );
    let empty = served.post("/api/tasks", &json!({"slug": "empty", "message": ""}));
    assert_eq!(empty.status, 400, "{}", empty.body);
    assert_eq!(empty.json()["kind"], "invalid");
    let unknown = served.post(
        "/api/tasks",
        &json!({"slug": "u", "message": "x", "colour": 1}),
    );
    assert_eq!(unknown.status, 400);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap()
            .contains("unknown field `colour`")
    );
    let missing = served.post("/api/tasks", &json!({"slug": "m"}));
    assert_eq!(missing.status, 400);
    let bad_mode = served.request(
        "POST",
        "/api/tasks/nope/merge",
        Some(&served.token),
        Some(&json!({"mode": "octopus"})),
        &[],
    );
    assert_eq!(bad_mode.status, 400);
    assert_eq!(served.get("/api/tasks").json()["tasks"], json!([]));
    assert_eq!(served.get("/api/journal").json()["entries"], json!([]));
    assert!(!served.world.worktree("empty").exists());
    let nowhere = served.get("/api/nowhere");
    assert_eq!(
        (nowhere.status, nowhere.json()["kind"].clone()),
        (404, json!("not-found"))
    );
}

#[test]
fn actions_act_as_the_tokens_commander_with_the_clis_ownership_rules() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // Each round writes its prompt's last line; a last line with HOLD waits (for cancel and
    // interrupt): ganger may put a note about earlier rounds before the message.
    world.use_command_agent(
        "p=$(cat | tail -n 1); echo \"prompt: $p\"; case \"$p\" in *HOLD*) sleep 60;; esac; echo \"$p\" >> work.txt; echo 'DONE: ok'",
        "",
        "",
    );
    write_tokens(&world);
    let served = Served::start(world);
    let as_who = |token: &str, path: &str, body: Value| {
        served.request("POST", path, Some(token), Some(&body), &[])
    };
    let started = as_who(
        ALICE,
        "/api/tasks",
        json!({"slug": "job", "message": "first"}),
    );
    assert_eq!(started.status, 200, "{}", started.body);
    served.wait_round_end("job", LONG);
    assert_eq!(
        served.get("/api/tasks/job").json()["task"]["owner"],
        "alice"
    );

    // Bob may not fix or cancel alice's task: the CLI's own refusal, a 403.
    let cli = served.world.ganger(&[
        "fix",
        "job",
        "--message",
        "mine now",
        "--as",
        "bob",
        "--json",
    ]);
    assert_eq!(cli.code, 2);
    let cli_error: Value = serde_json::from_str(&cli.stdout)
        .unwrap_or_else(|_| serde_json::from_str(&cli.stderr).unwrap());
    let refused = as_who(BOB, "/api/tasks/job/fix", json!({"message": "mine now"}));
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.json()["error"], cli_error["error"]);
    assert_eq!(refused.json()["kind"], "forbidden");
    assert_eq!(refused.json()["exit_code"], cli_error["exit_code"]);
    assert_eq!(as_who(BOB, "/api/tasks/job/cancel", json!({})).status, 403);

    // Alice hands it to bob; now bob's fix runs and alice's is refused.
    let moved = as_who(ALICE, "/api/tasks/job/transfer", json!({"to": "bob"}));
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!(served.get("/api/tasks/job").json()["task"]["owner"], "bob");
    assert_eq!(
        as_who(ALICE, "/api/tasks/job/fix", json!({"message": "x"})).status,
        403
    );
    let fixed = as_who(BOB, "/api/tasks/job/fix", json!({"message": "please HOLD"}));
    assert_eq!(fixed.status, 200, "{}", fixed.body);
    assert_eq!(fixed.json()["round"], 2);

    // A fix while the round runs is refused; with interrupt it stops the round and sends
    // this one into the session.
    let busy = as_who(BOB, "/api/tasks/job/fix", json!({"message": "third"}));
    assert_eq!(busy.status, 400, "{}", busy.body);
    let interrupting = as_who(
        BOB,
        "/api/tasks/job/fix",
        json!({"message": "HOLD again", "interrupt": true}),
    );
    assert_eq!(interrupting.status, 200, "{}", interrupting.body);
    assert_eq!(interrupting.json()["round"], 3);
    let rounds = served.get("/api/tasks/job/rounds").json();
    assert_eq!(rounds["rounds"][1]["status"], "cancelled", "{rounds}");

    // Cancel stops the running round.
    let cancelled = as_who(BOB, "/api/tasks/job/cancel", json!({}));
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    assert_eq!(cancelled.json()["status"], "cancelled");

    // Approve and reject are for pipelines: refused with the engine's reason.
    let approve = as_who(BOB, "/api/tasks/job/approve", json!({}));
    assert_eq!(
        (approve.status, approve.json()["kind"].clone()),
        (400, json!("invalid"))
    );
    let reject = as_who(BOB, "/api/tasks/job/reject", json!({"notes": "no"}));
    assert_eq!(reject.status, 400, "{}", reject.body);

    // A task whose last round did not pass is not merged; once one passes, its owner merges.
    let early = as_who(BOB, "/api/tasks/job/merge", json!({}));
    assert_eq!(early.status, 400, "{}", early.body);
    assert!(
        early.json()["error"]
            .as_str()
            .unwrap()
            .contains("did not pass")
    );
    assert_eq!(
        as_who(BOB, "/api/tasks/job/fix", json!({"message": "final"})).status,
        200
    );
    assert_eq!(served.wait_round_end("job", LONG)["task"]["status"], "done");
    assert_eq!(as_who(ALICE, "/api/tasks/job/merge", json!({})).status, 403);
    let merged = as_who(BOB, "/api/tasks/job/merge", json!({"mode": "squash"}));
    assert_eq!(merged.status, 200, "{}", merged.body);
    assert_eq!(merged.json()["outcome"], "merged", "{}", merged.body);
    let on_main = served.world.git(&["show", "main:work.txt"]);
    assert_eq!(on_main, "first\nfinal");
}

#[test]
fn auth_no_token_a_read_only_token_a_foreign_origin_and_a_rebinding_host_are_refused() {
    let world = quick_world();
    write_tokens(&world);
    let served = Served::start(world);
    let start = json!({"slug": "t", "message": "x"});
    let no_token = served.request("POST", "/api/tasks", None, Some(&start), &[]);
    assert_eq!(no_token.status, 401);
    assert_eq!(no_token.json()["kind"], "unauthorized");
    assert_eq!(
        served.request("GET", "/api/tasks", None, None, &[]).status,
        401
    );
    let unknown = served.request(
        "GET",
        "/api/tasks",
        Some("not-a-known-token-at-all"),
        None,
        &[],
    );
    assert_eq!(unknown.status, 401);

    // A viewer reads, and may not act.
    assert_eq!(
        served
            .request("GET", "/api/tasks", Some(VERA), None, &[])
            .status,
        200
    );
    let viewer = served.request("POST", "/api/tasks", Some(VERA), Some(&start), &[]);
    assert_eq!(viewer.status, 403, "{}", viewer.body);
    assert!(
        viewer.json()["error"]
            .as_str()
            .unwrap()
            .contains("read-only")
    );

    // Another site's page, even with a good token; a rebinding host name.
    for headers in [
        vec![("Origin", "http://evil.example")],
        vec![("Origin", "null")],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![("Host", "evil.example")],
    ] {
        let reply = served.request("POST", "/api/tasks", Some(ALICE), Some(&start), &headers);
        assert_eq!(reply.status, 403, "{headers:?}: {}", reply.body);
        let read = served.request("GET", "/api/tasks", Some(ALICE), None, &headers);
        assert_eq!(read.status, 403, "{headers:?}");
    }
    // The server's own origin may act; no CORS header is ever given.
    let own = format!("http://{}", served.address());
    let reply = served.request(
        "POST",
        "/api/tasks",
        Some(ALICE),
        Some(&start),
        &[("Origin", &own)],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        served.get("/api/tasks").json()["tasks"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let page = served.request("GET", "/", None, None, &[]);
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
}

#[test]
fn a_non_loopback_bind_is_refused_without_configured_tokens() {
    let world = quick_world();
    let (mut child, seen) = spawn_serve(&world, &["--listen", "0.0.0.0:0"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{seen}");
    assert!(seen.contains("refusing to listen on 0.0.0.0:0"), "{seen}");
    // The same with a configured token starts (and is stopped here).
    write_tokens(&world);
    let (mut child, seen) = spawn_serve(&world, &["--listen", "0.0.0.0:0"]);
    assert!(
        seen.contains("dashboard and API at http://0.0.0.0:"),
        "{seen}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // A token file others can read is refused before anything listens.
    let file = world.repo.join(".ganger/web/tokens.toml");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (mut child, seen) = spawn_serve(&world, &["--listen", "127.0.0.1:0"]);
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen}");
    assert!(seen.contains("can be read by others"), "{seen}");
}

#[test]
fn serve_listens_on_a_unix_socket_only_its_owner_may_use() {
    use std::io::{Read, Write};
    let world = quick_world();
    let socket = world.root().join("ganger.sock");
    let listen = format!("unix:{}", socket.display());
    let (mut child, seen) = spawn_serve(&world, &["--listen", &listen]);
    assert!(
        seen.contains(&format!("dashboard and API at {listen} ")),
        "{seen}"
    );
    assert_eq!(
        std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let token = std::fs::read_to_string(web_world::token_file(&world)).unwrap();
    let ask = |auth: &str| {
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        write!(
            stream,
            "GET /api/whoami HTTP/1.1\r\nHost: ganger\r\n{auth}Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    };
    let reply = ask(&format!("Authorization: Bearer {}\r\n", token.trim()));
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("\"access\":\"write\""), "{reply}");
    assert!(ask("").starts_with("HTTP/1.1 401"));
    // A second server on the same socket (another repository's) is refused while the first
    // answers.
    let other = quick_world();
    let (mut second, seen) = spawn_serve(&other, &["--listen", &listen]);
    assert_eq!(second.wait().unwrap().code(), Some(2), "{seen}");
    assert!(seen.contains("another server answers there"), "{seen}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn fleets_show_their_limits_dependencies_and_states() {
    let world = quick_world();
    world.write(
        "fleet.toml",
        "name = \"pair\"\n[limits]\nglobal = 1\n\n[[task]]\nslug = \"first\"\nmessage = \"one\"\n\n\
         [[task]]\nslug = \"second\"\nmessage = \"two\"\nafter = [\"first\"]\n",
    );
    world.ganger(&["fleet", "run", "fleet.toml"]).expect_code(0);
    let served = Served::start(world);
    let fleets = served.get("/api/fleets").json();
    assert_eq!(fleets["schema"], "ganger.web-fleets/1");
    let pair = &fleets["fleets"][0];
    assert_eq!(pair["name"], "pair");
    assert_eq!(pair["limits"]["global"], 1, "{pair}");
    assert_eq!(pair["states"], json!({"done": 2}));
    let status = served.get("/api/fleets/pair").json();
    let after: Vec<(&str, &Value)> = status["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["slug"].as_str().unwrap(), &t["after"]))
        .collect();
    assert_eq!(
        after,
        [("first", &json!([])), ("second", &json!(["first"]))]
    );
    let filtered = served.get("/api/tasks?fleet=pair").json();
    assert_eq!(filtered["tasks"].as_array().unwrap().len(), 2);
}

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
fn a_pipeline_is_rejected_and_approved_through_the_api_by_its_owner_only() {
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
    write_tokens(&world);
    world
        .ganger(&["plan", "p", "--message", "two files", "--as", "alice"])
        .expect_code(0);
    let served = Served::start(world);
    let report = served.get("/api/tasks/p/report").json();
    assert_eq!(report["schema"], "ganger.pipeline/1");
    assert_eq!(report["stage"], "awaiting-approval", "{report}");
    assert_eq!(report["plan"]["steps_total"], 2);
    let as_who = |token: &str, path: &str, body: Value| {
        served.request("POST", path, Some(token), Some(&body), &[])
    };
    // Not bob's pipeline (403); a rejection needs notes (400).
    assert_eq!(as_who(BOB, "/api/tasks/p/approve", json!({})).status, 403);
    assert_eq!(as_who(ALICE, "/api/tasks/p/reject", json!({})).status, 400);
    let rejected = as_who(
        ALICE,
        "/api/tasks/p/reject",
        json!({"notes": "smaller steps"}),
    );
    assert_eq!(rejected.status, 200, "{}", rejected.body);
    assert_eq!(rejected.json()["plan"]["version"], 2, "{}", rejected.body);
    let approved = as_who(ALICE, "/api/tasks/p/approve", json!({}));
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.json()["stage"], "done", "{}", approved.body);
    let steps = std::fs::read_to_string(served.world.worktree("p").join("steps.txt")).unwrap();
    assert_eq!(steps.lines().count(), 2);
}
