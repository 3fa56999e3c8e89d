//! Checks on processes: which live processes carry an environment entry (every process of a
//! ganger round carries `GANGER_ROUND=<token>`), which belong to a test's world, and waiting
//! for a condition with a limit.

use std::time::{Duration, Instant};

/// Every pid in `/proc`.
fn all_pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|item| item.file_name().to_str()?.parse::<i32>().ok())
}

/// Whether `pid` is a zombie (or gone).
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// The pids of live (not zombie) processes whose environment holds `entry` exactly.
pub fn living_pids_with_env(entry: &str) -> Vec<i32> {
    all_pids()
        .filter(|&pid| !zombie(pid))
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        })
        .collect()
}

/// Polls `check` until it is true or `limit` passes; returns whether it held. The pause grows
/// from 20 ms to 100 ms: many checks start a `ganger status` (4 ms of CPU each), and a test
/// that polled every 20 ms through a minute-long round took a fifth of a core from the agents
/// beside it.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(20);
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 3 / 2).min(Duration::from_millis(100));
    }
}

/// The live processes working inside `dir` (their current directory under it) or whose
/// environment holds `entry`: what a test's world started (round hosts, agents, servers).
pub fn pids_of_world(dir: &std::path::Path, entry: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut pids = living_pids_with_env(entry);
    pids.extend(all_pids().filter(|&pid| {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
    }));
    pids.sort_unstable();
    pids.dedup();
    pids.retain(|&pid| pid != me);
    pids
}

/// A server on `listener` that accepts every connection and never answers (a peer that is
/// stopped, wedged, or a proxy in front of nothing), holding each connection until the test
/// process ends; returns its port.
pub fn silent_server(listener: std::net::TcpListener) -> u16 {
    let port = listener.local_addr().map_or(0, |address| address.port());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for socket in listener.incoming().flatten() {
            held.push(socket);
        }
    });
    port
}
