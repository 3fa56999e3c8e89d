//! Finding every process of a round, detached children included. Three nets, each catching
//! what the others may miss: the round's cgroup (when there is one), the agent's session id
//! (everything it starts without `setsid`), and the round marker, an environment variable
//! every descendant inherits unless it clears its environment on purpose.

use crate::ROUND_ENV;
use crate::cgroup::Cgroup;
use crate::proc_stat::proc_stat;
use rustix::process::{Pid, Signal, kill_process};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::time::{Duration, Instant};

/// How to recognise a round's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundMarker {
    /// The round's token, the value of `GANGER_ROUND` in its processes.
    pub token: String,
    /// The agent's session id (its pid, as it calls `setsid`), if known.
    pub session: Option<i32>,
    /// The round's cgroup, if it has one.
    pub cgroup: Option<Cgroup>,
}

fn has_marker(pid: i32, needle: &[u8]) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|entry| entry == needle))
}

/// Every process in `/proc` but this one.
fn other_pids() -> impl Iterator<Item = i32> {
    let me = std::process::id() as i32;
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(move |&pid| pid != me)
}

/// Every live process of the round now (zombies left out). A cgroup holds every descendant
/// whatever it does to its session or environment, so with one the scan of `/proc` is spared.
pub fn round_members(marker: &RoundMarker) -> BTreeSet<i32> {
    let mut found: BTreeSet<i32> = BTreeSet::new();
    if let Some(cgroup) = &marker.cgroup
        && cgroup.path().is_dir()
    {
        found.extend(cgroup.pids());
        found.retain(|&pid| proc_stat(pid).is_some_and(|s| s.state != b'Z'));
        return found;
    }
    let needle = format!("{ROUND_ENV}={}", marker.token).into_bytes();
    for pid in other_pids() {
        let Some(stat) = proc_stat(pid) else { continue };
        if stat.state == b'Z' {
            continue;
        }
        if marker.session == Some(stat.session) || has_marker(pid, &needle) {
            found.insert(pid);
        }
    }
    found.retain(|&pid| proc_stat(pid).is_some_and(|s| s.state != b'Z'));
    found
}

/// The live processes of any of several rounds, by token, in one scan of `/proc` (the round
/// marker only: for rounds long over, whose session ids may name someone else by now).
pub fn marked_processes(tokens: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<i32>> {
    if tokens.is_empty() {
        return BTreeMap::new();
    }
    processes_marked_where(|token| tokens.contains(token))
}

/// The live processes whose round marker starts with `prefix`, by marker, in one scan.
pub fn marked_processes_with_prefix(prefix: &str) -> BTreeMap<String, BTreeSet<i32>> {
    processes_marked_where(|token| token.starts_with(prefix))
}

fn processes_marked_where(wanted: impl Fn(&str) -> bool) -> BTreeMap<String, BTreeSet<i32>> {
    let mut found: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
    let prefix = format!("{ROUND_ENV}=").into_bytes();
    for pid in other_pids() {
        if proc_stat(pid).is_none_or(|s| s.state == b'Z') {
            continue;
        }
        let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let token = env
            .split(|&b| b == 0)
            .find_map(|entry| entry.strip_prefix(prefix.as_slice()))
            .and_then(|value| std::str::from_utf8(value).ok());
        if let Some(token) = token
            && wanted(token)
        {
            found.entry(token.to_owned()).or_default().insert(pid);
        }
    }
    found
}

fn signal(pids: &BTreeSet<i32>, sig: Signal) {
    for &pid in pids {
        if let Some(pid) = Pid::from_raw(pid) {
            let _ = kill_process(pid, sig);
        }
    }
}

/// Stops every process of the round: SIGTERM, up to `grace` for them to go, then SIGKILL for
/// what is left. Returns how many processes had to be killed.
pub fn kill_round(marker: &RoundMarker, grace: Duration) -> usize {
    let members = round_members(marker);
    if members.is_empty() {
        if let Some(cgroup) = &marker.cgroup {
            cgroup.remove();
        }
        return 0;
    }
    signal(&members, Signal::TERM);
    let deadline = Instant::now() + grace;
    let mut left = members;
    // Most processes go within a millisecond of SIGTERM (a sandbox's init as its namespace
    // is torn down): look again soon, then less and less often.
    let mut pause = Duration::from_millis(1);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
        left = round_members(marker);
    }
    let killed = left.len();
    if let Some(cgroup) = &marker.cgroup {
        cgroup.kill_all();
    }
    signal(&left, Signal::KILL);
    if let Some(cgroup) = &marker.cgroup {
        cgroup.wait_empty(Duration::from_secs(2));
        cgroup.remove();
    }
    killed
}
