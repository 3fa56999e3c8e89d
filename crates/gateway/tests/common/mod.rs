//! What the gateway's tests share: a gateway with a record list, key files, and a plain
//! HTTP client that sees statuses as they are.

#![allow(dead_code, reason = "each test module uses its own part")]

use ganger_gateway::{
    Gateway, GatewayConfig, Grant, Grants, Limits, RequestRecord, TlsRoots, Upstream,
};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub const REAL_KEY: &str = "sk-real-0123456789-secret";

pub struct Setup {
    pub gateway: Gateway,
    pub records: Arc<Mutex<Vec<RequestRecord>>>,
    pub dir: tempfile::TempDir,
}

impl Setup {
    pub fn start() -> Setup {
        Setup::start_with(TlsRoots::default())
    }

    pub fn start_with(roots: TlsRoots) -> Setup {
        Setup::start_with_limits(roots, Limits::default())
    }

    pub fn start_with_limits(roots: TlsRoots, limits: Limits) -> Setup {
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let records = records.clone();
            Arc::new(move |record: RequestRecord| records.lock().unwrap().push(record))
        };
        let config = GatewayConfig {
            tcp: Some("127.0.0.1:0".parse().unwrap()),
            unix: None,
            roots,
            limits,
            sink,
        };
        let gateway = Gateway::start(config, Grants::new()).unwrap();
        Setup {
            gateway,
            records,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A grant to `upstream` with the real key in a file; its placeholder.
    pub fn grant(&self, upstream: &str, budget: Option<u64>, allow: &[&str]) -> String {
        let key_file = self.key_file();
        self.gateway
            .grants()
            .issue(Grant {
                round: "t#1".into(),
                provider: "fake".into(),
                upstream: Some(Upstream::parse(upstream).unwrap()),
                key_file: Some(key_file),
                budget_tokens: budget,
                allow: allow
                    .iter()
                    .map(|a| ganger_gateway::HostPort::parse(a).unwrap())
                    .collect(),
            })
            .unwrap()
    }

    pub fn key_file(&self) -> PathBuf {
        let path = self.dir.path().join("key");
        std::fs::write(&path, format!("{REAL_KEY}\n")).unwrap();
        path
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.gateway.addr().unwrap())
    }

    /// The records so far, once `n` are in (a body's record comes when it ends).
    pub fn records(&self, n: usize) -> Vec<RequestRecord> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let records = self.records.lock().unwrap().clone();
            if records.len() >= n || std::time::Instant::now() > deadline {
                return records;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// A client that returns 4xx/5xx as responses.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// A chat request offering a tool: the scripted model answers side requests (no tools) with
/// its default answer, not the script's turns.
pub fn chat_body() -> serde_json::Value {
    serde_json::json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "noop",
            "parameters": {"type": "object", "properties": {}}}}]})
}
