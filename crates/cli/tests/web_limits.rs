//! `serve --listen` against clients that hold connections without finishing a request
//! (slowloris, issue 38): a connection that does not send its headers in time is closed, and
//! more of them than the server has descriptors for starve neither the API nor the scheduler
//! that runs in the same process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use web_world::Served;

fn quick_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: quick'", "", "");
    world
}

/// A connection that sends the start of a request and never its end.
fn slow_connection(address: &str) -> Option<TcpStream> {
    let addr: std::net::SocketAddr = address.parse().unwrap();
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .write_all(b"GET /api/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .ok()?;
    Some(stream)
}

/// Whether the server has closed `stream` (without waiting).
fn closed(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 512];
    let gone = match stream.read(&mut byte) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    stream.set_nonblocking(false).unwrap();
    gone
}

#[test]
fn a_connection_that_never_finishes_its_headers_is_closed() {
    let served = Served::start(quick_world());
    let mut stream = slow_connection(served.address()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(40)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    assert!(
        read.is_ok() && started.elapsed() < Duration::from_secs(30),
        "the server still held a connection whose headers never came after {:?} ({read:?})",
        started.elapsed()
    );
}

#[test]
fn slow_connections_past_the_servers_descriptors_starve_neither_the_api_nor_the_scheduler() {
    // serve may hold 256 descriptors; 400 slow clients keep trying to hold a connection each,
    // opening a new one whenever the server closes theirs.
    let served = Served::start_with_descriptors(quick_world(), 256);
    let address = served.address().to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let attack = {
        let stop = stop.clone();
        let address = address.clone();
        std::thread::spawn(move || {
            let mut held: Vec<Option<TcpStream>> = (0..400).map(|_| None).collect();
            while !stop.load(Ordering::Relaxed) {
                for slot in &mut held {
                    if slot.as_mut().is_none_or(closed) {
                        *slot = slow_connection(&address);
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));

    // The scheduler delivers a round queued meanwhile.
    served
        .world
        .ganger(&["start", "queued", "--message", "go", "--queue"])
        .expect_code(0);
    // The API answers.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let reply = agent
        .get(format!("{}/api/tasks", served.base))
        .header("Authorization", format!("Bearer {}", served.token))
        .call();
    let status = reply.as_ref().map(|r| r.status().as_u16());
    assert!(
        matches!(status, Ok(200)),
        "the API did not answer under 400 slow connections: {reply:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = served.world.ganger(&["status", "queued", "--json"]);
        if status.stdout.contains("\"status\": \"done\"")
            || status.stdout.contains("\"status\":\"done\"")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the queued round was not delivered under 400 slow connections: {}{}",
            status.stdout,
            status.stderr
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The server holds at most what it may: the descriptors it keeps for its scheduler
    // are free.
    let open = web_world::open_descriptors(served.pid());
    assert!(open < 200, "serve holds {open} descriptors");
    stop.store(true, Ordering::Relaxed);
    attack.join().unwrap();
}
