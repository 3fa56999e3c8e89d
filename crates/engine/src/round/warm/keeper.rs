//! `ganger serve` (or a `ganger worker`) as the owner of its repository's warm hosts. While serve runs, a round that
//! must start its task's warm host asks serve to ([`ask`]: one JSON line on the keeper's
//! socket), and serve starts it as its own child, owned by the keeper's thread
//! (`spawn_owned_host`): the warm hosts, and their agents with them, end when serve ends, even
//! when serve is killed with SIGKILL (each is sent SIGTERM and stops its agent as `ganger warm
//! stop` does; a turn it was serving ends its round interrupted). With no serve running, the
//! round starts the warm host itself, detached, and it lives until its idle limit. Either way
//! the warm host has the round's environment (the round hands serve its own), so a warm agent
//! is the same agent whoever started it.

use super::paths::{bind, keeper_socket_path, log_path_in};
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_store::StateDir;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What a round asks the keeper: start the warm host of `slug` for round `round`. Not
/// `Debug`: it holds the round's environment, keys included, which must never be printed.
#[derive(Serialize, Deserialize)]
struct KeepRequest {
    slug: String,
    round: u32,
    /// The agent configuration the round runs with (`identity::handed_config`), as text.
    handed: String,
    /// The round's environment, which the warm host and its agent get (as a warm host the
    /// round starts itself would), not serve's: names and values as bytes.
    env: Vec<(Vec<u8>, Vec<u8>)>,
}

/// The keeper's answer: the warm host's pid, or why it could not start one.
#[derive(Debug, Default, Serialize, Deserialize)]
struct KeepAnswer {
    pid: Option<u32>,
    error: Option<String>,
}

/// How long a round waits for the keeper's answer (it only starts a process).
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// serve's keeper of warm hosts. Dropped, it stops taking requests and its thread ends, which
/// sends its warm hosts SIGTERM.
pub struct Keeper {
    socket: PathBuf,
    stopping: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the keeper's thread needs of the workspace.
struct Place {
    program: PathBuf,
    main: PathBuf,
    state: StateDir,
}

/// Starts the keeper of `ws`'s warm hosts (`ganger serve` does, for as long as it runs).
pub fn start_keeper(ws: &Workspace) -> Result<Keeper> {
    let socket = keeper_socket_path(ws);
    let listener = bind(&socket)?;
    let place = Place {
        program: std::env::current_exe()
            .map_err(|e| EngineError::environment("cannot find ganger's own binary", e))?,
        main: ws.repo.main.clone(),
        state: ws.state.clone(),
    };
    let stopping = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stopping);
    // The warm hosts are owned by this thread: it must live as long as the keeper.
    let thread = std::thread::Builder::new()
        .name("warm-keeper".into())
        .spawn(move || keep(&listener, &place, &flag))
        .map_err(|e| EngineError::environment("failed to start the warm keeper", e))?;
    Ok(Keeper {
        socket,
        stopping,
        thread: Some(thread),
    })
}

/// Starts the keeper of `ws`'s warm hosts for a `ganger worker`, unless one listens already
/// (`ganger serve`, or another worker on this checkout): that one keeps them, and the worker
/// leaves it its socket. `None` then.
pub fn start_keeper_unless_kept(ws: &Workspace) -> Result<Option<Keeper>> {
    if UnixStream::connect(keeper_socket_path(ws)).is_ok() {
        return Ok(None);
    }
    start_keeper(ws).map(Some)
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then ends.
        let _ = UnixStream::connect(&self.socket);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn keep(listener: &UnixListener, place: &Place, stopping: &AtomicBool) {
    for conn in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut conn) = conn else { continue };
        let _ = conn.set_read_timeout(Some(ANSWER_LIMIT));
        let mut line = Vec::new();
        let read = conn
            .try_clone()
            .map(|read| BufReader::new(read).read_until(b'\n', &mut line));
        if !matches!(read, Ok(Ok(n)) if n > 0) {
            continue;
        }
        let answer = match serde_json::from_slice::<KeepRequest>(&line) {
            Ok(request) => match start(place, &request) {
                Ok(pid) => KeepAnswer {
                    pid: Some(pid),
                    error: None,
                },
                Err(e) => KeepAnswer {
                    pid: None,
                    error: Some(e.to_string()),
                },
            },
            Err(e) => KeepAnswer {
                pid: None,
                error: Some(format!("a bad request: {e}")),
            },
        };
        let mut text = serde_json::to_vec(&answer).unwrap_or_default();
        text.push(b'\n');
        let _ = conn.write_all(&text);
    }
}

/// Starts the warm host of `request` as a child of this thread, and a thread that reaps it.
fn start(place: &Place, request: &KeepRequest) -> Result<u32> {
    crate::base::slug::check_slug(&request.slug)?;
    if !place.state.task_dir(&request.slug).is_dir() {
        return Err(EngineError::not_found(format!("no task {}", request.slug)));
    }
    let log = log_path_in(&place.state, &request.slug);
    let args: Vec<OsString> = vec![
        "--directory".into(),
        place.main.clone().into(),
        "warm-host".into(),
        request.slug.clone().into(),
        request.round.to_string().into(),
        "--kept-by".into(),
        std::process::id().to_string().into(),
    ];
    let env: Vec<(OsString, OsString)> = request
        .env
        .iter()
        .map(|(name, value)| {
            (
                OsString::from_vec(name.clone()),
                OsString::from_vec(value.clone()),
            )
        })
        .collect();
    let host = ganger_sandbox::spawn_owned_host(
        &place.program,
        &args,
        &env,
        request.handed.as_bytes(),
        &log,
    )?;
    let pid = host.pid;
    // The keeper is the warm host's parent: it must reap it when it ends.
    std::thread::spawn(move || {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
        }
    });
    Ok(pid)
}

/// Asks a running `ganger serve` to start the warm host of `slug` for round `round`. `None`
/// when no keeper listens (no serve runs, or an older one): the round starts it itself.
pub(crate) fn ask(
    ws: &Workspace,
    slug: &str,
    round: u32,
    handed: &[u8],
) -> Option<std::result::Result<u32, String>> {
    // The asking process's environment, with the store it works on (which it may have been
    // named on its command line rather than in its environment).
    // Its password goes on the host's stdin, never in its environment.
    let store = ws.handed_store().ok()?;
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            !ganger_sandbox::WITHHELD_ENV.iter().any(|held| name == held)
                && !store.env.iter().any(|(handed, _)| handed == name)
        })
        .collect();
    env.extend(store.env.iter().cloned());
    ask_at(
        &keeper_socket_path(ws),
        slug,
        round,
        &store.input(handed),
        env,
    )
}

fn ask_at(
    socket: &Path,
    slug: &str,
    round: u32,
    handed: &[u8],
    env: Vec<(OsString, OsString)>,
) -> Option<std::result::Result<u32, String>> {
    let mut conn = UnixStream::connect(socket).ok()?;
    let request = KeepRequest {
        slug: slug.to_owned(),
        round,
        handed: String::from_utf8_lossy(handed).into_owned(),
        env: env
            .into_iter()
            .map(|(name, value)| (name.into_vec(), value.into_vec()))
            .collect(),
    };
    let mut line = serde_json::to_vec(&request).unwrap_or_default();
    line.push(b'\n');
    conn.write_all(&line).ok()?;
    let _ = conn.set_read_timeout(Some(ANSWER_LIMIT));
    let mut answer = Vec::new();
    BufReader::new(conn).read_until(b'\n', &mut answer).ok()?;
    let answer: KeepAnswer = serde_json::from_slice(&answer).ok()?;
    Some(match (answer.pid, answer.error) {
        (Some(pid), _) => Ok(pid),
        (None, error) => Err(error.unwrap_or_else(|| "the keeper gave no reason".into())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_with_no_keeper_listening_starts_its_warm_host_itself() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("k.sock");
        assert!(
            ask_at(&socket, "t1", 1, b"", Vec::new()).is_none(),
            "no socket"
        );
        // A socket left by a killed serve: nobody listens on it.
        drop(UnixListener::bind(&socket).unwrap());
        assert!(
            ask_at(&socket, "t1", 1, b"", Vec::new()).is_none(),
            "a stale socket"
        );
    }
}
