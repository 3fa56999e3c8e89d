//! Running an agent CLI to completion for a short question (its version, its model list) with
//! the same hygiene as a round, a time limit, and its output captured.

use crate::error::SandboxError;
use crate::local::{AgentCommand, AgentExit, spawn_local};
use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a captured run printed and how it ended; `exit` is `None` when it hit the time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit: Option<AgentExit>,
}

/// Runs `command`, stopping it (and anything it started) after `limit`.
pub fn run_captured(command: &AgentCommand, limit: Duration) -> Result<Captured, SandboxError> {
    let mut agent = spawn_local(command)?;
    let (tx, rx) = mpsc::channel();
    for (index, pipe) in [
        agent
            .take_stdout()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        agent
            .take_stderr()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            let _ = tx.send((index, bytes));
        });
    }
    drop(tx);
    let deadline = Instant::now() + limit;
    let exit = loop {
        if let Some(exit) = agent.try_wait() {
            break Some(exit);
        }
        if Instant::now() >= deadline {
            agent.stop(Duration::from_secs(1));
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Whatever the command left running would hold the pipes open.
    agent.stop_leftovers(Duration::from_millis(500));
    let mut captured = Captured {
        stdout: Vec::new(),
        stderr: Vec::new(),
        exit,
    };
    while let Ok((index, bytes)) = rx.recv_timeout(Duration::from_secs(2)) {
        if index == 0 {
            captured.stdout = bytes;
        } else {
            captured.stderr = bytes;
        }
    }
    Ok(captured)
}
