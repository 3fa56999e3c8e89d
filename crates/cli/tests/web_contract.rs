//! The HTTP API's contract at its edges (issue 38): `"queue": true` queues, a loopback
//! address other than 127.0.0.1 is served, every refusal is `ganger.error/1` JSON with the
//! status its kind says (404 for what does not exist, 403 for what the token's commander may
//! not do), the bearer scheme is read as RFC 9110 says, and `serve` says nothing before it is
//! ready.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use serde_json::json;
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
