//! The round host's side of a warm round: find the task's warm host (or start one and wait
//! for it to be ready), send it the turn, and follow the turn as the host's loop follows a
//! cold agent's process: it ends when the warm host closes the connection after the prompt's
//! answer, and is stopped by asking the warm host to cancel it.

use super::paths::{claim_name, log_path};
use super::policy::Policy;
use super::registry::{WarmAgentInfo, found, live};
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::round::RoundInput;
use ganger_agents::acp::GANGER_KEY;
use ganger_sandbox::{Activity, RoundMarker, Waited, spawn_detached_host};
use ganger_store::Liveness;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// How long a warm host may take to answer a turn (loading its session first).
const ANSWER_LIMIT: Duration = Duration::from_secs(150);

/// How long a new warm host may take to start its agent and listen.
const READY_LIMIT: Duration = Duration::from_secs(180);

/// What a round host sends the warm host: one JSON line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TurnRequest {
    pub prompt: String,
    /// The session the round continues (`None`: a new one).
    pub session: Option<String>,
    pub policy: Policy,
    pub round: u32,
    /// Whether the agent may load a session that is not its live one.
    pub can_load: bool,
}

/// A turn being served by a warm host.
pub(crate) struct WarmTurn {
    conn: UnixStream,
    /// The turn's stream: its first line (ganger's `turn`), then the rest.
    reader: Option<Box<dyn Read + Send>>,
    /// Readable once the turn's stream was read to its end.
    done: OwnedFd,
    /// The write end, for the reader of the stream to close when it is done.
    done_writer: Option<OwnedFd>,
    marker: RoundMarker,
    finished: bool,
    /// Why the task's last warm agent was replaced, when it failed (its agent died, its
    /// cancelled turn would not end): the round says so.
    pub replaced: Option<String>,
}

/// How often a round asks again a warm host that is still ending a cancelled turn.
const BUSY_RETRY: Duration = Duration::from_millis(100);

/// How long a round waits for the task's warm host to be done with the last round's turn:
/// the host gives a cancelled turn the grace to end, then stops its agent within the grace.
fn settle_limit(grace: Duration) -> Duration {
    grace * 2 + Duration::from_secs(5)
}

/// Waits (up to [`settle_limit`]) while `input`'s task's warm host is busy. A task's rounds
/// come one at a time, so a busy host is ending the last round's turn: one cancelled, and
/// settled as cancelled before the agent answered the cancel (a fix right after `ganger
/// cancel`). A round that went by the host's state before the turn ended would run cold
/// beside it. A host that stops after such a turn (an app server's, whose interrupt can leave
/// a command running) removes its socket and its record first, then stops its agent, and lets
/// its claim go last: a new host started before then could not claim the task, and would
/// count as one that failed to start.
pub(crate) fn last_turn_ended(ws: &Workspace, store: &dyn Liveness, input: &RoundInput) {
    let slug = &input.task.slug;
    let key = store.claim_key(&claim_name(ws, slug));
    let deadline = Instant::now() + settle_limit(input.grace);
    while Instant::now() < deadline {
        let settled = match found(ws, store, slug) {
            // A host whose record cannot be read tells nothing of a turn: the round stops it
            // ([`offer_turn`]) rather than wait.
            Some(info) => !info.busy || info.unreadable.is_some(),
            None => !store.is_alive(&key).unwrap_or(false),
        };
        if settled {
            return;
        }
        std::thread::sleep(BUSY_RETRY);
    }
}

/// Connects to `input`'s task's warm host, starting it first when there is none, and sends
/// `request`. A host still ending the last round's turn ([`last_turn_ended`]) says it is
/// busy, and one that stops after such a turn (an app server's, whose interrupt can leave a
/// command running) closes the connection: the round asks again until the agent has ended
/// that turn or its host has stopped (within the grace: then a new host takes up the
/// session), instead of running cold beside it.
pub(crate) fn open_turn(
    ws: &Workspace,
    store: &dyn Liveness,
    input: &RoundInput,
    request: &TurnRequest,
) -> Result<WarmTurn> {
    let deadline = Instant::now() + settle_limit(input.grace);
    loop {
        match offer_turn(ws, store, input, request)? {
            Some(turn) => return Ok(turn),
            None if Instant::now() < deadline => {
                std::thread::sleep(BUSY_RETRY);
                last_turn_ended(ws, store, input);
            }
            None => {
                return Err(EngineError::environment_message(
                    "the warm agent is still busy with the last round's turn".to_owned(),
                ));
            }
        }
    }
}

/// Whether connecting failed because the host's socket is closed or gone.
fn gone_away(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
    )
}

/// [`open_turn`]'s one try: `None` when the warm host is busy with another turn or is
/// stopping.
fn offer_turn(
    ws: &Workspace,
    store: &dyn Liveness,
    input: &RoundInput,
    request: &TurnRequest,
) -> Result<Option<WarmTurn>> {
    let slug = &input.task.slug;
    let mut replaced = None;
    let info = match found(ws, store, slug) {
        // It holds the task's session, and nothing says how: it is stopped, and the round
        // runs cold (the next one starts a new warm host).
        Some(info) if info.unreadable.is_some() => {
            let why = info.unreadable.unwrap_or_default();
            let stopped = super::registry::stop_warm(ws, store, slug).unwrap_or(false);
            let pid = match info.host_pid {
                0 => String::new(),
                pid => format!(" (pid {pid})"),
            };
            return Err(EngineError::environment_message(format!(
                "the task's warm host{pid} {}: {why}",
                if stopped {
                    "was stopped"
                } else {
                    "could not be used"
                }
            )));
        }
        Some(info) => info,
        None => {
            replaced = super::stop::failed_last(&log_path(ws, slug), slug);
            start_host(ws, store, input)?
        }
    };
    let mut conn = match UnixStream::connect(&info.socket) {
        Ok(conn) => conn,
        // A host that is stopping (it stops the agent after a turn that may have left work
        // running) still counts as alive until it has closed its socket.
        Err(e) if gone_away(&e) => return Ok(None),
        Err(e) => return Err(EngineError::io("connect to", &info.socket, e)),
    };
    let mut line = serde_json::to_vec(request).unwrap_or_default();
    line.push(b'\n');
    conn.write_all(&line)
        .map_err(|e| EngineError::io("write to", &info.socket, e))?;
    // The first line says whether the warm host took the turn (it may load the session
    // first); a refusal leaves the round to run cold.
    let _ = conn.set_read_timeout(Some(ANSWER_LIMIT));
    let mut reader = BufReader::new(
        conn.try_clone()
            .map_err(|e| EngineError::io("read", &info.socket, e))?,
    );
    let mut first = Vec::new();
    reader
        .read_until(b'\n', &mut first)
        .map_err(|e| EngineError::io("read", &info.socket, e))?;
    let _ = conn.set_read_timeout(None);
    // Closed without a word: the host was stopping when it accepted (as above).
    if first.is_empty() {
        return Ok(None);
    }
    let opening: serde_json::Value = serde_json::from_slice(&first).unwrap_or_default();
    if opening["busy"] == true {
        return Ok(None);
    }
    if opening[GANGER_KEY] != "turn" {
        let why = opening["message"]
            .as_str()
            .unwrap_or("the warm host did not take the turn");
        return Err(EngineError::environment_message(why.to_owned()));
    }
    let reader: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(first).chain(reader));
    let (done, done_writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| EngineError::environment("failed to make a pipe", std::io::Error::from(e)))?;
    Ok(Some(WarmTurn {
        conn,
        reader: Some(reader),
        done,
        done_writer: Some(done_writer),
        marker: RoundMarker {
            token: info.token.clone(),
            session: Some(info.agent_pid),
            cgroup: None,
        },
        finished: false,
        replaced,
    }))
}

/// A warm host this round started: its own child, or one `ganger serve` started for it.
enum Started {
    Own(u32),
    Kept(u32),
}

impl Started {
    fn exited(&self) -> bool {
        match *self {
            Started::Own(pid) => exited(pid),
            Started::Kept(pid) => gone(pid),
        }
    }
}

/// Starts the warm host of the task and waits until it listens (or died, with its log's
/// last line as the reason). While `ganger serve` runs, serve starts it and owns it.
fn start_host(ws: &Workspace, store: &dyn Liveness, input: &RoundInput) -> Result<WarmAgentInfo> {
    let slug = &input.task.slug;
    super::registry::make_room(ws, store, slug).map_err(EngineError::environment_message)?;
    let log = log_path(ws, slug);
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    }
    let handed = super::identity::handed_config(ws, &input.task.agent);
    let host = match super::keeper::ask(ws, slug, input.round.number, &handed) {
        Some(Ok(pid)) => Started::Kept(pid),
        refused => {
            if let Some(Err(why)) = refused
                && let Ok(mut file) = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&log)
            {
                let _ = writeln!(
                    file,
                    "ganger: serve could not start the warm host ({why}): the round starts it"
                );
            }
            let program = std::env::current_exe()
                .map_err(|e| EngineError::environment("cannot find ganger's own binary", e))?;
            let args: Vec<OsString> = vec![
                "--directory".into(),
                ws.repo.main.clone().into(),
                "warm-host".into(),
                slug.into(),
                input.round.number.to_string().into(),
            ];
            let store = ws.handed_store()?;
            let input = store.input(&handed);
            Started::Own(spawn_detached_host(&program, &args, None, &store.env, &input, &log)?.pid)
        }
    };
    let key = store.claim_key(&claim_name(ws, slug));
    let deadline = Instant::now() + READY_LIMIT;
    loop {
        if let Some(info) = live(ws, store, slug)
            && UnixStream::connect(&info.socket).is_ok()
        {
            // The probe connection closed at once: the host takes it for nothing.
            super::identity::forget_failed_start(ws, slug);
            return Ok(info);
        }
        if host.exited() && !store.is_alive(&key).unwrap_or(false) {
            let last = std::fs::read_to_string(&log)
                .ok()
                .and_then(|text| {
                    text.lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| "it exited".to_owned());
            let why = format!("the warm host did not start: {last}");
            super::identity::remember_failed_start(ws, input, &why);
            return Err(EngineError::environment_message(why));
        }
        if Instant::now() >= deadline {
            let why = format!(
                "the warm host was not ready within {} s",
                READY_LIMIT.as_secs()
            );
            super::identity::remember_failed_start(ws, input, &why);
            return Err(EngineError::environment_message(why));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether our child `pid` has exited (it is reaped here).
fn exited(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    !matches!(
        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG),
        Ok(None)
    )
}

/// Whether `pid`, another process's child, has ended (gone, or a zombie not yet reaped).
fn gone(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(ganger_sandbox::proc_stat)
        .is_none_or(|stat| stat.state == b'Z' || stat.state == b'X')
}

impl WarmTurn {
    /// The turn's stream, to read to its end, and the descriptor to drop when done.
    pub fn stream(&mut self) -> Result<(Box<dyn Read + Send>, OwnedFd)> {
        match (self.reader.take(), self.done_writer.take()) {
            (Some(reader), Some(writer)) => Ok((reader, writer)),
            _ => Err(EngineError::environment_message(
                "the warm turn's stream was taken already",
            )),
        }
    }

    fn is_done(&self, timeout: Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let limit = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&self.done, PollFlags::IN)];
        let _ = poll(&mut fds, Some(&limit));
        !fds[0].revents().is_empty()
    }
}

impl WarmTurn {
    /// Waits until the turn ends, `wake` becomes readable, or `timeout` passes.
    pub fn wait(&mut self, timeout: Duration, wake: Option<std::os::fd::BorrowedFd<'_>>) -> Waited {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        if self.finished {
            return Waited::Exited(ganger_sandbox::AgentExit {
                code: Some(0),
                signal: None,
            });
        }
        let limit = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let mut fds = vec![PollFd::new(&self.done, PollFlags::IN)];
        if let Some(fd) = &wake {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        let _ = poll(&mut fds, Some(&limit));
        let done = !fds[0].revents().is_empty();
        let woken = fds.get(1).is_some_and(|fd| !fd.revents().is_empty());
        drop(fds);
        if done {
            self.finished = true;
            Waited::Exited(ganger_sandbox::AgentExit {
                code: Some(0),
                signal: None,
            })
        } else if woken {
            Waited::Woken
        } else {
            Waited::TimedOut
        }
    }

    /// Asks the warm host to cancel the turn (ACP's `session/cancel`) and waits up to
    /// `grace` for it to end; a turn that does not is cut off (the warm host then stops its
    /// agent after its own grace).
    pub fn cancel(&mut self, grace: Duration) -> ganger_sandbox::AgentExit {
        let _ = self.conn.write_all(b"cancel\n");
        if !self.is_done(grace) {
            let _ = self.conn.shutdown(std::net::Shutdown::Both);
            let _ = self.is_done(Duration::from_secs(2));
        }
        self.finished = true;
        ganger_sandbox::AgentExit {
            code: None,
            signal: Some(libc_sigterm()),
        }
    }

    /// Stops whatever is left of the warm agent's processes (its host died): returns how
    /// many there were.
    pub fn kill_leftovers(&self, grace: Duration) -> usize {
        ganger_sandbox::kill_round(&self.marker, grace)
    }

    /// How busy the warm agent's processes are.
    pub fn activity(&self) -> Activity {
        Activity::sample(&self.marker)
    }
}

/// SIGTERM's number, which a stopped turn reports (its agent was not signalled: it lives on).
fn libc_sigterm() -> i32 {
    rustix::process::Signal::TERM.as_raw()
}
