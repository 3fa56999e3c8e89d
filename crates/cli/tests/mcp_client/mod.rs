//! A small MCP client for the tests: `ganger mcp` as a child process, JSON-RPC lines on its
//! stdin and stdout, requests sent and answers read separately (so that a test can have
//! several calls in flight), and a tool call's result returned whole.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "each test uses part of it, and fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

/// A running `ganger mcp`.
pub struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    /// Answers read while looking for another.
    early: HashMap<u64, Value>,
    /// The server's notifications, in order.
    pub notifications: Vec<Value>,
    next_id: u64,
}

impl Mcp {
    /// `ganger mcp` in `world`'s repository with `args` and `env`, initialized as client
    /// `client`.
    pub fn start(world: &World, args: &[&str], env: &[(&str, &str)], client: &str) -> Mcp {
        let mut argv = vec!["mcp"];
        argv.extend_from_slice(args);
        let mut command = world.command(&argv);
        for (key, value) in env {
            command.env(key, value);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[expect(
            clippy::disallowed_methods,
            reason = "the test talks to the server over its stdio"
        )]
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            early: HashMap::new(),
            notifications: Vec::new(),
            next_id: 1,
        };
        let init = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "ganger", "{init}");
        mcp.notify("notifications/initialized");
        mcp
    }

    fn write(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Writes `line` as it is, with a newline: for input that is not a message.
    pub fn write_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn notify(&mut self, method: &str) {
        self.write(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request and returns its id, without waiting for the answer.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a tool call; its answer comes from [`Mcp::answer`].
    pub fn send_call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.send("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// The whole JSON-RPC answer to request `id` (at most 120 s away).
    pub fn response(&mut self, id: u64) -> Value {
        if let Some(found) = self.early.remove(&id) {
            return found;
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to request {id}: {e}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            let Some(got) = message["id"].as_u64() else {
                self.notifications.push(message);
                continue;
            };
            if got == id {
                return message;
            }
            self.early.insert(got, message);
        }
    }

    /// The result of tool call `id`: it must be a tool result, never a protocol error.
    pub fn answer(&mut self, id: u64) -> Value {
        let response = self.response(id);
        assert!(
            response.get("error").is_none(),
            "a protocol error instead of a tool result: {response}"
        );
        response["result"].clone()
    }

    /// Waits (at most `limit`) for a notification that `wanted` accepts.
    pub fn notification(&mut self, limit: Duration, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(found) = self.notifications.iter().find(|n| wanted(n)) {
                return found.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                panic!("no such notification (seen: {:?}): {e}", self.notifications)
            });
            let message: Value = serde_json::from_str(&line).unwrap();
            match message["id"].as_u64() {
                Some(id) => {
                    self.early.insert(id, message);
                }
                None => self.notifications.push(message),
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(id)
    }

    /// Calls a tool and returns its result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.send_call(tool, arguments);
        self.answer(id)
    }

    /// Calls a tool that must succeed and returns its structured content.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"],
            false,
            "{tool} {arguments}: {}",
            text(&result)
        );
        result["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text content of a tool result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
