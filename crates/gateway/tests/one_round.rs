//! A gateway that serves one round (a sandbox's only way out): requests without a
//! placeholder fall under the round's keyless fallback grant and go upstream with the agent's
//! own credentials; plain-http proxy requests (`GET http://host/…`) reach allowed hosts only,
//! and every refusal is recorded with the round.

use crate::common::{REAL_KEY, Setup, chat_body, client};
use ganger_fake_llm::{FakeLlm, Script};
use ganger_gateway::{Grant, HostPort, Upstream};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// A web server answering every request with `answer`; its address.
fn web_server(answer: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    addr
}

fn fallback(setup: &Setup, upstream: Option<&str>, allow: &[String]) -> String {
    setup
        .gateway
        .grants()
        .issue_fallback(Grant {
            round: "t#1".into(),
            provider: "fake".into(),
            upstream: upstream.map(|u| Upstream::parse(u).unwrap()),
            key_file: None,
            budget_tokens: None,
            allow: allow.iter().map(|a| HostPort::parse(a).unwrap()).collect(),
        })
        .unwrap()
}

/// Sends `GET url` to the gateway as a proxy; the whole answer.
fn proxied_get(setup: &Setup, url: &str) -> String {
    let mut stream = TcpStream::connect(setup.gateway.addr().unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    write!(
        stream,
        "GET {url} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn a_request_without_a_placeholder_goes_upstream_with_the_agents_own_key() {
    let model = FakeLlm::start(Script::new().text("own key").repeat(true)).unwrap();
    let setup = Setup::start();
    let url = format!("{}/v1/chat/completions", setup.base());

    // No fallback: refused, nothing reaches the model.
    let refused = client()
        .post(&url)
        .header("authorization", "Bearer sk-agents-own")
        .send_json(chat_body())
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    assert_eq!(model.requests().len(), 0);

    fallback(&setup, Some(&model.root_url()), &[]);
    let mut answered = client()
        .post(&url)
        .header("authorization", "Bearer sk-agents-own")
        .send_json(chat_body())
        .unwrap();
    assert_eq!(answered.status().as_u16(), 200);
    assert!(
        answered
            .body_mut()
            .read_to_string()
            .unwrap()
            .contains("own key")
    );
    let seen = model.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer sk-agents-own")
    );

    // A keyed grant beside it still swaps its placeholder for the real key.
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let keyed = client()
        .post(&url)
        .header("authorization", format!("Bearer {placeholder}"))
        .send_json(chat_body())
        .unwrap();
    assert_eq!(keyed.status().as_u16(), 200);
    assert_eq!(
        model.requests()[1].header("authorization"),
        Some(format!("Bearer {REAL_KEY}").as_str())
    );
    let records = setup.records(3);
    assert!(
        records
            .iter()
            .skip(1)
            .all(|r| r.round.as_deref() == Some("t#1"))
    );
}

#[test]
fn plain_http_through_the_proxy_reaches_allowed_hosts_only() {
    let allowed = web_server("allowed page");
    let other = web_server("other page");
    let setup = Setup::start();
    fallback(&setup, None, &[allowed.to_string()]);

    let answer = proxied_get(&setup, &format!("http://{allowed}/index.html"));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("allowed page"), "{answer}");
    let answer = proxied_get(&setup, &format!("http://{other}/index.html"));
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(!answer.contains("other page"), "{answer}");

    let records = setup.records(2);
    let passed = records.iter().find(|r| r.refused.is_none()).unwrap();
    assert_eq!((passed.kind, passed.status), ("proxy", 200));
    assert_eq!(passed.path, "/index.html");
    let refused = records.iter().find(|r| r.refused.is_some()).unwrap();
    assert_eq!(refused.host, other.to_string());
    assert_eq!(refused.round.as_deref(), Some("t#1"));
    assert!(refused.refused.as_deref().unwrap().contains("allow-list"));
}

#[test]
fn a_model_request_through_the_proxy_to_the_gateway_itself_is_forwarded() {
    let model = FakeLlm::start(Script::new().text("self").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let own = setup.gateway.addr().unwrap();
    let body = chat_body().to_string();
    let mut stream = TcpStream::connect(own).unwrap();
    write!(
        stream,
        "POST http://{own}/v1/chat/completions HTTP/1.1\r\nhost: {own}\r\nauthorization: Bearer {placeholder}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(
        model.requests()[0].header("authorization"),
        Some(format!("Bearer {REAL_KEY}").as_str())
    );
}
