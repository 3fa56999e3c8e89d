//! `CONNECT` through the gateway: allowed hosts are reached, others are refused and recorded,
//! a proxy request without the round's placeholder is refused, and the gateway itself is
//! always allowed (an agent that sends its model calls through the proxy).

use crate::common::{REAL_KEY, Setup, chat_body};
use base64::Engine;
use ganger_fake_llm::{FakeLlm, Script};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// A server that echoes what it reads; its address.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 || stream.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// Sends `CONNECT target` and returns the status line and the open stream.
fn connect(setup: &Setup, target: &str, placeholder: Option<&str>) -> (String, TcpStream) {
    let mut stream = TcpStream::connect(setup.gateway.addr().unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let auth = placeholder
        .map(|p| {
            let token = base64::engine::general_purpose::STANDARD.encode(format!("ganger:{p}"));
            format!("proxy-authorization: Basic {token}\r\n")
        })
        .unwrap_or_default();
    let request = format!("CONNECT {target} HTTP/1.1\r\nhost: {target}\r\n{auth}\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    (status.trim().to_owned(), stream)
}

#[test]
fn an_allowed_host_is_reached_and_any_other_is_refused_and_recorded() {
    let allowed = echo_server();
    let other = echo_server();
    let setup = Setup::start();
    let placeholder = setup.grant("http://127.0.0.1:9", None, &[&allowed.to_string()]);

    let (status, mut tunnel) = connect(&setup, &allowed.to_string(), Some(&placeholder));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    tunnel.write_all(b"ping through").unwrap();
    let mut back = [0u8; 12];
    tunnel.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"ping through");
    drop(tunnel);

    let (status, _) = connect(&setup, &other.to_string(), Some(&placeholder));
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let (status, _) = connect(&setup, &allowed.to_string(), None);
    assert!(status.starts_with("HTTP/1.1 407"), "{status}");
    let (status, _) = connect(&setup, &allowed.to_string(), Some(REAL_KEY));
    assert!(status.starts_with("HTTP/1.1 407"), "{status}");

    let records = setup.records(4);
    let refused: Vec<_> = records.iter().filter(|r| r.refused.is_some()).collect();
    assert_eq!(refused.len(), 3, "{records:?}");
    let not_listed = refused.iter().find(|r| r.status == 403).unwrap();
    assert_eq!(not_listed.host, other.to_string());
    assert_eq!(not_listed.round.as_deref(), Some("t#1"));
    assert!(
        not_listed
            .refused
            .as_deref()
            .unwrap()
            .contains("not on the round's allow-list")
    );
    let passed = records.iter().find(|r| r.refused.is_none()).unwrap();
    assert_eq!(
        (passed.kind, passed.bytes_up, passed.bytes_down),
        ("connect", 12, 12)
    );
}

#[test]
fn the_gateway_itself_is_reached_through_its_own_proxy() {
    let model = FakeLlm::start(Script::new().text("via the proxy").repeat(true)).unwrap();
    let setup = Setup::start();
    let placeholder = setup.grant(&model.root_url(), None, &[]);
    let own = setup.gateway.addr().unwrap().to_string();
    let (status, mut tunnel) = connect(&setup, &own, Some(&placeholder));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let body = chat_body().to_string();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {own}\r\nauthorization: Bearer {placeholder}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    tunnel.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    tunnel.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("via the proxy"), "{answer}");
    assert_eq!(
        model.requests()[0].header("authorization"),
        Some(format!("Bearer {REAL_KEY}").as_str())
    );
}
