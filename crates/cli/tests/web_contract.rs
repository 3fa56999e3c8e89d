//! The HTTP API's contract at its edges (issue 38): `"queue": true` queues, a loopback
//! address other than 127.0.0.1 is served, every refusal is `ganger.error/1` JSON with the
//! status its kind says (404 for what does not exist, 409 for what is there already, 403 for
//! what the token's commander may not do), a round sent answers the CLI's document, the bearer
//! scheme is read as RFC 9110 says, and `serve` says nothing before it is
//! ready.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use web_world::{Served, spawn_serve};

const LONG: Duration = Duration::from_secs(60);

fn quick_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "echo \"prompt: $(cat)\"; echo two > file.txt; echo 'DONE: wrote file'",
        "",
        "",
    );
    world
}

/// A raw HTTP/1.1 request to `address` (`Connection: close`): the status, the content type
/// and the body.
fn raw(address: &str, request: &str) -> (u16, String, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer to {request:?}: {reply:?}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_default();
    (status, content_type, body.to_owned())
}

/// `ganger.error/1` of `kind` with `status`, as JSON.
fn assert_error(what: &str, reply: (u16, String, String), status: u16, kind: &str) -> Value {
    let (got, content_type, body) = reply;
    assert_eq!(got, status, "{what}: {body}");
    assert!(
        content_type.starts_with("application/json"),
        "{what}: {content_type}: {body}"
    );
    let document: Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {body}"));
    assert_eq!(document["schema"], "ganger.error/1", "{what}: {document}");
    assert_eq!(document["kind"], kind, "{what}: {document}");
    document
}

#[test]
fn queue_true_queues_a_start_and_a_fix_for_the_scheduler() {
    let served = Served::start(quick_world());
    let queued = served.post(
        "/api/tasks",
        &json!({"slug": "later", "message": "in turn", "queue": true}),
    );
    assert_eq!(queued.status, 200, "{}", queued.body);
    let queued = queued.json();
    assert_eq!(queued["schema"], "ganger.queued/1", "{queued}");
    // serve is the scheduler: the queued start runs.
    let task = served.wait_round_end("later", LONG);
    assert_eq!(task["task"]["status"], "done", "{task}");

    let fix = served.post(
        "/api/tasks/later/fix",
        &json!({"message": "again", "queue": true}),
    );
    assert_eq!(fix.status, 200, "{}", fix.body);
    assert_eq!(fix.json()["schema"], "ganger.queued/1", "{}", fix.body);
    let deadline = std::time::Instant::now() + LONG;
    loop {
        let task = served.get("/api/tasks/later").json();
        if task["task"]["rounds"] == 2 && task["task"]["status"] == "done" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{task}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_loopback_address_other_than_127_0_0_1_is_served_at_the_url_serve_prints() {
    let world = quick_world();
    let token = |world: &World| {
        std::fs::read_to_string(web_world::token_file(world))
            .unwrap()
            .trim()
            .to_owned()
    };
    for listen in ["127.0.0.2:0", "[::ffff:127.0.0.1]:0"] {
        let (mut child, seen) = spawn_serve(&world, &["--listen", listen]);
        let address = seen
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("{listen}: serve did not say where it listens: {seen}"))
            .to_owned();
        let ask = |host: &str| {
            raw(
                &address,
                &format!(
                    "GET /api/whoami HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
                     Connection: close\r\n\r\n",
                    token(&world)
                ),
            )
        };
        let (status, _, body) = ask(&address);
        assert_eq!(status, 200, "{listen}: at {address}: {body}");
        // A name that is not this machine is still refused.
        let (status, _, body) = ask("evil.example");
        assert_eq!(status, 403, "{listen}: {body}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

#[test]
fn refusals_are_error_documents_with_the_status_of_their_kind() {
    let served = Served::start(quick_world());
    let address = served.address().to_owned();
    let token = served.token.clone();
    let get = |path: &str, auth: &str| {
        raw(
            &address,
            &format!("GET {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Connection: close\r\n\r\n"),
        )
    };
    let bearer = format!("Authorization: Bearer {token}\r\n");
    // Extractors: a round that is not a number, a query that does not parse, a file of the
    // page that does not exist, a method a route does not take.
    assert_error(
        "a round that is not a number",
        get("/api/tasks/one/rounds/first", &bearer),
        400,
        "invalid",
    );
    assert_error(
        "a journal cursor that is not a number",
        get("/api/journal?after=yesterday", &bearer),
        400,
        "invalid",
    );
    assert_error(
        "an unknown file of the page",
        get("/assets/nope.js", ""),
        404,
        "not-found",
    );
    assert_error(
        "a method the route does not take",
        raw(
            &address,
            &format!(
                "DELETE /api/tasks HTTP/1.1\r\nHost: {address}\r\n{bearer}Connection: close\r\n\r\n"
            ),
        ),
        405,
        "invalid",
    );
    // A body over the limit, refused from its length before it is read.
    assert_error(
        "a body over the limit",
        raw(
            &address,
            &format!(
                "POST /api/tasks HTTP/1.1\r\nHost: {address}\r\n{bearer}\
                 Content-Type: application/json\r\nContent-Length: 3000000\r\n\
                 Connection: close\r\n\r\n"
            ),
        ),
        413,
        "invalid",
    );
    // An unknown fleet does not exist: 404.
    assert_error(
        "an unknown fleet",
        get("/api/fleets/armada", &bearer),
        404,
        "not-found",
    );
    // The scheme is case-insensitive (RFC 9110, 11.1).
    for scheme in ["bearer", "BEARER", "BeArEr"] {
        let (status, _, body) = get(
            "/api/whoami",
            &format!("Authorization: {scheme} {token}\r\n"),
        );
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    assert_error(
        "another scheme",
        get("/api/whoami", &format!("Authorization: Basic {token}\r\n")),
        401,
        "unauthorized",
    );
}

#[test]
fn a_round_sent_answers_the_clis_document_and_a_task_that_exists_is_a_conflict() {
    let served = Served::start(quick_world());
    // ganger.detached/1 as the CLI prints it: the round's stream of events included.
    let started = served.post("/api/tasks", &json!({"slug": "twice", "message": "one"}));
    assert_eq!(started.status, 200, "{}", started.body);
    let detached = started.json();
    assert_eq!(detached["schema"], "ganger.detached/1", "{detached}");
    let events = detached["events"]
        .as_str()
        .unwrap_or_else(|| panic!("{detached}"));
    assert!(events.ends_with("/tasks/twice/round-1.jsonl"), "{detached}");
    served.wait_round_end("twice", LONG);
    assert!(std::path::Path::new(events).is_file(), "{events}");

    // A second start of the slug conflicts with the task there: 409, the CLI's message and
    // exit code.
    let cli = served
        .world
        .ganger(&["start", "twice", "--message", "two", "--json"]);
    assert_eq!(cli.code, 2, "{}", cli.stderr);
    let cli_error: Value = serde_json::from_str(&cli.stdout).unwrap();
    assert_eq!(cli_error["kind"], "invalid", "{cli_error}");
    let again = served.post("/api/tasks", &json!({"slug": "twice", "message": "two"}));
    assert_eq!(again.status, 409, "{}", again.body);
    let document = again.json();
    assert_eq!(document["schema"], "ganger.error/1", "{document}");
    assert_eq!(document["kind"], "conflict", "{document}");
    assert_eq!(document["error"], cli_error["error"], "{document}");
    assert_eq!(document["exit_code"], 2, "{document}");
}

#[test]
fn a_tokens_toml_secret_with_spaces_around_it_is_refused_by_name() {
    let world = quick_world();
    let dir = world.repo.join(".ganger/web");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens.toml");
    std::fs::write(
        &file,
        "[[token]]\ncommander = \"alice\"\nsecret = \" alice-secret-0123456789abcdef \"\naccess = \"write\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (mut child, seen) = spawn_serve(&world, &["--listen", "127.0.0.1:0"]);
    if seen.contains("dashboard and API at") {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("serve took a secret with spaces around it: {seen}");
    }
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(2), "{seen}");
    assert!(
        seen.contains("token 1: the secret has spaces around it"),
        "{seen}"
    );
    assert!(
        !seen.contains("alice-secret"),
        "the secret was echoed: {seen}"
    );
}

#[test]
fn serve_says_nothing_before_it_is_ready() {
    let world = quick_world();
    // Its address taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let (mut child, seen) = spawn_serve(&world, &["--listen", &address]);
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen}");
    assert!(
        seen.contains(&format!("cannot listen on {address}")),
        "{seen}"
    );
    assert!(!seen.contains("scheduling queued rounds"), "{seen}");
    drop(taken);

    // A tokens.toml that does not parse.
    let dir = world.repo.join(".ganger/web");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens.toml");
    std::fs::write(&file, "[[token]\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (mut child, seen) = spawn_serve(&world, &["--listen", "127.0.0.1:0"]);
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen}");
    assert!(seen.contains("tokens.toml"), "{seen}");
    assert!(!seen.contains("scheduling queued rounds"), "{seen}");
    std::fs::remove_file(&file).unwrap();

    // A second serve while one runs: refused before it listens or says it schedules.
    let (mut first, seen) = spawn_serve(&world, &["--listen", "127.0.0.1:0"]);
    assert!(seen.contains("scheduling queued rounds"), "{seen}");
    assert!(seen.contains("dashboard and API at"), "{seen}");
    let (mut second, seen) = spawn_serve(&world, &["--listen", "127.0.0.1:0"]);
    assert_eq!(second.wait().unwrap().code(), Some(2), "{seen}");
    assert!(seen.contains("a scheduler already runs"), "{seen}");
    assert!(!seen.contains("scheduling queued rounds"), "{seen}");
    assert!(!seen.contains("dashboard and API at"), "{seen}");
    first.kill().unwrap();
    first.wait().unwrap();
}
