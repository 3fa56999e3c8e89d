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
use std::os::unix::fs::PermissionsExt;
use web_world::spawn_serve;

fn quick_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "echo \"prompt: $(cat)\"; echo two > file.txt; echo 'DONE: wrote file'",
        "",
        "",
    );
    world
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
