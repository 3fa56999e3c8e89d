//! What warm agents there are: each warm host writes `warm.json` in its task's directory
//! (removed when it stops); a host whose claim is free is gone, whatever its file says, and
//! one whose claim lives is there, whatever its file says: a record that cannot be read (a
//! version's format another cannot read, a damaged file) leaves what its socket and its
//! agent's processes tell of it ([`unreadable`]), so that it can still be listed and stopped.
//! `ganger warm list` reads them with each agent's memory; `ganger warm stop` ends them.

use super::paths::{claim_name, info_path, slug_of_marker, socket_path, token_prefix};
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_store::Liveness;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One warm host, as it describes itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmAgentInfo {
    pub slug: String,
    pub agent: String,
    pub model: Option<String>,
    pub host_pid: u32,
    pub agent_pid: i32,
    /// The marker every process of the warm agent carries (`GANGER_ROUND`).
    pub token: String,
    pub socket: PathBuf,
    /// The ACP version the agent answered.
    pub protocol: u64,
    /// The live session.
    pub session: Option<String>,
    pub started_ms: i64,
    pub last_used_ms: i64,
    pub turns: u64,
    /// Whether a turn is being served.
    pub busy: bool,
    /// The round of the last turn served.
    pub last_round: Option<u32>,
    /// The live session's cost so far, as the agent reports it.
    pub cost: Option<f64>,
    /// What started the agent ([`super::identity::fingerprint`]): a round that would start
    /// it otherwise does not use it.
    #[serde(default)]
    pub fingerprint: String,
    /// The pid of the `ganger serve` or `ganger worker` that owns the warm host (it ends with
    /// it); `None` for a warm host a round started on its own.
    #[serde(default)]
    pub kept_by: Option<u32>,
    /// Which command keeps it (`serve` or `worker`), read from the keeper's command line when
    /// the record is read (never written by a host).
    #[serde(skip)]
    pub kept_by_command: Option<String>,
    /// Why the host's record could not be read (never written by a host): the fields are
    /// then only what its socket and its agent's processes tell ([`unreadable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl WarmAgentInfo {
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let temp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(self).unwrap_or_default();
        std::fs::write(&temp, text)
            .and_then(|()| std::fs::rename(&temp, path))
            .map_err(|e| EngineError::io("write", path, e))
    }

    /// The record at `path`: `Ok(None)` when there is none (a host not yet listening, or
    /// already stopping), `Err(why)` when it cannot be read.
    fn load(path: &Path) -> std::result::Result<Option<WarmAgentInfo>, String> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("its record {} cannot be read: {e}", path.display())),
        };
        let mut info: WarmAgentInfo = serde_json::from_slice(&bytes)
            .map_err(|e| format!("its record {} cannot be read: {e}", path.display()))?;
        info.kept_by_command = info.kept_by.and_then(keeper_command);
        Ok(Some(info))
    }

    /// The warm agent as a report shows it, with its processes' `memory_bytes` at `now_ms`.
    fn view(&self, memory_bytes: u64, now_ms: i64) -> crate::evidence::report::WarmView {
        crate::evidence::report::WarmView {
            host_pid: self.host_pid,
            agent_pid: self.agent_pid,
            session: self.session.clone(),
            turns: self.turns,
            memory_bytes,
            idle_ms: (now_ms - self.last_used_ms).max(0),
            busy: self.busy,
            kept_by: self.kept_by,
            kept_by_command: self.kept_by_command.clone(),
        }
    }

    /// The resident memory of the agent's processes, in bytes.
    pub fn memory_bytes(&self) -> u64 {
        let tokens = BTreeSet::from([self.token.clone()]);
        let mut pids = ganger_sandbox::marked_processes(&tokens)
            .remove(&self.token)
            .unwrap_or_default();
        pids.insert(self.agent_pid);
        pids.iter().map(|pid| rss_bytes(*pid)).sum()
    }
}

/// The ganger command (`serve` or `worker`) of the keeper `pid`, from its command line;
/// `None` when it is gone or is neither.
fn keeper_command(pid: u32) -> Option<String> {
    let line = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    line.split(|&b| b == 0)
        .find_map(|arg| match arg {
            b"serve" => Some("serve"),
            b"worker" => Some("worker"),
            _ => None,
        })
        .map(str::to_owned)
}

fn rss_bytes(pid: i32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Stops every process marked as a warm agent's of a task of this workspace whose warm host
/// is gone; returns how many markers had some.
fn stop_orphans(ws: &Workspace, store: &dyn Liveness) -> usize {
    let mut stopped = 0;
    for (token, _) in ganger_sandbox::marked_processes_with_prefix(&token_prefix(ws)) {
        let Some(slug) = slug_of_marker(ws, &token) else {
            continue;
        };
        if !host_alive(ws, store, slug) {
            let marker = ganger_sandbox::RoundMarker {
                token: token.clone(),
                session: None,
                cgroup: None,
            };
            ganger_sandbox::kill_round(&marker, ws.config.defaults.grace.0);
            stopped += 1;
        }
    }
    stopped
}

/// The warm agent of `slug` as a report shows it, when it is alive.
pub(crate) fn view(
    ws: &Workspace,
    store: &dyn Liveness,
    slug: &str,
) -> Option<crate::evidence::report::WarmView> {
    let info = live(ws, store, slug)?;
    Some(info.view(info.memory_bytes(), ganger_store::now_ms()))
}

/// The warm agents of the workspace's tasks as the task table shows them, by task: only the
/// tasks whose warm host wrote its file are asked about, and their processes' memory is read
/// in one look at every process.
pub(crate) fn views(
    ws: &Workspace,
    store: &dyn Liveness,
) -> std::collections::BTreeMap<String, crate::evidence::report::WarmView> {
    let Ok(dirs) = std::fs::read_dir(ws.state.root().join("tasks")) else {
        return Default::default();
    };
    let alive: Vec<WarmAgentInfo> = dirs
        .flatten()
        .filter(|dir| dir.path().join("warm.json").is_file())
        .filter_map(|dir| live(ws, store, &dir.file_name().to_string_lossy()))
        .collect();
    let tokens: BTreeSet<String> = alive.iter().map(|info| info.token.clone()).collect();
    let mut marked = ganger_sandbox::marked_processes(&tokens);
    let now = ganger_store::now_ms();
    alive
        .into_iter()
        .map(|info| {
            let mut pids = marked.remove(&info.token).unwrap_or_default();
            pids.insert(info.agent_pid);
            let view = info.view(pids.iter().map(|pid| rss_bytes(*pid)).sum(), now);
            (info.slug, view)
        })
        .collect()
}

/// Whether `slug` has a live warm host.
pub(crate) fn host_alive(ws: &Workspace, store: &dyn Liveness, slug: &str) -> bool {
    store
        .is_alive(&store.claim_key(&claim_name(ws, slug)))
        .unwrap_or(false)
}

/// The live warm host of `slug`, if any, as its record says (not one whose record cannot be
/// read: [`found`]).
pub(crate) fn live(ws: &Workspace, store: &dyn Liveness, slug: &str) -> Option<WarmAgentInfo> {
    found(ws, store, slug).filter(|info| info.unreadable.is_none())
}

/// The live warm host of `slug`, found through its claim: as its record says, or, when the
/// record cannot be read, as [`unreadable`] finds it.
pub(crate) fn found(ws: &Workspace, store: &dyn Liveness, slug: &str) -> Option<WarmAgentInfo> {
    let key = store.claim_key(&claim_name(ws, slug));
    if !store.is_alive(&key).unwrap_or(false) {
        return None;
    }
    match WarmAgentInfo::load(&info_path(ws, slug)) {
        Ok(info) => info,
        Err(why) => Some(unreadable(ws, slug, why)),
    }
}

/// A live warm host of `slug` whose record cannot be read (`why`), as the rest finds it: its
/// pid from its socket (the kernel says who listens on it), its agent from the marker its
/// processes carry. What only the record told (the session, the turns) stays empty.
fn unreadable(ws: &Workspace, slug: &str, why: String) -> WarmAgentInfo {
    let socket = socket_path(ws, slug);
    let host_pid = listener_pid(&socket).unwrap_or(0);
    let marked = ganger_sandbox::marked_processes_with_prefix(&token_prefix(ws))
        .into_iter()
        .find(|(marker, _)| slug_of_marker(ws, marker) == Some(slug));
    let (token, agent_pid) = match marked {
        Some((token, pids)) => {
            // The agent is the host's child; the rest are its own.
            let agent = pids
                .iter()
                .copied()
                .find(|pid| {
                    ganger_sandbox::proc_stat(*pid)
                        .is_some_and(|stat| u32::try_from(stat.ppid).ok() == Some(host_pid))
                })
                .or_else(|| pids.first().copied())
                .unwrap_or(0);
            (token, agent)
        }
        None => (String::new(), 0),
    };
    WarmAgentInfo {
        slug: slug.to_owned(),
        agent: String::new(),
        model: None,
        host_pid,
        agent_pid,
        token,
        socket,
        protocol: 0,
        session: None,
        started_ms: 0,
        last_used_ms: 0,
        turns: 0,
        busy: false,
        last_round: None,
        cost: None,
        fingerprint: String::new(),
        kept_by: None,
        kept_by_command: None,
        unreadable: Some(why),
    }
}

/// The pid of the process listening on the Unix socket `socket` (the kernel's record of who
/// called `listen`). Connecting costs the listener nothing: a warm host takes a connection
/// that closes without a line for nothing.
fn listener_pid(socket: &Path) -> Option<u32> {
    let conn = std::os::unix::net::UnixStream::connect(socket).ok()?;
    let cred = rustix::net::sockopt::socket_peercred(&conn).ok()?;
    u32::try_from(cred.pid.as_raw_nonzero().get()).ok()
}

/// Every live warm host of the workspace, least recently used first. Processes of a warm
/// agent whose host died (killed with a signal it could not catch: the agent itself died with
/// it, but a tool's command it started can outlive it) are stopped on the way.
pub fn list_warm(ws: &Workspace, store: &dyn Liveness) -> Vec<WarmAgentInfo> {
    stop_orphans(ws, store);
    let Ok(dirs) = std::fs::read_dir(ws.state.root().join("tasks")) else {
        return Vec::new();
    };
    let mut hosts: Vec<WarmAgentInfo> = dirs
        .flatten()
        .filter_map(|dir| found(ws, store, &dir.file_name().to_string_lossy()))
        .collect();
    hosts.sort_by_key(|info| info.last_used_ms);
    hosts
}

/// Makes room for a new warm agent of `slug` under `[warm] max` and `memory`: idle warm
/// agents of other tasks are stopped, least recently used first. Returns why there is no
/// room when every agent in the way is busy.
pub(crate) fn make_room(
    ws: &Workspace,
    store: &dyn Liveness,
    slug: &str,
) -> std::result::Result<Vec<String>, String> {
    let max = ws.config.warm.max;
    let cap = ws.config.warm.memory_bytes();
    let mut warm: Vec<(WarmAgentInfo, u64)> = list_warm(ws, store)
        .into_iter()
        .filter(|info| info.slug != slug)
        .map(|info| {
            let memory = info.memory_bytes();
            (info, memory)
        })
        .collect();
    let mut stopped = Vec::new();
    loop {
        let total: u64 = warm.iter().map(|(_, memory)| memory).sum();
        let over_count = warm.len() >= max;
        let over_memory = cap.is_some_and(|cap| total >= cap);
        if !over_count && !over_memory {
            return Ok(stopped);
        }
        let Some(at) = warm.iter().position(|(info, _)| !info.busy) else {
            return Err(if over_count {
                format!(
                    "{} warm agents are busy, the most [warm] max allows",
                    warm.len()
                )
            } else {
                format!(
                    "the busy warm agents hold {} MB, over [warm] memory",
                    total / 1_000_000
                )
            });
        };
        let (info, _) = warm.remove(at);
        if stop_warm(ws, store, &info.slug).is_ok() {
            stopped.push(info.slug);
        }
    }
}

/// Stops the warm host of `slug` (at once: a turn it serves is cut, and its round ends as
/// the agent's death makes it), one whose record cannot be read too; whether there was one.
pub fn stop_warm(ws: &Workspace, store: &dyn Liveness, slug: &str) -> Result<bool> {
    let Some(info) = found(ws, store, slug) else {
        return Ok(false);
    };
    if let Ok(mut conn) = std::os::unix::net::UnixStream::connect(&info.socket) {
        let _ = conn.write_all(b"stop\n");
    }
    let key = store.claim_key(&claim_name(ws, slug));
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !store.is_alive(&key).unwrap_or(false) {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Busy, or not listening: its end is its agent's end (a parent-death signal). A pid
    // unknown (0) is no one's.
    if let Ok(pid) = i32::try_from(info.host_pid)
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    Ok(true)
}
