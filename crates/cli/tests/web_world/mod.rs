//! A `ganger serve --listen` on a temporary repository, and plain HTTP clients for it: JSON
//! requests through ureq, and a server-sent events reader over a raw socket (so a test sees
//! exactly what went over the wire, ids included, and can drop and resume a connection).

#![allow(
    dead_code,
    reason = "each test module uses its own part of the harness"
)]

use ganger_test_support::World;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A world with `ganger serve --listen 127.0.0.1:0` running in it.
pub struct Served {
    pub world: World,
    pub base: String,
    pub token: String,
    child: Child,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The answer to a request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Starts `serve` with `args` added; returns the child and what it printed (stdout, then
/// stderr when it ended) up to the dashboard's address, or everything when it exited.
pub fn spawn_serve(world: &World, args: &[&str]) -> (Child, String) {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    spawn_serve_command(world.command(&all))
}

/// `ganger serve` with `args` added, under `prlimit --nofile=LIMIT`: a server that may hold at
/// most `limit` descriptors (the soft and hard limit both).
pub fn serve_with_descriptors(world: &World, limit: u32, args: &[&str]) -> Command {
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--nofile={limit}:{limit}"))
        .arg("--")
        .arg(world.ganger_path())
        .arg("serve")
        .args(args)
        .current_dir(&world.repo)
        .stdin(Stdio::null());
    world.env(&mut command);
    command
}

/// Starts `command` (a `ganger serve`); returns the child and what it printed (stdout, then
/// stderr when it ended) up to the dashboard's address, or everything when it exited.
pub fn spawn_serve_command(mut command: Command) -> (Child, String) {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the ganger binary itself as a long-lived server"
    )]
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut listening = false;
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if line.contains("dashboard and API at") {
            listening = true;
            break;
        }
    }
    // Keep draining so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = stdout.read_to_end(&mut sink);
    });
    if !listening {
        seen.push_str(&errors.join().unwrap());
    }
    (child, seen)
}

impl Served {
    /// `serve --listen 127.0.0.1:0` in `world` (configured already).
    pub fn start(world: World) -> Served {
        let command = world.command(&["serve", "--listen", "127.0.0.1:0"]);
        Served::start_command(world, command)
    }

    /// `serve --listen 127.0.0.1:0` in `world`, allowed at most `limit` descriptors.
    pub fn start_with_descriptors(world: World, limit: u32) -> Served {
        let command = serve_with_descriptors(&world, limit, &["--listen", "127.0.0.1:0"]);
        Served::start_command(world, command)
    }

    /// `command` (a `serve --listen 127.0.0.1:0` in `world`), once it listens.
    pub fn start_command(world: World, command: Command) -> Served {
        let (child, seen) = spawn_serve_command(command);
        let address = seen
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("serve did not say where it listens: {seen}"))
            .to_owned();
        assert!(
            !seen.contains(
                &std::fs::read_to_string(token_file(&world))
                    .unwrap()
                    .trim()
                    .to_owned()
            ),
            "serve printed its token"
        );
        let token = std::fs::read_to_string(token_file(&world))
            .unwrap()
            .trim()
            .to_owned();
        Served {
            world,
            base: format!("http://{address}"),
            token,
            child,
        }
    }

    /// Kills the server and starts a new one on the same address (rounds run on meanwhile:
    /// their hosts are detached).
    pub fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let address = self.address().to_owned();
        let (child, seen) = spawn_serve(&self.world, &["--listen", &address]);
        assert!(seen.contains(&format!("http://{address}/")), "{seen}");
        self.child = child;
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn address(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// GET with the owner's token.
    pub fn get(&self, path: &str) -> Reply {
        self.request("GET", path, Some(&self.token), None, &[])
    }

    /// POST JSON with the owner's token.
    pub fn post(&self, path: &str, body: &Value) -> Reply {
        self.request("POST", path, Some(&self.token), Some(body), &[])
    }

    /// Any request: `token` as the bearer, `headers` added.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let url = format!("{}{path}", self.base);
        let mut builder = ureq::http::Request::builder().method(method).uri(&url);
        if let Some(token) = token {
            builder = builder.header("Authorization", format!("Bearer {token}"));
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let response = match body {
            Some(body) => agent
                .run(
                    builder
                        .header("Content-Type", "application/json")
                        .body(serde_json::to_vec(body).unwrap())
                        .unwrap(),
                )
                .unwrap(),
            None => agent.run(builder.body(()).unwrap()).unwrap(),
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = response.into_body().read_to_string().unwrap();
        Reply {
            status,
            content_type,
            body,
        }
    }

    /// Waits (at most `limit`) until task `slug`'s last round is no longer running.
    pub fn wait_round_end(&self, slug: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let task = self.get(&format!("/api/tasks/{slug}")).json();
            let status = task["task"]["status"].as_str().unwrap_or("none").to_owned();
            if status != "running" && status != "none" {
                return task;
            }
            assert!(Instant::now() < deadline, "{slug} still runs: {task}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens an event stream at `path` (with `Last-Event-ID` when given).
    pub fn events(&self, path: &str, last_id: Option<&str>) -> EventStream {
        EventStream::open(self.address(), path, &self.token, last_id)
    }
}

pub fn token_file(world: &World) -> std::path::PathBuf {
    world.repo.join(".ganger/web/token")
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub name: String,
    pub id: Option<String>,
    pub data: Value,
}

/// A server-sent events stream read off a socket.
pub struct EventStream {
    reader: BufReader<TcpStream>,
    pub status: u16,
}

impl EventStream {
    pub fn open(address: &str, path: &str, token: &str, last_id: Option<&str>) -> EventStream {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut request = format!(
            "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n"
        );
        if let Some(id) = last_id {
            request.push_str(&format!("Last-Event-ID: {id}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).unwrap();
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        EventStream { reader, status }
    }

    /// The next event (chunked framing is skipped: chunk sizes are lines of hex digits).
    pub fn next(&mut self) -> Option<SseEvent> {
        let mut name = String::from("message");
        let mut id = None;
        let mut data = String::new();
        let mut any = false;
        loop {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if any && !data.is_empty() {
                    return Some(SseEvent {
                        name,
                        id,
                        data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
                    });
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("event:") {
                name = rest.trim().to_owned();
                any = true;
            } else if let Some(rest) = line.strip_prefix("id:") {
                id = Some(rest.trim().to_owned());
                any = true;
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                any = true;
            }
            // Anything else is chunk framing or a comment (keep-alive).
        }
    }

    /// Events until `done` says so (the last one included), at most `limit` of waiting.
    pub fn until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&SseEvent) -> bool,
    ) -> Vec<SseEvent> {
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            let Some(event) = self.next() else { break };
            let stop = done(&event);
            seen.push(event);
            if stop {
                return seen;
            }
        }
        panic!("the stream ended or timed out before the wanted event; saw {seen:#?}");
    }
}

pub mod browser;

/// A runtime for a test's browser session.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
pub mod land;

/// Tokens for alice and bob (write) and vera (read), mode 0600.
pub fn write_tokens(world: &World) {
    let dir = world.repo.join(".ganger/web");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens.toml");
    std::fs::write(
        &file,
        "[[token]]\ncommander = \"alice\"\nsecret = \"alice-secret-0123456789abcdef\"\naccess = \"write\"\n\
         [[token]]\ncommander = \"bob\"\nsecret = \"bob-secret-0123456789abcdef00\"\naccess = \"write\"\n\
         [[token]]\ncommander = \"vera\"\nsecret = \"vera-secret-0123456789abcdef0\"\naccess = \"read\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &file,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600),
    )
    .unwrap();
}

pub const ALICE: &str = "alice-secret-0123456789abcdef";
pub const BOB: &str = "bob-secret-0123456789abcdef00";
pub const VERA: &str = "vera-secret-0123456789abcdef0";

/// A field of `/proc/PID/status` (`VmHWM`, `Threads`, ...) as its number (kB for sizes).
pub fn proc_status(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// How many read calls process `pid` has made (`syscr` of `/proc/PID/io`).
pub fn read_calls(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("syscr:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no syscr in /proc/{pid}/io"))
}

/// How many descriptors process `pid` holds open.
pub fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}
