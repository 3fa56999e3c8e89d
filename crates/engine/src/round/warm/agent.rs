//! The warm host's side of one agent process spoken to over ACP: its stdin to write
//! messages to, a thread that reads its stdout a line at a time into the host's channel,
//! and its stderr copied to the warm host's log.

use crate::base::error::{EngineError, Result};
use ganger_agents::acp::protocol::{self, Incoming};
use ganger_sandbox::{AgentCommand, RunningAgent, spawn_local_conversing};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// The longest line of the agent kept whole (a longer one is cut: its head is kept, which
/// holds the message's kind; the tail of a huge tool output is lost to the round's stream).
const MAX_LINE: usize = 16 << 20;

/// What reaches the warm host's loop.
#[derive(Debug)]
pub(crate) enum HostEvent {
    /// One line of the agent's stdout.
    Agent(Vec<u8>),
    /// The agent's stdout closed: it exited or is exiting.
    AgentGone,
    /// One line from the round host of the current turn.
    Round(String),
    /// The round host's connection closed.
    RoundGone,
    /// A round host connected.
    Connection(std::os::unix::net::UnixStream),
    /// A stop signal came (its number).
    Signal(i32),
}

/// A live agent.
pub(crate) struct WarmAgent {
    pub running: RunningAgent,
    stdin: File,
    next_id: u64,
}

impl WarmAgent {
    /// Starts `command` with its stdout read into `events` and its stderr into `log`.
    pub fn start(command: &AgentCommand, events: Sender<HostEvent>, log: File) -> Result<Self> {
        let (mut running, stdin) = spawn_local_conversing(command)?;
        if let Some(stdout) = running.take_stdout() {
            std::thread::spawn(move || read_lines(stdout, &events));
        }
        if let Some(mut stderr) = running.take_stderr() {
            std::thread::spawn(move || {
                let mut log = log;
                let _ = std::io::copy(&mut stderr, &mut log);
            });
        }
        Ok(WarmAgent {
            running,
            stdin,
            next_id: 0,
        })
    }

    /// A fresh request id.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| EngineError::environment("the warm agent's stdin closed", e))
    }

    /// Sends request `message` (whose id is `id`) and waits up to `limit` for its answer,
    /// answering the agent's own requests on the way (refused: nothing runs before a turn)
    /// and dropping its notifications (a loaded session's replay).
    pub fn call(
        &mut self,
        id: u64,
        message: &Value,
        events: &Receiver<HostEvent>,
        limit: Duration,
    ) -> Result<std::result::Result<Value, String>> {
        self.send(message)?;
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match events.recv_timeout(left) {
                Ok(HostEvent::Agent(line)) => match protocol::classify(&line) {
                    Some(Incoming::Response {
                        id: Some(got),
                        result,
                    }) if got == id => {
                        return Ok(result);
                    }
                    Some(Incoming::Request { id, method, .. }) => {
                        let answer = if method == "session/request_permission" {
                            protocol::permission_answer(&id, None)
                        } else {
                            protocol::method_not_found(&id, &method)
                        };
                        self.send(&answer)?;
                    }
                    _ => {}
                },
                Ok(HostEvent::AgentGone) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(EngineError::environment_message(format!(
                        "the warm agent exited while ganger waited for {}",
                        message["method"].as_str().unwrap_or("an answer")
                    )));
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineError::environment_message(format!(
                        "the warm agent did not answer {} within {} s",
                        message["method"].as_str().unwrap_or("a request"),
                        limit.as_secs()
                    )));
                }
            }
        }
    }
}

/// Reads `from` a line at a time into `events` until it closes.
fn read_lines(from: impl Read, events: &Sender<HostEvent>) {
    let mut reader = BufReader::with_capacity(64 << 10, from);
    loop {
        let mut line = Vec::new();
        match read_line_capped(&mut reader, &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    line.pop();
                }
                if !line.is_empty() && events.send(HostEvent::Agent(line)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = events.send(HostEvent::AgentGone);
}

/// Reads one line into `line`, keeping at most `MAX_LINE` bytes of it; returns the bytes
/// read (0 at the end).
pub(crate) fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(read);
        }
        let (chunk, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (&buffer[..=at], true),
            None => (buffer, false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        read += used;
        if done {
            return Ok(read);
        }
    }
}
